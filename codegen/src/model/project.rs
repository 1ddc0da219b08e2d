//! A project's sources read statically: its `#[hook]` handlers, its `Variables` types and the
//! name it answers DiscoverVariables with, without compiling anything.

use super::handler::{self, HandlerModel};
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

/// What the sources declare.
#[derive(Debug, Clone, Default)]
pub struct SourceModel {
    /// `#[hook]` handlers, in file and source order.
    pub handlers: Vec<FoundHandler>,
    /// `#[derive(Variables)]` types with their definitions.
    pub variables: Vec<(String, Vec<Value>)>,
    /// The handler name of `.variables::<T>("name")`, if the extension registers one.
    pub variables_handler: Option<String>,
}

struct Finder<'a> {
    file: &'a str,
    handlers: Vec<FoundHandler>,
    errors: Vec<LocatedError>,
    variables_handler: Option<String>,
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
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
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// Reads `(path, text)` sources. Errors carry file, line and column.
pub fn read(sources: &[(String, String)]) -> Result<SourceModel, Vec<LocatedError>> {
    let mut model = SourceModel::default();
    let mut errors = Vec::new();
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
            errors: Vec::new(),
            variables_handler: None,
        };
        finder.visit_file(&parsed);
        model.handlers.extend(finder.handlers);
        errors.extend(finder.errors);
        if finder.variables_handler.is_some() {
            model.variables_handler = finder.variables_handler;
        }
    }
    match static_schema::variables(sources) {
        Ok(v) => model.variables = v,
        Err(e) => errors.extend(e),
    }
    let mut seen = std::collections::HashMap::new();
    for h in &model.handlers {
        if let Some(first) = seen.insert(h.model.name.clone(), (h.file.clone(), h.line)) {
            errors.push(LocatedError {
                file: h.file.clone(),
                line: h.line,
                column: 1,
                message: format!(
                    "handler name `{}` is already used at {}:{}; handler names must be unique",
                    h.model.name, first.0, first.1
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
            fn main() { let e = capi_ext::Extension::builder().variables::<variables::Variables>("vars").register::<a>(); }
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
    fn errors_name_file_and_line() {
        let bad = "\n#[hook(BeforeClusterCreat)]\nasync fn a(r: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse { todo!() }\n";
        let errs = read(&[("src/hooks/a.rs".into(), bad.into())]).unwrap_err();
        assert!(errs[0].to_string().starts_with("src/hooks/a.rs:2:8: unknown hook `BeforeClusterCreat`; did you mean `BeforeClusterCreate`?"), "{}", errs[0]);
    }
}
