//! The derive path and the static path on one realistic variables type: the derived JSON is
//! the expected JSON (`testdata/schema/variables.json`; `BLESS=1` rewrites it), the static path
//! (codegen on the same source text, no compilation) gives byte-identical JSON, and the
//! DiscoverVariables answer built from the type passes CAPI's rules.

#![allow(dead_code)]

include!("../../testdata/schema/variables.rs");

use capi_ext::hooks::v1alpha1::{
    ClusterClassVariable, DiscoverVariables, DiscoverVariablesRequest, validation,
};
use capi_ext::schema::Variables as _;
use std::path::PathBuf;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/schema")
        .join(name)
}

fn derived_json() -> String {
    serde_json::to_string_pretty(&FleetVariables::definitions()).unwrap() + "\n"
}

#[test]
fn derived_schema_is_the_expected_json() {
    let derived = derived_json();
    let path = testdata("variables.json");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &derived).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        derived,
        expected,
        "derived schema differs from {} (BLESS=1 to accept)",
        path.display()
    );
}

#[test]
fn static_path_is_byte_identical_to_the_derive() {
    let source = std::fs::read_to_string(testdata("variables.rs")).unwrap();
    let types = capi_ext_codegen::model::static_schema::variables(&[(
        "testdata/schema/variables.rs".into(),
        source,
    )])
    .unwrap();
    assert_eq!(types.len(), 1);
    assert_eq!(types[0].0, "FleetVariables");
    let statically: Vec<ClusterClassVariable> = types[0]
        .1
        .iter()
        .map(|v| serde_json::from_value(v.clone()).unwrap())
        .collect();
    assert_eq!(
        serde_json::to_string_pretty(&statically).unwrap() + "\n",
        derived_json()
    );
}

#[tokio::test]
async fn discover_variables_answer_passes_capis_rules_and_values_read_back() {
    let extension = capi_ext::Extension::builder()
        .variables::<FleetVariables>("variables")
        .build()
        .unwrap();
    let response = extension
        .call(
            DiscoverVariables,
            "variables",
            &DiscoverVariablesRequest::new(),
        )
        .await
        .unwrap();
    validation::discover_variables(&response).unwrap();
    assert_eq!(response.variables.len(), 7);

    let request: capi_ext::hooks::v1alpha1::GeneratePatchesRequest = serde_json::from_value(serde_json::json!({
        "variables": [
            {"name": "imageRepository", "value": "registry.example.com"},
            {"name": "controlPlane", "value": {"replicas": 3, "port": "https"}},
            {"name": "pools", "value": {"gpu": {"replicas": 2, "size": "provider-default", "zones": ["zone-a"]}}},
            {"name": "builtin", "value": {"cluster": {"name": "c1"}}}
        ]
    }))
    .unwrap();
    let vars: FleetVariables = request.variables().unwrap();
    assert_eq!(
        vars.control_plane.port,
        Some(capi_ext::schema::IntOrString::String("https".into()))
    );
    assert!(matches!(vars.pools["gpu"].size, Size::ProviderDefault));
    assert!(vars.cni.is_none());
}
