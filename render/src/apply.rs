//! Returned patches applied as CAPI applies them (`applyPatchToRequest`), and the patched
//! templates copied into the desired objects (`updateDesiredState`).

use crate::desired::{self, Desired, Worker};
use crate::error::RenderError;
use crate::object::{FieldCopy, copy_fields, string};
use capi_ext::CapiVersion;
use capi_ext::hooks::v1alpha1::{GeneratePatchesRequest, GeneratePatchesResponse, Patch};
use serde_json::Value;

/// `applyPatchToRequest`: applies each returned patch to its item, keeping only the changes to
/// `spec`, `metadata.labels` and `metadata.annotations`.
pub(super) fn apply_response(
    request: &mut GeneratePatchesRequest,
    response: &GeneratePatchesResponse,
    patch_name: &str,
) -> Result<(), RenderError> {
    for returned in &response.items {
        let item = request.items.iter_mut().find(|i| i.uid == returned.uid).ok_or_else(|| RenderError::Patch {
            patch: patch_name.into(),
            uid: returned.uid.clone(),
            kind: "?".into(),
            message: "no request item has this uid (CAPI: unable to find corresponding request item for patch)".into(),
        })?;
        let fail = |message: String| RenderError::Patch {
            patch: patch_name.into(),
            uid: returned.uid.clone(),
            kind: string(&item.object, &["kind"]).into(),
            message,
        };
        if returned.patch.is_noop() {
            continue;
        }
        item.object = patch_object(&item.object, &returned.patch)
            .map_err(fail)?
            .into();
    }
    Ok(())
}

/// One template patched as CAPI's `applyPatchToRequest` patches it: the patch applied (RFC 6902
/// strictly, or RFC 7386), then only the changes to `spec`, `metadata.labels` and
/// `metadata.annotations` kept.
pub(crate) fn patch_object(object: &Value, patch: &Patch) -> Result<Value, String> {
    let mut patched = object.clone();
    match patch {
        Patch::Json(_) => {
            let operations: json_patch::Patch = serde_json::from_slice(&patch.document())
                .map_err(|e| format!("not an RFC 6902 JSON patch: {e}"))?;
            json_patch::patch(&mut patched, &operations)
                .map_err(|e| format!("error applying json patch (RFC6902): {e}"))?;
        }
        Patch::Merge(document) => json_patch::merge(&mut patched, document),
    }
    let mut kept = object.clone();
    copy_fields(
        &mut kept,
        &patched,
        &[
            (&["spec"], &["spec"]),
            (&["metadata", "labels"], &["metadata", "labels"]),
            (&["metadata", "annotations"], &["metadata", "annotations"]),
        ],
        &[],
    );
    Ok(kept)
}

const ALWAYS_PRESERVE: [&[&str]; 6] = [
    &["metadata", "labels", desired::CLUSTER_NAME_LABEL],
    &["metadata", "labels", desired::TOPOLOGY_OWNED_LABEL],
    &["metadata", "labels", desired::DEPLOYMENT_NAME_LABEL],
    &["metadata", "labels", desired::POOL_NAME_LABEL],
    &["metadata", "annotations", desired::CLONED_FROM_NAME],
    &["metadata", "annotations", desired::CLONED_FROM_GROUP_KIND],
];

const OBJECT_FIELDS: [FieldCopy<'static>; 3] = [
    (&["spec", "template", "spec"], &["spec"]),
    (
        &["spec", "template", "metadata", "labels"],
        &["metadata", "labels"],
    ),
    (
        &["spec", "template", "metadata", "annotations"],
        &["metadata", "annotations"],
    ),
];

const TEMPLATE_FIELDS: [FieldCopy<'static>; 5] = [
    (&["metadata", "labels"], &["metadata", "labels"]),
    (&["metadata", "annotations"], &["metadata", "annotations"]),
    (&["spec", "template", "spec"], &["spec", "template", "spec"]),
    (
        &["spec", "template", "metadata", "labels"],
        &["spec", "template", "metadata", "labels"],
    ),
    (
        &["spec", "template", "metadata", "annotations"],
        &["spec", "template", "metadata", "annotations"],
    ),
];

const CONTROL_PLANE_PRESERVE: [&[&str]; 17] = [
    &["spec", "machineTemplate", "metadata"],
    &["spec", "machineTemplate", "readinessGates"],
    &["spec", "machineTemplate", "spec", "readinessGates"],
    &["spec", "machineTemplate", "taints"],
    &["spec", "machineTemplate", "spec", "taints"],
    &["spec", "machineTemplate", "infrastructureRef"],
    &["spec", "machineTemplate", "spec", "infrastructureRef"],
    &["spec", "machineTemplate", "nodeDrainTimeout"],
    &["spec", "machineTemplate", "nodeVolumeDetachTimeout"],
    &["spec", "machineTemplate", "nodeDeletionTimeout"],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeDrainTimeoutSeconds",
    ],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeVolumeDetachTimeoutSeconds",
    ],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeDeletionTimeoutSeconds",
    ],
    &["spec", "replicas"],
    &["spec", "version"],
    &["spec", "rollout", "after"],
    &["spec", "rolloutAfter"],
];

