//! The kinds the Go extension's handlers can read: the scheme they decode with (the test
//! module's Dev and Docker kinds, kubeadm's bootstrap and control plane kinds; v1beta1 and
//! v1beta2 for the topology handlers, v1beta2 only for the in-place ones).

/// The kinds, by apiVersion.
const KINDS: &[(&str, &[&str])] = &[
    (
        "infrastructure.cluster.x-k8s.io/v1beta1",
        &[
            "DevCluster",
            "DevClusterTemplate",
            "DevMachine",
            "DevMachineTemplate",
            "DockerCluster",
            "DockerClusterTemplate",
            "DockerMachine",
            "DockerMachinePool",
            "DockerMachinePoolTemplate",
            "DockerMachineTemplate",
        ],
    ),
    (
        "infrastructure.cluster.x-k8s.io/v1beta2",
        &[
            "DevCluster",
            "DevClusterTemplate",
            "DevMachine",
            "DevMachinePool",
            "DevMachinePoolTemplate",
            "DevMachineTemplate",
            "DockerCluster",
            "DockerClusterTemplate",
            "DockerMachine",
            "DockerMachinePool",
            "DockerMachinePoolTemplate",
            "DockerMachineTemplate",
        ],
    ),
    (
        "bootstrap.cluster.x-k8s.io/v1beta1",
        &["KubeadmConfig", "KubeadmConfigTemplate"],
    ),
    (
        "bootstrap.cluster.x-k8s.io/v1beta2",
        &["KubeadmConfig", "KubeadmConfigTemplate"],
    ),
    (
        "controlplane.cluster.x-k8s.io/v1beta1",
        &["KubeadmControlPlane", "KubeadmControlPlaneTemplate"],
    ),
    (
        "controlplane.cluster.x-k8s.io/v1beta2",
        &["KubeadmControlPlane", "KubeadmControlPlaneTemplate"],
    ),
];

/// Whether the scheme has `kind` in `api_version`.
pub fn knows(api_version: &str, kind: &str) -> bool {
    KINDS
        .iter()
        .any(|(v, kinds)| *v == api_version && kinds.contains(&kind))
}
