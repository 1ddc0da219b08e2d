//! The desired state CAPI's topology controller computes before it patches: the ClusterClass's
//! templates looked up, and the objects they become (names, labels, annotations), as in
//! `exp/topology/desiredstate`.

use super::RenderError;
use super::change::Role;
use super::object::{get, map_value, merge_maps, set, string, string_map};
use capi_ext::CapiVersion;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub(crate) const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub(crate) const TOPOLOGY_OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
pub(crate) const DEPLOYMENT_NAME_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
pub(crate) const POOL_NAME_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";
pub(crate) const CLONED_FROM_NAME: &str = "cluster.x-k8s.io/cloned-from-name";
pub(crate) const CLONED_FROM_GROUP_KIND: &str = "cluster.x-k8s.io/cloned-from-groupkind";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
const CONVERSION_DATA: &str = "cluster.x-k8s.io/conversion-data";
const HOLD_UPGRADE_SEQUENCE: &str = "topology.cluster.x-k8s.io/hold-upgrade-sequence";
const DEFER_UPGRADE: &str = "topology.cluster.x-k8s.io/defer-upgrade";

/// The ClusterClass with its templates resolved.
pub(crate) struct Blueprint {
    pub class: Value,
    pub infrastructure_cluster: Template,
    pub control_plane: Template,
    pub control_plane_machine: Option<Template>,
    pub machine_deployments: BTreeMap<String, WorkerClass>,
    pub machine_pools: BTreeMap<String, WorkerClass>,
}

/// A template the class references or gives inline.
#[derive(Clone)]
pub(crate) struct Template {
    pub object: Value,
    /// Given inline in the class (Cluster API 1.15): nothing was cloned from a stored template,
    /// so the objects made from it carry no `cloned-from` annotations.
    pub inline: bool,
}

/// A MachineDeployment or MachinePool class.
pub(crate) struct WorkerClass {
    pub bootstrap: Template,
    pub infrastructure: Template,
    pub metadata: Value,
    pub naming: String,
}

/// One MachineDeployment or MachinePool of the topology and what it becomes.
pub(crate) struct Worker {
    pub topology: Value,
    pub class: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub bootstrap: Value,
    pub infrastructure: Value,
}

/// The desired objects, before patches.
pub(crate) struct Desired {
    pub cluster: Value,
    pub infrastructure_cluster: Value,
    pub control_plane: Value,
    pub control_plane_machine: Option<Value>,
    pub machine_deployments: Vec<Worker>,
    pub machine_pools: Vec<Worker>,
}

fn input(message: String) -> RenderError {
    RenderError::Input(message)
}

fn key(object: &Value) -> String {
    format!(
        "{} {}/{}",
        string(object, &["kind"]),
        string(object, &["metadata", "namespace"]),
        string(object, &["metadata", "name"])
    )
}

/// The first Cluster API release whose ClusterClass may give a template inline.
pub(crate) const INLINE_TEMPLATES: CapiVersion = CapiVersion::new(1, 15);

/// The template a class field names: `templateRef` looked up among `templates`, or, from
/// Cluster API 1.15, an inline `template` (only `apiVersion` and `kind`: CAPI's `getTemplate`
/// makes it an object of that kind with nothing else, which the patches then fill, `/spec`
/// included).
fn lookup(
    templates: &[Value],
    class: &Value,
    namespace: &str,
    holder: &[&str],
    capi_version: CapiVersion,
) -> Result<Template, RenderError> {
    let path = |leaf: &'static str| -> Vec<&str> { [holder, &[leaf]].concat() };
    let field_name = |leaf: &'static str| path(leaf).join(".");
    let reference = get(class, &path("templateRef"));
    let inline = get(class, &path("template"));
    let reference = match (reference, inline) {
        (Some(_), Some(_)) => {
            return Err(input(format!(
                "{}: both {} and {} are set; keep one (Cluster API rejects a ClusterClass with both)",
                key(class),
                field_name("templateRef"),
                field_name("template")
            )));
        }
        (None, Some(inline)) => {
            return inline_template(class, inline, &field_name("template"), capi_version);
        }
        (Some(reference), None) => reference,
        (None, None) => {
            return Err(input(format!(
                "{}: {} is missing{}",
                key(class),
                field_name("templateRef"),
                if capi_version >= INLINE_TEMPLATES {
                    format!(" (or, inline, {})", field_name("template"))
                } else {
                    String::new()
                }
            )));
        }
    };
    let field_name = field_name("templateRef");
    let kind = string(reference, &["kind"]);
    let name = string(reference, &["name"]);
    let api_version = string(reference, &["apiVersion"]);
    let found = templates.iter().find(|t| {
        string(t, &["kind"]) == kind
            && string(t, &["metadata", "name"]) == name
            && [namespace, ""].contains(&string(t, &["metadata", "namespace"]))
            && (api_version.is_empty() || string(t, &["apiVersion"]) == api_version)
    });
    let mut object = found.cloned().ok_or_else(|| {
        let have: Vec<String> = templates.iter().map(key).collect();
        input(format!(
            "{}: {field_name} names {api_version} {kind} {namespace}/{name}, which is not among the templates ({}); add it to the templates file",
            key(class),
            if have.is_empty() { "none given".into() } else { have.join(", ") }
        ))
    })?;
    if string(&object, &["metadata", "namespace"]).is_empty() {
        set(&mut object, &["metadata", "namespace"], json!(namespace));
    }
    Ok(Template {
        object,
        inline: false,
    })
}

