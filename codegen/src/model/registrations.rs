//! Registrations written without `#[hook]`, read statically: `Registration::new`,
//! `with_state`, `patches` and `gates` (with `.timeout_seconds(..)` and `.failure_policy(..)`
//! chained), and the builder's `.patches("name", set)` and `.gates(Hook, "name", gates)`.
//! What cannot be read from literals is reported, never guessed.

use crate::catalog::{self, HookInfo};
use crate::naming;
use syn::spanned::Spanned;
use syn::{Expr, ExprCall, ExprMethodCall, Lit};

/// A registration found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// The hook.
    pub hook: &'static HookInfo,
    /// The handler name.
    pub name: String,
    /// The advertised timeout, when set.
    pub timeout: Option<i32>,
    /// `Fail` or `Ignore`, when set.
    pub failure_policy: Option<String>,
    /// The function it registers, when it is a path (`Registration::new(Hook, "n", path::f)`).
    pub function: Option<String>,
    /// 1-based line.
    pub line: usize,
}

/// What a registration expression turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Read from literals.
    Registered(Registered),
    /// A registration whose hook, name or options are not literals: (line, what is unreadable).
    Unreadable(usize, String),
    /// A registration with a mistake CAPI would refuse: (line, message).
    Invalid(usize, String),
}

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

fn string_literal(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.value()),
        Expr::Group(g) => string_literal(&g.expr),
        Expr::Paren(p) => string_literal(&p.expr),
        Expr::Reference(r) => string_literal(&r.expr),
        _ => None,
    }
}

fn last_segment(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// The hook named by `expr` (a marker type such as `BeforeClusterCreate` or a path to it).
fn hook_of(expr: &Expr) -> Result<&'static HookInfo, String> {
    let Some(name) = last_segment(expr) else {
        return Err("its hook is not a hook marker (`BeforeClusterCreate`, ...)".into());
    };
    catalog::find(&name).ok_or_else(|| {
        let hint = catalog::suggest(&name)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        format!("unknown hook `{name}`{hint}")
    })
}

/// The registration `expr` builds, if it is one: `Registration::<ctor>(..)` with options chained.
pub fn registration(expr: &Expr) -> Option<Found> {
    let mut options: Vec<&ExprMethodCall> = Vec::new();
    let mut root = expr;
    loop {
        match root {
            Expr::MethodCall(m)
                if m.method == "timeout_seconds" || m.method == "failure_policy" =>
            {
                options.push(m);
                root = &m.receiver;
            }
            Expr::Paren(p) => root = &p.expr,
            Expr::Group(g) => root = &g.expr,
            _ => break,
        }
    }
    let Expr::Call(call) = root else {
        return None;
    };
    let ctor = constructor(call)?;
    let line = line_of(call.span());
    let mut reg = match read_constructor(call, &ctor) {
        Ok(reg) => reg,
        Err(what) => return Some(Found::Unreadable(line, what)),
    };
    for option in options.iter().rev() {
        if let Err(found) = apply_option(&mut reg, option) {
            return Some(found);
        }
    }
    Some(check(reg))
}

/// A builder method that registers: `.patches("name", set)`, `.gates(Hook, "name", gates)`.
pub fn builder_method(call: &ExprMethodCall) -> Option<Found> {
    let line = line_of(call.method.span());
    let args: Vec<&Expr> = call.args.iter().collect();
    let read = |hook: Result<&'static HookInfo, String>, name: &Expr| {
        let hook = hook?;
        let name = string_literal(name).ok_or_else(|| {
            format!(
                "the name of its {} handler is not a string literal",
                hook.name
            )
        })?;
        Ok::<_, String>(Registered {
            hook,
            name,
            timeout: None,
            failure_policy: None,
            function: None,
            line,
        })
    };
    let found = match (call.method.to_string().as_str(), args.as_slice()) {
        ("patches", [name, _set]) => read(Ok(generate_patches()), name),
        ("gates", [hook, name, _gates]) => read(hook_of(hook), name),
        _ => return None,
    };
    Some(match found {
        Ok(reg) => check(reg),
        Err(what) => Found::Unreadable(line, what),
    })
}

fn generate_patches() -> &'static HookInfo {
    catalog::find("GeneratePatches").expect("GeneratePatches is in the catalog")
}

/// `new`, `with_state`, `patches` or `gates` when `call` is `Registration::<that>(..)`.
fn constructor(call: &ExprCall) -> Option<String> {
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match segments.as_slice() {
        [.., ty, ctor]
            if ty == "Registration"
                && matches!(ctor.as_str(), "new" | "with_state" | "patches" | "gates") =>
        {
            Some(ctor.clone())
        }
        _ => None,
    }
}

fn read_constructor(call: &ExprCall, ctor: &str) -> Result<Registered, String> {
    let args: Vec<&Expr> = call.args.iter().collect();
    let line = line_of(call.span());
    let (hook, name, function) = match (ctor, args.as_slice()) {
        ("patches", [name, _]) => (generate_patches(), *name, None),
        ("new" | "with_state", [hook, name, function]) => {
            (hook_of(hook)?, *name, last_segment(function))
        }
        ("gates", [hook, name, _]) => (hook_of(hook)?, *name, None),
        _ => {
            return Err(format!(
                "`Registration::{ctor}` has an unexpected number of arguments"
            ));
        }
    };
    let name = string_literal(name).ok_or_else(|| {
        format!(
            "the name of its {} handler is not a string literal",
            hook.name
        )
    })?;
    Ok(Registered {
        hook,
        name,
        timeout: None,
        failure_policy: None,
        function,
        line,
    })
}

