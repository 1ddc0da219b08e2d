//! A project's sources read statically: its `#[hook]` handlers, its `Variables` types and the
//! name it answers DiscoverVariables with, without compiling anything.

use super::handler::{self, HandlerModel};
use super::registrations::{self, Found, Registered};
use super::static_schema::{self, LocatedError};
use quote::ToTokens;
use serde_json::Value;
use syn::visit::Visit;

/// A handler found in the sources, with where it is.
#[derive(Debug, Clone)]
pub struct FoundHandler {
    /// The checked handler.
    pub model: HandlerModel,
    /// The file it is in.
    pub file: String,
    /// Its line.
    pub line: usize,
}

/// A registration written without `#[hook]` (`Registration::new`, `patches`, `gates`, the
/// builder's `.patches`/`.gates`), with where it is.
#[derive(Debug, Clone)]
pub struct FoundRegistration {
    /// What it registers.
    pub registered: Registered,
    /// The file it is in.
    pub file: String,
}

/// What the sources declare (code under `#[cfg(test)]` is not read: it is not served).
#[derive(Debug, Clone, Default)]
pub struct SourceModel {
    /// `#[hook]` handlers the extension registers (`.register::<f>()`), in file and source
    /// order.
    pub handlers: Vec<FoundHandler>,
    /// Handlers registered without `#[hook]`.
    pub registrations: Vec<FoundRegistration>,
    /// What the sources do that generate cannot follow, one `file:line: message` each: a
    /// `#[hook]` function never registered, a registration whose name is not a literal.
    pub warnings: Vec<String>,
    /// `#[derive(Variables)]` types with their definitions.
    pub variables: Vec<(String, Vec<Value>)>,
    /// The handler name of `.variables::<T>("name")`, if the extension registers one.
    pub variables_handler: Option<String>,
    /// The RBAC markers (`// +capi-ext:rbac:...`), in file and line order.
    pub rbac: Vec<super::rbac::Rule>,
}

