//! What the differential test against CAPI's desired-state generator found render doing
//! differently (conformance/differential), each kept here as a regression test.

use capi_ext::{Extension, Variables};
use capi_ext_render::{Input, render};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, Variables)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Vars {
    /// Declared after `imageRepository` but sorts before it.
    #[schema(default = "eu")]
    a_region: Option<String>,
    image_repository: Option<String>,
}

mod common;

fn input() -> Input {
    common::quickstart_input()
}

fn external_only() -> Input {
    common::external_only()
}

fn extension() -> Extension {
    common::accepting(Extension::builder().variables::<Vars>("variables"))
}

#[tokio::test]
async fn a_null_variables_list_in_the_clusterclass_is_no_variables() {
    render(&external_only(), &extension()).await.unwrap();
}

#[tokio::test]
async fn defaulted_variables_follow_the_values_given_in_the_order_of_the_definitions_names() {
    let rendered = render(&external_only(), &extension()).await.unwrap();
    let names: Vec<&str> = rendered
        .definitions
        .iter()
        .map(|d| d.variable.name.as_str())
        .collect();
    assert_eq!(names, ["aRegion", "imageRepository"]);
    assert_eq!(
        rendered.cluster["spec"]["topology"]["variables"],
        json!([{"name": "aRegion", "value": "eu"}])
    );
}

#[tokio::test]
async fn templates_cloned_for_the_cluster_are_owned_by_it() {
    let mut input = input();
    input.cluster["metadata"]["uid"] = json!("u-1");
    let rendered = render(&input, &extension()).await.unwrap();
    let owner = json!([{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": "demo", "uid": "u-1"}]);
    for (object, role) in rendered.objects.iter().zip(&rendered.roles) {
        let kind = object["kind"].as_str().unwrap();
        let expected = if kind.ends_with("Template") {
            &owner
        } else {
            &Value::Null
        };
        assert_eq!(
            &object["metadata"]["ownerReferences"], expected,
            "{role:?} {kind}"
        );
    }
}
