// A misspelled field of a typed template does not compile (a JSON pointer would, and the API
// server would drop the field without a word).
use capi_ext_types::kubeadm::v1beta2::ClusterConfiguration;

fn main() {
    let mut cluster = ClusterConfiguration::default();
    cluster.image_repositry = Some("registry.example.com".into());
}
