//! `#[derive(Variables)]` and `#[derive(Schema)]` inputs: darling attribute structs (the single
//! source of truth for what `#[schema(...)]` accepts) and the model built from them.

use super::shape::{Shape, shape};
use crate::schema::{self, Rule, SchemaAttrs};
use darling::util::{Flag, SpannedValue};
use darling::{FromDeriveInput, FromField, FromMeta, FromVariant};
use serde_json::Value;
use syn::{Attribute, Expr, Ident, Lit, LitStr, Type};

/// One CEL rule, in any of three spellings:
/// `#[schema(validation(rule = "...", message = "..."))]`, `#[schema(validation = "...")]`, or
/// kube-rs's `#[x_kube(validation = Rule::new("...").message("..."))]`.
#[derive(Debug, Clone)]
pub struct ValidationMeta {
    /// The CEL expression.
    pub rule: String,
    /// The message when the rule fails.
    pub message: Option<String>,
    /// A CEL expression for the message.
    pub message_expression: Option<String>,
    /// A machine-readable reason, e.g. `FieldValueInvalid`.
    pub reason: Option<String>,
    /// The field the failure is reported on, relative (`.spec.name`).
    pub field_path: Option<String>,
}

/// The list spelling: `validation(rule = "...", message = "...")`.
#[derive(Debug, Clone, FromMeta)]
struct ValidationList {
    rule: String,
    #[darling(default)]
    message: Option<String>,
    #[darling(default)]
    message_expression: Option<String>,
    #[darling(default)]
    reason: Option<String>,
    #[darling(default)]
    field_path: Option<String>,
}

impl ValidationMeta {
    fn rule(rule: String) -> Self {
        ValidationMeta {
            rule,
            message: None,
            message_expression: None,
            reason: None,
            field_path: None,
        }
    }
}

fn string_arg<T: quote::ToTokens>(
    args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
    what: &str,
    span: &T,
) -> darling::Result<String> {
    match args.iter().collect::<Vec<_>>().as_slice() {
        [
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }),
        ] => Ok(s.value()),
        [Expr::Path(p)] if what == "reason" => Ok(p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default()),
        _ => Err(
            darling::Error::custom(format!("`{what}(..)` takes one string literal"))
                .with_span(span),
        ),
    }
}

impl FromMeta for ValidationMeta {
    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        let list = ValidationList::from_list(items)?;
        Ok(ValidationMeta {
            rule: list.rule,
            message: list.message,
            message_expression: list.message_expression,
            reason: list.reason,
            field_path: list.field_path,
        })
    }

    fn from_string(rule: &str) -> darling::Result<Self> {
        Ok(ValidationMeta::rule(rule.to_string()))
    }

    /// `"rule"` or kube-rs's `Rule::new("rule").message("..").reason(..).field_path("..")`.
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Ok(ValidationMeta::rule(s.value())),
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Call(call) if matches!(&*call.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "new")) => {
                Ok(ValidationMeta::rule(string_arg(&call.args, "Rule::new", call)?))
            }
            Expr::MethodCall(m) => {
                let mut rule = Self::from_expr(&m.receiver)?;
                let method = m.method.to_string();
                let value = string_arg(&m.args, &method, &m.method)?;
                match method.as_str() {
                    "message" => rule.message = Some(value),
                    "reason" => rule.reason = Some(value),
                    "field_path" => rule.field_path = Some(value),
                    other => {
                        return Err(darling::Error::custom(format!(
                            "unknown rule method `{other}`; kube-rs's Rule has message, reason and field_path"
                        ))
                        .with_span(&m.method));
                    }
                }
                Ok(rule)
            }
            other => Err(darling::Error::custom(
                "expected a CEL rule: \"self.size() > 0\", validation(rule = \"..\", message = \"..\") or Rule::new(\"..\").message(\"..\")",
            )
            .with_span(other)),
        }
    }
}

/// One label or annotation: `#[schema(label(key = "...", value = "..."))]`.
#[derive(Debug, Clone, FromMeta)]
pub struct KeyValueMeta {
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
}