fn inline_template(
    class: &Value,
    inline: &Value,
    field_name: &str,
    capi_version: CapiVersion,
) -> Result<Template, RenderError> {
    if capi_version < INLINE_TEMPLATES {
        return Err(input(format!(
            "{}: {field_name} gives the template inline, which Cluster API {INLINE_TEMPLATES} introduced; this render plays Cluster API {capi_version}, whose ClusterClass needs a templateRef (pass --capi-version {INLINE_TEMPLATES} if the management cluster runs it)",
            key(class)
        )));
    }
    let api_version = string(inline, &["apiVersion"]);
    let kind = string(inline, &["kind"]);
    if api_version.is_empty() || kind.is_empty() {
        return Err(input(format!(
            "{}: {field_name} needs both apiVersion and kind (it has {})",
            key(class),
            serde_json::to_string(inline).unwrap_or_default()
        )));
    }
    Ok(Template {
        object: json!({"apiVersion": api_version, "kind": kind}),
        inline: true,
    })
}

fn worker_classes(
    class: &Value,
    templates: &[Value],
    namespace: &str,
    list: &str,
    capi_version: CapiVersion,
) -> Result<BTreeMap<String, WorkerClass>, RenderError> {
    let mut classes = BTreeMap::new();
    let entries = get(class, &["spec", "workers", list])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, entry) in entries.iter().enumerate() {
        let name = string(entry, &["class"]).to_string();
        let wrapper = json!({"kind": string(class, &["kind"]), "metadata": class["metadata"], "spec": {"workers": {list: {i.to_string(): entry}}}});
        let index = i.to_string();
        let bootstrap = lookup(
            templates,
            &wrapper,
            namespace,
            &["spec", "workers", list, &index, "bootstrap"],
            capi_version,
        )?;
        let infrastructure = lookup(
            templates,
            &wrapper,
            namespace,
            &["spec", "workers", list, &index, "infrastructure"],
            capi_version,
        )?;
        classes.insert(
            name,
            WorkerClass {
                bootstrap,
                infrastructure,
                metadata: entry.get("metadata").cloned().unwrap_or(Value::Null),
                naming: string(entry, &["naming", "template"]).to_string(),
            },
        );
    }
    Ok(classes)
}

impl Blueprint {
    /// The class with each template it names; `capi_version` decides whether inline templates
    /// are allowed.
    pub(crate) fn resolve(
        class: &Value,
        templates: &[Value],
        capi_version: CapiVersion,
    ) -> Result<Self, RenderError> {
        let namespace = string(class, &["metadata", "namespace"]).to_string();
        let machine = ["spec", "controlPlane", "machineInfrastructure"];
        // As before inline templates: a machineInfrastructure that names no template is none.
        let given = |leaf: &str| get(class, &[&machine[..], &[leaf]].concat()).is_some();
        let control_plane_machine = if given("templateRef") || given("template") {
            Some(lookup(
                templates,
                class,
                &namespace,
                &machine,
                capi_version,
            )?)
        } else {
            None
        };
        Ok(Blueprint {
            infrastructure_cluster: lookup(
                templates,
                class,
                &namespace,
                &["spec", "infrastructure"],
                capi_version,
            )?,
            control_plane: lookup(
                templates,
                class,
                &namespace,
                &["spec", "controlPlane"],
                capi_version,
            )?,
            control_plane_machine,
            machine_deployments: worker_classes(
                class,
                templates,
                &namespace,
                "machineDeployments",
                capi_version,
            )?,
            machine_pools: worker_classes(
                class,
                templates,
                &namespace,
                "machinePools",
                capi_version,
            )?,
            class: class.clone(),
        })
    }
}

