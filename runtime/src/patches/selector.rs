//! Which templates a patch applies to: CAPI's `PatchSelector` (apiVersion, kind and
//! `matchResources`), typed, plus an optional narrowing to one part of a holder.
//!
//! Matching follows CAPI's `matchesSelector`
//! (`internal/controllers/topology/cluster/patches/inline/json_patch_generator.go`): kind and
//! apiVersion (when given) must equal the template's; then the template matches when its holder
//! is one the selector names: the infrastructure cluster (`Cluster` at `spec.infrastructureRef`),
//! the control plane (`Cluster` at `spec.controlPlaneRef`, and the control plane's machine
//! infrastructure at `spec.machineTemplate.infrastructureRef` or, in v1beta2,
//! `spec.machineTemplate.spec.infrastructureRef`), or the bootstrap or infrastructure template of
//! a MachineDeployment or MachinePool whose class (from the item's `builtin`) matches one of
//! the names (`*`, `prefix*`, `*suffix` or an exact name).

use crate::hooks::v1alpha1::{HolderReference, TemplateObject};
use serde::Deserialize;

/// The part of a holder a template fills, to narrow a [`Selector`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The control plane template itself (`Cluster` at `spec.controlPlaneRef`).
    ControlPlaneTemplate,
    /// A bootstrap config template (`...bootstrap.configRef`).
    Bootstrap,
    /// An infrastructure template: the infrastructure cluster, the control plane's machines,
    /// a MachineDeployment's or a MachinePool's.
    Infrastructure,
}

/// Which templates a patch applies to.
///
/// ```
/// use capi_ext::patches::Selector;
///
/// // The control plane template and its machines' infrastructure template.
/// let control_plane = Selector::control_plane();
/// // The infrastructure templates of the `default-worker` and `gpu-*` MachineDeployment classes.
/// let workers = Selector::machine_deployments(["default-worker", "gpu-*"]).infrastructure();
/// // Only KubeadmControlPlaneTemplates.
/// let kcp = Selector::control_plane()
///     .api_version("controlplane.cluster.x-k8s.io/v1beta2")
///     .kind("KubeadmControlPlaneTemplate");
/// assert!(control_plane.validate().is_ok() && workers.validate().is_ok() && kcp.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    api_version: Option<String>,
    kind: Option<String>,
    control_plane: bool,
    infrastructure_cluster: bool,
    machine_deployment_classes: Vec<String>,
    machine_pool_classes: Vec<String>,
    any: bool,
    part: Option<Part>,
    field_path: Option<String>,
}

/// The holder field paths CAPI sends (`holderReference.fieldPath`), v1beta1 and v1beta2.
pub const HOLDER_FIELD_PATHS: [&str; 6] = [
    "spec.infrastructureRef",
    "spec.controlPlaneRef",
    "spec.machineTemplate.infrastructureRef",
    "spec.machineTemplate.spec.infrastructureRef",
    "spec.template.spec.bootstrap.configRef",
    "spec.template.spec.infrastructureRef",
];

impl Selector {
    /// The control plane template and the control plane's machine infrastructure template
    /// (CAPI's `matchResources.controlPlane: true`).
    pub fn control_plane() -> Self {
        Selector {
            control_plane: true,
            ..Selector::default()
        }
    }

    /// The infrastructure cluster template (`matchResources.infrastructureCluster: true`).
    pub fn infrastructure_cluster() -> Self {
        Selector {
            infrastructure_cluster: true,
            ..Selector::default()
        }
    }

    /// The bootstrap and infrastructure templates of MachineDeployments of these classes
    /// (`*` for all, `prefix*`, `*suffix`).
    pub fn machine_deployments<S: Into<String>>(classes: impl IntoIterator<Item = S>) -> Self {
        Selector {
            machine_deployment_classes: classes.into_iter().map(Into::into).collect(),
            ..Selector::default()
        }
    }

    /// The bootstrap and infrastructure templates of MachinePools of these classes.
    pub fn machine_pools<S: Into<String>>(classes: impl IntoIterator<Item = S>) -> Self {
        Selector {
            machine_pool_classes: classes.into_iter().map(Into::into).collect(),
            ..Selector::default()
        }
    }

    /// Every template CAPI sends, whoever holds it, as Go's `topologymutation.WalkTemplates`
    /// visits them (a request item without a holder too): for patches that pick their
    /// templates by kind and apiVersion only ([`NamedPatch::typed`](super::NamedPatch::typed)
    /// or [`kind`](Self::kind)).
    ///
    /// ```
    /// use capi_ext::patches::Selector;
    ///
    /// let every_kubeadm_config_template = Selector::any_template()
    ///     .api_version("bootstrap.cluster.x-k8s.io/v1beta2")
    ///     .kind("KubeadmConfigTemplate");
    /// assert!(every_kubeadm_config_template.validate().is_ok());
    /// ```
    pub fn any_template() -> Self {
        Selector {
            any: true,
            ..Selector::default()
        }
    }

