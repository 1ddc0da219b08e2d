//! The ClusterClass with its templates resolved, as CAPI's `getBlueprint` does.

use super::{input, key};
use crate::error::RenderError;
use crate::object::{get, set, string};
use capi_ext::CapiVersion;
use serde_json::{Value, json};
use std::collections::BTreeMap;

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
    /// The class's entry in `spec.workers`, as written.
    pub entry: Value,
}

/// The first Cluster API release whose ClusterClass may give a template inline.
pub(crate) const INLINE_TEMPLATES: CapiVersion = CapiVersion::new(1, 15);

/// The template a class field names: `templateRef` looked up among `templates`, or, from
/// Cluster API 1.15, an inline `template` (only `apiVersion` and `kind`: CAPI's `getTemplate`
/// makes it an object of that kind with nothing else, which the patches then fill, `/spec`
/// included).
pub(super) fn lookup(
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

pub(super) fn inline_template(
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

pub(super) fn worker_classes(
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
                entry: entry.clone(),
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
