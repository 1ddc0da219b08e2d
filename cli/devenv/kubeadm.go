package devenv

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kubeadm plays what kubeadm leaves in the workload cluster (the one API server) when a
// KubeadmControlPlane's Machine joins: the control plane components' static Pods running and
// Ready (as mirror Pods, which a drain skips), etcd's too when the control plane runs it
// (stacked etcd), and the kubeadm-config ConfigMap whose presence KubeadmControlPlane takes as
// "kubeadm init done" (controlPlaneInitialized). Its Joined is a Providers.JoinControlPlane.
//
// What cannot be played: KubeadmControlPlane checks a stacked etcd's members through a
// port-forward to the etcd Pod, which needs a kubelet; with none, each Machine's
// EtcdMemberHealthy stays false and KCP's preflight checks hold every scale-up, scale-down and
// rollout after the first Machine. A KubeadmControlPlane with external etcd (ExternalEtcd)
// passes them.
type Kubeadm struct {
	Kube *Kube
	// Etcd is the etcd of the kubeadm-config ClusterConfiguration (YAML flow style); when
	// empty, the etcd of the Machine's KubeadmControlPlane (EtcdLocal unless it is external). A
	// non-local one also leaves out the etcd static Pod.
	Etcd string
	// Version is the static Pods' image tag and kubeadm-config's kubernetesVersion; when empty,
	// the version of the Machine m belongs to (KubeadmControlPlane names a Machine and its
	// infrastructure machine alike).
	Version string
}

// EtcdLocal is kubeadm's stacked etcd, the default of a KubeadmControlPlane.
const EtcdLocal = `{local: {dataDir: /var/lib/etcd}}`

// Joined plays kubeadm on the Node of a control plane Machine's infrastructure machine m.
func (k Kubeadm) Joined(ctx context.Context, m *unstructured.Unstructured) error {
	node, etcd, version := m.GetName(), k.Etcd, k.Version
	if etcd == "" {
		var err error
		if etcd, err = k.etcdOf(ctx, m); err != nil {
			return err
		}
	}
	if version == "" {
		machine, err := k.Kube.Get(ctx, ClusterV, "Machine", m.GetNamespace(), m.GetName())
		if err != nil {
			// KubeadmControlPlane creates the Machine after its infrastructure machine: the
			// next round finds it.
			return err
		}
		if version, _, _ = unstructured.NestedString(machine.Object, "spec", "version"); version == "" {
			return fmt.Errorf("Machine %s/%s has no spec.version", m.GetNamespace(), m.GetName())
		}
	}
	components := []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}
	if etcd == EtcdLocal {
		components = append(components, "etcd")
	}
	for _, component := range components {
		name := component + "-" + node
		if _, err := k.Kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: kube-system
  labels: {component: %s, tier: control-plane}
  annotations: {kubernetes.io/config.mirror: played, kubernetes.io/config.source: file}
spec:
  nodeName: %s
  containers: [{name: %s, image: registry.k8s.io/%s:%s}]
`, name, component, node, component, component, version)); err != nil {
			return err
		}
		if err := k.Kube.MergePatch(ctx, "v1", "Pod", "kube-system", name,
			`{"status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Initialized","status":"True"},{"type":"ContainersReady","status":"True"},{"type":"Ready","status":"True"}]}}`, true); err != nil {
			return err
		}
	}
	_, err := k.Kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: kubeadm-config, namespace: kube-system}
data:
  ClusterConfiguration: |
    apiVersion: kubeadm.k8s.io/v1beta4
    kind: ClusterConfiguration
    kubernetesVersion: %s
    etcd: %s
`, version, etcd))
	return err
}

// etcdOf is the etcd of the KubeadmControlPlane whose machine m is (its control-plane-name
// label): its external etcd, else EtcdLocal.
func (k Kubeadm) etcdOf(ctx context.Context, m *unstructured.Unstructured) (string, error) {
	name := m.GetLabels()["cluster.x-k8s.io/control-plane-name"]
	if name == "" {
		return EtcdLocal, nil
	}
	kcp, err := k.Kube.Get(ctx, ControlPlaneV, "KubeadmControlPlane", m.GetNamespace(), name)
	if err != nil {
		return "", err
	}
	if !ExternalEtcd(kcp) {
		return EtcdLocal, nil
	}
	external, _, _ := unstructured.NestedMap(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd", "external")
	flow, err := json.Marshal(map[string]any{"external": external}) // JSON is YAML's flow style
	return string(flow), err
}

// ExternalEtcd says whether a KubeadmControlPlane's etcd is external (its endpoints given).
func ExternalEtcd(kcp *unstructured.Unstructured) bool {
	endpoints, _, _ := unstructured.NestedStringSlice(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd", "external", "endpoints")
	return len(endpoints) > 0
}
