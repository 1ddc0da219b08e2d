//! The in-place extension of the end-to-end run (`capi-ext-conformance inplace-extension`):
//! CanUpdateMachineSet, CanUpdateMachine and UpdateMachine, as an infrastructure provider's
//! in-place updater would serve them.
//!
//! - CanUpdateMachineSet accepts a change in place when everything that differs between the
//!   current and the desired templates' `spec.template.spec` lies under [`IN_PLACE_FIELDS`]: it
//!   answers with the patches that turn `current` into `desired` there, which CAPI applies and
//!   compares. Any other difference gets no patch, so CAPI rolls the MachineSet out.
//! - CanUpdateMachine (called by KubeadmControlPlane for its Machines) decides the same way on
//!   the objects themselves: differences of the infrastructure machine's and the bootstrap
//!   config's `spec` under [`IN_PLACE_FIELDS`] are patched (a KubeadmConfig's `files`: what an
//!   updater writes on the node), any other refuses (KCP then deletes the Machine and creates a
//!   new one).
//! - UpdateMachine holds (Success with retryAfterSeconds) while the desired Machine's
//!   annotation [`HOLD`] names it, then answers done.
//!
//! Each call is logged as one JSON line (message `in-place hook called`, field `call`), so the
//! harness can check what CAPI asked and what the extension decided.

use capi_ext::hooks::v1alpha1::*;
use capi_ext::patches::diff;
use capi_ext::{Extension, ExtensionBuilder, Registration};
use serde_json::{Value, json};

/// The Machine annotation that holds UpdateMachine while it names `UpdateMachine`.
pub const HOLD: &str = "e2e.capi-ext.io/hold";

/// The field of an infrastructure machine's spec that carries what can change in place.
pub const IN_PLACE_FIELD: &str = "inPlace";

/// The fields of an object's spec (a template's `spec.template.spec`) this extension can change
/// in place: [`IN_PLACE_FIELD`], and the files a bootstrap config writes on the node.
pub const IN_PLACE_FIELDS: [&str; 2] = [IN_PLACE_FIELD, "files"];

/// The patch from `current` to `desired` when every difference of the object at `root`
/// (`/spec/template/spec` of a template, `/spec` of a Machine's object) is under one of
/// [`IN_PLACE_FIELDS`] (`Ok(None)`: nothing differs); `Err` lists the other paths.
fn in_place_patch(
    root: &str,
    current: &Value,
    desired: &Value,
) -> Result<Option<Patch>, Vec<String>> {
    // The compared part, rebuilt at its own path so the patch applies to the whole object.
    let at_root = |v: &Value| {
        let mut out = v.pointer(root).cloned().unwrap_or(Value::Null);
        for key in root.rsplit('/').filter(|k| !k.is_empty()) {
            out = json!({ key: out });
        }
        out
    };
    let ops = diff(&at_root(current), &at_root(desired));
    let in_place = |p: &str| {
        IN_PLACE_FIELDS.iter().any(|field| {
            let prefix = format!("{root}/{field}");
            p == prefix || p.starts_with(&format!("{prefix}/"))
        })
    };
    let refused: Vec<String> = ops
        .iter()
        .map(JsonPatchOp::path)
        .filter(|p| !in_place(p))
        .map(str::to_owned)
        .collect();
    if !refused.is_empty() {
        return Err(refused);
    }
    Ok((!ops.is_empty()).then_some(Patch::Json(ops)))
}

