//! Variable validation (OpenAPI rules and CEL) and defaulting: a schema (first line, JSON) and
//! a value (the rest, JSON).

use capi_ext::hooks::v1alpha1::JSONSchemaProps;
use capi_ext_render::values;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let (schema, value) = text.split_once('\n').unwrap_or((text, "null"));
        let (Ok(schema), Ok(mut value)) = (
            serde_json::from_str::<JSONSchemaProps>(schema),
            serde_json::from_str::<serde_json::Value>(value),
        ) else {
            return;
        };
        values::apply_defaults(&schema, &mut value);
        let mut errors = Vec::new();
        values::validate(&schema, &value, "value", &mut errors);
        values::unknown_fields(&mut errors, "value", "v", &value);
    });
}