/// Everything `#[schema(...)]` accepts on a type, field or variable.
#[derive(Debug, Clone, Default, FromMeta)]
pub struct SchemaOptions {
    /// Description; defaults to the doc comment.
    pub description: Option<String>,
    /// Regular expression (strings).
    pub pattern: Option<String>,
    /// Format, e.g. `uri`, `date-time`.
    pub format: Option<String>,
    /// Minimum length (strings).
    pub min_length: Option<i64>,
    /// Maximum length (strings).
    pub max_length: Option<i64>,
    /// Minimum (integers; CAPI does not accept fractional bounds).
    pub minimum: Option<i64>,
    /// Maximum (integers).
    pub maximum: Option<i64>,
    /// Minimum number of items.
    pub min_items: Option<i64>,
    /// Maximum number of items.
    pub max_items: Option<i64>,
    /// Items must be unique.
    pub unique_items: Flag,
    /// Allowed values, as literals: `enum_values("a", "b")`.
    pub enum_values: Option<LitList>,
    /// Default value: a string, number or boolean literal.
    pub default: Option<Lit>,
    /// Default value as JSON text, for objects and arrays.
    pub default_json: Option<SpannedValue<String>>,
    /// Example value: a literal.
    pub example: Option<Lit>,
    /// Example value as JSON text.
    pub example_json: Option<SpannedValue<String>>,
    /// CEL rules.
    #[darling(multiple, rename = "validation")]
    pub validations: Vec<ValidationMeta>,
    /// `x-metadata` labels.
    #[darling(multiple, rename = "label")]
    pub labels: Vec<KeyValueMeta>,
    /// `x-metadata` annotations.
    #[darling(multiple, rename = "annotation")]
    pub annotations: Vec<KeyValueMeta>,
    /// Marks the schema deprecated.
    pub deprecated: Flag,
    /// Take the field's schema from its type's `schemars::JsonSchema` (feature `schemars` of
    /// capi-ext), converted to CAPI's subset; for types such as k8s-openapi's.
    pub schemars: Flag,
}

/// A list of literals: `enum_values("a", "b")`.
#[derive(Debug, Clone, Default)]
pub struct LitList(pub Vec<Lit>);

impl FromMeta for LitList {
    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        items
            .iter()
            .map(|item| match item {
                darling::ast::NestedMeta::Lit(lit) => Ok(lit.clone()),
                other => Err(
                    darling::Error::custom("expected a literal such as \"a\" or 3")
                        .with_span(other),
                ),
            })
            .collect::<darling::Result<_>>()
            .map(LitList)
    }
}

/// A `#[derive(Variables)]` / `#[derive(Schema)]` input.
#[derive(Debug, FromDeriveInput)]
#[darling(attributes(schema, x_kube), forward_attrs(doc, serde))]
pub struct SchemaInput {
    /// The type's name.
    pub ident: Ident,
    /// Generics (not supported; reported).
    pub generics: syn::Generics,
    /// Fields or variants.
    pub data: darling::ast::Data<SchemaVariant, SchemaField>,
    /// Doc and serde attributes.
    pub attrs: Vec<Attribute>,
    /// `#[schema(...)]` on the type.
    #[darling(flatten)]
    pub options: SchemaOptions,
}

/// A field.
#[derive(Debug, FromField)]
#[darling(attributes(schema, x_kube), forward_attrs(doc, serde))]
pub struct SchemaField {
    /// Name (`None` for tuple fields).
    pub ident: Option<Ident>,
    /// Type.
    pub ty: Type,
    /// Doc and serde attributes.
    pub attrs: Vec<Attribute>,
    /// `#[schema(...)]` on the field.
    #[darling(flatten)]
    pub options: SchemaOptions,
}

/// An enum variant.
#[derive(Debug, FromVariant)]
#[darling(attributes(schema, x_kube), forward_attrs(doc, serde))]
pub struct SchemaVariant {
    /// Name.
    pub ident: Ident,
    /// Fields (must be none).
    pub fields: darling::ast::Fields<darling::util::Ignored>,
    /// Doc and serde attributes.
    pub attrs: Vec<Attribute>,
}

/// What serde attributes say about an item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SerdeInfo {
    /// `rename` (the deserialize name when they differ).
    pub rename: Option<String>,
    /// `rename_all`.
    pub rename_all: Option<String>,
    /// `default` is present.
    pub default: bool,
    /// `skip` or `skip_deserializing` is present.
    pub skip: bool,
    /// `flatten` is present (not supported).
    pub flatten: bool,
}

