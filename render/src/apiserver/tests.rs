//! First checks of the API server's rules on a small CRD; `make apirules` compares them with
//! the real kube-apiserver on real CRDs.

use super::*;
use serde_json::json;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}, scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [name]
            properties:
              name: {type: string, maxLength: 5}
              replicas: {type: integer, format: int32, default: 1}
              port:
                anyOf: [{type: integer}, {type: string}]
                x-kubernetes-int-or-string: true
              mode: {type: string, enum: [a, b]}
              policy: {type: string}
              note: {type: string, nullable: true}
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  properties:
                    name: {type: string}
                    size: {type: integer, default: 3}
            x-kubernetes-validations:
            - rule: "!has(self.mode) || self.mode != 'b' || has(self.note)"
              message: mode b needs a note
              fieldPath: .note
              reason: FieldValueRequired
            - rule: "!has(self.mode) || self.mode != 'a' || self.policy == 'p'"
              message: "  mode a needs policy p  "
          status:
            type: object
            properties:
              replicas: {type: integer}
"#;

fn crds() -> Crds {
    let mut crds = Crds::default();
    crds.add_documents(crate::documents(CRD).unwrap(), "widgets.yaml")
        .unwrap();
    crds
}

fn admit(spec: Value) -> Admitted {
    let object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"}, "spec": spec, "status": {"replicas": 2}});
    crds().admit(&object).unwrap().unwrap()
}

fn causes(admitted: &Admitted) -> Vec<String> {
    let mut out: Vec<String> = admitted
        .errors
        .iter()
        .map(|e| format!("{} {}", e.type_.cause(), e.field))
        .collect();
    out.sort();
    out
}

#[test]
fn prunes_defaults_and_drops_status() {
    let admitted = admit(
        json!({"name": "a", "unknown": 1, "items": [{"name": "x", "extra": true}],
        "free": {"anything": {"goes": 1}}, "note": null, "mode": null}),
    );
    assert_eq!(admitted.pruned, ["spec.items[0].extra", "spec.unknown"]);
    assert!(admitted.errors.is_empty(), "{:?}", admitted.errors);
    // Defaults (also inside list items), the nullable null kept, the non-nullable one dropped.
    assert_eq!(
        admitted.object["spec"],
        json!({"name": "a", "replicas": 1, "items": [{"name": "x", "size": 3}],
            "free": {"anything": {"goes": 1}}, "note": null})
    );
    assert!(admitted.object.get("status").is_none());
}

#[test]
fn a_rule_that_errors_is_reported_with_cel_go_words_and_the_rules_message() {
    // The API server: `no such key: policy evaluating rule: <the rule's message, trimmed>`
    // (`ruleErrorString`; the expression only when the rule has no message).
    let admitted = admit(json!({"name": "a", "mode": "a"}));
    assert_eq!(causes(&admitted), ["FieldValueInvalid spec"]);
    assert_eq!(
        admitted.errors[0].message,
        "no such key: policy evaluating rule: mode a needs policy p"
    );
    assert!(
        admit(json!({"name": "a", "mode": "a", "policy": "p"}))
            .errors
            .is_empty()
    );
}

#[test]
fn runtime_errors_are_worded_as_cel_go_words_them() {
    let error = |expression: &str| {
        let program = ::cel::Program::compile(expression).unwrap();
        let error = program.execute(&::cel::Context::default()).unwrap_err();
        super::cel::go_words(&error)
    };
    assert_eq!(error("1 / 0 > 0"), "division by zero");
    assert_eq!(error("7 % 0 > 0"), "modulus by zero");
    assert_eq!(error("9223372036854775807 * 2 > 0"), "integer overflow");
    assert_eq!(error("9223372036854775807 + 1 > 0"), "integer overflow");
    assert_eq!(
        error("18446744073709551615u + 1u > 0u"),
        "unsigned integer overflow"
    );
    assert_eq!(error("{'a': 1}.b > 0"), "no such key: b");
    assert_eq!(error("[1, 2][5] > 0"), "index out of bounds: 5");
    assert_eq!(
        error("[0][0] + [1, 2, 3][-1] > 0"),
        "index out of bounds: -1"
    );
    assert_eq!(error("[1][3u] > 0"), "index out of bounds: 3");
    assert_eq!(error("{'a': [[7]]}.a[0][1] > 0"), "index out of bounds: 1");
}

