package devenv

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The API versions of the Generic* kinds (FakeCRD) and of Cluster API's core kinds.
const (
	InfrastructureV = "infrastructure.cluster.x-k8s.io/v1beta2"
	ControlPlaneV   = "controlplane.cluster.x-k8s.io/v1beta2"
	BootstrapV      = "bootstrap.cluster.x-k8s.io/v1beta2"
	ClusterV        = "cluster.x-k8s.io/v1beta2"
)

// Providers plays, on one API server that is also every Cluster's workload cluster, what the
// providers of the Generic* kinds and the kubelet would do: bootstrap data for each bootstrap
// config, a provider ID, a Ready Node and `provisioned` for each infrastructure machine; with
// Clusters set, also each Cluster's infrastructure provisioned with its kubeconfig Secret (the
// API server itself) and its GenericControlPlane initialized at its spec.version (a
// KubeadmControlPlane is run by KCP's manager; JoinControlPlane plays kubeadm on its Nodes).
type Providers struct {
	Kube *Kube
	// Namespace limits the play to one namespace ("" plays all).
	Namespace string
	// Kubeconfig is the API server's admin kubeconfig, written as each Cluster's workload
	// kubeconfig Secret (Clusters only).
	Kubeconfig string
	// Clusters plays the infrastructure clusters and control planes too.
	Clusters bool
	// APIPort, when set, is written as each GenericInfrastructureCluster's
	// spec.controlPlaneEndpoint (127.0.0.1:APIPort) as an infrastructure provider would;
	// KubeadmControlPlane waits for the Cluster's endpoint (Clusters only).
	APIPort int
	// JoinControlPlane, when set, plays kubeadm for a control plane Machine's Node before its
	// infrastructure machine (given) is reported provisioned (KubeadmControlPlane's Machines).
	JoinControlPlane func(ctx context.Context, infraMachine *unstructured.Unstructured) error
	// MachinePools plays GenericInfrastructureMachinePools and their Nodes (PlayMachinePools).
	MachinePools bool
	// HoldMachinePool, when set and true for a MachinePool, leaves its Nodes and infrastructure
	// machine pool as they are (its instances are slow to upgrade or scale) (MachinePools only).
	HoldMachinePool func(mp *unstructured.Unstructured) bool
	// Played, when set, is told each thing played (what, the object's namespace/name).
	Played func(what, object string)
	// Warn, when set, is told once of each KubeadmControlPlane whose etcd cannot be played
	// (stacked etcd: see Kubeadm) (Clusters only).
	Warn func(message string)
	// EtcdPKI, when set, signs the Secrets a KubeadmControlPlane with external etcd reads and
	// its user would otherwise create, `<cluster>-etcd` (the etcd CA) and
	// `<cluster>-apiserver-etcd-client`, written for each such Cluster that lacks them (nothing
	// dials that etcd: KCP only needs them to exist) (Clusters only).
	EtcdPKI *PKI
	// kcpDone marks the Clusters whose KubeadmControlPlane was looked at (namespace/name).
	kcpDone map[string]bool
}

