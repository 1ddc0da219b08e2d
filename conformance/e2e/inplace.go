package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The in-place scenario: the manager runs with CAPI's InPlaceUpdates feature gate, a
// MachineDeployment of the Cluster has one Machine, and the in-place extension
// (`capi-ext-conformance inplace-extension`) decides, through CanUpdateMachineSet, which template
// changes it applies in place (those under `spec.template.spec.inPlace`), then carries them out
// through UpdateMachine. The harness plays the bootstrap and infrastructure providers and the
// kubelet: bootstrap data, a provider ID, and a Ready Node in the workload cluster (the test API
// server) for each Machine, which is what CAPI waits for before it moves a Machine in place.

const (
	inplaceExt = "inplace"
	inplaceMD  = "inplace"
	mdLabel    = "e2e.capi-ext.io/machine-deployment"
)

// inplaceCall is one call the in-place extension logged.
type inplaceCall struct {
	Hook     string   `json:"hook"`
	Current  string   `json:"current"`
	Desired  string   `json:"desired"`
	Accepted bool     `json:"accepted"`
	Refused  []string `json:"refused"`
	Patched  []string `json:"patched"`
	Machine  string   `json:"machine"`
	InPlace  any      `json:"inPlace"`
	Held     bool     `json:"held"`
}

func inplaceCalls(logPath string) []inplaceCall {
	return loggedCalls[inplaceCall](logPath, "in-place hook called")
}

