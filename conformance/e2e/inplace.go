package main

import (
	"capi-ext.local/devenv"
	"context"
	"fmt"
	"strings"

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

// startFakeMachines plays the bootstrap and infrastructure providers and the kubelet for every
// Machine of the namespace (devenv.Providers): bootstrap data, a provider ID, provisioned, and a
// Ready Node. For a KubeadmControlPlane's Machines it also plays kubeadm (devenv.Kubeadm, with
// kcp.go's external etcd): the Node
// labelled and tainted as a control plane Node, its static Pods running, the kubeadm-config
// ConfigMap.
func (s *scenarios) startFakeMachines(ctx context.Context) *devenv.Player {
	return s.providers().Start(ctx)
}

// providers plays the providers of the namespace's Machines.
func (s *scenarios) providers() *devenv.Providers {
	return &devenv.Providers{Kube: s.kube, Namespace: ns, Kubeconfig: s.kubeconfig, JoinControlPlane: devenv.Kubeadm{Kube: s.kube, Etcd: externalEtcd}.Joined}
}

// inplaceDiscovery registers the in-place extension.
func (s *scenarios) inplaceDiscovery(ctx context.Context) error {
	want := "can-update-machine-set.inplace,can-update-machine.inplace,update-machine.inplace"
	return s.registerExtension(ctx, inplaceExt, s.inplaceURL, "", want, func(h []string) bool { return strings.Join(h, ",") == want })
}

// machineSets returns the MachineSets of the in-place MachineDeployment by name, with their
// spec.replicas.
func (s *scenarios) machineSets(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	l, _ := s.kube.List(ctx, clusterV, "MachineSet", ns, map[string]string{"cluster.x-k8s.io/deployment-name": inplaceMD})
	for _, ms := range l {
		n, _, _ := unstructured.NestedInt64(ms.Object, "spec", "replicas")
		out[ms.GetName()] = n
	}
	return out
}

// machines returns the Machines of the in-place MachineDeployment.
func (s *scenarios) machines(ctx context.Context) []unstructured.Unstructured {
	l, _ := s.kube.List(ctx, clusterV, "Machine", ns, map[string]string{"cluster.x-k8s.io/deployment-name": inplaceMD})
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
	st, reason, msg := Condition(m, "Updating")
	_, inProgress := m.GetAnnotations()["cluster.x-k8s.io/update-in-progress"]
	return fmt.Sprintf("%s (MachineSet %s, node %q, Updating=%s/%s %q, update-in-progress=%t, pending-hooks=%q)",
		m.GetName(), owner(m), node, st, reason, msg, inProgress, m.GetAnnotations()[pending])
}

// infraTemplate creates a GenericInfrastructureMachineTemplate of the in-place MachineDeployment.
func (s *scenarios) infraTemplate(ctx context.Context, name, flavor, motd string) error {
	_, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %s
kind: GenericInfrastructureMachineTemplate
metadata: {name: %s, namespace: %s}
spec: {template: {spec: {flavor: %s, inPlace: {motd: %s}}}}
`, infraV, name, ns, flavor, motd))
	return err
}

// useTemplate points the MachineDeployment at another infrastructure machine template, which
// CAPI answers with a new MachineSet.
func (s *scenarios) useTemplate(ctx context.Context, name string) error {
	return s.kube.MergePatch(ctx, clusterV, "MachineDeployment", ns, inplaceMD,
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
	defer providers.Close()

	if err := s.infraTemplate(ctx, "inplace-1", "small", "one"); err != nil {
		return err
	}
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %[1]s
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
	if err := Eventually(timeoutLg, "one Machine with a Node", func() (bool, string) {
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
	if err := s.kube.MergePatch(ctx, clusterV, "Machine", ns, first, fmt.Sprintf(`{"metadata":{"annotations":{%q:"UpdateMachine"}}}`, holdAnnotation), false); err != nil {
		return err
	}
	if err := s.infraTemplate(ctx, "inplace-2", "small", "two"); err != nil {
		return err
	}
	if err := s.useTemplate(ctx, "inplace-2"); err != nil {
		return err
	}
	var newSet string
	if err := Eventually(timeoutLg, "the Machine moved to the new MachineSet and held in UpdateMachine", func() (bool, string) {
		ms := s.machines(ctx)
		if len(ms) != 1 {
			return false, fmt.Sprintf("%d Machines", len(ms))
		}
		m := &ms[0]
		st, reason, msg := Condition(m, "Updating")
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

	if err := s.kube.MergePatch(ctx, clusterV, "Machine", ns, first, fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, holdAnnotation), false); err != nil {
		return err
	}
	if err := Eventually(timeoutLg, "the in-place update done, no new Machine", func() (bool, string) {
		ms := s.machines(ctx)
		if len(ms) != 1 {
			return false, fmt.Sprintf("%d Machines", len(ms))
		}
		m := &ms[0]
		st, _, _ := Condition(m, "Updating")
		_, inProgress := m.GetAnnotations()["cluster.x-k8s.io/update-in-progress"]
		infra, err := s.kube.Get(ctx, infraV, "GenericInfrastructureMachine", ns, m.GetName())
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
	if err := Eventually(timeoutLg, "a new Machine replacing the refused one", func() (bool, string) {
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
	if err := s.kube.Delete(ctx, clusterV, "MachineDeployment", ns, inplaceMD); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return Eventually(timeoutLg, "the in-place MachineDeployment's Machines deleted", func() (bool, string) {
		ms := s.machines(ctx)
		return len(ms) == 0, fmt.Sprintf("%d Machines left", len(ms))
	})
}
