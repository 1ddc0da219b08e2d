//! Schemas from `schemars::JsonSchema` (feature `schemars`): for fields whose types are
//! described by schemars, as kube-rs's and k8s-openapi's types are. Mark the field
//! `#[schema(schemars)]`; its type's JSON Schema is generated with subschemas inlined and
//! converted to CAPI's subset
//! ([`from_json_schema`](capi_ext_codegen::json_schema::from_json_schema)); what CAPI cannot
//! express is an error naming the field, the place and the keyword.
//!
//! ```
//! use capi_ext::Variables;
//! use serde::Deserialize;
//!
//! /// A type from a crate that implements `schemars::JsonSchema`.
//! #[derive(Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! struct Toleration {
//!     key: Option<String>,
//!     toleration_seconds: Option<i64>,
//! }
//!
//! #[derive(Deserialize, Variables)]
//! struct Vars {
//!     /// Tolerations of the worker nodes.
//!     #[schema(schemars)]
//!     tolerations: Option<Vec<Toleration>>,
//! }
//!
//! let definitions = <Vars as capi_ext::Variables>::definitions_json();
//! let schema = &definitions[0]["schema"]["openAPIV3Schema"];
//! assert_eq!(schema["items"]["properties"]["tolerationSeconds"]["type"], "integer");
//! assert_eq!(definitions[0]["required"], false);
//! ```

use capi_ext_codegen::json_schema::{ConversionError, from_json_schema};
use serde_json::Value;

/// The JSON Schema of `T` as schemars generates it (OpenAPI 3.0 settings, subschemas inlined),
/// converted to CAPI's subset.
pub fn schema_of<T: ::schemars::JsonSchema>() -> Result<Value, ConversionError> {
    let generator = ::schemars::generate::SchemaSettings::openapi3()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    from_json_schema(schema.as_value())
}

/// What `#[schema(schemars)]` expands to.
///
/// # Panics
/// When the type's schema cannot be expressed for CAPI: the message names the field, the type,
/// the place in its schema and the keyword. The scaffolded test that reads the variables'
/// definitions finds it before anything is deployed.
pub fn field<T: ::schemars::JsonSchema>(label: &str) -> Value {
    schema_of::<T>().unwrap_or_else(|e| {
        panic!(
            "{label}: the schemars schema of `{}` is not a ClusterClass variable schema: {e}",
            std::any::type_name::<T>()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// Effects, documented per variant (schemars writes a oneOf).
    #[allow(dead_code)]
    #[derive(::schemars::JsonSchema)]
    enum Effect {
        /// Do not schedule.
        NoSchedule,
        /// Evict.
        NoExecute,
    }

    #[allow(dead_code)]
    #[derive(::schemars::JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Taint {
        /// The key.
        key: String,
        effect: Effect,
        seconds: Option<u32>,
        labels: BTreeMap<String, String>,
    }

    #[allow(dead_code)]
    #[derive(::schemars::JsonSchema)]
    struct Tree {
        children: Vec<Tree>,
    }

    #[allow(dead_code)]
    #[derive(::schemars::JsonSchema)]
    struct Pair(String, u8);

    #[test]
    fn nested_types_enums_and_options_convert() {
        let schema = schema_of::<Vec<Taint>>().unwrap();
        assert_eq!(
            schema,
            json!({
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "effect", "labels"],
                    "properties": {
                        "key": {"type": "string", "description": "The key."},
                        "effect": {"type": "string", "enum": ["NoSchedule", "NoExecute"], "description": "Effects, documented per variant (schemars writes a oneOf)."},
                        "seconds": {"type": "integer", "minimum": 0},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                    }
                }
            })
        );
    }

    #[test]
    fn what_cannot_be_expressed_names_field_and_place() {
        let panic = std::panic::catch_unwind(|| field::<Tree>("Vars.tree")).unwrap_err();
        let message = panic.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("Vars.tree: the schemars schema of `"),
            "{message}"
        );
        assert!(message.contains("cannot be recursive"), "{message}");
        let err = schema_of::<Pair>().unwrap_err().to_string();
        assert!(err.contains("tuple items"), "{err}");
    }
}