#[test]
fn validation_causes_as_the_api_server_reports_them() {
    let admitted = admit(json!({"name": "toolong", "port": true, "mode": "c",
        "items": [{"name": "x"}, {"name": "x"}]}));
    assert_eq!(
        causes(&admitted),
        [
            // The rules were blocked by the errors above them.
            "FieldValueDuplicate spec.items[1]",
            "FieldValueInvalid <nil>",
            "FieldValueInvalid <nil>",
            "FieldValueNotSupported spec.mode",
            "FieldValueTooLong spec.name",
            // int-or-string's own type check, and the first anyOf branch's (the best failure).
            "FieldValueTypeInvalid spec.port",
            "FieldValueTypeInvalid spec.port",
        ]
    );
    // The anyOf failure itself is reported on the root.
    assert!(admitted.errors.iter().any(|e| {
        e.message
            .contains("must validate at least one schema (anyOf)")
    }));
}

#[test]
fn numbers_required_and_scale() {
    let admitted = admit(json!({"replicas": 2147483648_i64}));
    assert_eq!(
        causes(&admitted),
        [
            // int32's range check lands on the root; the scale subresource's on its path.
            "FieldValueInvalid .spec.replicas",
            "FieldValueInvalid <nil>",
            "FieldValueInvalid <nil>",
            "FieldValueRequired spec.name",
        ]
    );
    let admitted = admit(json!({"name": "a", "replicas": 2.0}));
    assert!(
        admitted.errors.iter().all(|e| e.field == ".spec.replicas"),
        "{:?}",
        admitted.errors
    );
}

#[test]
fn cel_rules_with_reason_and_field_path() {
    let admitted = admit(json!({"name": "a", "mode": "b"}));
    assert_eq!(causes(&admitted), ["FieldValueRequired spec.note"]);
    assert!(admitted.errors[0].message.contains("mode b needs a note"));
    assert!(
        admit(json!({"name": "a", "mode": "b", "note": "n"}))
            .errors
            .is_empty()
    );
}

#[test]
fn versions_not_served_and_unknown_kinds() {
    let crds = crds();
    let object =
        json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"}});
    assert!(
        crds.admit(&object)
            .unwrap()
            .unwrap_err()
            .contains("serves v1 only")
    );
    let other = json!({"apiVersion": "example.com/v1", "kind": "Gadget"});
    assert!(crds.admit(&other).is_none());
}

#[test]
fn did_you_mean_names_the_nearest_field_of_the_same_object() {
    let crd = Crds::capi()
        .get(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlaneTemplate",
        )
        .unwrap();
    let schema = &crd
        .versions
        .iter()
        .find(|v| v.name == "v1beta2")
        .unwrap()
        .schema;
    assert_eq!(
        did_you_mean(
            schema,
            "spec.template.spec.kubeadmConfigSpec.clusterConfiguration.imageRepositry"
        )
        .as_deref(),
        Some("spec.template.spec.kubeadmConfigSpec.clusterConfiguration.imageRepository")
    );
    assert_eq!(
        did_you_mean(schema, "spec.template.spec.nothingLikeIt"),
        None
    );
}

#[test]
fn a_null_is_dropped_by_a_create_and_refused_by_a_server_side_apply() {
    let object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"name": "a", "mode": null, "note": null, "replicas": null}});
    let created = crds().admit_as(&object, Write::Create).unwrap().unwrap();
    assert!(created.errors.is_empty(), "{:?}", created.errors);
    assert_eq!(
        created.object["spec"],
        json!({"name": "a", "note": null, "replicas": 1})
    );
    let applied = crds().admit_as(&object, Write::Apply).unwrap().unwrap();
    let shown: Vec<String> = applied.errors.iter().map(ToString::to_string).collect();
    // The nullable one is kept, the defaulted one defaulted, the other refused.
    assert_eq!(
        shown,
        [
            r#"spec.mode: Invalid value: spec.mode in body must be of type string: "null""#,
            r#"spec.mode: Unsupported value: supported values: "a", "b""#,
            "<nil>: Invalid value: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ]
    );
    assert_eq!(applied.object["spec"]["replicas"], 1);
}

#[test]
fn messages_are_the_api_servers_details() {
    let admitted = admit(json!({"name": "toolong", "items": [{"name": "x"}, {"name": "x"}]}));
    let shown: Vec<String> = admitted.errors.iter().map(ToString::to_string).collect();
    assert!(
        shown.contains(&"spec.name: Too long: may not be more than 5 bytes".to_string()),
        "{shown:?}"
    );
    let missing = admit(json!({}));
    assert_eq!(missing.errors[0].to_string(), "spec.name: Required value");
    let crds = crds();
    let object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"name": "a", "replicas": 1.5e7}});
    let admitted = crds.admit(&object).unwrap().unwrap();
    assert!(
        admitted.errors.iter().any(|e| e.message
            == ".spec.replicas accessor error: 1.5e+07 is of the type float64, expected int64"),
        "{:?}",
        admitted.errors
    );
}