    /// Also the templates `other` selects (its kind and apiVersion, if any, must agree).
    pub fn or(mut self, other: Selector) -> Self {
        self.control_plane |= other.control_plane;
        self.infrastructure_cluster |= other.infrastructure_cluster;
        self.machine_deployment_classes
            .extend(other.machine_deployment_classes);
        self.machine_pool_classes.extend(other.machine_pool_classes);
        self.any |= other.any;
        self.api_version = self.api_version.or(other.api_version);
        self.kind = self.kind.or(other.kind);
        self.part = self.part.or(other.part);
        self.field_path = self.field_path.or(other.field_path);
        self
    }

    /// The kind and apiVersion this selector names, if any.
    pub(super) fn named_kind(&self) -> (Option<&str>, Option<&str>) {
        (self.kind.as_deref(), self.api_version.as_deref())
    }

    /// Only templates of this kind, e.g. `KubeadmControlPlaneTemplate`.
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Only templates of this apiVersion, e.g. `controlplane.cluster.x-k8s.io/v1beta2`.
    pub fn api_version(mut self, api_version: impl Into<String>) -> Self {
        self.api_version = Some(api_version.into());
        self
    }

    /// Only templates held at this field path, e.g. `spec.template.spec.infrastructureRef`
    /// (one of [`HOLDER_FIELD_PATHS`]).
    pub fn holder_field_path(mut self, field_path: impl Into<String>) -> Self {
        self.field_path = Some(field_path.into());
        self
    }

    /// Only bootstrap config templates.
    pub fn bootstrap(self) -> Self {
        self.part(Part::Bootstrap)
    }

    /// Only infrastructure templates.
    pub fn infrastructure(self) -> Self {
        self.part(Part::Infrastructure)
    }

    /// Only the control plane template itself, not its machines' infrastructure template.
    pub fn control_plane_template(self) -> Self {
        self.part(Part::ControlPlaneTemplate)
    }

    fn part(mut self, part: Part) -> Self {
        self.part = Some(part);
        self
    }

