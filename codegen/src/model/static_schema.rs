//! The static path: schemas computed from source text, without compiling it (for
//! `capi-ext generate`). It calls the same [`crate::schema`] functions the derived code calls,
//! so its JSON is the JSON the compiled extension serves.

use super::schema_item::{self, DeriveKind, ItemModel, SchemaModel};
use super::shape::Shape;
use crate::schema;
use serde_json::Value;
use std::collections::BTreeMap;

/// A problem, located in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for LocatedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// Locates every error of a darling error in `file`.
pub fn locate(file: &str, err: darling::Error) -> Vec<LocatedError> {
    err.into_iter()
        .map(|e| {
            let start = e.span().start();
            LocatedError {
                file: file.to_string(),
                line: start.line,
                column: start.column + 1,
                message: e.to_string(),
            }
        })
        .collect()
}

fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|m| {
                found |= m.path.segments.last().is_some_and(|s| s.ident == name);
                Ok(())
            });
            found
        })
}

/// The `Variables` types of a set of source files with their variable definitions
/// (CAPI's `ClusterClassVariable` JSON), in source order.
pub fn variables(
    sources: &[(String, String)],
) -> Result<Vec<(String, Vec<Value>)>, Vec<LocatedError>> {
    let mut errors = Vec::new();
    let mut schemas: BTreeMap<String, SchemaModel> = BTreeMap::new();
    let mut variable_types = Vec::new();
    for (file, text) in sources {
        let parsed = match syn::parse_file(text) {
            Ok(f) => f,
            Err(e) => {
                errors.extend(locate(file, e.into()));
                continue;
            }
        };
        for item in parsed.items {
            let input: syn::DeriveInput = match item {
                syn::Item::Struct(s) => s.into(),
                syn::Item::Enum(e) => e.into(),
                _ => continue,
            };
            for (kind, name) in [
                (DeriveKind::Schema, "Schema"),
                (DeriveKind::Variables, "Variables"),
            ] {
                if !derives(&input.attrs, name) {
                    continue;
                }
                match schema_item::parse(&input, kind) {
                    Ok(model) if kind == DeriveKind::Variables => {
                        variable_types.push((file.clone(), model))
                    }
                    Ok(model) => {
                        schemas.insert(model.ident.to_string(), model);
                    }
                    Err(e) => errors.extend(locate(file, e)),
                }
            }
        }
    }
    let mut out = Vec::new();
    for (file, model) in &variable_types {
        let ItemModel::Struct { properties } = &model.item else {
            continue;
        };
        let mut defs = Vec::new();
        for p in properties {
            match resolve(&p.shape, &schemas, &mut Vec::new()) {
                Ok(base) => defs.push(schema::variable(
                    &p.name,
                    p.required,
                    schema::apply(base, &p.attrs),
                )),
                Err(message) => errors.extend(locate(
                    file,
                    darling::Error::custom(message).with_span(&p.ty),
                )),
            }
        }
        out.push((model.ident.to_string(), defs));
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The key of the placeholder a `#[schema(schemars)]` field leaves in a static schema: only the
/// compiled extension knows that schema (see [`needs_compiled`]).
pub const COMPILED: &str = "x-capi-ext-compiled";

fn compiled_marker(label: &str) -> Value {
    serde_json::json!({ COMPILED: label })
}

/// The `Struct.field` labels of the schemas only the compiled extension can give (fields marked
/// `#[schema(schemars)]`), found anywhere in `value`.
pub fn needs_compiled(value: &Value) -> Vec<String> {
    match value {
        Value::Object(map) => match map.get(COMPILED).and_then(Value::as_str) {
            Some(label) => vec![label.to_string()],
            None => map.values().flat_map(needs_compiled).collect(),
        },
        Value::Array(items) => items.iter().flat_map(needs_compiled).collect(),
        _ => Vec::new(),
    }
}

fn resolve(
    shape: &Shape,
    schemas: &BTreeMap<String, SchemaModel>,
    stack: &mut Vec<String>,
) -> Result<Value, String> {
    Ok(match shape {
        Shape::Primitive(p) => schema::primitive(*p),
        Shape::Option(inner) => resolve(inner, schemas, stack)?,
        Shape::Array(inner) => schema::array(resolve(inner, schemas, stack)?),
        Shape::Map(inner) => schema::map(resolve(inner, schemas, stack)?),
        Shape::Named(path) => {
            let name = path
                .segments
                .last()
                .expect("a path has a segment")
                .ident
                .to_string();
            let model = schemas
                .get(&name)
                .ok_or_else(|| format!("type `{name}` has no ClusterClass schema: add #[derive(Schema)] to it (in this crate)"))?;
            if stack.contains(&name) {
                return Err(format!(
                    "type `{name}` contains itself: CAPI schemas cannot be recursive"
                ));
            }
            stack.push(name);
            let value = schema_of(model, schemas, stack)?;
            stack.pop();
            value
        }
        Shape::Schemars { label, .. } => compiled_marker(label),
    })
}

fn schema_of(
    model: &SchemaModel,
    schemas: &BTreeMap<String, SchemaModel>,
    stack: &mut Vec<String>,
) -> Result<Value, String> {
    let base = match &model.item {
        ItemModel::Struct { properties } => {
            let mut props = Vec::new();
            for p in properties {
                props.push((
                    p.name.clone(),
                    schema::apply(resolve(&p.shape, schemas, stack)?, &p.attrs),
                ));
            }
            schema::object(
                props,
                properties
                    .iter()
                    .filter(|p| p.required)
                    .map(|p| p.name.clone())
                    .collect(),
            )
        }
        ItemModel::Enum { values } => schema::string_enum(values.clone()),
    };
    Ok(schema::apply(base, &model.attrs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_nested_types_and_locates_errors() {
        let src = r#"
            #[derive(Deserialize, Variables)]
            struct Vars { workers: Workers, size: Size }
            #[derive(Schema)]
            struct Workers { count: u8 }
            #[derive(Schema)]
            enum Size { Small, Large }
        "#;
        let out = variables(&[("src/vars.rs".into(), src.into())]).unwrap();
        assert_eq!(out[0].0, "Vars");
        assert_eq!(
            out[0].1[0]["schema"]["openAPIV3Schema"]["properties"]["count"]["type"],
            "integer"
        );
        assert_eq!(out[0].1[1]["schema"]["openAPIV3Schema"]["enum"][1], "Large");

        let bad =
            "#[derive(Variables)]\nstruct Vars {\n    other: Missing,\n    builtin: String,\n}\n";
        let errs = variables(&[("src/bad.rs".into(), bad.into())]).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0]
                .to_string()
                .starts_with("src/bad.rs:4:5: `builtin` is reserved"),
            "{errs:?}"
        );
        let bad = "#[derive(Variables)]\nstruct Vars {\n    other: Missing,\n}\n";
        let errs = variables(&[("src/bad.rs".into(), bad.into())]).unwrap_err();
        assert!(
            errs[0]
                .to_string()
                .starts_with("src/bad.rs:3:12: type `Missing` has no ClusterClass schema"),
            "{errs:?}"
        );
    }
}
