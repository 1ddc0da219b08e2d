//! Go's `text/template` with sprig's hermetic functions, as Cluster API evaluates ClusterClass
//! inline patches (`enabledIf` and `valueFrom.template`, `template.New(..).Funcs(
//! sprig.HermeticTxtFuncMap()).Parse(..)` executed on the variables decoded from JSON). The
//! whole language: text and actions with trim markers and comments, pipelines, variables
//! (`$x :=`, `$x =`, `$`), `if`/`else if`/`with`/`else with`/`range` (index and value, over
//! lists, maps and integers) with `break`/`continue`, `define`/`template`/`block`, Go's
//! builtins (`printf` with every verb and flag, `index`, `slice` from sprig, `len`,
//! comparisons with Go's type rules) and sprig's functions (see [`functions`]).
//!
//! Output and errors follow Go's: the differential in `conformance/` executes the same
//! templates with Go's text/template and sprig v3.3.0 and compares both.

mod exec;
mod format;
pub mod functions;
mod lex;
mod parse;
mod semver;
mod time;
mod unicode;
mod url;
mod value;

pub use format::go_float;
pub use time::metav1_time_utc;

use exec::{Flow, State};
use serde_json::Value as Json;
use value::Value;

/// The name CAPI gives the template (`template.New("tpl")`), as errors show it.
const NAME: &str = "tpl";

/// How a program made its template: the name it gave it, whether sprig's functions are given,
/// and what a missing map key does.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// `template.New(name)`.
    pub name: &'a str,
    /// `.Funcs(sprig.HermeticTxtFuncMap())`.
    pub sprig: bool,
    /// `.Option("missingkey=error")`.
    pub missing_key_error: bool,
    /// Go 1.26's `urlstrictcolons` (on by default for modules that say `go 1.26`): `urlParse`
    /// refuses an http(s) host with two colons. Cluster API 1.14 is built with Go 1.26; 1.12
    /// and 1.13 with Go 1.25, which takes the last colon as the port's.
    pub strict_url_colons: bool,
}

impl Options<'_> {
    /// ClusterClass inline patches: `template.New("tpl").Funcs(sprig.HermeticTxtFuncMap())`.
    pub const INLINE_PATCH: Options<'static> = Options {
        name: NAME,
        sprig: true,
        missing_key_error: false,
        strict_url_colons: true,
    };
    /// Inline patches as the manager of `capi` runs them (its Go release's `net/url`).
    pub fn inline_patch(capi: capi_ext::CapiVersion) -> Options<'static> {
        Options {
            strict_url_colons: capi >= capi_ext::CapiVersion::new(1, 14),
            ..Options::INLINE_PATCH
        }
    }
    /// Naming templates (`internal/topology/names`): `template.New("template name
    /// generator").Option("missingkey=error")`, no sprig.
    pub const NAMING: Options<'static> = Options {
        name: "template name generator",
        sprig: false,
        missing_key_error: true,
        strict_url_colons: true,
    };
}

/// Checks that `template` parses, as CAPI's webhook does for `enabledIf` and
/// `valueFrom.template`.
///
/// ```
/// use capi_ext_render::go_template::parse;
/// assert!(parse("{{ semverCompare \">=1.29\" .v }}").is_ok());
/// assert!(parse("{{ nosuch . }}").unwrap_err().contains("function \"nosuch\" not defined"));
/// ```
pub fn parse(template: &str) -> Result<(), String> {
    parse::parse(NAME, template, true).map(|_| ())
}

/// Renders `template` with `data` as `.`, as CAPI renders inline patch templates.
///
/// ```
/// use capi_ext_render::go_template::render;
/// let data = serde_json::json!({"builtin": {"cluster": {"name": "c1"}, "controlPlane": {"version": "v1.31.2"}}, "ha": true});
/// assert_eq!(render("{{ .builtin.cluster.name }}-lb", &data).unwrap(), "c1-lb");
/// assert_eq!(render("{{ if .ha }}3{{ else }}1{{ end }}", &data).unwrap(), "3");
/// let psa = "{{ if semverCompare \">= v1.30\" .builtin.controlPlane.version }}enforce{{ end }}";
/// assert_eq!(render(psa, &data).unwrap(), "enforce");
/// assert_eq!(render("{{ $v := semver .builtin.controlPlane.version }}{{ $v.Minor }}", &data).unwrap(), "31");
/// assert!(render("{{ randInt 1 9 }}", &data).unwrap_err().contains("random"));
/// ```
pub fn render(template: &str, data: &Json) -> Result<String, String> {
    render_with(template, data, Options::INLINE_PATCH)
}

/// Renders `template` with `data` as `.`, made as `options` says.
///
/// ```
/// use capi_ext_render::go_template::{Options, render_with};
/// let data = serde_json::json!({"cluster": {"name": "c1"}});
/// assert_eq!(render_with("{{ .cluster.name }}-cp", &data, Options::NAMING).unwrap(), "c1-cp");
/// assert!(render_with("{{ .cluster.uid }}", &data, Options::NAMING).unwrap_err().contains("no entry for key \"uid\""));
/// assert!(render_with("{{ upper .cluster.name }}", &data, Options::NAMING).unwrap_err().contains("not defined"));
/// ```
pub fn render_with(template: &str, data: &Json, options: Options) -> Result<String, String> {
    let _colons = url::StrictColons::set(options.strict_url_colons);
    let name = options.name;
    let templates = parse::parse(name, template, options.sprig)?;
    let Some(root) = templates.trees.get(name) else {
        return Err(format!(
            "template: {name}: {name:?} is an incomplete or empty template"
        ));
    };
    let dot = Value::from_json(data);
    let mut state = State {
        templates: &templates,
        root: name,
        sprig: options.sprig,
        missing_key_error: options.missing_key_error,
        name: name.to_string(),
        vars: vec![("$".into(), dot.clone())],
        out: String::new(),
        depth: 0,
        line: 1,
        context: String::new(),
    };
    match state.walk(&dot, root) {
        Ok(()) if state.out.contains(format::CYCLE) => Err(format!(
            "template: {name}: the output prints a map or list that contains itself (Go's fmt never ends there)"
        )),
        Ok(()) if state.out.contains(format::ADDRESS) => Err(format!(
            "template: {name}: the output prints the fields of a time.Time (a verb other than %v, %s, %q, %x, %X, %T): Go prints its internal representation and a memory address, which change between reconciles; print the time with %v or toJson"
        )),
        Ok(()) if value::has_raw_bytes(&state.out) => Err(format!(
            "template: {name}: the output holds bytes that are not UTF-8 (decoded by b64dec or b32dec): CAPI cannot read it as YAML either"
        )),
        Ok(()) => Ok(state.out),
        Err(Flow::Error(e)) => Err(e),
        Err(Flow::Break | Flow::Continue) => Ok(state.out),
    }
}

#[cfg(test)]
mod tests;