    /// Why this selector can never match, if it cannot; checked when a patch is added to a
    /// [`PatchSet`](super::PatchSet), so a wrong selector fails the first test, not a reconcile.
    pub fn validate(&self) -> Result<(), String> {
        let workers =
            !self.machine_deployment_classes.is_empty() || !self.machine_pool_classes.is_empty();
        if !self.control_plane && !self.infrastructure_cluster && !workers && !self.any {
            return Err("the selector names no template: start from Selector::control_plane(), infrastructure_cluster(), machine_deployments([..]), machine_pools([..]) or any_template()".into());
        }
        if let Some(kind) = &self.kind {
            let mut chars = kind.chars();
            if !chars.next().is_some_and(|c| c.is_ascii_uppercase())
                || !chars.all(|c| c.is_ascii_alphanumeric())
            {
                return Err(format!(
                    "kind `{kind}` is not a Kubernetes kind (UpperCamelCase letters and digits, e.g. KubeadmControlPlaneTemplate)"
                ));
            }
        }
        if let Some(api_version) = &self.api_version {
            let version = api_version.rsplit('/').next().unwrap_or_default();
            let group_ok = match api_version.rsplit_once('/') {
                Some((group, _)) => !group.is_empty() && group.contains('.'),
                None => true,
            };
            if !group_ok || !version.starts_with('v') || version.len() < 2 {
                return Err(format!(
                    "apiVersion `{api_version}` is not `group/version` (e.g. controlplane.cluster.x-k8s.io/v1beta2)"
                ));
            }
        }
        for class in self
            .machine_deployment_classes
            .iter()
            .chain(&self.machine_pool_classes)
        {
            let core = class.trim_start_matches('*').trim_end_matches('*');
            let stars = class.matches('*').count();
            let valid = class == "*"
                || (!core.is_empty()
                    && stars <= 1
                    && !core.contains('*')
                    && core.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'
                    }));
            if !valid {
                return Err(format!(
                    "class `{class}` is not a class name or pattern (a name, `*`, `prefix*` or `*suffix`)"
                ));
            }
        }
        if let Some(path) = &self.field_path
            && !HOLDER_FIELD_PATHS.contains(&path.as_str())
        {
            return Err(format!(
                "holder field path `{path}` is none CAPI sends; it sends {}",
                HOLDER_FIELD_PATHS.join(", ")
            ));
        }
        match self.part {
            Some(Part::Bootstrap) if !workers && !self.any => Err(
                "bootstrap() needs machine_deployments([..]) or machine_pools([..]): only workers have bootstrap templates".into(),
            ),
            Some(Part::ControlPlaneTemplate) if !self.control_plane && !self.any => {
                Err("control_plane_template() needs Selector::control_plane()".into())
            }
            _ => Ok(()),
        }
    }

    /// Whether a template with this object and holder is selected; `machine_deployment_class`
    /// and `machine_pool_class` come from the item's `builtin` variable.
    pub fn matches(
        &self,
        object: &TemplateObject,
        holder: &HolderReference,
        machine_deployment_class: Option<&str>,
        machine_pool_class: Option<&str>,
    ) -> bool {
        self.matches_named(
            (&object.api_version(), &object.kind()),
            holder,
            machine_deployment_class,
            machine_pool_class,
        )
    }

    /// [`Self::matches`] for a template whose `apiVersion` and `kind` were read already (a
    /// patch set reads them once per template, not once per patch).
    pub(crate) fn matches_named(
        &self,
        (api_version, kind): (&str, &str),
        holder: &HolderReference,
        machine_deployment_class: Option<&str>,
        machine_pool_class: Option<&str>,
    ) -> bool {
        if self
            .api_version
            .as_deref()
            .is_some_and(|v| v != api_version)
            || self.kind.as_deref().is_some_and(|k| k != kind)
        {
            return false;
        }
        let path = holder.field_path.as_str();
        if self.field_path.as_deref().is_some_and(|p| p != path) {
            return false;
        }
        let part = if holder.kind == "Cluster" && path == "spec.controlPlaneRef" {
            Part::ControlPlaneTemplate
        } else if path.ends_with("bootstrap.configRef") {
            Part::Bootstrap
        } else {
            Part::Infrastructure
        };
        if self.part.is_some_and(|p| p != part) {
            return false;
        }
        if self.any {
            return true;
        }
        if self.infrastructure_cluster
            && holder.kind == "Cluster"
            && path == "spec.infrastructureRef"
        {
            return true;
        }
        if self.control_plane
            && ((holder.kind == "Cluster" && path == "spec.controlPlaneRef")
                || path == "spec.machineTemplate.infrastructureRef"
                || path == "spec.machineTemplate.spec.infrastructureRef")
        {
            return true;
        }
        let worker_field = matches!(
            path,
            "spec.template.spec.bootstrap.configRef" | "spec.template.spec.infrastructureRef"
        );
        if holder.kind == "MachineDeployment"
            && worker_field
            && class_matches(&self.machine_deployment_classes, machine_deployment_class)
        {
            return true;
        }
        holder.kind == "MachinePool"
            && worker_field
            && class_matches(&self.machine_pool_classes, machine_pool_class)
    }
}

/// CAPI's class name matching: `*`, `prefix*`, `*suffix` or equality.
fn class_matches(patterns: &[String], class: Option<&str>) -> bool {
    let Some(class) = class else {
        return false;
    };
    patterns.iter().any(|pattern| {
        pattern == "*"
            || pattern == class
            || pattern
                .strip_prefix('*')
                .is_some_and(|suffix| class.ends_with(suffix))
            || pattern
                .strip_suffix('*')
                .is_some_and(|prefix| class.starts_with(prefix))
    })
}

