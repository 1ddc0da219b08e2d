//! The GeneratePatches request as CAPI's `createRequest` and `addVariablesForPatch` build it:
//! one item per template with holder references, global and per-item builtin variables, and
//! only the variables the patch declared.

use crate::desired::{self, Blueprint, Desired, Worker};
use crate::error::RenderError;
use crate::object::{copy_fields, get, string, string_map};
use capi_ext::hooks::v1alpha1::{
    Builtins, ClusterBuiltins, ClusterClassRefBuiltins, ClusterNetworkBuiltins,
    ClusterTopologyBuiltins, ControlPlaneBuiltins, ControlPlaneMachineTemplateBuiltins,
    GeneratePatchesRequest, GeneratePatchesRequestItem, HolderReference, MachineBootstrapBuiltins,
    MachineDeploymentBuiltins, NameBuiltin, ObjectMeta, Variable,
};
use serde_json::Value;
use std::collections::BTreeMap;

fn holder(
    api_version: &str,
    kind: &str,
    object: &Value,
    name: &str,
    field_path: &str,
) -> HolderReference {
    HolderReference {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: string(object, &["metadata", "namespace"]).into(),
        name: name.into(),
        field_path: field_path.into(),
    }
}

const CLUSTER_API: &str = "cluster.x-k8s.io/v1beta2";

/// A deterministic stand-in for the UUIDs CAPI gives request items.
fn uid(index: usize) -> String {
    format!("00000000-0000-4000-8000-{index:012x}")
}

/// `createRequest`: one item per template, labels and annotations of the desired object synced
/// into it, holder references to the objects that will point at it.
/// From Cluster API 1.14 (`sync_metadata`), the labels and annotations computed for each
/// desired object are synced back into its template first ("so the patch engine can consider
/// them"); before, the templates are sent as the ClusterClass has them.
pub(super) fn build_request(
    blueprint: &Blueprint,
    desired: &Desired,
    sync_metadata: bool,
) -> GeneratePatchesRequest {
    let mut request = GeneratePatchesRequest::new();
    let cluster = &desired.cluster;
    let cluster_name = string(cluster, &["metadata", "name"]);
    let mut push =
        |template: &Value, from: &Value, into_spec_template: bool, holder: HolderReference| {
            let mut object = template.clone();
            let dest: &[&str] = if into_spec_template {
                &["spec", "template", "metadata"]
            } else {
                &["metadata"]
            };
            let labels = [dest, &["labels"]].concat();
            let annotations = [dest, &["annotations"]].concat();
            if sync_metadata {
                copy_fields(
                    &mut object,
                    from,
                    &[
                        (&["metadata", "labels"], &labels),
                        (&["metadata", "annotations"], &annotations),
                    ],
                    &[],
                );
            }
            desired::clean_template(&mut object);
            let index = request.items.len();
            request.items.push(GeneratePatchesRequestItem {
                uid: uid(index),
                holder_reference: holder,
                object: object.into(),
                variables: Vec::new(),
            });
        };
    push(
        &blueprint.infrastructure_cluster.object,
        &desired.infrastructure_cluster,
        true,
        holder(
            CLUSTER_API,
            "Cluster",
            cluster,
            cluster_name,
            "spec.infrastructureRef",
        ),
    );
    push(
        &blueprint.control_plane.object,
        &desired.control_plane,
        true,
        holder(
            CLUSTER_API,
            "Cluster",
            cluster,
            cluster_name,
            "spec.controlPlaneRef",
        ),
    );
    if let (Some(template), Some(machine)) = (
        &blueprint.control_plane_machine,
        &desired.control_plane_machine,
    ) {
        let cp = &desired.control_plane;
        push(
            &template.object,
            machine,
            false,
            holder(
                string(cp, &["apiVersion"]),
                string(cp, &["kind"]),
                cp,
                string(cp, &["metadata", "name"]),
                desired::control_plane_machine_field(cp),
            ),
        );
    }
    let holder_object =
        serde_json::json!({"metadata": {"namespace": cluster["metadata"]["namespace"]}});
    let workers = [
        (
            "MachineDeployment",
            &desired.machine_deployments,
            &blueprint.machine_deployments,
            false,
        ),
        (
            "MachinePool",
            &desired.machine_pools,
            &blueprint.machine_pools,
            true,
        ),
    ];
    for (kind, list, classes, into_spec_template) in workers {
        for worker in list {
            let class = &classes[&worker.class];
            for (template, object, field) in [
                (
                    &class.bootstrap.object,
                    &worker.bootstrap,
                    "spec.template.spec.bootstrap.configRef",
                ),
                (
                    &class.infrastructure.object,
                    &worker.infrastructure,
                    "spec.template.spec.infrastructureRef",
                ),
            ] {
                let holder = holder(CLUSTER_API, kind, &holder_object, &worker.name, field);
                push(template, object, into_spec_template, holder);
            }
        }
    }
    request
}

