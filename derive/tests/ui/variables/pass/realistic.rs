use capi_ext::{Schema, Variables};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize, Variables)]
#[serde(rename_all = "camelCase")]
struct Vars {
    /// Registry of the images.
    #[schema(pattern = "^[a-z0-9.-]+(/[a-z0-9._-]+)*$", default = "registry.k8s.io")]
    image_repository: String,
    #[serde(default)]
    #[schema(minimum = 1, maximum = 7)]
    control_plane_replicas: u8,
    workers: Option<Workers>,
    node_labels: Option<BTreeMap<String, String>>,
    #[serde(rename = "extra")]
    extra_config: Option<serde_json::Value>,
    #[serde(skip)]
    #[allow(dead_code)]
    cache: String,
}

#[derive(Deserialize, Schema)]
struct Workers {
    count: u32,
    size: Size,
}

#[derive(Deserialize, Schema)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

fn main() {
    let defs = <Vars as capi_ext::Variables>::definitions();
    let names: Vec<_> = defs.iter().map(|d| (d.name.as_str(), d.required)).collect();
    assert_eq!(
        names,
        [
            ("imageRepository", Some(true)),
            ("controlPlaneReplicas", Some(false)),
            ("workers", Some(false)),
            ("nodeLabels", Some(false)),
            ("extra", Some(false))
        ]
    );
    let workers = &defs[2].schema.open_api_v3_schema;
    assert_eq!(workers.properties["size"].enum_, [serde_json::json!("small"), serde_json::json!("large")]);
    let vars: Vars = serde_json::from_value(serde_json::json!({"imageRepository": "r", "workers": {"count": 1, "size": "small"}})).unwrap();
    assert!(matches!(vars.workers.unwrap().size, Size::Small));
}
