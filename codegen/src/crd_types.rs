//! Rust types from CRD schemas, for `capi-ext generate types` and the built-in template types:
//! one struct per object of the schema, docs from the descriptions, `Option` for the fields the
//! schema does not require, enums for string enums (a value the type does not list is kept as
//! `Other`), `IntOrString` for `x-kubernetes-int-or-string`, maps for `additionalProperties`,
//! JSON values where the schema preserves unknown fields, names in Rust style with serde renames.
//! Every struct keeps the fields it does not know in `unknown` and writes them back, so a
//! decode and encode is lossless even against a newer CRD than the one the types came from.
//!
//! Structs are named after their field (`KubeadmConfigSpec`, `ClusterConfiguration`); two
//! different objects under the same name get their parent's name in front. Identical objects
//! share one struct.
//!
//! ```
//! use capi_ext_codegen::crd_types::{generate, Options};
//! let crd = serde_json::json!({
//!     "kind": "CustomResourceDefinition",
//!     "spec": {"group": "example.com", "names": {"kind": "WidgetTemplate"},
//!       "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
//!         "type": "object",
//!         "properties": {"spec": {"type": "object", "required": ["size"], "properties": {
//!           "size": {"type": "integer", "format": "int32", "description": "How big."},
//!           "mode": {"type": "string", "enum": ["fast", "safe"]}}}}}}}]}});
//! let source = generate(&[crd], &Options::default()).unwrap();
//! assert!(source.contains("pub struct WidgetTemplate {"));
//! assert!(source.contains("    /// How big.\n    pub size: i32,"));
//! assert!(source.contains("pub mode: Option<Mode>,"));
//! assert!(source.contains("const KIND: &'static str = \"WidgetTemplate\";"));
//! ```

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What to generate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only these kinds (empty: every CRD given).
    pub kinds: Vec<String>,
    /// This version of each CRD (default: its storage version).
    pub version: Option<String>,
    /// A line saying where the CRDs came from, written into the file's header.
    pub source: String,
}

/// A CRD kind chosen for generation.
struct Root<'a> {
    kind: String,
    api_version: String,
    schema: &'a Value,
}

#[derive(Default)]
struct Gen {
    /// Struct and enum definitions, in the order they were first needed.
    items: Vec<String>,
    /// Every name used, with the fingerprint of the schema it stands for.
    names: BTreeMap<String, String>,
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `fooBar` → `FooBar`, `x-kubernetes` → `XKubernetes`, `1.0` → `V1_0`.
pub fn pascal_case(name: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if upper {
                out.extend(c.to_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        } else {
            upper = true;
        }
    }
    if out.is_empty() {
        out.push_str("Empty");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'V');
    }
    out
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
    "mut", "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super",
    "trait", "true", "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while",
    "yield", "abstract", "become", "do", "final", "macro", "try", "gen", "unknown",
];

/// `apiVersion` → `api_version`, `podCIDR` → `pod_cidr`, `type` → `type_`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            // An acronym's plural (`IPs`) stays with it.
            let plural = chars.get(i + 1) == Some(&'s')
                && chars.get(i + 2).is_none_or(|n| n.is_ascii_uppercase());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()) && !plural;
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if !out.is_empty() && !out.ends_with('_') && (prev_lower || (prev_upper && next_lower))
            {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let mut out = out.trim_end_matches('_').to_string();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'f');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// A schema without its descriptions, as text: two objects with the same fingerprint are the
/// same type.
fn fingerprint(schema: &Value) -> String {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, v)| !(k.as_str() == "description" && v.is_string()))
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    strip(schema).to_string()
}