/// Reads `#[serde(...)]` attributes.
pub fn serde_info(attrs: &[Attribute]) -> darling::Result<SerdeInfo> {
    let mut info = SerdeInfo::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let string_value = |meta: &syn::meta::ParseNestedMeta| -> syn::Result<Option<String>> {
                if meta.input.peek(syn::Token![=]) {
                    let lit: LitStr = meta.value()?.parse()?;
                    Ok(Some(lit.value()))
                } else if meta.input.peek(syn::token::Paren) {
                    let mut found = None;
                    meta.parse_nested_meta(|inner| {
                        let lit: LitStr = inner.value()?.parse()?;
                        if inner.path.is_ident("deserialize") {
                            found = Some(lit.value());
                        }
                        Ok(())
                    })?;
                    Ok(found)
                } else {
                    Ok(None)
                }
            };
            match key.as_str() {
                "rename" => info.rename = string_value(&meta)?,
                "rename_all" => info.rename_all = string_value(&meta)?,
                "default" => {
                    info.default = true;
                    string_value(&meta)?;
                }
                "skip" | "skip_deserializing" => info.skip = true,
                "flatten" => info.flatten = true,
                _ => {
                    if meta.input.peek(syn::Token![=]) {
                        let _: Expr = meta.value()?.parse()?;
                    } else if meta.input.peek(syn::token::Paren) {
                        let _ = string_value(&meta)?;
                    }
                }
            }
            Ok(())
        })?;
    }
    Ok(info)
}

/// The doc comment of an item, lines trimmed and joined.
pub fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join("\n").trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn lit_json(lit: &Lit) -> darling::Result<Value> {
    Ok(match lit {
        Lit::Str(s) => Value::from(s.value()),
        Lit::Int(i) => Value::from(
            i.base10_parse::<i64>()
                .map_err(|e| darling::Error::custom(e.to_string()).with_span(lit))?,
        ),
        Lit::Float(f) => Value::from(
            f.base10_parse::<f64>()
                .map_err(|e| darling::Error::custom(e.to_string()).with_span(lit))?,
        ),
        Lit::Bool(b) => Value::from(b.value),
        _ => {
            return Err(
                darling::Error::custom("expected a string, number or boolean literal")
                    .with_span(lit),
            );
        }
    })
}

fn json_text(text: &SpannedValue<String>, what: &str) -> darling::Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        darling::Error::custom(format!("{what} is not valid JSON: {e}")).with_span(&text.span())
    })
}

impl SchemaOptions {
    /// The attributes as the shared schema rules take them; `doc` is the fallback description.
    pub fn to_attrs(&self, doc: Option<String>) -> darling::Result<SchemaAttrs> {
        let mut errors = darling::Error::accumulator();
        let one = |lit: &Option<Lit>,
                   json: &Option<SpannedValue<String>>,
                   what: &str|
         -> darling::Result<Option<Value>> {
            match (lit, json) {
                (Some(_), Some(j)) => Err(darling::Error::custom(format!(
                    "give either `{what}` or `{what}_json`, not both"
                ))
                .with_span(&j.span())),
                (Some(l), None) => lit_json(l).map(Some),
                (None, Some(j)) => json_text(j, &format!("{what}_json")).map(Some),
                (None, None) => Ok(None),
            }
        };
        let default = errors
            .handle(one(&self.default, &self.default_json, "default"))
            .flatten();
        let example = errors
            .handle(one(&self.example, &self.example_json, "example"))
            .flatten();
        let enum_values = match &self.enum_values {
            Some(list) => errors.handle(
                list.0
                    .iter()
                    .map(lit_json)
                    .collect::<darling::Result<Vec<_>>>(),
            ),
            None => None,
        };
        let attrs = SchemaAttrs {
            description: self.description.clone().or(doc),
            pattern: self.pattern.clone(),
            format: self.format.clone(),
            min_length: self.min_length,
            max_length: self.max_length,
            minimum: self.minimum,
            maximum: self.maximum,
            min_items: self.min_items,
            max_items: self.max_items,
            unique_items: self.unique_items.is_present().then_some(true),
            enum_values,
            default,
            example,
            rules: self
                .validations
                .iter()
                .map(|v| Rule {
                    rule: v.rule.clone(),
                    message: v.message.clone().unwrap_or_default(),
                    message_expression: v.message_expression.clone().unwrap_or_default(),
                    reason: v.reason.clone().unwrap_or_default(),
                    field_path: v.field_path.clone().unwrap_or_default(),
                })
                .collect(),
            labels: self
                .labels
                .iter()
                .map(|l| (l.key.clone(), l.value.clone()))
                .collect(),
            annotations: self
                .annotations
                .iter()
                .map(|l| (l.key.clone(), l.value.clone()))
                .collect(),
            deprecated: self.deprecated.is_present(),
        };
        errors.finish_with(attrs)
    }
}

