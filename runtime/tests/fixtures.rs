//! Every hook's fixture pair (cli/fixtures/hooks/<hook>/request.json, response.json), shaped as
//! CAPI sends and accepts them, decodes into the typed request/response and re-encodes to
//! the same JSON.

use base64::Engine as _;
use capi_ext::catalog::HOOKS;
use capi_ext::hooks::v1alpha1::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::PathBuf;

fn fixture(hook: &str, file: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/fixtures/hooks")
        .join(hook.to_lowercase())
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Base64 patch documents are compared by their decoded JSON, not their bytes.
fn normalize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if let (true, Some(text)) = (key == "patch", v.as_str()) {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(text)
                        .expect("base64 patch");
                    *v = serde_json::from_slice(&bytes).expect("JSON patch document");
                    continue;
                }
                normalize(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn round_trip<T: Serialize + DeserializeOwned>(hook: &str, file: &str) {
    let original = fixture(hook, file);
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{hook}/{file}: decode: {e}"));
    let mut encoded = serde_json::to_value(&typed).unwrap();
    let mut expected = original;
    normalize(&mut encoded);
    normalize(&mut expected);
    assert_eq!(encoded, expected, "{hook}/{file}: re-encoded JSON differs");
}

fn check<H: Hook>(_: H) -> &'static str {
    round_trip::<H::Request>(H::info().name, "request.json");
    round_trip::<H::Response>(H::info().name, "response.json");
    H::info().name
}

#[test]
fn every_hook_fixture_round_trips() {
    let checked = [
        check(Discovery),
        check(BeforeClusterCreate),
        check(AfterControlPlaneInitialized),
        check(BeforeClusterUpgrade),
        check(BeforeControlPlaneUpgrade),
        check(AfterControlPlaneUpgrade),
        check(BeforeWorkersUpgrade),
        check(AfterWorkersUpgrade),
        check(AfterClusterUpgrade),
        check(BeforeClusterDelete),
        check(GeneratePatches),
        check(ValidateTopology),
        check(DiscoverVariables),
        check(CanUpdateMachine),
        check(CanUpdateMachineSet),
        check(UpdateMachine),
        check(GenerateUpgradePlan),
    ];
    let catalog: Vec<_> = HOOKS.iter().map(|h| h.name).collect();
    assert_eq!(
        checked.as_slice(),
        catalog.as_slice(),
        "a hook has no fixture check"
    );
}

#[test]
fn typed_fields_read_what_authors_need() {
    let req: BeforeClusterCreateRequest =
        serde_json::from_value(fixture("BeforeClusterCreate", "request.json")).unwrap();
    assert_eq!(req.cluster.topology_version(), Some("v1.33.0"));
    assert_eq!(req.settings["extensionConfigName"], "my-extension");
    assert_eq!(req.cluster.metadata.extra["creationTimestamp"], Value::Null);

    let resp: GeneratePatchesResponse =
        serde_json::from_value(fixture("GeneratePatches", "response.json")).unwrap();
    assert!(matches!(&resp.items[0].patch, Patch::Json(ops) if ops.len() == 1));
    assert!(matches!(&resp.items[1].patch, Patch::Merge(_)));

    let vars: DiscoverVariablesResponse =
        serde_json::from_value(fixture("DiscoverVariables", "response.json")).unwrap();
    let workers = &vars.variables[1].schema.open_api_v3_schema;
    assert_eq!(workers.properties["count"].maximum, Some(100));
    assert_eq!(workers.properties["port"].x_int_or_string, Some(true));
}

#[test]
fn decoding_is_lenient_the_way_capi_needs() {
    // Unknown fields at every level, absent optional fields, null timestamps.
    let req: GeneratePatchesRequest = serde_json::from_str(
        r#"{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"GeneratePatchesRequest","futureField":1,
            "items":[{"uid":"u","holderReference":{"apiVersion":"v","kind":"k","namespace":"n","name":"m","fieldPath":"f","new":true},
                      "object":{"metadata":{"creationTimestamp":null}}}]}"#,
    )
    .unwrap();
    assert!(req.variables.is_empty() && req.settings.is_empty());
    let resp: BeforeClusterCreateResponse =
        serde_json::from_str(r#"{"status":"Success"}"#).unwrap();
    assert_eq!(resp.retry_after_seconds, 0);
    // A response without status is rejected: CAPI would reject it too.
    let err = serde_json::from_str::<BeforeClusterCreateResponse>(r#"{"retryAfterSeconds":5}"#)
        .unwrap_err();
    assert!(err.to_string().contains("missing field `status`"), "{err}");
    // Blocking responses always carry retryAfterSeconds, even when 0.
    let wire = serde_json::to_value(BeforeClusterDeleteResponse::success()).unwrap();
    assert_eq!(wire["retryAfterSeconds"], 0);
    let wire = serde_json::to_value(AfterControlPlaneInitializedResponse::success()).unwrap();
    assert!(wire.get("retryAfterSeconds").is_none());
}