struct Finder<'a> {
    file: &'a str,
    handlers: Vec<FoundHandler>,
    registrations: Vec<FoundRegistration>,
    /// The functions named by `.register::<f>()` or as the handler of a `Registration`.
    registered: Vec<String>,
    warnings: Vec<String>,
    errors: Vec<LocatedError>,
    variables_handler: Option<String>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl Finder<'_> {
    fn found(&mut self, found: Found) {
        match found {
            Found::Registered(registered) => {
                self.registered.extend(registered.function.clone());
                self.registrations.push(FoundRegistration {
                    registered,
                    file: self.file.to_string(),
                });
            }
            Found::Unreadable(line, what) => self.warnings.push(format!(
                "{}:{line}: a handler is registered here, but {what}: `capi-ext generate` cannot read it, and the generated files leave it out (write the hook, the name and the options as literals)",
                self.file
            )),
            Found::Invalid(line, message) => self.errors.push(LocatedError {
                file: self.file.to_string(),
                line,
                column: 1,
                message,
            }),
        }
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        match registrations::registration(e) {
            Some(found) => {
                self.found(found);
                // The handler and the set may hold more registrations only in closures; the
                // arguments are still read for `.register::<f>()` and the like.
                let mut root = e;
                while let syn::Expr::MethodCall(m) = root {
                    root = &m.receiver;
                }
                if let syn::Expr::Call(call) = root {
                    for arg in &call.args {
                        self.visit_expr(arg);
                    }
                }
            }
            None => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_cfg_test(&f.attrs) {
            return;
        }
        for attr in &f.attrs {
            let is_hook = attr
                .path()
                .segments
                .last()
                .is_some_and(|s| s.ident == "hook");
            if !is_hook {
                continue;
            }
            let args = match &attr.meta {
                syn::Meta::List(list) => list.tokens.clone(),
                other => other.to_token_stream(),
            };
            match handler::parse(args, f) {
                Ok(model) => {
                    let line = f.sig.ident.span().start().line;
                    self.handlers.push(FoundHandler {
                        model,
                        file: self.file.to_string(),
                        line,
                    });
                }
                Err(e) => self.errors.extend(static_schema::locate(self.file, e)),
            }
        }
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let name = match call.args.first() {
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            })) => Some(s.value()),
            _ => None,
        };
        if let (true, Some(name)) = (call.method == "variables" && call.turbofish.is_some(), name) {
            self.variables_handler = Some(name);
        }
        if call.method == "register"
            && let Some(turbofish) = &call.turbofish
            && let Some(syn::GenericArgument::Type(syn::Type::Path(path))) = turbofish.args.first()
            && let Some(last) = path.path.segments.last()
        {
            self.registered.push(last.ident.to_string());
        }
        if let Some(found) = registrations::builder_method(call) {
            self.found(found);
        }
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// Reads `(path, text)` sources. Errors carry file, line and column.
pub fn read(sources: &[(String, String)]) -> Result<SourceModel, Vec<LocatedError>> {
    let mut model = SourceModel::default();
    let mut errors = Vec::new();
    let mut registered = std::collections::HashSet::new();
    for (file, text) in sources {
        let parsed = match syn::parse_file(text) {
            Ok(f) => f,
            Err(e) => {
                errors.extend(static_schema::locate(file, e.into()));
                continue;
            }
        };
        let mut finder = Finder {
            file,
            handlers: Vec::new(),
            registrations: Vec::new(),
            registered: Vec::new(),
            warnings: Vec::new(),
            errors: Vec::new(),
            variables_handler: None,
        };
        finder.visit_file(&parsed);
        model.handlers.extend(finder.handlers);
        finder.registrations.sort_by_key(|r| r.registered.line);
        model.registrations.extend(finder.registrations);
        model.warnings.extend(finder.warnings);
        registered.extend(finder.registered);
        errors.extend(finder.errors);
        if finder.variables_handler.is_some() {
            model.variables_handler = finder.variables_handler;
        }
    }
    let (rbac, rbac_errors) = super::rbac::read(sources);
    model.rbac = rbac;
    errors.extend(rbac_errors);
    match static_schema::variables(sources) {
        Ok(v) => model.variables = v,
        Err(e) => errors.extend(e),
    }
    let (served, unregistered): (Vec<_>, Vec<_>) = std::mem::take(&mut model.handlers)
        .into_iter()
        .partition(|h| registered.contains(&h.model.fn_name.to_string()));
    model.handlers = served;
    for h in unregistered {
        model.warnings.push(format!(
            "{}:{}: `{}` is a #[hook] function that is never registered (`.register::<{}>()` outside tests): it is not served, and the generated files leave it out",
            h.file, h.line, h.model.fn_name, h.model.fn_name
        ));
    }
    let named = model
        .variables_handler
        .iter()
        .map(|n| (n.clone(), String::new(), 0))
        .chain(
            model
                .handlers
                .iter()
                .map(|h| (h.model.name.clone(), h.file.clone(), h.line)),
        )
        .chain(
            model
                .registrations
                .iter()
                .map(|r| (r.registered.name.clone(), r.file.clone(), r.registered.line)),
        );
    let mut seen = std::collections::HashMap::new();
    for (name, file, line) in named {
        if let Some(first) = seen.insert(name.clone(), (file.clone(), line)) {
            let at = if first.1 == 0 {
                "by the DiscoverVariables handler".to_string()
            } else {
                format!("at {}:{}", first.0, first.1)
            };
            errors.push(LocatedError {
                file,
                line,
                column: 1,
                message: format!(
                    "handler name `{name}` is already used {at}; handler names must be unique"
                ),
            });
        }
    }
    if errors.is_empty() {
        Ok(model)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_handlers_variables_and_their_discover_name() {
        let main = r#"
            fn main() { let e = capi_ext::Extension::builder().variables::<variables::Variables>("vars").register::<a>().register::<hooks::inner::b>(); }
        "#;
        let hooks = r#"
            #[hook(BeforeClusterCreate, timeout = 3)]
            async fn a(r: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse { todo!() }
            mod inner {
                #[capi_ext::hook(GeneratePatches, name = "p")]
                async fn b(r: GeneratePatchesRequest) -> GeneratePatchesResponse { todo!() }
            }
        "#;
        let vars = "#[derive(capi_ext::Variables)] struct Variables { a: Option<String> }";
        let m = read(&[
            ("src/main.rs".into(), main.into()),
            ("src/hooks.rs".into(), hooks.into()),
            ("src/variables.rs".into(), vars.into()),
        ])
        .unwrap();
        let names: Vec<_> = m
            .handlers
            .iter()
            .map(|h| (h.model.name.as_str(), h.line))
            .collect();
        assert_eq!(names, [("a", 3), ("p", 6)]);
        assert_eq!(m.variables_handler.as_deref(), Some("vars"));
        assert_eq!(m.variables[0].1[0]["name"], "a");
    }

    #[test]
    fn registrations_without_hook_and_what_generate_cannot_see() {
        let main = r#"
            fn main() {
                let e = capi_ext::Extension::builder()
                    .state(App::new())
                    .register::<hooks::a>()
                    .patches("patches", patches::set())
                    .gates(BeforeClusterDelete, "hold-delete", gates())
                    .handler(Registration::new(AfterClusterUpgrade, "after", after).timeout_seconds(3))
                    .handler(Registration::new(BeforeClusterUpgrade, name(), upgrade));
            }
            #[cfg(test)]
            mod tests {
                fn t() { capi_ext::Extension::builder().register::<super::hooks::never>().patches("test-only", set()); }
            }
        "#;
        let hooks = r#"
            #[hook(BeforeClusterCreate)]
            async fn a(State(app): State<App>, r: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse { todo!() }
            #[hook(AfterControlPlaneInitialized)]
            async fn never(r: AfterControlPlaneInitializedRequest) -> AfterControlPlaneInitializedResponse { todo!() }
        "#;
        let m = read(&[
            ("src/main.rs".into(), main.into()),
            ("src/hooks.rs".into(), hooks.into()),
        ])
        .unwrap();
        assert_eq!(m.handlers.len(), 1);
        assert!(m.handlers[0].model.state.is_some());
        let regs: Vec<_> = m
            .registrations
            .iter()
            .map(|r| {
                (
                    r.registered.hook.name,
                    r.registered.name.as_str(),
                    r.registered.timeout,
                    r.registered.line,
                )
            })
            .collect();
        assert_eq!(
            regs,
            [
                ("GeneratePatches", "patches", None, 6),
                ("BeforeClusterDelete", "hold-delete", None, 7),
                ("AfterClusterUpgrade", "after", Some(3), 8),
            ]
        );
        assert_eq!(m.warnings.len(), 2, "{:?}", m.warnings);
        assert!(m.warnings[0].starts_with("src/main.rs:9: a handler is registered here, but the name of its BeforeClusterUpgrade handler is not a string literal"), "{}", m.warnings[0]);
        assert!(
            m.warnings[1].starts_with(
                "src/hooks.rs:5: `never` is a #[hook] function that is never registered"
            ),
            "{}",
            m.warnings[1]
        );
        let dup = r#"fn main() { b.variables::<V>("vars").patches("vars", s); }"#;
        let errs = read(&[("src/main.rs".into(), dup.into())]).unwrap_err();
        assert!(errs[0].to_string().starts_with("src/main.rs:1:1: handler name `vars` is already used by the DiscoverVariables handler"), "{}", errs[0]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let bad = "\n#[hook(BeforeClusterCreat)]\nasync fn a(r: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse { todo!() }\n";
        let errs = read(&[("src/hooks/a.rs".into(), bad.into())]).unwrap_err();
        assert!(errs[0].to_string().starts_with("src/hooks/a.rs:2:8: unknown hook `BeforeClusterCreat`; did you mean `BeforeClusterCreate`?"), "{}", errs[0]);
    }
}