/// A property (or variable) of the model.
#[derive(Debug, Clone)]
pub struct PropertyModel {
    /// The Rust field.
    pub ident: Ident,
    /// The wire name (serde rules applied).
    pub name: String,
    /// Whether a value must be given (not `Option`, no `serde(default)`).
    pub required: bool,
    /// The field type's shape.
    pub shape: Shape,
    /// The field's type, for spans.
    pub ty: Type,
    /// Its attributes.
    pub attrs: SchemaAttrs,
}

/// What a derive input describes.
#[derive(Debug, Clone)]
pub enum ItemModel {
    /// A struct with named fields: an object, or a set of variables.
    Struct {
        /// Its properties, in declaration order.
        properties: Vec<PropertyModel>,
    },
    /// A unit-variant enum: a string with allowed values.
    Enum {
        /// The wire names of the variants.
        values: Vec<String>,
    },
}

/// A parsed `#[derive(Schema)]` / `#[derive(Variables)]` item.
#[derive(Debug, Clone)]
pub struct SchemaModel {
    /// The type's name.
    pub ident: Ident,
    /// The type-level attributes.
    pub attrs: SchemaAttrs,
    /// Fields or variants.
    pub item: ItemModel,
}

/// Which derive is being expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeriveKind {
    /// `#[derive(Schema)]`.
    Schema,
    /// `#[derive(Variables)]`: each field is a ClusterClass variable.
    Variables,
}