// Player is a Providers playing every 200 ms until Close.
type Player struct {
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// Start plays until Close.
func (p *Providers) Start(ctx context.Context) *Player {
	pl := &Player{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(pl.done)
		for {
			select {
			case <-pl.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if p.Clusters {
				p.PlayClusters(ctx)
			}
			p.PlayMachines(ctx)
			if p.MachinePools {
				p.PlayMachinePools(ctx)
			}
		}
	}()
	return pl
}

// Close stops the player and waits for its last round.
func (pl *Player) Close() {
	pl.once.Do(func() { close(pl.stop) })
	<-pl.done
}

func (p *Providers) played(what string, u *unstructured.Unstructured) {
	if p.Played != nil {
		p.Played(what, u.GetNamespace()+"/"+u.GetName())
	}
}

// PlayMachines does one round of the bootstrap and infrastructure providers' work for Machines.
func (p *Providers) PlayMachines(ctx context.Context) {
	for _, kind := range []struct{ apiVersion, kind string }{{BootstrapV, "GenericBootstrapConfig"}, {BootstrapV, "KubeadmConfig"}} {
		configs, err := p.Kube.List(ctx, kind.apiVersion, kind.kind, p.Namespace, nil)
		if err != nil {
			continue
		}
		for _, c := range configs {
			if name, _, _ := unstructured.NestedString(c.Object, "status", "dataSecretName"); name == "" {
				p.WriteBootstrapData(ctx, kind.kind, &c)
			}
		}
	}
	if machines, err := p.Kube.List(ctx, InfrastructureV, "GenericInfrastructureMachine", p.Namespace, nil); err == nil {
		for _, m := range machines {
			if id, _, _ := unstructured.NestedString(m.Object, "spec", "providerID"); id == "" {
				p.Provision(ctx, &m)
			}
		}
	}
}

// WriteBootstrapData writes a bootstrap config's data Secret and reports it in its status.
func (p *Providers) WriteBootstrapData(ctx context.Context, kind string, c *unstructured.Unstructured) {
	cluster := c.GetLabels()["cluster.x-k8s.io/cluster-name"]
	if _, err := p.Kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: %s, labels: {cluster.x-k8s.io/cluster-name: %q}}
type: cluster.x-k8s.io/secret
stringData: {value: "#cloud-config", format: cloud-config}
`, c.GetName(), c.GetNamespace(), cluster)); err != nil {
		return
	}
	if kind == "KubeadmConfig" {
		// What KCP reads from the API server's serving certificate otherwise (through a
		// port-forward to the static Pod, which needs a kubelet).
		_ = p.Kube.MergePatch(ctx, BootstrapV, kind, c.GetNamespace(), c.GetName(),
			fmt.Sprintf(`{"metadata":{"annotations":{"machine.cluster.x-k8s.io/certificates-expiry":%q}}}`, time.Now().AddDate(1, 0, 0).UTC().Format(time.RFC3339)), false)
	}
	if p.Kube.MergePatch(ctx, BootstrapV, kind, c.GetNamespace(), c.GetName(),
		fmt.Sprintf(`{"status":{"dataSecretName":%q,"initialization":{"dataSecretCreated":true}}}`, c.GetName()), true) == nil {
		p.played("bootstrap data", c)
	}
}

// NodeConditions is the status patch of a healthy kubelet's Node: Ready, and the three pressure
// conditions False. CAPI's Machine controller keeps NodeHealthy Unknown (so the Machine is never
// Ready nor Available, and a surging rollout never goes on) until all four are reported
// (summarizeNodeConditions in core/reconcilers/machine/machine_controller_status.go).
func NodeConditions(at time.Time) string {
	return nodeStatus(at, "")
}

// nodeStatus is NodeConditions with, when version is set, the kubelet's version in
// status.nodeInfo (what CAPI's topology controller compares with a MachinePool's version).
func nodeStatus(at time.Time, version string) string {
	nodeInfo := ""
	if version != "" {
		nodeInfo = fmt.Sprintf(`"nodeInfo":{"kubeletVersion":%q},`, version)
	}
	now := at.UTC().Format(time.RFC3339)
	conditions := make([]string, 0, 4)
	for _, c := range []struct{ kind, status, reason string }{
		{"Ready", "True", "KubeletReady"},
		{"MemoryPressure", "False", "KubeletHasSufficientMemory"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID"},
	} {
		conditions = append(conditions, fmt.Sprintf(`{"type":%q,"status":%q,"reason":%q,"message":"played","lastHeartbeatTime":%q,"lastTransitionTime":%q}`, c.kind, c.status, c.reason, now, now))
	}
	return `{"status":{` + nodeInfo + `"conditions":[` + strings.Join(conditions, ",") + `]}}`
}

// Provision gives an infrastructure machine its Ready Node and provider ID, then reports it
// provisioned.
func (p *Providers) Provision(ctx context.Context, m *unstructured.Unstructured) {
	id := "played://" + m.GetName()
	_, controlPlane := m.GetLabels()["cluster.x-k8s.io/control-plane"]
	labels, spec := "{}", fmt.Sprintf("{providerID: %q}", id)
	if controlPlane {
		labels = `{node-role.kubernetes.io/control-plane: ""}`
		spec = fmt.Sprintf("{providerID: %q, taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]}", id)
	}
	node := fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: %s}\nspec: %s\n", m.GetName(), labels, spec)
	if _, err := p.Kube.Apply(ctx, node); err != nil {
		return
	}
	if p.Kube.MergePatch(ctx, "v1", "Node", "", m.GetName(), NodeConditions(time.Now()), true) != nil {
		return
	}
	if controlPlane && p.JoinControlPlane != nil && p.JoinControlPlane(ctx, m) != nil {
		return
	}
	if p.Kube.MergePatch(ctx, InfrastructureV, "GenericInfrastructureMachine", m.GetNamespace(), m.GetName(), fmt.Sprintf(`{"spec":{"providerID":%q}}`, id), false) == nil {
		if p.Kube.MergePatch(ctx, InfrastructureV, "GenericInfrastructureMachine", m.GetNamespace(), m.GetName(), `{"status":{"initialization":{"provisioned":true}}}`, true) == nil {
			p.played("machine provisioned, Node Ready", m)
		}
	}
}

// WorkloadCluster makes the API server the Cluster's workload cluster (the kubeconfig Secret a
// control plane provider writes) and reports its GenericInfrastructureCluster provisioned: CAPI's
// cluster cache connects only then, and before a version change the Cluster webhook asks the
// workload cluster about the MachinePools' nodes.
func (p *Providers) WorkloadCluster(ctx context.Context, namespace, cluster, infra string) error {
	return p.workloadCluster(ctx, namespace, cluster, infra, "cluster.x-k8s.io/secret")
}

// workloadCluster is WorkloadCluster with the kubeconfig Secret's type: "" (a user's Secret) for
// a KubeadmControlPlane, which otherwise adopts the Secret and, finding its client certificate
// (the API server's admin's, valid a day) due for rotation, rewrites it with a certificate of its
// own cluster CA, which the API server does not trust.
func (p *Providers) workloadCluster(ctx context.Context, namespace, cluster, infra, secretType string) error {
	data, err := os.ReadFile(p.Kubeconfig)
	if err != nil {
		return err
	}
	typeLine := ""
	if secretType != "" {
		typeLine = "type: " + secretType + "\n"
	}
	if _, err := p.Kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s-kubeconfig, namespace: %s, labels: {cluster.x-k8s.io/cluster-name: %s}}
%sdata: {value: %s}
`, cluster, namespace, cluster, typeLine, base64.StdEncoding.EncodeToString(data))); err != nil {
		return err
	}
	if p.APIPort != 0 {
		if err := p.Kube.MergePatch(ctx, InfrastructureV, "GenericInfrastructureCluster", namespace, infra,
			fmt.Sprintf(`{"spec":{"controlPlaneEndpoint":{"host":"127.0.0.1","port":%d}}}`, p.APIPort), false); err != nil {
			return err
		}
	}
	return p.Kube.MergePatch(ctx, InfrastructureV, "GenericInfrastructureCluster", namespace, infra, `{"status":{"initialization":{"provisioned":true}}}`, true)
}

