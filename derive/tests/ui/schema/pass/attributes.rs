use capi_ext::Schema;

/// A pool of machines.
#[derive(Schema)]
#[schema(validation(rule = "self.min <= self.max", message = "min must not exceed max"), label(key = "example.com/kind", value = "pool"))]
#[allow(dead_code)]
struct Pool {
    /// Smallest size.
    #[schema(minimum = 0)]
    min: u32,
    #[schema(minimum = 1, deprecated)]
    max: u32,
    #[schema(enum_values("a", "b"), unique_items, max_items = 2)]
    zones: Vec<String>,
    #[schema(default_json = r#"{"team": "core"}"#, example_json = r#"{"team": "edge"}"#)]
    tags: std::collections::HashMap<String, String>,
    port: capi_ext::schema::IntOrString,
}

fn main() {
    let s = <Pool as capi_ext::schema::Schema>::schema();
    assert_eq!(s["description"], "A pool of machines.");
    assert_eq!(s["required"], serde_json::json!(["min", "max", "zones", "tags", "port"]));
    assert_eq!(s["properties"]["max"]["description"], "Deprecated.");
    assert_eq!(s["properties"]["zones"]["uniqueItems"], true);
    assert_eq!(s["properties"]["tags"]["default"]["team"], "core");
    assert_eq!(s["properties"]["port"]["x-kubernetes-int-or-string"], true);
    assert_eq!(s["x-metadata"]["labels"]["example.com/kind"], "pool");
}
