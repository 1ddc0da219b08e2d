//! Successive versions of one topology extension (`capi-ext-conformance topology-extension
//! --variant NAME`), for the end-to-end proof of `capi-ext diff`: the harness deploys each in
//! turn behind the same ExtensionConfig, asks `capi-ext diff` what the next one will do, deploys
//! it and reads from the API server what CAPI did. The templates are of real, structural CRDs
//! with defaults: CAPI's Docker infrastructure kinds, KubeadmConfigTemplate and
//! KubeadmControlPlaneTemplate. Each version keeps the changes of the ones before it and adds
//! one class of change:
//!
//! | variant | adds | what CAPI does |
//! |---|---|---|
//! | `v1` | `preLoadImages: [e2e/arch:amd64]` on MachineDeployment machines, `loadBalancer.imageRepository: eu-west-1.registry.example` on the infrastructure cluster | |
//! | `rebuilt` | nothing (a new build of the same code) | nothing |
//! | `labels` | a label on the MachineDeployment's infrastructure template itself | patched in place, no rotation |
//! | `infrastructure` | `imageRepository: us-east-1.registry.example` | the infrastructure cluster patched in place |
//! | `control-plane` | `kubeadmConfigSpec.clusterConfiguration.dns.imageTag: v1.12.1` on the KubeadmControlPlane | the control plane patched in place; no Machine replaced (KCP's up-to-date check clears the DNS settings before comparing) |
//! | `rollout` | `preLoadImages: [e2e/arch:arm64]` | the template rotated, a new MachineSet |
//! | `control-plane-machine` | an `extraMounts` entry on the control plane's machines | their template rotated, the control plane's reference to it updated |
//! | `bootstrap` | `preKubeadmCommands` in the MachineDeployment's bootstrap config | its template rotated, a new MachineSet |
//! | `pool` | `template.customImage` on the MachinePool's infrastructure machine pool | that object patched in place (the provider decides what its machines do) |
//!
//! And heads that must never ship, each the `pool` version with one fault:
//! - `renamed`: its GeneratePatches handler renamed to `patches-v2`, which the deployed
//!   ClusterClass does not call: `diff` says it BREAKS the Cluster, and deployed, the manager's
//!   reconcile of the Cluster fails.
//! - `undeclared`: sets `zone` on the MachineDeployment's machines, a field DockerMachineTemplate's
//!   CRD does not declare: `diff` (given the CRDs) says it BREAKS, naming the field; deployed,
//!   the API server refuses CAPI's server-side apply (`field not declared in schema`; a plain
//!   create would have dropped the field) and the Cluster stops reconciling.
//! - `invalid`: sets `bootstrapTimeout` to a number where the CRD says string: `diff` says it
//!   BREAKS with the API server's field path; deployed, CAPI's apply is refused and the Cluster
//!   stops reconciling.
//! - `nulled`: sets `extraMounts` to `null` (a JSON patch may): a create would drop the null,
//!   but CAPI's server-side apply keeps it and the API server refuses it (`must be of type
//!   array: "null"`); `diff` says it BREAKS in those words.

use capi_ext::hooks::v1alpha1::*;
use capi_ext::patches::{NamedPatch, PatchContext, PatchError, PatchSet, Selector, Template};
use capi_ext::{ExtensionBuilder, Registration};
use serde_json::{Value, json};

/// The versions, oldest first.
pub const VARIANTS: [&str; 9] = [
    "v1",
    "rebuilt",
    "labels",
    "infrastructure",
    "control-plane",
    "rollout",
    "control-plane-machine",
    "bootstrap",
    "pool",
];

/// The label `labels` puts on the MachineDeployment's infrastructure template.
pub const LABEL: &str = "e2e.capi-ext.io/variant";

/// The DNS image tag `control-plane` sets on the KubeadmControlPlane.
pub const DNS_IMAGE_TAG: &str = "v1.12.1";

/// Whether `variant` includes the change `since` introduced.
fn has(variant: usize, since: &str) -> bool {
    VARIANTS
        .iter()
        .position(|v| *v == since)
        .is_some_and(|i| variant >= i)
}

/// A patch named `name` that sets `spec.template.spec.<field>` (a `/`-separated path) of the
/// templates `selector` picks.
fn set_field(name: &str, selector: Selector, field: &str, value: Value) -> NamedPatch<Value> {
    let pointer = format!("/spec/template/spec/{field}");
    NamedPatch::new(
        name,
        selector,
        move |t: &mut Template, _: &PatchContext<'_, Value>| -> Result<(), PatchError> {
            t.set(&pointer, value.clone())?;
            Ok(())
        },
    )
}

