//! Inputs the `render_input` fuzz target (fuzz/fuzz_targets/render_input.rs) found crashing
//! render, each replayed: render answers with an error naming the field, never a panic.

use capi_ext::Extension;
use capi_ext_render::{Input, RenderError, documents, render};
use serde_json::json;

fn no_handlers() -> Extension {
    Extension::builder().build().unwrap()
}

/// `topology:` with its fields indented wrongly is `null`; render took it for an object when it
/// defaulted the Cluster's variables, and panicked.
#[tokio::test]
async fn a_topology_that_is_not_an_object_is_named() {
    let saved = include_str!("fuzz_findings/topology-null.yaml");
    let input = Input::from_documents(documents(saved).unwrap()).unwrap();
    let err = render(&input, &no_handlers()).await.unwrap_err();
    assert!(matches!(err, RenderError::Input(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "Cluster demo: spec.topology is null, not an object (check the indentation of the fields below it)"
    );

    // The same with nothing before the variables are checked (no patches to call).
    for topology in [json!(null), json!("x"), json!([1])] {
        let input = Input::from_documents(vec![
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                   "metadata": {"name": "c1", "namespace": "default"}, "spec": {"topology": topology}}),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
                   "metadata": {"namespace": "default"}, "spec": {}}),
        ])
        .unwrap();
        let err = render(&input, &no_handlers()).await.unwrap_err();
        assert!(
            err.to_string().contains("not an object"),
            "{topology}: {err}"
        );
    }
}