fn user_variables(list: Option<&Value>, declared: &[&str]) -> Vec<Variable> {
    list.and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter(|e| {
                    let name = string(e, &["name"]);
                    name != "builtin" && declared.contains(&name)
                })
                .map(|e| Variable {
                    name: string(e, &["name"]).into(),
                    value: e["value"].clone().into(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn builtin(builtins: Builtins) -> Variable {
    Variable {
        name: "builtin".into(),
        value: serde_json::to_value(builtins)
            .expect("builtins serialize")
            .into(),
    }
}

fn object_meta(
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    present: bool,
) -> Option<ObjectMeta> {
    present.then_some(ObjectMeta {
        labels,
        annotations,
    })
}

/// `addVariablesForPatch`: the global variables and each item's variables for one patch.
pub(super) fn add_variables(
    request: &mut GeneratePatchesRequest,
    desired: &Desired,
    declared: &[&str],
) -> Result<(), RenderError> {
    let cluster = &desired.cluster;
    let topology = &cluster["spec"]["topology"];
    let namespace = string(cluster, &["metadata", "namespace"]);
    let class_name = string(topology, &["classRef", "name"]);
    let class_namespace = match string(topology, &["classRef", "namespace"]) {
        "" => namespace,
        ns => ns,
    };
    let network = &cluster["spec"]["clusterNetwork"];
    let cidrs = |path: &[&str]| {
        get(network, path).and_then(Value::as_array).map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect::<Vec<_>>()
        })
    };
    let service_domain = string(network, &["serviceDomain"]);
    let services = cidrs(&["services", "cidrBlocks"]);
    let pods = cidrs(&["pods", "cidrBlocks"]);
    let network_builtins = (!service_domain.is_empty() || services.is_some() || pods.is_some())
        .then(|| ClusterNetworkBuiltins {
            service_domain: (!service_domain.is_empty()).then(|| service_domain.to_string()),
            services: services.unwrap_or_default(),
            pods: pods.unwrap_or_default(),
        });
    let metadata = cluster.get("metadata");
    let has_meta =
        metadata.is_some_and(|m| m.get("labels").is_some() || m.get("annotations").is_some());
    let mut global = user_variables(topology.get("variables"), declared);
    global.push(builtin(Builtins {
        cluster: Some(ClusterBuiltins {
            name: string(cluster, &["metadata", "name"]).into(),
            namespace: namespace.into(),
            uid: string(cluster, &["metadata", "uid"]).into(),
            metadata: object_meta(
                string_map(cluster, &["metadata", "labels"]),
                desired::builtin_annotations(cluster),
                has_meta,
            ),
            topology: Some(ClusterTopologyBuiltins {
                version: string(topology, &["version"]).into(),
                class: class_name.into(),
                class_namespace: class_namespace.into(),
                class_ref: ClusterClassRefBuiltins {
                    name: class_name.into(),
                    namespace: class_namespace.into(),
                },
            }),
            network: network_builtins,
        }),
        ..Default::default()
    }));
    request.variables = global;

    let cp = &desired.control_plane;
    let mut cp_variables = user_variables(
        get(topology, &["controlPlane", "variables", "overrides"]),
        declared,
    );
    let cp_meta = cp
        .get("metadata")
        .is_some_and(|m| m.get("labels").is_some() || m.get("annotations").is_some());
    cp_variables.push(builtin(Builtins {
        control_plane: Some(ControlPlaneBuiltins {
            version: string(cp, &["spec", "version"]).into(),
            metadata: object_meta(
                string_map(cp, &["metadata", "labels"]),
                desired::builtin_annotations(cp),
                cp_meta,
            ),
            name: string(cp, &["metadata", "name"]).into(),
            replicas: get(topology, &["controlPlane", "replicas"])
                .and_then(|_| get(cp, &["spec", "replicas"]))
                .and_then(Value::as_i64)
                .map(|r| r as i32),
            machine_template: desired.control_plane_machine.as_ref().map(|m| {
                ControlPlaneMachineTemplateBuiltins {
                    infrastructure_ref: NameBuiltin {
                        name: string(m, &["metadata", "name"]).into(),
                    },
                }
            }),
        }),
        ..Default::default()
    }));
    let cp_machine_field = desired::control_plane_machine_field(cp);

    let worker_builtins = |w: &Worker| -> MachineDeploymentBuiltins {
        MachineDeploymentBuiltins {
            version: string(&w.object, &["spec", "template", "spec", "version"]).into(),
            metadata: Some(ObjectMeta {
                labels: w.labels.clone(),
                annotations: w.annotations.clone(),
            }),
            class: w.class.clone(),
            name: w.name.clone(),
            topology_name: string(&w.topology, &["name"]).into(),
            replicas: get(&w.topology, &["replicas"]).and_then(Value::as_i64),
            bootstrap: Some(MachineBootstrapBuiltins {
                config_ref: Some(NameBuiltin {
                    name: string(&w.bootstrap, &["metadata", "name"]).into(),
                }),
            }),
            infrastructure_ref: Some(NameBuiltin {
                name: string(&w.infrastructure, &["metadata", "name"]).into(),
            }),
        }
    };
    for item in &mut request.items {
        let holder = &item.holder_reference;
        if holder.field_path == "spec.controlPlaneRef"
            || (desired.control_plane_machine.is_some() && holder.field_path == cp_machine_field)
        {
            item.variables = cp_variables.clone();
        }
        let (workers, deployment) = match holder.kind.as_str() {
            "MachineDeployment" => (&desired.machine_deployments, true),
            "MachinePool" => (&desired.machine_pools, false),
            _ => continue,
        };
        let worker = workers
            .iter()
            .find(|w| w.name == holder.name)
            .ok_or_else(|| {
                RenderError::Input(format!(
                    "no desired state for {} {}",
                    holder.kind, holder.name
                ))
            })?;
        let mut variables =
            user_variables(get(&worker.topology, &["variables", "overrides"]), declared);
        let builtins = worker_builtins(worker);
        variables.push(builtin(if deployment {
            Builtins {
                machine_deployment: Some(builtins),
                ..Default::default()
            }
        } else {
            Builtins {
                machine_pool: Some(builtins),
                ..Default::default()
            }
        }));
        item.variables = variables;
    }
    Ok(())
}
