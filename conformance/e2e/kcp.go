package main

import (
	"capi-ext.local/devenv"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The KubeadmControlPlane scenario: only KCP calls CanUpdateMachine, so its manager runs next
// to the core manager (both with InPlaceUpdates) and manages the control plane of a Cluster of
// its own, whose workload cluster is the test API server. KCP moves a Machine in place only
// when its preflight checks pass, and those read the workload cluster as kubeadm leaves it; with
// no kubelet and no kubeadm here, the harness plays them (startFakeMachines, devenv.Kubeadm): the
// Node labelled and tainted as a control plane Node, the static Pods of kube-apiserver,
// kube-controller-manager and kube-scheduler running and Ready (as mirror Pods, which a drain
// skips), the kubeadm-config ConfigMap, and the bootstrap data of each KubeadmConfig. etcd is external (KCP then neither
// checks etcd Pods nor dials etcd members), and the certificate expiry KCP would read from the
// API server's serving certificate is written on the KubeadmConfig as kubeadm's would be.

const (
	kcpCluster = "kcp"
	kcpLabel   = "cluster.x-k8s.io/control-plane-name"
	// KCP's webhook refuses a rollout without surge below three replicas.
	kcpReplicas = 3
	// The etcd of the KubeadmControlPlane and of the kubeadm-config ConfigMap: external, so KCP
	// neither checks etcd Pods nor dials etcd members (nothing listens there).
	externalEtcd = `{external: {endpoints: ["https://127.0.0.1:2379"], caFile: /etc/kubernetes/pki/etcd/ca.crt, ` +
		`certFile: /etc/kubernetes/pki/apiserver-etcd-client.crt, keyFile: /etc/kubernetes/pki/apiserver-etcd-client.key}}`
)

// kcpMachines returns the Machines of the KubeadmControlPlane.
func (s *scenarios) kcpMachines(ctx context.Context) []unstructured.Unstructured {
	l, _ := s.kube.List(ctx, clusterV, "Machine", ns, map[string]string{kcpLabel: kcpCluster})
	return l
}

// kcpObjects creates the Cluster with its KubeadmControlPlane (three replicas, the fewest KCP
// admits without surge; with no surge a rollout must move each Machine in place or delete it
// first, while a surge would create the new Machine before KCP considers an in-place update),
// the Secrets a KCP with external etcd and an existing workload cluster needs, and the
// infrastructure.
func (s *scenarios) kcpObjects(ctx context.Context) error {
	kubeconfig, err := os.ReadFile(s.kubeconfig)
	must(err)
	if err := s.infraTemplate(ctx, "kcp-1", "small", "one"); err != nil {
		return err
	}
	if err := devenv.WriteExternalEtcdSecrets(ctx, s.kube, s.pki, ns, kcpCluster); err != nil {
		return err
	}
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %[1]s-kubeconfig, namespace: %[2]s, labels: {cluster.x-k8s.io/cluster-name: %[1]s}}
data: {value: %[3]s}
---
apiVersion: %[4]s
kind: GenericInfrastructureCluster
metadata: {name: %[1]s, namespace: %[2]s}
spec: {}
---
apiVersion: %[5]s
kind: KubeadmControlPlane
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[8]d
  version: v1.34.0
  rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}}
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: GenericInfrastructureMachineTemplate, name: kcp-1}
  kubeadmConfigSpec:
    clusterConfiguration:
      etcd: %[9]s