// fakeMachines plays the bootstrap and infrastructure providers and the kubelet for every
// Machine of the namespace: bootstrap data, a provider ID, provisioned, and a Ready Node. For a
// KubeadmControlPlane's Machines it also plays kubeadm (see kcp.go): the Node labelled and tainted
// as a control plane Node, its static Pods running, the kubeadm-config ConfigMap.
type fakeMachines struct {
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

func (s *scenarios) startFakeMachines(ctx context.Context) *fakeMachines {
	f := &fakeMachines{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for {
			select {
			case <-f.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			for _, kind := range []struct{ apiVersion, kind string }{{bootstrapV, "GenericBootstrapConfig"}, {bootstrapV, "KubeadmConfig"}} {
				configs, err := s.kube.list(ctx, kind.apiVersion, kind.kind, ns, nil)
				if err != nil {
					continue
				}
				for _, c := range configs {
					if name, _, _ := unstructured.NestedString(c.Object, "status", "dataSecretName"); name == "" {
						s.writeBootstrapData(ctx, kind.kind, &c)
					}
				}
			}
			if machines, err := s.kube.list(ctx, infraV, "GenericInfrastructureMachine", ns, nil); err == nil {
				for _, m := range machines {
					if id, _, _ := unstructured.NestedString(m.Object, "spec", "providerID"); id == "" {
						s.provision(ctx, &m)
					}
				}
			}
		}
	}()
	return f
}

// writeBootstrapData writes a bootstrap config's data Secret and reports it in its status.
func (s *scenarios) writeBootstrapData(ctx context.Context, kind string, c *unstructured.Unstructured) {
	cluster := c.GetLabels()["cluster.x-k8s.io/cluster-name"]
	if _, err := s.kube.apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: %s, labels: {cluster.x-k8s.io/cluster-name: %q}}
type: cluster.x-k8s.io/secret
stringData: {value: "#cloud-config", format: cloud-config}
`, c.GetName(), ns, cluster)); err != nil {
		return
	}
	if kind == "KubeadmConfig" {
		// What KCP reads from the API server's serving certificate otherwise (through a
		// port-forward to the static Pod, which needs a kubelet).
		_ = s.kube.mergePatch(ctx, bootstrapV, kind, ns, c.GetName(),
			fmt.Sprintf(`{"metadata":{"annotations":{"machine.cluster.x-k8s.io/certificates-expiry":%q}}}`, time.Now().AddDate(1, 0, 0).UTC().Format(time.RFC3339)), false)
	}
	_ = s.kube.mergePatch(ctx, bootstrapV, kind, ns, c.GetName(),
		fmt.Sprintf(`{"status":{"dataSecretName":%q,"initialization":{"dataSecretCreated":true}}}`, c.GetName()), true)
}

// nodeConditions is the status patch of a healthy kubelet's Node: Ready, and the three pressure
// conditions False. CAPI's Machine controller keeps NodeHealthy Unknown (so the Machine is never
// Ready nor Available, and a surging rollout never goes on) until all four are reported
// (summarizeNodeConditions in core/reconcilers/machine/machine_controller_status.go).
func nodeConditions(at time.Time) string {
	now := at.UTC().Format(time.RFC3339)
	conditions := make([]string, 0, 4)
	for _, c := range []struct{ kind, status, reason string }{
		{"Ready", "True", "KubeletReady"},
		{"MemoryPressure", "False", "KubeletHasSufficientMemory"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID"},
	} {
		conditions = append(conditions, fmt.Sprintf(`{"type":%q,"status":%q,"reason":%q,"message":"e2e","lastHeartbeatTime":%q,"lastTransitionTime":%q}`, c.kind, c.status, c.reason, now, now))
	}
	return `{"status":{"conditions":[` + strings.Join(conditions, ",") + `]}}`
}

// provision gives an infrastructure machine its Ready Node and provider ID, then reports it
// provisioned.
func (s *scenarios) provision(ctx context.Context, m *unstructured.Unstructured) {
	id := "e2e://" + m.GetName()
	_, controlPlane := m.GetLabels()["cluster.x-k8s.io/control-plane"]
	labels, spec := "{}", fmt.Sprintf("{providerID: %q}", id)
	if controlPlane {
		labels = `{node-role.kubernetes.io/control-plane: ""}`
		spec = fmt.Sprintf("{providerID: %q, taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]}", id)
	}
	node := fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: %s}\nspec: %s\n", m.GetName(), labels, spec)
	if _, err := s.kube.apply(ctx, node); err != nil {
		return
	}
	if s.kube.mergePatch(ctx, "v1", "Node", "", m.GetName(), nodeConditions(time.Now()), true) != nil {
		return
	}
	if controlPlane && s.kubeadmJoined(ctx, m.GetName()) != nil {
		return
	}
	if s.kube.mergePatch(ctx, infraV, "GenericInfrastructureMachine", ns, m.GetName(), fmt.Sprintf(`{"spec":{"providerID":%q}}`, id), false) == nil {
		_ = s.kube.mergePatch(ctx, infraV, "GenericInfrastructureMachine", ns, m.GetName(), `{"status":{"initialization":{"provisioned":true}}}`, true)
	}
}

func (f *fakeMachines) close() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

// inplaceDiscovery registers the in-place extension.
func (s *scenarios) inplaceDiscovery(ctx context.Context) error {
	want := "can-update-machine-set.inplace,can-update-machine.inplace,update-machine.inplace"
	return s.registerExtension(ctx, inplaceExt, s.inplaceURL, want, func(h []string) bool { return strings.Join(h, ",") == want })
}

// machineSets returns the MachineSets of the in-place MachineDeployment by name, with their
// spec.replicas.
func (s *scenarios) machineSets(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	l, _ := s.kube.list(ctx, clusterV, "MachineSet", ns, map[string]string{"cluster.x-k8s.io/deployment-name": inplaceMD})
	for _, ms := range l {
		n, _, _ := unstructured.NestedInt64(ms.Object, "spec", "replicas")
		out[ms.GetName()] = n
	}
	return out
}

// machines returns the Machines of the in-place MachineDeployment.
func (s *scenarios) machines(ctx context.Context) []unstructured.Unstructured {
	l, _ := s.kube.list(ctx, clusterV, "Machine", ns, map[string]string{"cluster.x-k8s.io/deployment-name": inplaceMD})
	return l
}

func owner(u *unstructured.Unstructured) string {
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "MachineSet" {
			return o.Name
		}
	}
	return ""
}

func machineState(m *unstructured.Unstructured) string {
	node, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
	st, reason, msg := condition(m, "Updating")
	_, inProgress := m.GetAnnotations()["cluster.x-k8s.io/update-in-progress"]
	return fmt.Sprintf("%s (MachineSet %s, node %q, Updating=%s/%s %q, update-in-progress=%t, pending-hooks=%q)",
		m.GetName(), owner(m), node, st, reason, msg, inProgress, m.GetAnnotations()[pending])
}

// infraTemplate creates a GenericInfrastructureMachineTemplate of the in-place MachineDeployment.
func (s *scenarios) infraTemplate(ctx context.Context, name, flavor, motd string) error {
	_, err := s.kube.apply(ctx, fmt.Sprintf(`apiVersion: %s
kind: GenericInfrastructureMachineTemplate
metadata: {name: %s, namespace: %s}
spec: {template: {spec: {flavor: %s, inPlace: {motd: %s}}}}
`, infraV, name, ns, flavor, motd))
	return err
}

// useTemplate points the MachineDeployment at another infrastructure machine template, which
// CAPI answers with a new MachineSet.
func (s *scenarios) useTemplate(ctx context.Context, name string) error {
	return s.kube.mergePatch(ctx, clusterV, "MachineDeployment", ns, inplaceMD,
		fmt.Sprintf(`{"spec":{"template":{"spec":{"infrastructureRef":{"name":%q}}}}}`, name), false)
}

// inPlaceUpdates: a change the extension accepts moves the Machine to the new MachineSet and
// updates it in place (UpdateMachine held, then done; no new Machine); a change it refuses
// rolls out (a new Machine replaces the old one).
func (s *scenarios) inPlaceUpdates(ctx context.Context) error {
	if err := s.inplaceDiscovery(ctx); err != nil {
		return err
	}
	providers := s.startFakeMachines(ctx)
	defer providers.close()

	if err := s.infraTemplate(ctx, "inplace-1", "small", "one"); err != nil {
		return err
	}
	if _, err := s.kube.apply(ctx, fmt.Sprintf(`apiVersion: %[1]s
kind: GenericBootstrapConfigTemplate
metadata: {name: inplace, namespace: %[2]s}
spec: {template: {spec: {}}}
---
apiVersion: %[3]s
kind: MachineDeployment
metadata: {name: %[4]s, namespace: %[2]s}
spec:
  clusterName: c1
  replicas: 1
  selector: {matchLabels: {%[5]s: %[4]s}}
  rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}}
  template:
    metadata: {labels: {%[5]s: %[4]s}}
    spec:
      clusterName: c1
      bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: GenericBootstrapConfigTemplate, name: inplace}}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: GenericInfrastructureMachineTemplate, name: inplace-1}