// PlayClusters does one round of the infrastructure and control plane providers' work for
// every Cluster: its GenericInfrastructureCluster provisioned (WorkloadCluster), its
// GenericControlPlane initialized and at its spec.version (an upgrade takes one round).
func (p *Providers) PlayClusters(ctx context.Context) {
	clusters, err := p.Kube.List(ctx, ClusterV, "Cluster", p.Namespace, nil)
	if err != nil {
		return
	}
	for _, c := range clusters {
		if !c.GetDeletionTimestamp().IsZero() {
			continue
		}
		if kind, _, _ := unstructured.NestedString(c.Object, "spec", "infrastructureRef", "kind"); kind == "GenericInfrastructureCluster" {
			name, _, _ := unstructured.NestedString(c.Object, "spec", "infrastructureRef", "name")
			infra, err := p.Kube.Get(ctx, InfrastructureV, kind, c.GetNamespace(), name)
			if provisioned, _, _ := unstructured.NestedBool(infra.Object, "status", "initialization", "provisioned"); err == nil && !provisioned {
				secretType := "cluster.x-k8s.io/secret"
				if cp, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "kind"); cp == "KubeadmControlPlane" {
					secretType = ""
				}
				if p.workloadCluster(ctx, c.GetNamespace(), c.GetName(), name, secretType) == nil {
					p.played("infrastructure provisioned", infra)
				}
			}
		}
		if kind, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "kind"); kind == "KubeadmControlPlane" {
			p.kubeadmControlPlaneEtcd(ctx, &c)
		}
		if kind, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "kind"); kind == "GenericControlPlane" {
			name, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "name")
			cp, err := p.Kube.Get(ctx, ControlPlaneV, kind, c.GetNamespace(), name)
			if err != nil {
				continue
			}
			spec, _, _ := unstructured.NestedString(cp.Object, "spec", "version")
			status, _, _ := unstructured.NestedString(cp.Object, "status", "version")
			initialized, _, _ := unstructured.NestedBool(cp.Object, "status", "initialization", "controlPlaneInitialized")
			if spec == "" || (spec == status && initialized) {
				continue
			}
			if p.Kube.MergePatch(ctx, ControlPlaneV, kind, c.GetNamespace(), name,
				fmt.Sprintf(`{"status":{"initialization":{"controlPlaneInitialized":true},"version":%q}}`, spec), true) == nil {
				p.played("control plane at "+spec, cp)
			}
		}
	}
}