/// The patches of the version at index `variant` of [`VARIANTS`].
pub fn patch_set(variant: usize) -> PatchSet<Value> {
    let arch = if has(variant, "rollout") {
        "arm64"
    } else {
        "amd64"
    };
    let region = if has(variant, "infrastructure") {
        "us-east-1"
    } else {
        "eu-west-1"
    };
    let mut set = PatchSet::new()
        .patch(set_field(
            "arch",
            Selector::machine_deployments(["*"]).infrastructure(),
            "preLoadImages",
            json!([format!("e2e/arch:{arch}")]),
        ))
        .patch(set_field(
            "region",
            Selector::infrastructure_cluster(),
            "loadBalancer/imageRepository",
            json!(format!("{region}.registry.example")),
        ));
    if has(variant, "labels") {
        set = set.patch(NamedPatch::new(
            "label",
            Selector::machine_deployments(["*"]).infrastructure(),
            |t: &mut Template, _: &PatchContext<'_, Value>| -> Result<(), PatchError> {
                t.label(LABEL, "labels")?;
                Ok(())
            },
        ));
    }
    if has(variant, "control-plane") {
        set = set.patch(set_field(
            "dns",
            Selector::control_plane().control_plane_template(),
            "kubeadmConfigSpec/clusterConfiguration/dns/imageTag",
            json!(DNS_IMAGE_TAG),
        ));
    }
    if has(variant, "control-plane-machine") {
        set = set.patch(set_field(
            "disk",
            Selector::control_plane().infrastructure(),
            "extraMounts",
            json!([{"containerPath": "/var/lib/etcd", "hostPath": "/mnt/disk-100Gi"}]),
        ));
    }
    if has(variant, "bootstrap") {
        set = set.patch(set_field(
            "preset",
            Selector::machine_deployments(["*"]).bootstrap(),
            "preKubeadmCommands",
            json!(["echo hardened"]),
        ));
    }
    if has(variant, "pool") {
        set = set.patch(set_field(
            "pool-size",
            Selector::machine_pools(["*"]).infrastructure(),
            "template/customImage",
            json!("e2e/pool:large"),
        ));
    }
    set
}

/// The version whose GeneratePatches handler is renamed (the last of [`VARIANTS`] otherwise).
pub const RENAMED: &str = "renamed";

/// The version that also sets a field the MachineDeployment's infrastructure template's CRD
/// does not declare (the last of [`VARIANTS`] otherwise).
pub const UNDECLARED: &str = "undeclared";

/// The version that also sets a field to a value of the wrong type (the last of [`VARIANTS`]
/// otherwise).
pub const INVALID: &str = "invalid";

/// The version that also sets a field the CRD does not let be null to `null` (the last of
/// [`VARIANTS`] otherwise).
pub const NULLED: &str = "nulled";

/// The patches of one version and the name of its GeneratePatches handler (`patches`,
/// `patches-v2` for [`RENAMED`]).
pub fn version(variant: &str) -> Result<(PatchSet<Value>, &'static str), String> {
    let last = VARIANTS.len() - 1;
    let machines = || Selector::machine_deployments(["*"]).infrastructure();
    let (set, handler) = match variant {
        RENAMED => (patch_set(last), "patches-v2"),
        UNDECLARED => (
            patch_set(last).patch(set_field("zone", machines(), "zone", json!("c"))),
            "patches",
        ),
        INVALID => (
            patch_set(last).patch(set_field(
                "bootstrap-timeout",
                machines(),
                "bootstrapTimeout",
                json!(600),
            )),
            "patches",
        ),
        NULLED => (
            patch_set(last).patch(set_field(
                "no-mounts",
                machines(),
                "extraMounts",
                Value::Null,
            )),
            "patches",
        ),
        _ => {
            let index = VARIANTS.iter().position(|v| *v == variant).ok_or_else(|| {
                format!(
                    "unknown variant `{variant}` (one of {VARIANTS:?}, or {RENAMED}, {UNDECLARED}, {INVALID}, {NULLED})"
                )
            })?;
            (patch_set(index), "patches")
        }
    };
    Ok((set, handler))
}