fn doc(out: &mut String, indent: &str, description: &str) {
    for line in description.trim().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            // A doc line that opens a code block or holds HTML would be read as such.
            let line = line.replace("```", "'''");
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

fn is_preserved(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
}

impl Gen {
    /// A name for a new definition of `schema`: the hint, or the parent's name in front when the
    /// hint stands for another schema already; `Ok(name)` when it is new, `Err(name)` when the
    /// same schema has it already.
    fn name_for(&mut self, hint: &str, parent: &str, schema: &Value) -> Result<String, String> {
        let print = fingerprint(schema);
        let mut candidates = vec![hint.to_string(), format!("{parent}{hint}")];
        for n in 2.. {
            if candidates.len() > 12 {
                break;
            }
            candidates.push(format!("{parent}{hint}{n}"));
        }
        for name in candidates {
            match self.names.get(&name) {
                Some(existing) if *existing == print => return Err(name),
                Some(_) => continue,
                None => {
                    self.names.insert(name.clone(), print);
                    return Ok(name);
                }
            }
        }
        unreachable!("twelve candidates")
    }

    /// The Rust type of a field of `schema`, defining the structs and enums it needs.
    fn type_of(&mut self, schema: &Value, hint: &str, parent: &str) -> String {
        if schema
            .get("x-kubernetes-int-or-string")
            .and_then(Value::as_bool)
            == Some(true)
        {
            return "capi_ext::schema::IntOrString".into();
        }
        let type_ = text(schema, "/type");
        match type_ {
            "string" => {
                if let Some(values) = schema.get("enum").and_then(Value::as_array)
                    && values.iter().all(Value::is_string)
                    && !values.is_empty()
                {
                    return self.enum_type(schema, hint, parent, values);
                }
                "String".into()
            }
            "integer" => match text(schema, "/format") {
                "int32" => "i32".into(),
                _ => "i64".into(),
            },
            "number" => "f64".into(),
            "boolean" => "bool".into(),
            "array" => {
                let item = schema.get("items").cloned().unwrap_or(Value::Null);
                let singular = hint
                    .strip_suffix('s')
                    .filter(|s| !s.is_empty())
                    .unwrap_or(hint);
                format!("Vec<{}>", self.type_of(&item, singular, parent))
            }
            "object" | "" => {
                let properties = schema.get("properties").and_then(Value::as_object);
                match (properties, schema.get("additionalProperties")) {
                    (Some(properties), _) if !properties.is_empty() => {
                        self.struct_type(schema, hint, parent)
                    }
                    (_, Some(additional @ Value::Object(_))) => format!(
                        "std::collections::BTreeMap<String, {}>",
                        self.type_of(additional, hint, parent)
                    ),
                    _ if type_ == "object" && !is_preserved(schema) => {
                        "serde_json::Map<String, serde_json::Value>".into()
                    }
                    _ => "serde_json::Value".into(),
                }
            }
            _ => "serde_json::Value".into(),
        }
    }

    fn enum_type(&mut self, schema: &Value, hint: &str, parent: &str, values: &[Value]) -> String {
        let name = match self.name_for(hint, parent, schema) {
            Ok(name) => name,
            Err(existing) => return existing,
        };
        let mut out = String::new();
        match schema.get("description").and_then(Value::as_str) {
            Some(d) => doc(&mut out, "", d),
            None => {
                let _ = writeln!(out, "/// One of the values the schema allows.");
            }
        }
        let _ = writeln!(
            out,
            "#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]"
        );
        let _ = writeln!(out, "pub enum {name} {{");
        let mut used = Vec::new();
        for (i, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or_default();
            let mut variant = pascal_case(value);
            if variant == "Other" || used.contains(&variant) {
                variant = format!("{variant}{}", i + 1);
            }
            used.push(variant.clone());
            let _ = writeln!(out, "    /// `{value}`.");
            if i == 0 {
                let _ = writeln!(out, "    #[default]");
            }
            let _ = writeln!(out, "    #[serde(rename = {})]", Value::from(value));
            let _ = writeln!(out, "    {variant},");
        }
        let _ = writeln!(
            out,
            "    /// A value this type does not list (a newer CRD's), kept as it is."
        );
        let _ = writeln!(out, "    #[serde(untagged)]");
        let _ = writeln!(out, "    Other(String),");
        let _ = writeln!(out, "}}");
        self.items.push(out);
        name
    }

    fn struct_type(&mut self, schema: &Value, hint: &str, parent: &str) -> String {
        let name = match self.name_for(hint, parent, schema) {
            Ok(name) => name,
            Err(existing) => return existing,
        };
        // Reserve the slot so the struct comes before the types of its fields.
        let slot = self.items.len();
        self.items.push(String::new());
        let out = self.struct_body(schema, &name, None);
        self.items[slot] = out;
        name
    }

    /// A struct's definition; `root` gives the kind's apiVersion and kind.
    fn struct_body(&mut self, schema: &Value, name: &str, root: Option<(&str, &str)>) -> String {
        let empty = serde_json::Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = String::new();
        let mut used = vec!["unknown".to_string()];
        for (property, field_schema) in properties {
            let mut field = snake_case(property);
            while used.contains(&field) {
                field.push('_');
            }
            used.push(field.clone());
            let is_root_meta = root.is_some() && matches!(property.as_str(), "apiVersion" | "kind");
            let ty = if is_root_meta {
                "String".to_string()
            } else {
                self.type_of(field_schema, &pascal_case(property), name)
            };
            let optional = !is_root_meta && !required.contains(&property.as_str());
            if let Some(d) = field_schema.get("description").and_then(Value::as_str) {
                doc(&mut fields, "    ", d);
            } else {
                let _ = writeln!(fields, "    /// `{property}`.");
            }
            let mut attrs = Vec::new();
            if field != *property {
                attrs.push(format!("rename = {}", Value::from(property.as_str())));
            }
            if optional {
                attrs.push("default".into());
                attrs.push("skip_serializing_if = \"Option::is_none\"".into());
            }
            if !attrs.is_empty() {
                let _ = writeln!(fields, "    #[serde({})]", attrs.join(", "));
            }
            let ty = if optional {
                format!("Option<{ty}>")
            } else {
                ty
            };
            let _ = writeln!(fields, "    pub {field}: {ty},");
        }
        let mut out = String::new();
        match schema.get("description").and_then(Value::as_str) {
            Some(d) => doc(&mut out, "", d),
            None => {
                let _ = writeln!(out, "/// `{name}`.");
            }
        }
        let _ = writeln!(
            out,
            "#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]"
        );
        let _ = writeln!(out, "pub struct {name} {{");
        out.push_str(&fields);
        let _ = writeln!(
            out,
            "    /// Fields this type does not know (a newer CRD's), kept and written back as they are."
        );
        let _ = writeln!(out, "    #[serde(flatten)]");
        let _ = writeln!(
            out,
            "    pub unknown: serde_json::Map<String, serde_json::Value>,"
        );
        let _ = writeln!(out, "}}");
        if let Some((api_version, kind)) = root {
            let _ = writeln!(out);
            let _ = writeln!(out, "impl capi_ext::patches::TypedTemplate for {name} {{");
            let _ = writeln!(
                out,
                "    const API_VERSION: &'static str = {};",
                Value::from(api_version)
            );
            let _ = writeln!(out, "    const KIND: &'static str = {};", Value::from(kind));
            let _ = writeln!(out, "}}");
        }
        out
    }

    fn root(&mut self, root: &Root) -> Result<(), String> {
        let name = match self.name_for(&root.kind, "", root.schema) {
            Ok(name) if name == root.kind => name,
            _ => return Err(format!("the kind {} is given twice", root.kind)),
        };
        let slot = self.items.len();
        self.items.push(String::new());
        let body = self.struct_body(root.schema, &name, Some((&root.api_version, &root.kind)));
        self.items[slot] = body;
        Ok(())
    }
}

/// Rust source for the kinds of `crds` (CustomResourceDefinition documents; other kinds are
/// skipped): a header, then the definitions. An error names a kind asked for that no CRD holds,
/// or a version the CRD does not have.
pub fn generate(crds: &[Value], options: &Options) -> Result<String, String> {
    let mut roots = Vec::new();
    for crd in crds {
        if text(crd, "/kind") != "CustomResourceDefinition" {
            continue;
        }
        let kind = text(crd, "/spec/names/kind").to_string();
        if !options.kinds.is_empty() && !options.kinds.contains(&kind) {
            continue;
        }
        let versions: &[Value] = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let version = match &options.version {
            Some(wanted) => versions
                .iter()
                .find(|v| text(v, "/name") == wanted)
                .ok_or_else(|| {
                    let names: Vec<&str> = versions.iter().map(|v| text(v, "/name")).collect();
                    format!(
                        "the CRD of {kind} has no version {wanted} (it has {})",
                        names.join(", ")
                    )
                })?,
            None => versions
                .iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .ok_or_else(|| format!("the CRD of {kind} has no storage version"))?,
        };
        let schema = version.pointer("/schema/openAPIV3Schema").ok_or_else(|| {
            format!(
                "the CRD of {kind} version {} has no schema",
                text(version, "/name")
            )
        })?;
        roots.push((
            kind.clone(),
            format!("{}/{}", text(crd, "/spec/group"), text(version, "/name")),
            schema,
        ));
    }
    for wanted in &options.kinds {
        if !roots.iter().any(|(kind, _, _)| kind == wanted) {
            let known: Vec<&str> = crds
                .iter()
                .filter(|c| text(c, "/kind") == "CustomResourceDefinition")
                .map(|c| text(c, "/spec/names/kind"))
                .collect();
            let hint = crate::naming::did_you_mean(wanted, known.iter().copied())
                .map(|k| format!(" (did you mean {k}?)"))
                .unwrap_or_default();
            return Err(format!(
                "no CRD of the kind {wanted} among those given{hint}"
            ));
        }
    }
    if roots.is_empty() {
        return Err("no CustomResourceDefinition among the documents given".into());
    }
    roots.sort_by(|a, b| a.0.cmp(&b.0));
    let mut generator = Gen::default();
    // The roots' names first, so a field never takes a kind's name.
    for (kind, _, schema) in &roots {
        generator.names.insert(kind.clone(), fingerprint(schema));
    }
    for (kind, api_version, schema) in &roots {
        generator.names.remove(kind);
        generator.root(&Root {
            kind: kind.clone(),
            api_version: api_version.clone(),
            schema,
        })?;
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// @generated by `capi-ext generate types`; do not edit."
    );
    if !options.source.is_empty() {
        let _ = writeln!(out, "// {}", options.source);
    }
    let kinds: Vec<&str> = roots.iter().map(|(k, _, _)| k.as_str()).collect();
    let _ = writeln!(out, "//! Types of {}, from their CRDs.", kinds.join(", "));
    let _ = writeln!(out);
    let _ = writeln!(out, "#![allow(clippy::all, missing_docs, rustdoc::all)]");
    for item in generator.items {
        let _ = writeln!(out);
        out.push_str(&item);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_rust_style() {
        assert_eq!(snake_case("apiVersion"), "api_version");
        assert_eq!(snake_case("podCIDR"), "pod_cidr");
        assert_eq!(snake_case("clusterIPs"), "cluster_ips");
        assert_eq!(snake_case("type"), "type_");
        assert_eq!(snake_case("x-kubernetes-list"), "x_kubernetes_list");
        assert_eq!(snake_case("URLs"), "urls");
        assert_eq!(snake_case("kubeletExtraArgs"), "kubelet_extra_args");
        assert_eq!(snake_case("unknown"), "unknown_");
        assert_eq!(pascal_case("cloud-config"), "CloudConfig");
        assert_eq!(pascal_case(""), "Empty");
        assert_eq!(pascal_case("1.0"), "V10");
    }
}
