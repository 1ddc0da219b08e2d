package main

import (
	"capi-ext.local/devenv"
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The upgrade through KubeadmControlPlane: a Cluster whose topology's control plane is a
// KubeadmControlPlane (one replica, external etcd, kubeadm played on its Nodes as in the KCP
// scenario), upgraded v1.34.0 → v1.35.0 under the lifecycle extension. KCP's manager replaces
// the control plane's Machine (a new one at v1.35.0 surged, then the old one deleted), and
// CAPI's topology controller must call AfterControlPlaneUpgrade only once no control plane
// Machine of v1.34.0 is left. The Cluster lives in a namespace of its own, whose providers the
// harness plays (the infrastructure cluster provisioned with the test API server as the
// workload cluster, etcd's Secrets, Machines and Nodes), so that nothing of the other
// scenarios' Clusters is played alike.

const (
	kcpUpgradeNamespace = "e2e-kcp-upgrade"
	kcpUpgradeCluster   = "kup"
)

// kcpUpgradeMachines returns the control plane Machines of the Cluster.
func (s *scenarios) kcpUpgradeMachines(ctx context.Context) []unstructured.Unstructured {
	l, _ := s.kube.List(ctx, clusterV, "Machine", kcpUpgradeNamespace, map[string]string{clusterNameLabel: kcpUpgradeCluster, "cluster.x-k8s.io/control-plane": ""})
	return l
}

// machineVersions is each Machine as name@version.
func machineVersions(ms []unstructured.Unstructured) []string {
	var out []string
	for _, m := range ms {
		v, _, _ := unstructured.NestedString(m.Object, "spec", "version")
		out = append(out, m.GetName()+"@"+v)
	}
	slices.Sort(out)
	return out
}

// kcpUpgradeState is the KubeadmControlPlane's versions and its Machines, for messages.
func (s *scenarios) kcpUpgradeState(ctx context.Context) string {
	u, err := s.kube.Get(ctx, clusterV, "Cluster", kcpUpgradeNamespace, kcpUpgradeCluster)
	if err != nil {
		return err.Error()
	}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name")
	st, reason, msg := Condition(u, "TopologyReconciled")
	kcp, err := s.kube.Get(ctx, cpV, "KubeadmControlPlane", kcpUpgradeNamespace, name)
	if err != nil {
		return fmt.Sprintf("TopologyReconciled=%s/%s %q; %v", st, reason, msg, err)
	}
	spec, _, _ := unstructured.NestedString(kcp.Object, "spec", "version")
	status, _, _ := unstructured.NestedString(kcp.Object, "status", "version")
	return fmt.Sprintf("TopologyReconciled=%s/%s %q; KCP spec.version %s status.version %s; Machines %v", st, reason, msg, spec, status, machineVersions(s.kcpUpgradeMachines(ctx)))
}

// kcpUpgrade: BeforeControlPlaneUpgrade held keeps the KubeadmControlPlane at v1.34.0 and its
// Machine; released, KCP replaces the Machine, and AfterControlPlaneUpgrade comes only once no
// Machine of v1.34.0 is left (read after each sight of the call: an old Machine seen after CAPI
// called the hook would prove it came too early).
func (s *scenarios) kcpUpgrade(ctx context.Context) error {
	const from, to = "v1.34.0", "v1.35.0"
	kubeconfig := s.kubeconfig
	players := (&devenv.Providers{Kube: s.kube, Namespace: kcpUpgradeNamespace, Kubeconfig: kubeconfig, Clusters: true, APIPort: s.apiPort,
		JoinControlPlane: devenv.Kubeadm{Kube: s.kube, Etcd: externalEtcd}.Joined, EtcdPKI: s.pki}).Start(ctx)
	defer players.Close()
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: %[2]s
kind: GenericInfrastructureClusterTemplate
metadata: {name: kup, namespace: %[1]s}
spec: {template: {spec: {}}}
---
apiVersion: %[2]s
kind: GenericInfrastructureMachineTemplate
metadata: {name: kup-machine, namespace: %[1]s}
spec: {template: {spec: {}}}
---
apiVersion: %[3]s
kind: KubeadmControlPlaneTemplate
metadata: {name: kup, namespace: %[1]s}
spec:
  template:
    spec:
      kubeadmConfigSpec:
        clusterConfiguration:
          etcd: %[4]s
---
apiVersion: %[5]s
kind: ClusterClass
metadata: {name: kup, namespace: %[1]s}
spec:
  infrastructure:
    templateRef: {apiVersion: %[2]s, kind: GenericInfrastructureClusterTemplate, name: kup}
  controlPlane:
    templateRef: {apiVersion: %[3]s, kind: KubeadmControlPlaneTemplate, name: kup}
    machineInfrastructure:
      templateRef: {apiVersion: %[2]s, kind: GenericInfrastructureMachineTemplate, name: kup-machine}
---
apiVersion: %[5]s
kind: Cluster
metadata:
  name: %[6]s
  namespace: %[1]s
  annotations: {%[7]q: "true", %[8]q: "true"}
spec:
  topology:
    classRef: {name: kup}
    version: %[9]s
    controlPlane: {replicas: 1}
`, kcpUpgradeNamespace, infraV, cpV, externalEtcd, clusterV, kcpUpgradeCluster, approved, delOK, from)); err != nil {
		return err
	}
	var first string
	if err := Eventually(3*timeoutLg, "the control plane's Machine up at "+from+", its static Pods healthy", func() (bool, string) {
		ms := s.kcpUpgradeMachines(ctx)
		if len(ms) != 1 {
			return false, s.kcpUpgradeState(ctx)
		}
		ready := controlPlaneMachineUp(&ms[0])
		first = ms[0].GetName()
		u, err := s.kube.Get(ctx, clusterV, "Cluster", kcpUpgradeNamespace, kcpUpgradeCluster)
		if err != nil {
			return false, err.Error()
		}
		st, _, _ := Condition(u, "TopologyReconciled")
		return ready && st == "True", s.kcpUpgradeState(ctx)
	}); err != nil {
		return err
	}
	fmt.Printf("  control plane Machine %s up at %s\n", first, from)

	mark := len(lifecycleCalls(s.lifecycleLog))
	if err := s.startUpgradeOf(ctx, kcpUpgradeNamespace, kcpUpgradeCluster, []string{"BeforeControlPlaneUpgrade", "AfterControlPlaneUpgrade"}, to); err != nil {
		return err
	}
	if _, err := s.waitHeld(mark, "BeforeControlPlaneUpgrade", ""); err != nil {
		return err
	}
	if ms := s.kcpUpgradeMachines(ctx); !slices.Equal(machineVersions(ms), []string{first + "@" + from}) {
		return fmt.Errorf("while BeforeControlPlaneUpgrade held: %s", s.kcpUpgradeState(ctx))
	}
	fmt.Printf("  BeforeControlPlaneUpgrade held: %s\n", s.kcpUpgradeState(ctx))
	if err := s.setHoldsOf(ctx, kcpUpgradeNamespace, kcpUpgradeCluster, []string{"AfterControlPlaneUpgrade"}, ""); err != nil {
		return err
	}
	// Watch the rollout until CAPI calls AfterControlPlaneUpgrade: each round reads the calls,
	// then the Machines.
	var seen [][]string
	if err := Eventually(3*timeoutLg, "AfterControlPlaneUpgrade called", func() (bool, string) {
		called := slices.ContainsFunc(lifecycleCalls(s.lifecycleLog)[mark:], func(c lifecycleCall) bool { return c.Hook == "AfterControlPlaneUpgrade" })
		ms := machineVersions(s.kcpUpgradeMachines(ctx))
		if len(seen) == 0 || !slices.Equal(seen[len(seen)-1], ms) {
			seen = append(seen, ms)
		}
		return called, s.kcpUpgradeState(ctx)
	}); err != nil {
		return err
	}
	if last := seen[len(seen)-1]; len(last) != 1 || !strings.HasSuffix(last[0], "@"+to) || strings.HasPrefix(last[0], first+"@") {
		return fmt.Errorf("AfterControlPlaneUpgrade was called while the control plane's Machines were %v (the rollout went %v)", last, seen)
	}
	surged := slices.ContainsFunc(seen, func(ms []string) bool { return len(ms) == 2 })
	if !surged {
		return fmt.Errorf("KCP's rollout was never seen with two Machines (went %v)", seen)
	}
	fmt.Printf("  KCP's rollout, as seen until AfterControlPlaneUpgrade was called: %v\n", seen)
	if err := s.setHoldsOf(ctx, kcpUpgradeNamespace, kcpUpgradeCluster, nil, ""); err != nil {
		return err
	}
	if err := Eventually(timeoutLg, "upgrade to "+to+" complete", func() (bool, string) {
		u, err := s.kube.Get(ctx, clusterV, "Cluster", kcpUpgradeNamespace, kcpUpgradeCluster)
		if err != nil {
			return false, err.Error()
		}
		st, _, _ := Condition(u, "TopologyReconciled")
		done := slices.ContainsFunc(lifecycleCalls(s.lifecycleLog)[mark:], func(c lifecycleCall) bool { return c.Hook == "AfterClusterUpgrade" && !c.Held })
		return st == "True" && done && !strings.Contains(u.GetAnnotations()[pending], "AfterClusterUpgrade"), s.kcpUpgradeState(ctx)
	}); err != nil {
		return err
	}
	got := s.upgradeSequence(mark)
	at := func(call string) int { return slices.Index(got, call) }
	before, after, cluster := at("BeforeControlPlaneUpgrade "+from+"→"+to), at("AfterControlPlaneUpgrade "+to), at("AfterClusterUpgrade "+to)
	if before < 0 || after < before || cluster < after {
		return fmt.Errorf("CAPI's calls were %v: want BeforeControlPlaneUpgrade, AfterControlPlaneUpgrade and AfterClusterUpgrade in that order", got)
	}
	fmt.Printf("  order: %s\n", strings.Join(got, " · "))

	// Clean up: nothing of this Cluster may hold the run's later scenarios.
	if err := s.kube.Delete(ctx, clusterV, "Cluster", kcpUpgradeNamespace, kcpUpgradeCluster); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return Eventually(2*timeoutLg, "the Cluster deleted", func() (bool, string) {
		_, err := s.kube.Get(ctx, clusterV, "Cluster", kcpUpgradeNamespace, kcpUpgradeCluster)
		return apierrors.IsNotFound(err), s.kcpUpgradeState(ctx)
	})
}