/// CAPI's random name suffix, made deterministic so a render is repeatable: five characters of
/// the same alphabet, derived from the name's prefix.
fn suffix(seed: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in seed.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x100000001b3);
    }
    (0..5)
        .map(|i| ALPHABET[((hash >> (i * 8)) % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

/// `names.SimpleNameGenerator`: prefix plus five random characters (`role` tells apart objects
/// that share a prefix).
fn simple_name(prefix: &str, role: &str) -> String {
    let prefix = if prefix.len() > 58 {
        &prefix[..58]
    } else {
        prefix
    };
    format!("{prefix}{}", suffix(&format!("{prefix}{role}")))
}

/// The naming templates CAPI accepts in `naming.template`, with the values CAPI gives them.
fn template_name(
    template: &str,
    values: &[(&str, &str)],
    field: &str,
) -> Result<String, RenderError> {
    let mut out = String::new();
    let mut rest = template;
    let mut seed = String::new();
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").ok_or_else(|| {
            input(format!(
                "{field}: unterminated `{{{{` in naming template `{template}`"
            ))
        })?;
        let expression = rest[start + 2..start + end].trim();
        if expression == ".random" {
            seed = format!("{out}{field}");
            out.push('\u{0}');
        } else {
            let value = values
                .iter()
                .find(|(name, _)| *name == expression)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    let known: Vec<&str> =
                        values.iter().map(|(n, _)| *n).chain([".random"]).collect();
                    input(format!(
                        "{field}: render understands {} in naming templates, not `{expression}`",
                        known.join(", ")
                    ))
                })?;
            out.push_str(value);
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    let mut name = out.replace('\u{0}', &suffix(&seed));
    if name.len() > 63 {
        name = format!("{}{}", &name[..58], suffix(&name));
    }
    Ok(name)
}

fn group_kind(object: &Value) -> String {
    let api_version = string(object, &["apiVersion"]);
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = string(object, &["kind"]);
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

fn clean_annotations(mut annotations: BTreeMap<String, String>) -> BTreeMap<String, String> {
    annotations.remove(LAST_APPLIED);
    annotations.remove(CONVERSION_DATA);
    annotations
}

/// Drops what CAPI drops from a template before it sends it: managed fields, the
/// last-applied-configuration and conversion-data annotations (`cleanupUnstructured`).
pub(crate) fn clean_template(template: &mut Value) {
    if let Some(metadata) = template.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
        if metadata.contains_key("annotations") {
            let annotations = clean_annotations(string_map(template, &["metadata", "annotations"]));
            let metadata = template["metadata"].as_object_mut().expect("checked above");
            if annotations.is_empty() {
                metadata.remove("annotations");
            } else {
                metadata.insert("annotations".into(), map_value(&annotations));
            }
        }
    }
}

/// Exposes the annotation clean-up for builtins (`cleanupAnnotations`).
pub(crate) fn builtin_annotations(object: &Value) -> BTreeMap<String, String> {
    clean_annotations(string_map(object, &["metadata", "annotations"]))
}

/// The owner reference CAPI gives the objects it clones for a Cluster
/// (`ownerrefs.OwnerReferenceTo(s.Current.Cluster, …)` in `exp/topology/desiredstate`). A
/// Cluster read from a file may have no uid yet (one stored by the API server always has).
fn cluster_owner(cluster: &Value) -> Value {
    let mut owner = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "name": string(cluster, &["metadata", "name"]),
    });
    let uid = string(cluster, &["metadata", "uid"]);
    if !uid.is_empty() {
        owner["uid"] = json!(uid);
    }
    json!([owner])
}