// kubeadmControlPlaneEtcd looks once at the etcd of the Cluster's KubeadmControlPlane: a
// stacked one is told to Warn, an external one gets its Secrets when EtcdPKI is set.
func (p *Providers) kubeadmControlPlaneEtcd(ctx context.Context, c *unstructured.Unstructured) {
	namespace, key := c.GetNamespace(), c.GetNamespace()+"/"+c.GetName()
	if p.kcpDone[key] {
		return
	}
	name, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "name")
	kcp, err := p.Kube.Get(ctx, ControlPlaneV, "KubeadmControlPlane", namespace, name)
	if err != nil {
		return
	}
	switch {
	case !ExternalEtcd(kcp) && p.Warn != nil:
		p.Warn(fmt.Sprintf("KubeadmControlPlane %s/%s runs stacked etcd, whose members' health KCP reads through a kubelet that is not here: "+
			"its first Machine is created and the Cluster initialized, but KCP holds further Machines (scale-up, rollouts, upgrades of the control plane) at its preflight checks", namespace, name))
	case ExternalEtcd(kcp) && p.EtcdPKI != nil:
		if p.externalEtcdSecrets(ctx, namespace, c.GetName()) != nil {
			return // again next round
		}
	}
	if p.kcpDone == nil {
		p.kcpDone = map[string]bool{}
	}
	p.kcpDone[key] = true
}

// externalEtcdSecrets writes the Secrets of an external etcd (WriteExternalEtcdSecrets) unless
// `<cluster>-etcd` is there already (the user's).
func (p *Providers) externalEtcdSecrets(ctx context.Context, namespace, cluster string) error {
	if _, err := p.Kube.Get(ctx, "v1", "Secret", namespace, cluster+"-etcd"); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	if err := WriteExternalEtcdSecrets(ctx, p.Kube, p.EtcdPKI, namespace, cluster); err != nil {
		return err
	}
	if p.Played != nil {
		p.Played("external etcd Secrets", namespace+"/"+cluster)
	}
	return nil
}

// WriteExternalEtcdSecrets writes the Secrets KubeadmControlPlane requires of a Cluster whose
// etcd is external, `<cluster>-apiserver-etcd-client` (a client certificate signed by pki)
// and, last, `<cluster>-etcd` (pki's CA).
func WriteExternalEtcdSecrets(ctx context.Context, kube *Kube, pki *PKI, namespace, cluster string) error {
	certPath, keyPath := pki.Leaf(namespace+"-"+cluster+"-apiserver-etcd-client", "kube-apiserver-etcd-client", nil, false)
	cert, err := os.ReadFile(certPath)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		return err
	}
	b64 := base64.StdEncoding.EncodeToString
	_, err = kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %[1]s-apiserver-etcd-client, namespace: %[2]s, labels: {cluster.x-k8s.io/cluster-name: %[1]s}}
data: {tls.crt: %[3]s, tls.key: %[4]s}
---
apiVersion: v1
kind: Secret
metadata: {name: %[1]s-etcd, namespace: %[2]s, labels: {cluster.x-k8s.io/cluster-name: %[1]s}}
data: {tls.crt: %[5]s}
`, cluster, namespace, b64(cert), b64(key), b64(pki.CAPEM)))
	return err
}