/// CAPI's `PatchSelector` as written in a ClusterClass (`definitions[].selector`): kind and
/// apiVersion are exact (an absent one matches only an absent field, as in CAPI).
impl<'de> Deserialize<'de> for Selector {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", default)]
        struct Names {
            names: Vec<String>,
        }
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", default)]
        struct MatchResources {
            control_plane: bool,
            infrastructure_cluster: bool,
            machine_deployment_class: Names,
            machine_pool_class: Names,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            #[serde(default)]
            api_version: String,
            #[serde(default)]
            kind: String,
            #[serde(default)]
            match_resources: MatchResources,
        }
        let wire = Wire::deserialize(deserializer)?;
        Ok(Selector {
            api_version: Some(wire.api_version),
            kind: Some(wire.kind),
            control_plane: wire.match_resources.control_plane,
            infrastructure_cluster: wire.match_resources.infrastructure_cluster,
            machine_deployment_classes: wire.match_resources.machine_deployment_class.names,
            machine_pool_classes: wire.match_resources.machine_pool_class.names,
            any: false,
            part: None,
            field_path: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holder(kind: &str, field_path: &str) -> HolderReference {
        HolderReference {
            kind: kind.into(),
            field_path: field_path.into(),
            ..HolderReference::default()
        }
    }

    #[test]
    fn class_names_match_with_wildcards() {
        let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(class_matches(&p(&["*"]), Some("a")));
        assert!(class_matches(&p(&["md-*"]), Some("md-0")));
        assert!(class_matches(&p(&["*-0"]), Some("md-0")));
        assert!(!class_matches(&p(&["md-1"]), Some("md-0")));
        assert!(!class_matches(&p(&["*"]), None));
    }

    #[test]
    fn holders_and_parts() {
        let kcp = TemplateObject::from(
            json!({"kind": "KubeadmControlPlaneTemplate", "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2"}),
        );
        let cp = holder("Cluster", "spec.controlPlaneRef");
        let cp_machines = holder(
            "KubeadmControlPlane",
            "spec.machineTemplate.spec.infrastructureRef",
        );
        let md_boot = holder(
            "MachineDeployment",
            "spec.template.spec.bootstrap.configRef",
        );
        let md_infra = holder("MachineDeployment", "spec.template.spec.infrastructureRef");
        let infra = holder("Cluster", "spec.infrastructureRef");
        let any = TemplateObject::from(json!({}));

        let s = Selector::control_plane();
        assert!(s.matches(&any, &cp, None, None) && s.matches(&any, &cp_machines, None, None));
        assert!(
            !s.matches(&any, &infra, None, None) && !s.matches(&any, &md_infra, Some("a"), None)
        );
        let only_template = Selector::control_plane().control_plane_template();
        assert!(only_template.matches(&any, &cp, None, None));
        assert!(!only_template.matches(&any, &cp_machines, None, None));
        assert!(
            Selector::control_plane()
                .kind("KubeadmControlPlaneTemplate")
                .matches(&kcp, &cp, None, None)
        );
        assert!(
            !Selector::control_plane()
                .kind("Other")
                .matches(&kcp, &cp, None, None)
        );
        assert!(
            !Selector::control_plane()
                .api_version("x.io/v1")
                .matches(&kcp, &cp, None, None)
        );

        let every = Selector::any_template().kind("KubeadmControlPlaneTemplate");
        for h in [
            &cp,
            &cp_machines,
            &md_boot,
            &md_infra,
            &infra,
            &HolderReference::default(),
        ] {
            assert!(every.matches(&kcp, h, None, None), "{h:?}");
        }
        assert!(!every.matches(&any, &cp, None, None));

        let workers = Selector::machine_deployments(["default-*"]);
        assert!(workers.matches(&any, &md_boot, Some("default-worker"), None));
        assert!(!workers.matches(&any, &md_boot, Some("gpu"), None));
        assert!(!workers.clone().infrastructure().matches(
            &any,
            &md_boot,
            Some("default-worker"),
            None
        ));
        assert!(
            workers
                .infrastructure()
                .matches(&any, &md_infra, Some("default-worker"), None)
        );
        assert!(!Selector::machine_deployments(["*"]).matches(
            &any,
            &holder("MachinePool", "spec.template.spec.infrastructureRef"),
            None,
            Some("p")
        ));
        assert!(Selector::machine_pools(["*"]).matches(
            &any,
            &holder("MachinePool", "spec.template.spec.infrastructureRef"),
            None,
            Some("p")
        ));
        assert!(
            Selector::infrastructure_cluster()
                .or(Selector::control_plane())
                .matches(&any, &infra, None, None)
        );
    }

    #[test]
    fn wrong_selectors_say_why() {
        let err = |s: Selector| s.validate().unwrap_err();
        assert!(err(Selector::default()).contains("names no template"));
        assert!(
            err(Selector::control_plane().kind("kubeadmControlPlane"))
                .contains("not a Kubernetes kind")
        );
        assert!(
            err(Selector::control_plane().api_version("v1beta2/controlplane"))
                .contains("group/version")
        );
        assert!(err(Selector::machine_deployments(["md-*-x"])).contains("class `md-*-x`"));
        assert!(err(Selector::machine_deployments([""])).contains("class ``"));
        assert!(err(Selector::control_plane().bootstrap()).contains("only workers have bootstrap"));
        assert!(
            err(Selector::infrastructure_cluster().control_plane_template())
                .contains("needs Selector::control_plane()")
        );
        assert!(
            Selector::machine_pools(["*"])
                .bootstrap()
                .validate()
                .is_ok()
        );
    }

    #[test]
    fn reads_capi_selectors() {
        let s: Selector = serde_json::from_value(json!({
            "apiVersion": "a.io/v1", "kind": "T",
            "matchResources": {"machineDeploymentClass": {"names": ["x"]}}
        }))
        .unwrap();
        assert_eq!(
            s,
            Selector::machine_deployments(["x"])
                .api_version("a.io/v1")
                .kind("T")
        );
    }
}