/// The `cloned-from` annotations naming the stored template an object was made from (none for an
/// inline template: how Cluster API 1.15 annotates those is unproven here).
fn cloned_from(template: &Template, annotations: &mut BTreeMap<String, String>) {
    if template.inline {
        return;
    }
    annotations.insert(
        CLONED_FROM_NAME.into(),
        string(&template.object, &["metadata", "name"]).into(),
    );
    annotations.insert(CLONED_FROM_GROUP_KIND.into(), group_kind(&template.object));
}

/// `external.GenerateTemplate` + `templateToObject`: an object from `spec.template`, owned by
/// the Cluster when CAPI passes it an owner (the MachinePool's objects; not the infrastructure
/// cluster or the control plane, which other controllers own).
fn template_to_object(
    template: &Template,
    cluster: &Value,
    name: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    owned: bool,
) -> Value {
    let mut object = get(&template.object, &["spec", "template"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    let cluster_name = string(cluster, &["metadata", "name"]);
    let mut all_annotations = string_map(&object, &["metadata", "annotations"]);
    all_annotations.extend(annotations);
    cloned_from(template, &mut all_annotations);
    let mut all_labels = string_map(&object, &["metadata", "labels"]);
    all_labels.extend(labels);
    all_labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.into());
    all_labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
    set(&mut object, &["metadata", "name"], json!(name));
    set(
        &mut object,
        &["metadata", "namespace"],
        cluster["metadata"]["namespace"].clone(),
    );
    set(
        &mut object,
        &["metadata", "annotations"],
        map_value(&all_annotations),
    );
    set(&mut object, &["metadata", "labels"], map_value(&all_labels));
    if owned {
        set(
            &mut object,
            &["metadata", "ownerReferences"],
            cluster_owner(cluster),
        );
    }
    let kind = string(&template.object, &["kind"]);
    let mut ordered = serde_json::Map::new();
    ordered.insert("apiVersion".into(), template.object["apiVersion"].clone());
    ordered.insert(
        "kind".into(),
        json!(kind.strip_suffix("Template").unwrap_or(kind)),
    );
    for (k, v) in object.as_object().expect("an object").iter() {
        if k != "apiVersion" && k != "kind" {
            ordered.insert(k.clone(), v.clone());
        }
    }
    Value::Object(ordered)
}

/// `templateToTemplate`: a per-cluster copy of a template, owned by the Cluster.
fn template_to_template(
    template: &Template,
    cluster: &Value,
    name: String,
    extra_label: Option<(&str, &str)>,
) -> Value {
    let mut copy = template.object.clone();
    if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "resourceVersion",
            "finalizers",
            "uid",
            "selfLink",
            "managedFields",
            "creationTimestamp",
            "generation",
        ] {
            metadata.remove(field);
        }
    }
    let mut labels = string_map(&copy, &["metadata", "labels"]);
    labels.insert(
        CLUSTER_NAME_LABEL.into(),
        string(cluster, &["metadata", "name"]).into(),
    );
    labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
    if let Some((k, v)) = extra_label {
        labels.insert(k.into(), v.into());
    }
    let mut annotations = clean_annotations(string_map(&copy, &["metadata", "annotations"]));
    cloned_from(template, &mut annotations);
    set(&mut copy, &["metadata", "labels"], map_value(&labels));
    set(
        &mut copy,
        &["metadata", "annotations"],
        map_value(&annotations),
    );
    set(&mut copy, &["metadata", "name"], json!(name));
    set(
        &mut copy,
        &["metadata", "namespace"],
        cluster["metadata"]["namespace"].clone(),
    );
    set(
        &mut copy,
        &["metadata", "ownerReferences"],
        cluster_owner(cluster),
    );
    copy
}

/// Whether the ControlPlane uses the v1beta1 contract (its API version says so).
pub(crate) fn v1beta1_control_plane(control_plane: &Value) -> bool {
    string(control_plane, &["apiVersion"]).ends_with("/v1beta1")
}

/// The holder field path of the control plane's machine template.
pub(crate) fn control_plane_machine_field(control_plane: &Value) -> &'static str {
    if v1beta1_control_plane(control_plane) {
        "spec.machineTemplate.infrastructureRef"
    } else {
        "spec.machineTemplate.spec.infrastructureRef"
    }
}

fn metadata_maps(value: &Value) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    (
        string_map(value, &["labels"]),
        string_map(value, &["annotations"]),
    )
}