/// Metadata the patches set on templates (their own labels and annotations, or
/// `spec.template.metadata`) that a Cluster API release before 1.14 drops, one sentence each.
pub(super) fn dropped_metadata(
    sent: &GeneratePatchesRequest,
    patched: &GeneratePatchesRequest,
    capi_version: CapiVersion,
) -> Vec<String> {
    let mut out = Vec::new();
    for (before, after) in sent.items.iter().zip(&patched.items) {
        let changed: Vec<&str> = [
            ("metadata.labels", &["metadata", "labels"][..]),
            ("metadata.annotations", &["metadata", "annotations"][..]),
            (
                "spec.template.metadata",
                &["spec", "template", "metadata"][..],
            ),
        ]
        .into_iter()
        .filter(|(_, path)| {
            super::object::get(&before.object, path) != super::object::get(&after.object, path)
        })
        .map(|(name, _)| name)
        .collect();
        if !changed.is_empty() {
            out.push(format!(
                "the patches set {} of {} {} (held by {} {} at {}); Cluster API {capi_version} copies only spec.template.spec of a patched template, so it drops them (1.14 keeps them)",
                changed.join(" and "),
                string(&after.object, &["kind"]),
                string(&after.object, &["metadata", "name"]),
                after.holder_reference.kind,
                after.holder_reference.name,
                after.holder_reference.field_path,
            ));
        }
    }
    out
}

/// `updateDesiredState`: the patched templates' specs and metadata into the desired objects.
/// Before Cluster API 1.14 only `spec.template.spec` is copied (`patchObject`/`patchTemplate`
/// in v1.13's `patches/patch.go`): metadata a patch sets on a template is dropped.
pub(super) fn update_desired(
    request: &GeneratePatchesRequest,
    desired: &mut Desired,
    capi_version: CapiVersion,
) {
    let metadata = capi_version >= CapiVersion::new(1, 14);
    let object_fields = if metadata {
        &OBJECT_FIELDS[..]
    } else {
        &OBJECT_FIELDS[..1]
    };
    let template_fields = if metadata {
        &TEMPLATE_FIELDS[..]
    } else {
        &TEMPLATE_FIELDS[2..3]
    };
    let find = |kind: &str, field: &str, name: Option<&str>| {
        request
            .items
            .iter()
            .find(|i| {
                i.holder_reference.kind == kind
                    && i.holder_reference.field_path == field
                    && name.is_none_or(|n| i.holder_reference.name == n)
            })
            .map(|i| &i.object)
    };
    if let Some(template) = find("Cluster", "spec.infrastructureRef", None) {
        copy_fields(
            &mut desired.infrastructure_cluster,
            template,
            object_fields,
            &ALWAYS_PRESERVE,
        );
    }
    if let Some(template) = find("Cluster", "spec.controlPlaneRef", None) {
        let preserve: Vec<&[&str]> = CONTROL_PLANE_PRESERVE
            .iter()
            .chain(ALWAYS_PRESERVE.iter())
            .copied()
            .collect();
        copy_fields(
            &mut desired.control_plane,
            template,
            object_fields,
            &preserve,
        );
    }
    let cp_kind = string(&desired.control_plane, &["kind"]).to_string();
    let cp_field = desired::control_plane_machine_field(&desired.control_plane);
    if let Some(machine) = desired.control_plane_machine.as_mut()
        && let Some(template) = find(&cp_kind, cp_field, None)
    {
        copy_fields(machine, template, template_fields, &ALWAYS_PRESERVE);
    }
    let workers = [
        (
            "MachineDeployment",
            &mut desired.machine_deployments,
            template_fields,
        ),
        ("MachinePool", &mut desired.machine_pools, object_fields),
    ];
    for (kind, list, fields) in workers {
        for Worker {
            name,
            bootstrap,
            infrastructure,
            ..
        } in list.iter_mut()
        {
            for (field, object) in [
                ("spec.template.spec.bootstrap.configRef", bootstrap),
                ("spec.template.spec.infrastructureRef", infrastructure),
            ] {
                if let Some(template) = find(kind, field, Some(name)) {
                    copy_fields(object, template, fields, &ALWAYS_PRESERVE);
                }
            }
        }
    }
}