/// The extension of one version: its GeneratePatches handler only.
pub fn extension(variant: &str) -> Result<ExtensionBuilder, String> {
    let (set, handler) = version(variant)?;
    Ok(capi_ext::Extension::builder().handler(Registration::new(
        GeneratePatches,
        handler,
        move |req: GeneratePatchesRequest| {
            let response = set.generate(&req);
            async move { response }
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_version_builds_and_keeps_the_changes_before_it() {
        for (i, variant) in VARIANTS.iter().enumerate() {
            assert!(extension(variant).unwrap().build().is_ok(), "{variant}");
            let set = patch_set(i);
            let names: Vec<&str> = set.names().collect();
            assert_eq!(names.contains(&"label"), i >= 2, "{variant}");
            assert_eq!(names.contains(&"dns"), i >= 4, "{variant}");
            assert_eq!(names.contains(&"disk"), i >= 6, "{variant}");
            assert_eq!(names.contains(&"preset"), i >= 7, "{variant}");
            assert_eq!(names.contains(&"pool-size"), i >= 8, "{variant}");
        }
        for faulty in [RENAMED, UNDECLARED, INVALID, NULLED] {
            assert!(extension(faulty).unwrap().build().is_ok(), "{faulty}");
        }
        assert!(extension("v9").is_err());
    }
}

#[cfg(test)]
mod selection {
    use super::*;

    /// The one item of a GeneratePatches request: a template held at `field_path`.
    fn request(holder_kind: &str, field_path: &str, template_kind: &str) -> GeneratePatchesRequest {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
            "kind": "GeneratePatchesRequest",
            "items": [{
                "uid": "u1",
                "holderReference": {"apiVersion": "x/v1", "kind": holder_kind, "namespace": "e2e",
                                    "name": "h", "fieldPath": field_path},
                "object": {"apiVersion": "x/v1", "kind": template_kind,
                           "spec": {"template": {"spec": {}}}},
                "variables": [{"name": "builtin", "value": {"machineDeployment": {"class": "default-worker"}, "machinePool": {"class": "default-pool"}}}]
            }]
        }))
        .unwrap()
    }

    /// The JSON patches of `variant`'s answer, as text.
    fn patched(variant: &str, req: &GeneratePatchesRequest) -> String {
        version(variant)
            .unwrap()
            .0
            .generate(req)
            .items
            .iter()
            .map(|item| String::from_utf8(item.patch.document()).unwrap())
            .collect()
    }

    #[test]
    fn the_control_plane_version_sets_the_kubeadm_control_planes_dns_tag() {
        let control_plane = request(
            "Cluster",
            "spec.controlPlaneRef",
            "KubeadmControlPlaneTemplate",
        );
        assert!(!patched("infrastructure", &control_plane).contains("dns"));
        let patch = patched("control-plane", &control_plane);
        assert!(
            patch.contains(&format!(
                r#""path":"/spec/template/spec/kubeadmConfigSpec","value":{{"clusterConfiguration":{{"dns":{{"imageTag":"{DNS_IMAGE_TAG}"}}}}}}"#
            )),
            "{patch}"
        );
    }

    #[test]
    fn the_control_plane_machine_and_bootstrap_versions_patch_their_templates() {
        let cp_machine = request(
            "KubeadmControlPlane",
            "spec.machineTemplate.spec.infrastructureRef",
            "DockerMachineTemplate",
        );
        assert!(!patched("rollout", &cp_machine).contains("extraMounts"));
        assert!(
            patched("control-plane-machine", &cp_machine)
                .contains("/spec/template/spec/extraMounts")
        );
        let bootstrap = request(
            "MachineDeployment",
            "spec.template.spec.bootstrap.configRef",
            "KubeadmConfigTemplate",
        );
        assert!(!patched("control-plane-machine", &bootstrap).contains("preKubeadmCommands"));
        let pool = request(
            "MachinePool",
            "spec.template.spec.infrastructureRef",
            "DockerMachinePoolTemplate",
        );
        assert!(!patched("bootstrap", &pool).contains("customImage"));
        let pool_patch = patched("pool", &pool);
        assert!(
            pool_patch.contains(
                r#""path":"/spec/template/spec/template","value":{"customImage":"e2e/pool:large"}"#
            ),
            "{pool_patch}"
        );
        assert!(
            patched("bootstrap", &bootstrap).contains("/spec/template/spec/preKubeadmCommands")
        );
    }

    #[test]
    fn the_faulty_heads_patch_the_machine_deployments_machines_alone() {
        let machines = request(
            "MachineDeployment",
            "spec.template.spec.infrastructureRef",
            "DockerMachineTemplate",
        );
        let pool = request(
            "MachinePool",
            "spec.template.spec.infrastructureRef",
            "DockerMachinePoolTemplate",
        );
        assert!(!patched("pool", &machines).contains("zone"));
        assert!(
            patched(UNDECLARED, &machines)
                .contains(r#""path":"/spec/template/spec/zone","value":"c""#)
        );
        assert!(!patched(UNDECLARED, &pool).contains("zone"));
        assert!(
            patched(INVALID, &machines)
                .contains(r#""path":"/spec/template/spec/bootstrapTimeout","value":600"#)
        );
        assert!(!patched(INVALID, &pool).contains("bootstrapTimeout"));
        let nulled = patched(NULLED, &machines);
        assert!(
            nulled.contains(r#""path":"/spec/template/spec/extraMounts","value":null"#),
            "{nulled}"
        );
        assert!(!patched(NULLED, &pool).contains("extraMounts"));
    }
}