impl Desired {
    /// The objects, in the order `render` prints them.
    pub(crate) fn objects(&self) -> Vec<Value> {
        let mut objects = vec![
            self.infrastructure_cluster.clone(),
            self.control_plane.clone(),
        ];
        objects.extend(self.control_plane_machine.clone());
        for worker in self.machine_deployments.iter().chain(&self.machine_pools) {
            objects.push(worker.bootstrap.clone());
            objects.push(worker.infrastructure.clone());
        }
        objects
    }

    /// What each object of [`objects`](Self::objects) is, in the same order.
    pub(crate) fn roles(&self) -> Vec<Role> {
        let mut roles = vec![Role::InfrastructureCluster, Role::ControlPlane];
        if self.control_plane_machine.is_some() {
            roles.push(Role::ControlPlaneMachineTemplate);
        }
        let name = |worker: &Worker| string(&worker.topology, &["name"]).to_string();
        for worker in &self.machine_deployments {
            roles.push(Role::MachineDeploymentBootstrapTemplate(name(worker)));
            roles.push(Role::MachineDeploymentInfrastructureTemplate(name(worker)));
        }
        for worker in &self.machine_pools {
            roles.push(Role::MachinePoolBootstrapConfig(name(worker)));
            roles.push(Role::MachinePoolInfrastructure(name(worker)));
        }
        roles
    }

    /// `current` holds existing objects (MachineDeployments, MachinePools, the ControlPlane) whose
    /// names and references CAPI keeps; without them new names are made.
    pub(crate) fn compute(
        blueprint: &Blueprint,
        cluster: &Value,
        current: &[Value],
    ) -> Result<Self, RenderError> {
        let cluster_name = string(cluster, &["metadata", "name"]).to_string();
        let class = &blueprint.class;
        let topology = get(cluster, &["spec", "topology"])
            .cloned()
            .unwrap_or(Value::Null);
        let version = string(&topology, &["version"]).to_string();

        let mut desired_cluster = cluster.clone();
        let mut labels = string_map(cluster, &["metadata", "labels"]);
        labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.clone());
        labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
        set(
            &mut desired_cluster,
            &["metadata", "labels"],
            map_value(&labels),
        );

        // The name the Cluster already references, or one from the class's naming template.
        let name_of = |reference: &str, class_field: &str| match string(
            cluster,
            &["spec", reference, "name"],
        ) {
            "" => {
                let template = match string(class, &["spec", class_field, "naming", "template"]) {
                    "" => "{{ .cluster.name }}-{{ .random }}",
                    template => template,
                };
                template_name(
                    template,
                    &[(".cluster.name", cluster_name.as_str())],
                    &format!("spec.{class_field}.naming.template"),
                )
            }
            current => Ok(current.to_string()),
        };
        let infra_name = name_of("infrastructureRef", "infrastructure")?;
        let infrastructure_cluster = template_to_object(
            &blueprint.infrastructure_cluster,
            cluster,
            infra_name,
            BTreeMap::new(),
            BTreeMap::new(),
            false,
        );

        let current_control_plane = current.iter().find(|o| {
            let template_kind = string(&blueprint.control_plane.object, &["kind"]);
            Some(string(o, &["kind"])) == template_kind.strip_suffix("Template")
                && string(o, &["metadata", "name"])
                    == string(cluster, &["spec", "controlPlaneRef", "name"])
        });
        let control_plane_machine = blueprint.control_plane_machine.as_ref().map(|template| {
            let current_name = current_control_plane.map_or("", |cp| {
                match get(
                    cp,
                    &[
                        "spec",
                        "machineTemplate",
                        "spec",
                        "infrastructureRef",
                        "name",
                    ],
                ) {
                    Some(name) => name.as_str().unwrap_or_default(),
                    None => string(
                        cp,
                        &["spec", "machineTemplate", "infrastructureRef", "name"],
                    ),
                }
            });
            let name = if current_name.is_empty() {
                simple_name(&format!("{cluster_name}-"), "control-plane-machine")
            } else {
                current_name.to_string()
            };
            template_to_template(template, cluster, name, None)
        });