/// Parses and checks a derive input. Every problem is reported, each on its own span.
pub fn parse(input: &syn::DeriveInput, kind: DeriveKind) -> darling::Result<SchemaModel> {
    let parsed = SchemaInput::from_derive_input(input)?;
    let mut errors = darling::Error::accumulator();
    if !parsed.generics.params.is_empty() {
        errors.push(
            darling::Error::custom("generic types cannot derive a ClusterClass schema")
                .with_span(&parsed.generics),
        );
    }
    let container_serde = errors.handle(serde_info(&parsed.attrs)).unwrap_or_default();
    let attrs = errors
        .handle(parsed.options.to_attrs(doc_comment(&parsed.attrs)))
        .unwrap_or_default();
    let item = match parsed.data {
        darling::ast::Data::Struct(fields) => {
            if fields.style != darling::ast::Style::Struct {
                errors.push(
                    darling::Error::custom(format!(
                        "`{}` is a tuple or unit struct: a ClusterClass {} needs named fields (CAPI schemas name every property)",
                        parsed.ident,
                        if kind == DeriveKind::Variables { "variables type" } else { "schema" }
                    ))
                    .with_span(&parsed.ident),
                );
            }
            let mut properties = Vec::new();
            let declared = fields.fields.len();
            for field in fields.fields {
                let Some(ident) = field.ident.clone() else {
                    continue;
                };
                let serde = match errors.handle(serde_info(&field.attrs)) {
                    Some(s) => s,
                    None => continue,
                };
                if serde.skip {
                    continue;
                }
                if serde.flatten {
                    errors.push(
                        darling::Error::custom(
                            "#[serde(flatten)] is not supported: declare the fields here",
                        )
                        .with_span(&ident),
                    );
                    continue;
                }
                let raw = ident.to_string().trim_start_matches("r#").to_string();
                let name = match (&serde.rename, &container_serde.rename_all) {
                    (Some(r), _) => r.clone(),
                    (None, Some(rule)) => schema::rename(&raw, rule).unwrap_or(raw),
                    (None, None) => raw,
                };
                if let (DeriveKind::Variables, Err(e)) =
                    (kind, schema::validate_variable_name(&name))
                {
                    errors.push(darling::Error::custom(e).with_span(&ident));
                }
                let field_shape = if field.options.schemars.is_present() {
                    super::shape::schemars_shape(&field.ty, format!("{}.{ident}", parsed.ident))
                } else {
                    let Some(field_shape) = errors.handle(shape(&field.ty)) else {
                        continue;
                    };
                    field_shape
                };
                let Some(field_attrs) =
                    errors.handle(field.options.to_attrs(doc_comment(&field.attrs)))
                else {
                    continue;
                };
                let required =
                    !field_shape.is_option() && !serde.default && !container_serde.default;
                properties.push(PropertyModel {
                    ident,
                    name,
                    required,
                    shape: field_shape,
                    ty: field.ty,
                    attrs: field_attrs,
                });
            }
            if kind == DeriveKind::Variables
                && declared == 0
                && fields.style == darling::ast::Style::Struct
            {
                errors.push(
                    darling::Error::custom(
                        "a Variables type needs at least one field: each field is one variable",
                    )
                    .with_span(&parsed.ident),
                );
            }
            ItemModel::Struct { properties }
        }
        darling::ast::Data::Enum(variants) => {
            if kind == DeriveKind::Variables {
                errors.push(
                    darling::Error::custom("#[derive(Variables)] needs a struct whose fields are the variables; derive Schema for enums")
                        .with_span(&parsed.ident),
                );
            }
            let mut values = Vec::new();
            for v in variants {
                if !v.fields.is_empty() {
                    errors.push(
                        darling::Error::custom("only unit variants can be expressed (as a string enum); CAPI schemas have no tagged unions")
                            .with_span(&v.ident),
                    );
                    continue;
                }
                let serde = errors.handle(serde_info(&v.attrs)).unwrap_or_default();
                let raw = v.ident.to_string();
                values.push(match (&serde.rename, &container_serde.rename_all) {
                    (Some(r), _) => r.clone(),
                    (None, Some(rule)) => schema::rename(&raw, rule).unwrap_or(raw),
                    (None, None) => raw,
                });
            }
            ItemModel::Enum { values }
        }
    };
    errors.finish_with(SchemaModel {
        ident: parsed.ident,
        attrs,
        item,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str, kind: DeriveKind) -> darling::Result<SchemaModel> {
        parse(&syn::parse_str(text).unwrap(), kind)
    }

    #[test]
    fn serde_names_requiredness_and_docs() {
        let m = model(
            r#"
            #[serde(rename_all = "camelCase")]
            struct Vars {
                /// Registry of the images.
                #[schema(min_length = 1, validation(rule = "!self.endsWith('/')", message = "no trailing slash"))]
                image_repository: String,
                #[serde(default)]
                replicas: u32,
                #[serde(rename = "ha")]
                high_availability: Option<bool>,
                #[serde(skip)]
                cache: String,
            }"#,
            DeriveKind::Variables,
        )
        .unwrap();
        let ItemModel::Struct { properties } = m.item else {
            panic!()
        };
        let summary: Vec<_> = properties
            .iter()
            .map(|p| (p.name.as_str(), p.required))
            .collect();
        assert_eq!(
            summary,
            [
                ("imageRepository", true),
                ("replicas", false),
                ("ha", false)
            ]
        );
        assert_eq!(
            properties[0].attrs.description.as_deref(),
            Some("Registry of the images.")
        );
        assert_eq!(properties[0].attrs.rules[0].message, "no trailing slash");
    }

    #[test]
    fn every_mistake_is_reported_once() {
        let err = model(
            r#"struct Vars { builtin: String, #[serde(rename = "a.b")] x: String, y: (u8, u8) }"#,
            DeriveKind::Variables,
        )
        .unwrap_err();
        let text = err.to_string();
        assert_eq!(err.len(), 3, "{text}");
        assert!(text.contains("`builtin` is reserved"), "{text}");
        assert!(text.contains("contains a '.'"), "{text}");
        assert!(text.contains("tuples have no property names"), "{text}");
    }

    #[test]
    fn tuple_structs_and_data_enums_are_refused() {
        assert!(
            model("struct T(String);", DeriveKind::Variables)
                .unwrap_err()
                .to_string()
                .contains("needs named fields")
        );
        assert!(
            model("enum E { A(u8) }", DeriveKind::Schema)
                .unwrap_err()
                .to_string()
                .contains("only unit variants")
        );
        let m = model(
            r#"#[serde(rename_all = "lowercase")] enum E { Small, Large }"#,
            DeriveKind::Schema,
        )
        .unwrap();
        assert!(matches!(m.item, ItemModel::Enum { values } if values == ["small", "large"]));
    }
}