fn apply_option(reg: &mut Registered, option: &ExprMethodCall) -> Result<(), Found> {
    let arg = option.args.first();
    let line = reg.line;
    let unreadable = |what: String| Found::Unreadable(line, what);
    if option.method == "timeout_seconds" {
        let seconds = match arg {
            Some(Expr::Lit(syn::ExprLit {
                lit: Lit::Int(i), ..
            })) => i
                .base10_parse::<i64>()
                .map_err(|e| unreadable(e.to_string()))?,
            _ => {
                return Err(unreadable(format!(
                    "the timeout of handler `{}` is not an integer literal",
                    reg.name
                )));
            }
        };
        reg.timeout = Some(
            naming::validate_timeout(seconds)
                .map_err(|e| Found::Invalid(line, format!("handler `{}`: {e}", reg.name)))?,
        );
    } else {
        let policy = arg
            .and_then(last_segment)
            .filter(|p| p == "Fail" || p == "Ignore");
        reg.failure_policy = Some(policy.ok_or_else(|| {
            unreadable(format!(
                "the failure policy of handler `{}` is not `FailurePolicy::Fail` or `FailurePolicy::Ignore`",
                reg.name
            ))
        })?);
    }
    Ok(())
}

/// The checks CAPI makes of a registration, as `#[hook]` makes them at compile time.
fn check(reg: Registered) -> Found {
    if reg.hook.singleton {
        return Found::Invalid(
            reg.line,
            "Discovery is answered by the runtime from the registrations; do not register it"
                .into(),
        );
    }
    if let Err(e) = naming::validate_dns_label(&reg.name) {
        return Found::Invalid(reg.line, e.to_string());
    }
    Found::Registered(reg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(text: &str) -> Expr {
        syn::parse_str(text).unwrap()
    }

    fn registered(found: Option<Found>) -> Registered {
        match found {
            Some(Found::Registered(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reads_constructors_and_their_options() {
        let r = registered(registration(&expr(
            r#"capi_ext::Registration::gates(BeforeClusterCreate, "hold", gates()).timeout_seconds(5).failure_policy(FailurePolicy::Ignore)"#,
        )));
        assert_eq!(
            (
                r.hook.name,
                r.name.as_str(),
                r.timeout,
                r.failure_policy.as_deref()
            ),
            ("BeforeClusterCreate", "hold", Some(5), Some("Ignore"))
        );
        let r = registered(registration(&expr(
            r#"Registration::patches("patches", set())"#,
        )));
        assert_eq!(
            (r.hook.name, r.name.as_str()),
            ("GeneratePatches", "patches")
        );
        let r = registered(registration(&expr(
            r#"Registration::with_state(hooks::v1alpha1::BeforeClusterDelete, "del", hooks::del::handler)"#,
        )));
        assert_eq!(r.function.as_deref(), Some("handler"));
        assert_eq!(registration(&expr("other.timeout_seconds(5)")), None);
        assert_eq!(registration(&expr("Foo::new(a, b, c)")), None);
    }

    #[test]
    fn reads_builder_methods() {
        let call: ExprMethodCall =
            syn::parse_str(r#"b.gates(BeforeClusterDelete, "hold", g)"#).unwrap();
        let r = registered(builder_method(&call));
        assert_eq!(
            (r.hook.name, r.name.as_str()),
            ("BeforeClusterDelete", "hold")
        );
        let call: ExprMethodCall = syn::parse_str(r#"b.patches("p", set)"#).unwrap();
        assert_eq!(
            registered(builder_method(&call)).hook.name,
            "GeneratePatches"
        );
        let call: ExprMethodCall = syn::parse_str(r#"set.patch(p)"#).unwrap();
        assert_eq!(builder_method(&call), None);
    }

    #[test]
    fn says_what_it_cannot_read_and_what_capi_refuses() {
        let found = registration(&expr(r#"Registration::new(BeforeClusterCreate, name, f)"#));
        assert!(
            matches!(&found, Some(Found::Unreadable(_, w)) if w == "the name of its BeforeClusterCreate handler is not a string literal"),
            "{found:?}"
        );
        let found = registration(&expr(
            r#"Registration::new(BeforeClusterCreate, "a", f).timeout_seconds(t)"#,
        ));
        assert!(
            matches!(&found, Some(Found::Unreadable(_, w)) if w.contains("not an integer literal")),
            "{found:?}"
        );
        let found = registration(&expr(r#"Registration::new(BeforeClusterCreat, "a", f)"#));
        assert!(
            matches!(&found, Some(Found::Unreadable(_, w)) if w.contains("did you mean `BeforeClusterCreate`")),
            "{found:?}"
        );
        let found = registration(&expr(
            r#"Registration::new(BeforeClusterCreate, "Bad_Name", f)"#,
        ));
        assert!(
            matches!(&found, Some(Found::Invalid(_, w)) if w.contains("not a DNS-1123 label")),
            "{found:?}"
        );
        let found = registration(&expr(
            r#"Registration::new(BeforeClusterCreate, "a", f).timeout_seconds(31)"#,
        ));
        assert!(
            matches!(&found, Some(Found::Invalid(_, w)) if w.contains("timeout of 31 seconds")),
            "{found:?}"
        );
    }
}