        let (topology_labels, topology_annotations) =
            metadata_maps(get(&topology, &["controlPlane", "metadata"]).unwrap_or(&Value::Null));
        let (class_labels, class_annotations) = metadata_maps(
            get(class, &["spec", "controlPlane", "metadata"]).unwrap_or(&Value::Null),
        );
        let mut cp_labels = merge_maps(&[topology_labels, class_labels]);
        cp_labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.clone());
        cp_labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
        let cp_annotations = merge_maps(&[topology_annotations, class_annotations]);
        let cp_name = name_of("controlPlaneRef", "controlPlane")?;
        let mut control_plane = template_to_object(
            &blueprint.control_plane,
            cluster,
            cp_name,
            cp_labels.clone(),
            cp_annotations.clone(),
            false,
        );
        if let Some(machine) = &control_plane_machine {
            let reference_path: &[&str] = if v1beta1_control_plane(&control_plane) {
                &["spec", "machineTemplate", "infrastructureRef"]
            } else {
                &["spec", "machineTemplate", "spec", "infrastructureRef"]
            };
            let reference = if v1beta1_control_plane(&control_plane) {
                json!({"apiVersion": machine["apiVersion"], "kind": machine["kind"], "name": machine["metadata"]["name"], "namespace": machine["metadata"]["namespace"]})
            } else {
                let group = string(machine, &["apiVersion"])
                    .rsplit_once('/')
                    .map_or("", |(g, _)| g)
                    .to_string();
                json!({"apiGroup": group, "kind": machine["kind"], "name": machine["metadata"]["name"]})
            };
            set(&mut control_plane, reference_path, reference);
            let metadata = get(&control_plane, &["spec", "machineTemplate", "metadata"])
                .cloned()
                .unwrap_or(Value::Null);
            let (labels, annotations) = metadata_maps(&metadata);
            let mut machine_metadata = serde_json::Map::new();
            let labels = merge_maps(&[cp_labels.clone(), labels]);
            let annotations = merge_maps(&[cp_annotations.clone(), annotations]);
            if !labels.is_empty() {
                machine_metadata.insert("labels".into(), map_value(&labels));
            }
            if !annotations.is_empty() {
                machine_metadata.insert("annotations".into(), map_value(&annotations));
            }
            set(
                &mut control_plane,
                &["spec", "machineTemplate", "metadata"],
                Value::Object(machine_metadata),
            );
        }
        if let Some(replicas) = get(&topology, &["controlPlane", "replicas"]) {
            set(&mut control_plane, &["spec", "replicas"], replicas.clone());
        }
        set(&mut control_plane, &["spec", "version"], json!(version));

        let machine_deployments = workers(
            current,
            blueprint,
            cluster,
            &topology,
            "machineDeployments",
            &blueprint.machine_deployments,
            DEPLOYMENT_NAME_LABEL,
            ".machineDeployment.topologyName",
        )?;
        let machine_pools = workers(
            current,
            blueprint,
            cluster,
            &topology,
            "machinePools",
            &blueprint.machine_pools,
            POOL_NAME_LABEL,
            ".machinePool.topologyName",
        )?;

        Ok(Desired {
            cluster: desired_cluster,
            infrastructure_cluster,
            control_plane,
            control_plane_machine,
            machine_deployments,
            machine_pools,
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn workers(
    current: &[Value],
    blueprint: &Blueprint,
    cluster: &Value,
    topology: &Value,
    list: &str,
    classes: &BTreeMap<String, WorkerClass>,
    name_label: &str,
    topology_name_key: &str,
) -> Result<Vec<Worker>, RenderError> {
    let cluster_name = string(cluster, &["metadata", "name"]);
    let mut out = Vec::new();
    let entries = get(topology, &["workers", list])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, entry) in entries.into_iter().enumerate() {
        let class_name = string(&entry, &["class"]).to_string();
        let topology_name = string(&entry, &["name"]).to_string();
        let worker_class = classes.get(&class_name).ok_or_else(|| {
            let known: Vec<&String> = classes.keys().collect();
            input(format!(
                "Cluster {}: spec.topology.workers.{list}[{i}].class `{class_name}` is not a class of ClusterClass {} (it has {known:?})",
                cluster_name,
                string(&blueprint.class, &["metadata", "name"])
            ))
        })?;
        let (topology_labels, mut topology_annotations) =
            metadata_maps(entry.get("metadata").unwrap_or(&Value::Null));
        let (class_labels, class_annotations) = metadata_maps(&worker_class.metadata);
        topology_annotations.remove(HOLD_UPGRADE_SEQUENCE);
        topology_annotations.remove(DEFER_UPGRADE);
        let mut annotations = merge_maps(&[topology_annotations, class_annotations]);
        annotations.remove(HOLD_UPGRADE_SEQUENCE);
        annotations.remove(DEFER_UPGRADE);
        let mut labels = merge_maps(&[topology_labels, class_labels]);
        labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.into());
        labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
        labels.insert(name_label.into(), topology_name.clone());
        let naming = if worker_class.naming.is_empty() {
            format!("{{{{ .cluster.name }}}}-{{{{ {topology_name_key} }}}}-{{{{ .random }}}}")
        } else {
            worker_class.naming.clone()
        };
        // An existing MachineDeployment/MachinePool keeps its name and its templates' names.
        let existing = current.iter().find(|o| {
            string(o, &["apiVersion"]).starts_with("cluster.x-k8s.io/")
                && list.starts_with(&lower_first(string(o, &["kind"])))
                && string(o, &["metadata", "labels", CLUSTER_NAME_LABEL]) == cluster_name
                && string(o, &["metadata", "labels", name_label]) == topology_name
        });
        let name = match existing {
            Some(object) => string(object, &["metadata", "name"]).to_string(),
            None => template_name(
                &naming,
                &[
                    (".cluster.name", cluster_name),
                    (topology_name_key, &topology_name),
                ],
                &format!("ClusterClass spec.workers.{list}[class={class_name}].naming.template"),
            )?,
        };
        let prefix = format!("{cluster_name}-{topology_name}-");
        let simple_name = |prefix: &str, role: &str| {
            let path: &[&str] = if role == "bootstrap" {
                &["spec", "template", "spec", "bootstrap", "configRef", "name"]
            } else {
                &["spec", "template", "spec", "infrastructureRef", "name"]
            };
            match existing.map(|o| string(o, path)) {
                Some(name) if !name.is_empty() => name.to_string(),
                _ => simple_name(prefix, role),
            }
        };
        let label = Some((name_label, topology_name.as_str()));
        let (bootstrap, infrastructure) = if list == "machineDeployments" {
            (
                template_to_template(
                    &worker_class.bootstrap,
                    cluster,
                    simple_name(&prefix, "bootstrap"),
                    label,
                ),
                template_to_template(
                    &worker_class.infrastructure,
                    cluster,
                    simple_name(&prefix, "infrastructure"),
                    label,
                ),
            )
        } else {
            let with_label = |template: &Template, role: &str| {
                let mut object = template_to_object(
                    template,
                    cluster,
                    simple_name(&prefix, role),
                    BTreeMap::new(),
                    BTreeMap::new(),
                    true,
                );
                let mut labels = string_map(&object, &["metadata", "labels"]);
                labels.insert(name_label.into(), topology_name.clone());
                set(&mut object, &["metadata", "labels"], map_value(&labels));
                object
            };
            (
                with_label(&worker_class.bootstrap, "bootstrap"),
                with_label(&worker_class.infrastructure, "infrastructure"),
            )
        };
        out.push(Worker {
            topology: entry,
            class: class_name,
            name,
            labels,
            annotations,
            bootstrap,
            infrastructure,
        });
    }
    Ok(out)
}

fn lower_first(kind: &str) -> String {
    let mut chars = kind.chars();
    chars
        .next()
        .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_capi_templates_and_are_repeatable() {
        let name = template_name(
            "{{ .cluster.name }}-{{ .random }}",
            &[(".cluster.name", "c1")],
            "f",
        )
        .unwrap();
        assert_eq!(name.len(), "c1-".len() + 5);
        assert!(name.starts_with("c1-"));
        assert_eq!(
            name,
            template_name(
                "{{.cluster.name}}-{{.random}}",
                &[(".cluster.name", "c1")],
                "f"
            )
            .unwrap()
        );
        let err =
            template_name("{{ .cluster.uid }}", &[(".cluster.name", "c1")], "spec.x").unwrap_err();
        assert!(err.to_string().contains("not `.cluster.uid`"), "{err}");
        assert_eq!(template_name(&"a".repeat(70), &[], "f").unwrap().len(), 63);
    }
}