`, bootstrapV, ns, clusterV, inplaceMD, mdLabel)); err != nil {
		return err
	}

	// One Machine, provisioned, with its Node.
	var first string
	if err := eventually(timeoutLg, "one Machine with a Node", func() (bool, string) {
		ms := s.machines(ctx)
		var states []string
		for i := range ms {
			states = append(states, machineState(&ms[i]))
		}
		if len(ms) != 1 {
			return false, fmt.Sprintf("%d Machines: %v", len(ms), states)
		}
		node, _, _ := unstructured.NestedString(ms[0].Object, "status", "nodeRef", "name")
		first = ms[0].GetName()
		return node != "", states[0]
	}); err != nil {
		return err
	}
	oldSets := s.machineSets(ctx)
	fmt.Printf("  Machine %s up in MachineSet %v\n", first, oldSets)

	// Accepted: only spec.template.spec.inPlace changes.
	mark := len(inplaceCalls(s.inplaceLog))
	if err := s.kube.mergePatch(ctx, clusterV, "Machine", ns, first, fmt.Sprintf(`{"metadata":{"annotations":{%q:"UpdateMachine"}}}`, holdAnnotation), false); err != nil {
		return err
	}
	if err := s.infraTemplate(ctx, "inplace-2", "small", "two"); err != nil {
		return err
	}
	if err := s.useTemplate(ctx, "inplace-2"); err != nil {
		return err
	}
	var newSet string
	if err := eventually(timeoutLg, "the Machine moved to the new MachineSet and held in UpdateMachine", func() (bool, string) {
		ms := s.machines(ctx)
		if len(ms) != 1 {
			return false, fmt.Sprintf("%d Machines", len(ms))
		}
		m := &ms[0]
		st, reason, msg := condition(m, "Updating")
		newSet = owner(m)
		_, wasOld := oldSets[newSet]
		held := false
		for _, c := range inplaceCalls(s.inplaceLog)[mark:] {
			held = held || (c.Hook == "UpdateMachine" && c.Held && c.Machine == first)
		}
		return m.GetName() == first && !wasOld && st == "True" && reason == "InPlaceUpdating" &&
				strings.Contains(msg, "UpdateMachine held by annotation") && strings.Contains(m.GetAnnotations()[pending], "UpdateMachine") && held,
			machineState(m)
	}); err != nil {
		return err
	}
	var accepted *inplaceCall
	for _, c := range inplaceCalls(s.inplaceLog)[mark:] {
		if c.Hook == "CanUpdateMachineSet" {
			c := c
			accepted = &c
		}
	}
	if accepted == nil || !accepted.Accepted || accepted.Desired != newSet || oldSets[accepted.Current] != 1 {
		return fmt.Errorf("CanUpdateMachineSet: want an accepted call from the old MachineSet to %s, got %+v (old MachineSets %v)", newSet, accepted, oldSets)
	}
	fmt.Printf("  CanUpdateMachineSet %s → %s accepted; Machine %s held in UpdateMachine\n", accepted.Current, accepted.Desired, first)

	if err := s.kube.mergePatch(ctx, clusterV, "Machine", ns, first, fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, holdAnnotation), false); err != nil {
		return err
	}
	if err := eventually(timeoutLg, "the in-place update done, no new Machine", func() (bool, string) {
		ms := s.machines(ctx)
		if len(ms) != 1 {
			return false, fmt.Sprintf("%d Machines", len(ms))
		}
		m := &ms[0]
		st, _, _ := condition(m, "Updating")
		_, inProgress := m.GetAnnotations()["cluster.x-k8s.io/update-in-progress"]
		infra, err := s.kube.get(ctx, infraV, "GenericInfrastructureMachine", ns, m.GetName())
		if err != nil {
			return false, err.Error()
		}
		motd, _, _ := unstructured.NestedString(infra.Object, "spec", "inPlace", "motd")
		sets := s.machineSets(ctx)
		done := false
		for _, c := range inplaceCalls(s.inplaceLog)[mark:] {
			done = done || (c.Hook == "UpdateMachine" && !c.Held && c.Machine == first)
		}
		oldEmpty := true
		for name := range oldSets {
			oldEmpty = oldEmpty && sets[name] == 0
		}
		return m.GetName() == first && owner(m) == newSet && st != "True" && !inProgress && !strings.Contains(m.GetAnnotations()[pending], "UpdateMachine") &&
				motd == "two" && done && oldEmpty && sets[newSet] == 1,
			fmt.Sprintf("%s, infrastructure machine inPlace.motd=%q, MachineSets %v", machineState(m), motd, sets)
	}); err != nil {
		return err
	}
	fmt.Printf("  Machine %s updated in place (infrastructure machine inPlace.motd=two), still the only Machine\n", first)

	// Refused: the flavor changes too, so CAPI rolls the MachineSet out.
	mark = len(inplaceCalls(s.inplaceLog))
	before := s.machineSets(ctx)
	if err := s.infraTemplate(ctx, "inplace-3", "large", "two"); err != nil {
		return err
	}
	if err := s.useTemplate(ctx, "inplace-3"); err != nil {
		return err
	}
	var second string
	if err := eventually(timeoutLg, "a new Machine replacing the refused one", func() (bool, string) {
		ms := s.machines(ctx)
		var states []string
		for i := range ms {
			states = append(states, machineState(&ms[i]))
		}
		if len(ms) != 1 || ms[0].GetName() == first {
			return false, fmt.Sprintf("%v", states)
		}
		_, oldSet := before[owner(&ms[0])]
		node, _, _ := unstructured.NestedString(ms[0].Object, "status", "nodeRef", "name")
		second = ms[0].GetName()
		return !oldSet && node != "", states[0]
	}); err != nil {
		return err
	}
	var refused *inplaceCall
	for _, c := range inplaceCalls(s.inplaceLog)[mark:] {
		if c.Hook == "CanUpdateMachineSet" {
			c := c
			refused = &c
		}
		if c.Hook == "UpdateMachine" {
			return fmt.Errorf("UpdateMachine called for a refused change: %+v", c)
		}
	}
	if refused == nil || refused.Accepted || strings.Join(refused.Refused, ",") != "infrastructureMachineTemplate/spec/template/spec/flavor" {
		return fmt.Errorf("CanUpdateMachineSet: want a call refusing spec.template.spec.flavor, got %+v", refused)
	}
	fmt.Printf("  CanUpdateMachineSet refused %v; Machine %s replaced by %s in a new MachineSet\n", refused.Refused, first, second)

	// Clean up: the Cluster's deletion later must not wait for these Machines.
	if err := s.kube.delete(ctx, clusterV, "MachineDeployment", ns, inplaceMD); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return eventually(timeoutLg, "the in-place MachineDeployment's Machines deleted", func() (bool, string) {
		ms := s.machines(ctx)
		return len(ms) == 0, fmt.Sprintf("%d Machines left", len(ms))
	})
}
