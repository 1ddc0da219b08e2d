//! The CRDs of the Cluster API release render models, built in (`render/crds/`, written by
//! `scripts/update-crd-schemas.sh` from the Go module proxy): core, KubeadmControlPlane and
//! Kubeadm bootstrap.

use super::Crds;
use std::sync::OnceLock;

/// The Cluster API release of the built-in CRDs.
pub const CAPI_VERSION: &str = "v1.14.2";

/// Every file of `render/crds/` (a test checks the list against the folder).
pub(super) const FILES: &[&str] = &[
    include_str!("../../crds/clusterclasses.cluster.x-k8s.io.json"),
    include_str!("../../crds/clusterresourcesetbindings.addons.cluster.x-k8s.io.json"),
    include_str!("../../crds/clusterresourcesets.addons.cluster.x-k8s.io.json"),
    include_str!("../../crds/clusters.cluster.x-k8s.io.json"),
    include_str!("../../crds/extensionconfigs.runtime.cluster.x-k8s.io.json"),
    include_str!("../../crds/ipaddressclaims.ipam.cluster.x-k8s.io.json"),
    include_str!("../../crds/ipaddresses.ipam.cluster.x-k8s.io.json"),
    include_str!("../../crds/kubeadmconfigs.bootstrap.cluster.x-k8s.io.json"),
    include_str!("../../crds/kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io.json"),
    include_str!("../../crds/kubeadmcontrolplanes.controlplane.cluster.x-k8s.io.json"),
    include_str!("../../crds/kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io.json"),
    include_str!("../../crds/machinedeployments.cluster.x-k8s.io.json"),
    include_str!("../../crds/machinedrainrules.cluster.x-k8s.io.json"),
    include_str!("../../crds/machinehealthchecks.cluster.x-k8s.io.json"),
    include_str!("../../crds/machinepools.cluster.x-k8s.io.json"),
    include_str!("../../crds/machines.cluster.x-k8s.io.json"),
    include_str!("../../crds/machinesets.cluster.x-k8s.io.json"),
];

/// The built-in CRDs, read once.
pub(super) fn capi() -> &'static Crds {
    static CRDS: OnceLock<Crds> = OnceLock::new();
    CRDS.get_or_init(|| {
        let mut crds = Crds::default();
        for text in FILES {
            let document: serde_json::Value =
                serde_json::from_str(text).expect("render/crds holds JSON");
            crds.add_documents(vec![document], "built in")
                .expect("the built-in CRDs are valid");
        }
        crds
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_file_of_render_crds_is_built_in() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/crds");
        let files = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .count();
        assert_eq!(
            files,
            super::FILES.len(),
            "render/crds changed: list its files in builtin.rs"
        );
        assert_eq!(super::capi().iter().count(), files);
        let version =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/crds/README.md"))
                .unwrap();
        assert!(
            version.contains(super::CAPI_VERSION),
            "builtin.rs says {}, render/crds/README.md: {version}",
            super::CAPI_VERSION
        );
    }
}
