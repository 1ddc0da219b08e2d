//! The schema-relevant shape of a Rust type.

use crate::schema::Primitive;
use syn::{GenericArgument, PathArguments, Type};

/// How a Rust type maps to a schema.
#[derive(Debug, Clone)]
pub enum Shape {
    /// A type with a fixed schema.
    Primitive(Primitive),
    /// `Option<T>`: the schema of `T`, not required.
    Option(Box<Shape>),
    /// A sequence of `T`.
    Array(Box<Shape>),
    /// A map with string keys and `T` values.
    Map(Box<Shape>),
    /// A user type, whose schema comes from its own `#[derive(Schema)]`.
    Named(syn::Path),
    /// A type whose schema comes from its `schemars::JsonSchema` implementation
    /// (`#[schema(schemars)]`), known only to compiled code; `label` names the field in errors.
    Schemars {
        /// The type.
        ty: Box<Type>,
        /// `Struct.field`.
        label: String,
    },
}

impl Shape {
    /// Whether the type is an `Option`.
    pub fn is_option(&self) -> bool {
        matches!(self, Shape::Option(_))
    }
}

fn generic_args(args: &PathArguments) -> Vec<&Type> {
    match args {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn unsupported(ty: &Type, why: &str) -> darling::Error {
    darling::Error::custom(format!(
        "type `{}` has no ClusterClass schema: {why}",
        quote::quote!(#ty).to_string().replace(' ', "")
    ))
    .with_span(ty)
}

/// The shape of a field marked `#[schema(schemars)]`: `Option` is kept (it decides `required`),
/// the rest is the type's own JSON Schema.
pub fn schemars_shape(ty: &Type, label: String) -> Shape {
    if let Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && last.ident == "Option"
        && let [inner] = generic_args(&last.arguments).as_slice()
    {
        return Shape::Option(Box::new(schemars_shape(inner, label)));
    }
    Shape::Schemars {
        ty: Box::new(ty.clone()),
        label,
    }
}

/// The shape of a field type.
pub fn shape(ty: &Type) -> Result<Shape, darling::Error> {
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) if p.path.is_ident("str") => Ok(Shape::Primitive(Primitive::String)),
            _ => Err(unsupported(
                ty,
                "references other than &str are not supported",
            )),
        },
        Type::Group(g) => shape(&g.elem),
        Type::Paren(p) => shape(&p.elem),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().expect("a path has a segment");
            let args = generic_args(&last.arguments);
            let one = |what: &str| -> Result<Shape, darling::Error> {
                match args.as_slice() {
                    [inner] => shape(inner),
                    _ => Err(unsupported(ty, &format!("{what} needs one type argument"))),
                }
            };
            let prim = |p| Ok(Shape::Primitive(p));
            match last.ident.to_string().as_str() {
                "String" | "str" | "char" => prim(Primitive::String),
                "bool" => prim(Primitive::Boolean),
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "u128" | "usize" => prim(Primitive::Integer),
                "f32" | "f64" => prim(Primitive::Number),
                "Value" => prim(Primitive::Any),
                "IntOrString" => prim(Primitive::IntOrString),
                "Option" => Ok(Shape::Option(Box::new(one("Option")?))),
                "Box" | "Arc" | "Rc" => one("a pointer type"),
                "Vec" | "VecDeque" | "BTreeSet" | "HashSet" => {
                    Ok(Shape::Array(Box::new(one("a sequence")?)))
                }
                "BTreeMap" | "HashMap" | "IndexMap" => match args.as_slice() {
                    [key, value] => match shape(key)? {
                        Shape::Primitive(Primitive::String) => {
                            Ok(Shape::Map(Box::new(shape(value)?)))
                        }
                        _ => Err(unsupported(ty, "map keys must be strings")),
                    },
                    _ => Err(unsupported(ty, "a map needs key and value types")),
                },
                _ if !args.is_empty() => {
                    Err(unsupported(ty, "generic user types are not supported"))
                }
                _ => Ok(Shape::Named(p.path.clone())),
            }
        }
        Type::Tuple(_) => Err(unsupported(
            ty,
            "tuples have no property names; use a struct with named fields",
        )),
        _ => Err(unsupported(
            ty,
            "only paths, &str, Option, Vec, maps and Box are supported",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Result<Shape, darling::Error> {
        shape(&syn::parse_str(text).unwrap())
    }

    #[test]
    fn maps_common_types() {
        assert!(matches!(
            of("String").unwrap(),
            Shape::Primitive(Primitive::String)
        ));
        assert!(
            matches!(of("Option<u16>").unwrap(), Shape::Option(b) if matches!(*b, Shape::Primitive(Primitive::Integer)))
        );
        assert!(matches!(
            of("std::collections::BTreeMap<String, Vec<bool>>").unwrap(),
            Shape::Map(_)
        ));
        assert!(matches!(
            of("serde_json::Value").unwrap(),
            Shape::Primitive(Primitive::Any)
        ));
        assert!(matches!(of("Workers").unwrap(), Shape::Named(_)));
    }

    #[test]
    fn explains_what_cannot_be_expressed() {
        assert!(
            of("(u8, u8)")
                .unwrap_err()
                .to_string()
                .contains("tuples have no property names")
        );
        assert!(
            of("HashMap<u32, String>")
                .unwrap_err()
                .to_string()
                .contains("map keys must be strings")
        );
        assert!(
            of("Wrapper<T>")
                .unwrap_err()
                .to_string()
                .contains("generic user types")
        );
    }
}
