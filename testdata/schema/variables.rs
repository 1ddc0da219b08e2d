// A realistic variables type: compiled by derive/tests/schema.rs (the derive path) and read
// as text by the same test (the static path); both must give testdata/schema/variables.json.

/// The variables of a cluster class for a small bare-metal fleet.
#[derive(serde::Deserialize, capi_ext::Variables)]
#[serde(rename_all = "camelCase")]
pub struct FleetVariables {
    /// Registry of the control plane images.
    #[schema(
        pattern = "^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$",
        default = "registry.k8s.io",
        example = "registry.example.com/mirror",
        validation(rule = "!self.startsWith('docker.io')", message = "docker.io is rate limited; use a mirror")
    )]
    pub image_repository: String,
    /// Control plane settings.
    pub control_plane: ControlPlane,
    /// Worker pools by name.
    #[serde(default)]
    #[x_kube(validation = "self.size() <= 20")]
    pub pools: std::collections::BTreeMap<String, Pool>,
    /// Extra kubelet flags, passed as they are.
    pub kubelet_extra_args: Option<std::collections::BTreeMap<String, String>>,
    /// Free-form settings for add-ons.
    #[serde(rename = "addons")]
    pub add_ons: Option<serde_json::Value>,
    /// Labels put on every node.
    #[schema(label(key = "capi-ext.io/propagate", value = "nodes"), annotation(key = "capi-ext.io/doc", value = "labels"))]
    pub node_labels: Option<std::collections::BTreeMap<String, String>>,
    /// Old way of choosing the CNI.
    #[schema(deprecated)]
    pub cni: Option<Cni>,
}

/// Control plane settings.
#[derive(serde::Deserialize, capi_ext::Schema)]
#[serde(rename_all = "camelCase")]
#[schema(validation(rule = "self.replicas % 2 == 1", message = "use an odd number of control plane machines"))]
// kube-rs's spelling, read syntactically (no kube dependency): `Rule` and `Reason` need no import.
#[x_kube(validation = Rule::new("self.replicas <= 5 || self.certSans.size() > 0").message("large control planes need certSans").reason(Reason::FieldValueRequired).field_path(".certSans"))]
pub struct ControlPlane {
    /// Number of machines.
    #[schema(minimum = 1, maximum = 7, default = 3)]
    pub replicas: u8,
    /// Kube API server port: a number or a named port.
    pub port: Option<capi_ext::schema::IntOrString>,
    /// Extra SANs of the API server certificate.
    #[serde(default)]
    #[schema(max_items = 10, unique_items, validation(rule = "self.all(s, s.size() <= 253)", message = "SANs are DNS names"))]
    pub cert_sans: Vec<String>,
}

/// A pool of workers.
#[derive(serde::Deserialize, capi_ext::Schema)]
#[serde(rename_all = "camelCase")]
pub struct Pool {
    /// Machines in the pool.
    #[schema(minimum = 0, maximum = 1000)]
    pub replicas: u32,
    /// Machine size.
    pub size: Size,
    /// Where the machines run.
    #[schema(min_items = 1, enum_values("zone-a", "zone-b", "zone-c"))]
    pub zones: Vec<String>,
    /// Fraction of machines that may be down during an update.
    #[schema(format = "percent", default_json = "\"25%\"")]
    pub max_unavailable: Option<String>,
}

/// Machine sizes.
#[derive(serde::Deserialize, capi_ext::Schema)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// 2 CPU.
    Small,
    /// 8 CPU.
    Large,
    /// Whatever the provider offers.
    #[serde(rename = "provider-default")]
    ProviderDefault,
}

/// CNI plugins.
#[derive(serde::Deserialize, capi_ext::Schema)]
pub enum Cni {
    /// Calico.
    Calico,
    /// Cilium.
    Cilium,
}