---
apiVersion: %[6]s
kind: Cluster
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  controlPlaneEndpoint: {host: 127.0.0.1, port: %[7]d}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: GenericInfrastructureCluster, name: %[1]s}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: %[1]s}
`, kcpCluster, ns, base64.StdEncoding.EncodeToString(kubeconfig), infraV, cpV, clusterV, s.apiPort, kcpReplicas, externalEtcd)); err != nil {
		return err
	}
	// CAPI's cluster cache (and so KCP's) connects once the infrastructure is provisioned.
	return s.kube.MergePatch(ctx, infraV, "GenericInfrastructureCluster", ns, kcpCluster, `{"status":{"initialization":{"provisioned":true}}}`, true)
}

// useKCPTemplate points the KubeadmControlPlane at another infrastructure machine template
// and, with a non-empty motd, sets its kubeadmConfigSpec's files to one file of that content
// (both in one change).
func (s *scenarios) useKCPTemplate(ctx context.Context, name, motd string) error {
	files := ""
	if motd != "" {
		files = fmt.Sprintf(`,"kubeadmConfigSpec":{"files":[{"path":%q,"content":%q}]}`, kcpMotdPath, motd)
	}
	return s.kube.MergePatch(ctx, cpV, "KubeadmControlPlane", ns, kcpCluster,
		fmt.Sprintf(`{"spec":{"machineTemplate":{"spec":{"infrastructureRef":{"name":%q}}}%s}}`, name, files), false)
}

// kcpMotdPath is the file the KubeadmControlPlane's in-place change adds to its kubeadmConfigSpec.
const kcpMotdPath = "/etc/e2e-motd"

// kubeadmConfigFile is the content of the file at path in the KubeadmConfig of Machine m.
func (s *scenarios) kubeadmConfigFile(ctx context.Context, m *unstructured.Unstructured, path string) (string, error) {
	name, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "configRef", "name")
	c, err := s.kube.Get(ctx, bootstrapV, "KubeadmConfig", ns, name)
	if err != nil {
		return "", err
	}
	files, _, _ := unstructured.NestedSlice(c.Object, "spec", "files")
	for _, f := range files {
		if f, ok := f.(map[string]any); ok && f["path"] == path {
			content, _ := f["content"].(string)
			return content, nil
		}
	}
	return "", nil
}

// controlPlaneMachineUp says whether a control plane Machine has its Node and KCP sees its
// static Pods (kube-apiserver, kube-controller-manager, kube-scheduler) healthy.
func controlPlaneMachineUp(m *unstructured.Unstructured) bool {
	node, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
	up := node != ""
	for _, c := range []string{"APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy"} {
		st, _, _ := Condition(m, c)
		up = up && st == "True"
	}
	return up
}

// kcpState is what the scenario prints of the control plane while it waits.
func (s *scenarios) kcpState(ctx context.Context) string {
	var states []string
	ms := s.kcpMachines(ctx)
	for i := range ms {
		health := ""
		for _, c := range []string{"APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy", "UpToDate"} {
			st, reason, _ := Condition(&ms[i], c)
			health += fmt.Sprintf(" %s=%s/%s", c, st, reason)
		}
		states = append(states, machineState(&ms[i])+health)
	}
	kcp, err := s.kube.Get(ctx, cpV, "KubeadmControlPlane", ns, kcpCluster)
	if err != nil {
		return err.Error()
	}
	upToDate, _, _ := unstructured.NestedInt64(kcp.Object, "status", "upToDateReplicas")
	st, reason, msg := Condition(kcp, "RollingOut")
	return fmt.Sprintf("KCP upToDateReplicas=%d RollingOut=%s/%s %q; Machines: %v", upToDate, st, reason, msg, states)
}

// kcpCalls sums up the in-place extension's calls since mark: the Machines CanUpdateMachine
// accepted and refused (with what it refused), and those UpdateMachine held and finished.
type kcpCalls struct {
	accepted, refused, held, done map[string]bool
	refusedPaths, patchedPaths    map[string]bool
}

func (s *scenarios) kcpCallsSince(mark int) kcpCalls {
	c := kcpCalls{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}}
	for _, call := range inplaceCalls(s.inplaceLog)[mark:] {
		switch {
		case call.Hook == "CanUpdateMachine" && call.Accepted:
			c.accepted[call.Machine] = true
			c.patchedPaths[strings.Join(call.Patched, ",")] = true
		case call.Hook == "CanUpdateMachine":
			c.refused[call.Machine] = true
			c.refusedPaths[strings.Join(call.Refused, ",")] = true
		case call.Hook == "UpdateMachine" && call.Held:
			c.held[call.Machine] = true
		case call.Hook == "UpdateMachine":
			c.done[call.Machine] = true
		}
	}
	return c
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sameNames says whether the Machines are exactly the named ones.
func sameNames(ms []unstructured.Unstructured, names []string) bool {
	var got []string
	for _, m := range ms {
		got = append(got, m.GetName())
	}
	sort.Strings(got)
	return strings.Join(got, ",") == strings.Join(names, ",")
}

// holdAll sets (or, with value null, clears) the UpdateMachine hold on each named Machine.
func (s *scenarios) holdAll(ctx context.Context, names []string, value string) error {
	for _, name := range names {
		if err := s.kube.MergePatch(ctx, clusterV, "Machine", ns, name, fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, holdAnnotation, value), false); err != nil {
			return err
		}
	}
	return nil
}

// kubeadmControlPlaneInPlace: KCP asks CanUpdateMachine before it replaces a control plane
// Machine; a change the extension accepts is carried out in place on every Machine, one at a
// time (UpdateMachine held, then done; the same Machines, no new one); a refused change makes KCP
// delete each Machine and create a new one.
func (s *scenarios) kubeadmControlPlaneInPlace(ctx context.Context) error {
	if err := s.inplaceDiscovery(ctx); err != nil {
		return err
	}
	providers := s.startFakeMachines(ctx)
	defer providers.Close()
	if err := s.kcpObjects(ctx); err != nil {
		return err
	}

	var firsts []string
	if err := Eventually(3*timeoutLg, fmt.Sprintf("%d control plane Machines with Nodes, their static Pods healthy", kcpReplicas), func() (bool, string) {
		ms := s.kcpMachines(ctx)
		firsts = nil
		ready := len(ms) == kcpReplicas
		for i := range ms {
			ready = ready && controlPlaneMachineUp(&ms[i])
			firsts = append(firsts, ms[i].GetName())
		}
		sort.Strings(firsts)
		return ready, s.kcpState(ctx)
	}); err != nil {
		return err
	}
	fmt.Printf("  control plane Machines %v up, their static Pods healthy in KCP's eyes\n", firsts)

	// Accepted: the infrastructure machines' spec.inPlace and a file of the kubeadmConfigSpec
	// change, in one change of the KubeadmControlPlane.
	mark := len(inplaceCalls(s.inplaceLog))
	if err := s.holdAll(ctx, firsts, `"UpdateMachine"`); err != nil {
		return err
	}
	if err := s.infraTemplate(ctx, "kcp-2", "small", "two"); err != nil {
		return err
	}
	if err := s.useKCPTemplate(ctx, "kcp-2", "two"); err != nil {
		return err
	}
	var heldMachine string
	if err := Eventually(2*timeoutLg, "CanUpdateMachine accepted and a Machine held in UpdateMachine", func() (bool, string) {
		ms := s.kcpMachines(ctx)
		calls := s.kcpCallsSince(mark)
		for i := range ms {
			st, reason, msg := Condition(&ms[i], "Updating")
			name := ms[i].GetName()
			if calls.accepted[name] && calls.held[name] && st == "True" && reason == "InPlaceUpdating" && strings.Contains(msg, "UpdateMachine held by annotation") {
				heldMachine = name
			}
		}
		return sameNames(ms, firsts) && heldMachine != "",
			fmt.Sprintf("CanUpdateMachine accepted %v, UpdateMachine held %v; %s", keys(calls.accepted), keys(calls.held), s.kcpState(ctx))
	}); err != nil {
		return err
	}
	fmt.Printf("  CanUpdateMachine accepted the change of Machine %s; held in UpdateMachine\n", heldMachine)

	if err := s.holdAll(ctx, firsts, "null"); err != nil {
		return err
	}
	if err := Eventually(3*timeoutLg, "every Machine updated in place, no new Machine", func() (bool, string) {
		ms := s.kcpMachines(ctx)
		calls := s.kcpCallsSince(mark)
		var motds []string
		updated := sameNames(ms, firsts)
		for i := range ms {
			st, _, _ := Condition(&ms[i], "Updating")
			upToDate, _, _ := Condition(&ms[i], "UpToDate")
			_, inProgress := ms[i].GetAnnotations()["cluster.x-k8s.io/update-in-progress"]
			infra, err := s.kube.Get(ctx, infraV, "GenericInfrastructureMachine", ns, ms[i].GetName())
			if err != nil {
				return false, err.Error()
			}
			motd, _, _ := unstructured.NestedString(infra.Object, "spec", "inPlace", "motd")
			file, err := s.kubeadmConfigFile(ctx, &ms[i], kcpMotdPath)
			if err != nil {
				return false, err.Error()
			}
			motds = append(motds, motd+"/"+file)
			updated = updated && st != "True" && !inProgress && upToDate == "True" && motd == "two" && file == "two"
		}
		return updated && strings.Join(keys(calls.accepted), ",") == strings.Join(firsts, ",") && strings.Join(keys(calls.done), ",") == strings.Join(firsts, ","),
			fmt.Sprintf("inPlace.motd/KubeadmConfig file %v, CanUpdateMachine accepted %v, UpdateMachine done %v; %s", motds, keys(calls.accepted), keys(calls.done), s.kcpState(ctx))
	}); err != nil {
		return err
	}
	// Each acceptance patched both objects, and nothing else.
	if calls := s.kcpCallsSince(mark); strings.Join(keys(calls.patchedPaths), "|") != "infrastructureMachine/spec/inPlace/motd,bootstrapConfig/spec/files" {
		return fmt.Errorf("CanUpdateMachine's accepted patches: %v, want the infrastructure machine's inPlace.motd and the KubeadmConfig's files", keys(calls.patchedPaths))
	}
	fmt.Printf("  Machines %v each accepted by CanUpdateMachine (patches of the infrastructure machine's inPlace.motd and the KubeadmConfig's files) and updated in place (inPlace.motd=two, %s in their KubeadmConfigs), UpToDate, no new Machine\n", firsts, kcpMotdPath)

	// Refused: the flavor changes too, so KCP falls back to deleting each Machine.
	mark = len(inplaceCalls(s.inplaceLog))
	if err := s.infraTemplate(ctx, "kcp-3", "large", "two"); err != nil {
		return err
	}
	if err := s.useKCPTemplate(ctx, "kcp-3", ""); err != nil {
		return err
	}
	var seconds []string
	if err := Eventually(4*timeoutLg, "new control plane Machines replacing the refused ones", func() (bool, string) {
		ms := s.kcpMachines(ctx)
		seconds = nil
		replaced := len(ms) == kcpReplicas
		for i := range ms {
			node, _, _ := unstructured.NestedString(ms[i].Object, "status", "nodeRef", "name")
			upToDate, _, _ := Condition(&ms[i], "UpToDate")
			replaced = replaced && node != "" && upToDate == "True" && !slices.Contains(firsts, ms[i].GetName())
			seconds = append(seconds, ms[i].GetName())
		}
		return replaced, s.kcpState(ctx)
	}); err != nil {
		return err
	}
	calls := s.kcpCallsSince(mark)
	if len(calls.accepted) > 0 || len(calls.held) > 0 || len(calls.done) > 0 {
		return fmt.Errorf("a refused change was accepted or updated in place: CanUpdateMachine accepted %v, UpdateMachine %v %v", keys(calls.accepted), keys(calls.held), keys(calls.done))
	}
	if strings.Join(keys(calls.refused), ",") != strings.Join(firsts, ",") || strings.Join(keys(calls.refusedPaths), "|") != "infrastructureMachine/spec/flavor" {
		return fmt.Errorf("CanUpdateMachine: want a call for each of %v refusing spec.flavor, got calls for %v refusing %v", firsts, keys(calls.refused), keys(calls.refusedPaths))
	}
	fmt.Printf("  CanUpdateMachine refused [infrastructureMachine/spec/flavor] for each of %v; KCP replaced them by %v\n", firsts, seconds)

	// Clean up: nothing of this Cluster may hold the run's later deletion scenario.
	if err := s.kube.Delete(ctx, clusterV, "Cluster", ns, kcpCluster); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return Eventually(2*timeoutLg, "the KubeadmControlPlane's Cluster deleted", func() (bool, string) {
		_, err := s.kube.Get(ctx, clusterV, "Cluster", ns, kcpCluster)
		return apierrors.IsNotFound(err), s.kcpState(ctx)
	})
}