/// The template patches of one CanUpdateMachineSet or CanUpdateMachine call, by object
/// (`Err`: the paths that cannot change in place, each prefixed with its object's kind).
fn in_place_patches<'a>(
    root: &str,
    objects: [(&'a str, &Value, &Value); 2],
) -> Result<[(&'a str, Option<Patch>); 2], Vec<String>> {
    let mut refused = Vec::new();
    let mut patches = objects.map(|(kind, _, _)| (kind, None));
    for (i, (kind, current, desired)) in objects.into_iter().enumerate() {
        match in_place_patch(root, current, desired) {
            Ok(patch) => patches[i].1 = patch,
            Err(paths) => refused.extend(paths.into_iter().map(|p| format!("{kind}{p}"))),
        }
    }
    if refused.is_empty() {
        Ok(patches)
    } else {
        Err(refused)
    }
}

fn name(v: &Value) -> Value {
    v.pointer("/metadata/name").cloned().unwrap_or_default()
}

async fn can_update_machine_set(r: CanUpdateMachineSetRequest) -> CanUpdateMachineSetResponse {
    let mut response = CanUpdateMachineSetResponse::success();
    let decided = in_place_patches(
        "/spec/template/spec",
        [
            (
                "infrastructureMachineTemplate",
                &r.current.infrastructure_machine_template,
                &r.desired.infrastructure_machine_template,
            ),
            (
                "bootstrapConfigTemplate",
                &r.current.bootstrap_config_template,
                &r.desired.bootstrap_config_template,
            ),
        ],
    );
    // Refused: without patches CAPI sees the templates still differ and rolls the MachineSet out.
    if let Ok([(_, infrastructure), (_, bootstrap)]) = decided.clone() {
        response.infrastructure_machine_template_patch = infrastructure;
        response.bootstrap_config_template_patch = bootstrap;
    }
    let call = json!({
        "hook": "CanUpdateMachineSet",
        "current": r.current.machine_set.metadata.name,
        "desired": r.desired.machine_set.metadata.name,
        "currentInfrastructureTemplate": name(&r.current.infrastructure_machine_template),
        "desiredInfrastructureTemplate": name(&r.desired.infrastructure_machine_template),
        "accepted": decided.is_ok(),
        "refused": decided.err().unwrap_or_default(),
    });
    tracing::info!(call = %call, "in-place hook called");
    response
}

async fn can_update_machine(r: CanUpdateMachineRequest) -> CanUpdateMachineResponse {
    let mut response = CanUpdateMachineResponse::success();
    let decided = in_place_patches(
        "/spec",
        [
            (
                "infrastructureMachine",
                &r.current.infrastructure_machine,
                &r.desired.infrastructure_machine,
            ),
            (
                "bootstrapConfig",
                &r.current.bootstrap_config,
                &r.desired.bootstrap_config,
            ),
        ],
    );
    // Refused: without patches KCP sees the objects still differ, deletes the Machine and
    // creates a new one.
    let mut patched = Vec::new();
    if let Ok([(_, infrastructure), (_, bootstrap)]) = decided.clone() {
        for (kind, patch) in [
            ("infrastructureMachine", &infrastructure),
            ("bootstrapConfig", &bootstrap),
        ] {
            if let Some(Patch::Json(ops)) = patch {
                patched.extend(ops.iter().map(|op| format!("{kind}{}", op.path())));
            }
        }
        response.infrastructure_machine_patch = infrastructure;
        response.bootstrap_config_patch = bootstrap;
    }
    let call = json!({
        "hook": "CanUpdateMachine",
        "patched": patched,
        "machine": r.current.machine.metadata.name,
        "current": name(&r.current.infrastructure_machine),
        "desired": name(&r.desired.infrastructure_machine),
        "inPlace": r.desired.infrastructure_machine.pointer(&format!("/spec/{IN_PLACE_FIELD}")),
        "accepted": decided.is_ok(),
        "refused": decided.err().unwrap_or_default(),
    });
    tracing::info!(call = %call, "in-place hook called");
    response
}

async fn update_machine(r: UpdateMachineRequest) -> UpdateMachineResponse {
    let machine = &r.desired.machine;
    let held = machine
        .metadata
        .annotations
        .get(HOLD)
        .into_iter()
        .flat_map(|v| v.split(','))
        .any(|h| h.trim() == "UpdateMachine");
    let call = json!({
        "hook": "UpdateMachine",
        "machine": machine.metadata.name,
        "infrastructureMachine": r.desired.infrastructure_machine.pointer("/metadata/name"),
        "inPlace": r.desired.infrastructure_machine.pointer(&format!("/spec/{IN_PLACE_FIELD}")),
        "held": held,
    });
    tracing::info!(call = %call, "in-place hook called");
    if held {
        UpdateMachineResponse::success()
            .retry_after(1)
            .with_message(format!("UpdateMachine held by annotation {HOLD}"))
    } else {
        UpdateMachineResponse::success()
    }
}

/// The in-place extension's handlers.
pub fn extension() -> ExtensionBuilder {
    Extension::builder()
        .handler(Registration::new(
            CanUpdateMachineSet,
            "can-update-machine-set",
            can_update_machine_set,
        ))
        .handler(Registration::new(
            CanUpdateMachine,
            "can-update-machine",
            can_update_machine,
        ))
        .handler(Registration::new(
            UpdateMachine,
            "update-machine",
            update_machine,
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(spec: Value) -> Value {
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureMachineTemplate",
            "metadata": {"name": "t"}, "spec": {"template": {"spec": spec}}})
    }

    #[test]
    fn accepts_changes_under_the_in_place_field_only() {
        let current = template(json!({"flavor": "small", "inPlace": {"motd": "one"}}));
        let patch = in_place_patch(
            "/spec/template/spec",
            &current,
            &template(json!({"flavor": "small", "inPlace": {"motd": "two"}})),
        )
        .unwrap()
        .expect("a patch");
        assert_eq!(
            patch,
            Patch::json().replace("/spec/template/spec/inPlace/motd", "two")
        );
        assert_eq!(
            in_place_patch("/spec/template/spec", &current, &current),
            Ok(None)
        );
        assert_eq!(
            in_place_patch(
                "/spec/template/spec",
                &current,
                &template(json!({"flavor": "large", "inPlace": {"motd": "two"}}))
            ),
            Err(vec!["/spec/template/spec/flavor".to_owned()])
        );
    }

    #[tokio::test]
    async fn can_update_machine_patches_the_in_place_field_of_the_objects_only() {
        let machine = |spec: Value| {
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
            "kind": "GenericInfrastructureMachine", "metadata": {"name": "m"}, "spec": spec})
        };
        let mut request = CanUpdateMachineRequest::new();
        request.current.infrastructure_machine = machine(
            json!({"flavor": "small", "providerID": "e2e://m", "inPlace": {"motd": "one"}}),
        );
        request.desired.infrastructure_machine = machine(
            json!({"flavor": "small", "providerID": "e2e://m", "inPlace": {"motd": "two"}}),
        );
        let answer = can_update_machine(request.clone()).await;
        assert_eq!(
            answer.infrastructure_machine_patch,
            Some(Patch::json().replace("/spec/inPlace/motd", "two"))
        );
        assert_eq!(answer.bootstrap_config_patch, None);

        // A KubeadmConfig's files change in place too, with the infrastructure machine's.
        let config = |files: Value| {
            json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig",
            "metadata": {"name": "m"}, "spec": {"files": files, "format": "cloud-config"}})
        };
        request.current.bootstrap_config = config(json!([]));
        request.desired.bootstrap_config = config(json!([{"path": "/etc/motd", "content": "two"}]));
        let answer = can_update_machine(request.clone()).await;
        assert!(answer.infrastructure_machine_patch.is_some());
        assert_eq!(
            answer.bootstrap_config_patch,
            Some(Patch::json().replace(
                "/spec/files",
                json!([{"path": "/etc/motd", "content": "two"}])
            ))
        );
        request.desired.bootstrap_config["spec"]["format"] = json!("ignition");
        let answer = can_update_machine(request.clone()).await;
        assert_eq!(answer.bootstrap_config_patch, None);
        request.desired.bootstrap_config = request.current.bootstrap_config.clone();

        request.desired.infrastructure_machine["spec"]["flavor"] = json!("large");
        let answer = can_update_machine(request).await;
        assert_eq!(answer.infrastructure_machine_patch, None);
        assert_eq!(answer.status, ResponseStatus::Success);
    }

    #[tokio::test]
    async fn refuses_with_no_patch_and_holds_while_annotated() {
        let mut request = CanUpdateMachineSetRequest::new();
        request.current.infrastructure_machine_template = template(json!({"flavor": "small"}));
        request.desired.infrastructure_machine_template = template(json!({"flavor": "large"}));
        let answer = can_update_machine_set(request).await;
        assert_eq!(answer.infrastructure_machine_template_patch, None);

        let mut request = UpdateMachineRequest::new();
        request
            .desired
            .machine
            .metadata
            .annotations
            .insert(HOLD.into(), "UpdateMachine".into());
        assert_eq!(
            update_machine(request.clone()).await.retry_after_seconds(),
            1
        );
        request.desired.machine.metadata.annotations.clear();
        assert_eq!(update_machine(request).await.retry_after_seconds(), 0);
    }
}
