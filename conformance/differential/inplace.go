//go:build capiext_inplace

package main

// The in-place update handlers of CAPI's test extension, the port against the Go original,
// judged by Cluster API's own code: KubeadmControlPlane's canExtensionsUpdateMachine, the
// MachineDeployment rollout planner's canExtensionsUpdateMachineSet (each builds the request,
// calls the handler through CAPI's runtime client, applies the patches and matches the result
// with the desired objects) and the Machine reconciler's callUpdateMachineHook. Built only for
// the releases whose reconcilers the shims of conformance/differential/capi reach (v1.14 on).

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controlplane/kubeadm/reconcilers/kubeadmcontrolplane"
	"sigs.k8s.io/cluster-api/core/reconcilers/machine"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinedeployment"
	"sigs.k8s.io/cluster-api/feature"
)

// inPlaceCase is one change of a Machine (as KubeadmControlPlane sees it) or of a MachineSet's
// template (as a MachineDeployment rollout sees it) that both extensions are asked about.
type inPlaceCase struct {
	name     string
	settings map[string]string
	changes  []string
	// A control plane Machine: current and desired Machine, KubeadmConfig, infrastructure machine.
	machine, desiredMachine                    *clusterv1.Machine
	currentKubeadmConfig, desiredKubeadmConfig *bootstrapv1.KubeadmConfig
	currentInfra, desiredInfra                 *unstructured.Unstructured
	// Or a MachineSet: the old and new ones and their templates.
	oldMS, newMS                                       *clusterv1.MachineSet
	currentBootstrapTemplate, desiredBootstrapTemplate *unstructured.Unstructured
	currentInfraTemplate, desiredInfraTemplate         *unstructured.Unstructured
}

// inPlaceSpecs is what a draw sets: the fields each handler may update in place and some it
// may not.
type inPlaceSpecs struct {
	version, failureDomain string
	readinessGates         []string
	etcdImageTag           string
	files                  []bootstrapv1.File
	preKubeadmCommands     []string
	infraKind              string // DevMachine (docker or inMemory backend), DockerMachine
	inMemory               bool
	bootstrapTimeout       string // "" for none
	customImage            string
	extraMounts            []any
}

func drawSpecs(r *rand.Rand) inPlaceSpecs {
	s := inPlaceSpecs{
		version:            "v1.34.0",
		failureDomain:      pick(r, "fd-a", "fd-a", ""),
		etcdImageTag:       pick(r, "3.5.16-0", "3.5.16-0", ""),
		files:              []bootstrapv1.File{{Path: "/etc/a.conf", Content: "a"}},
		preKubeadmCommands: []string{"echo pre"},
		infraKind:          pick(r, "DevMachine", "DevMachine", "DevMachine", "DockerMachine"),
		bootstrapTimeout:   pick(r, "1m0s", "3m0s", ""),
		customImage:        "kindest/node:v1.34.0",
		extraMounts:        []any{map[string]any{"containerPath": "/var/run/docker.sock", "hostPath": "/var/run/docker.sock"}},
	}
	if r.Intn(3) == 0 {
		s.readinessGates = []string{"ready-a"}
	}
	s.inMemory = s.infraKind == "DevMachine" && r.Intn(8) == 0
	return s
}

func pick(r *rand.Rand, values ...string) string { return values[r.Intn(len(values))] }

// change draws one change of the specs; it returns what it changed.
func change(r *rand.Rand, s *inPlaceSpecs) string {
	switch r.Intn(11) {
	case 0:
		s.version = pick(r, "v1.34.1", "v1.35.0")
		return "version"
	case 1:
		s.failureDomain = pick(r, "fd-b", "")
		return "failureDomain"
	case 2:
		s.etcdImageTag = pick(r, "3.5.17-0", "")
		return "etcd imageTag"
	case 3:
		switch r.Intn(3) {
		case 0:
			s.files = []bootstrapv1.File{{Path: "/etc/a.conf", Content: "b"}}
		case 1:
			s.files = append(s.files, bootstrapv1.File{Path: "/etc/b.conf", Content: "b", Owner: "root:root"})
		default:
			s.files = nil
		}
		return "files"
	case 4:
		// Canonical Go durations (how Go's metav1.Duration writes them) and one that is not.
		s.bootstrapTimeout = pick(r, "2m0s", "10m0s", "", "90s")
		return "bootstrapTimeout " + s.bootstrapTimeout
	case 5:
		s.preKubeadmCommands = []string{"echo other"}
		return "preKubeadmCommands"
	case 6:
		s.customImage = "kindest/node:v1.35.0"
		return "customImage"
	case 7:
		s.extraMounts = nil
		return "extraMounts"
	case 8:
		s.readinessGates = append(s.readinessGates, "ready-b")
		return "readinessGates"
	case 9:
		s.infraKind = map[string]string{"DevMachine": "DockerMachine", "DockerMachine": "DevMachine"}[s.infraKind]
		return "infrastructure kind"
	default:
		return ""
	}
}

func (s inPlaceSpecs) machineSpec(name string) clusterv1.MachineSpec {
	spec := clusterv1.MachineSpec{
		ClusterName: "c1",
		Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name}},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: s.infraKind, Name: name},
		Version:       s.version,
		FailureDomain: s.failureDomain,
	}
	for _, gate := range s.readinessGates {
		spec.ReadinessGates = append(spec.ReadinessGates, clusterv1.MachineReadinessGate{ConditionType: gate})
	}
	return spec
}

func (s inPlaceSpecs) kubeadmConfigSpec() bootstrapv1.KubeadmConfigSpec {
	spec := bootstrapv1.KubeadmConfigSpec{Files: s.files, PreKubeadmCommands: s.preKubeadmCommands}
	spec.ClusterConfiguration.Etcd.Local.ImageTag = s.etcdImageTag
	return spec
}

// infraSpec is the infrastructure machine's spec, as unstructured content.
func (s inPlaceSpecs) infraSpec() map[string]any {
	docker := map[string]any{"customImage": s.customImage}
	if s.extraMounts != nil {
		docker["extraMounts"] = s.extraMounts
	}
	if s.bootstrapTimeout != "" {
		docker["bootstrapTimeout"] = s.bootstrapTimeout
	}
	if s.infraKind == "DockerMachine" {
		return docker
	}
	if s.inMemory {
		return map[string]any{"backend": map[string]any{"inMemory": map[string]any{
			"vm": map[string]any{"provisioning": map[string]any{"startupDuration": "10s"}}}}}
	}
	return map[string]any{"backend": map[string]any{"docker": docker}}
}

func object(apiVersion, kind, name string, labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetName(name)
	u.SetNamespace(namespace)
	u.SetLabels(labels)
	return u
}

func kubeadmConfigTemplate(name string, s inPlaceSpecs) *unstructured.Unstructured {
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptrTo(s.kubeadmConfigSpec()))
	must(err)
	return object(bootstrapv1.GroupVersion.String(), "KubeadmConfigTemplate", name, nil, map[string]any{"template": map[string]any{"spec": spec}})
}

func ptrTo[T any](v T) *T { return &v }

// inPlaceCases draws n cases from seed, a Machine and a MachineSet in turn.
func inPlaceCases(seed int64, n int) []*inPlaceCase {
	cases := make([]*inPlaceCase, n)
	for i := range cases {
		r := rand.New(rand.NewSource(seed*100_003 + int64(i)))
		current := drawSpecs(r)
		desired := current
		var changes []string
		for range 1 + r.Intn(3) {
			if what := change(r, &desired); what != "" {
				changes = append(changes, what)
			}
		}
		c := &inPlaceCase{name: fmt.Sprintf("inplace-%d-%d", seed, i), changes: changes}
		cases[i] = c
		if r.Intn(10) == 0 {
			c.settings = map[string]string{"disableInPlaceUpdates": "true"}
			c.changes = append(c.changes, "disableInPlaceUpdates")
		}
		labels := map[string]string{clusterv1.ClusterNameLabel: "c1"}
		if i%2 == 0 {
			name := fmt.Sprintf("m-%d-%d", seed, i)
			meta := metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}
			c.machine = &clusterv1.Machine{ObjectMeta: meta, Spec: current.machineSpec(name)}
			c.desiredMachine = &clusterv1.Machine{ObjectMeta: meta, Spec: desired.machineSpec(name)}
			c.currentKubeadmConfig = &bootstrapv1.KubeadmConfig{ObjectMeta: meta, Spec: current.kubeadmConfigSpec()}
			c.desiredKubeadmConfig = &bootstrapv1.KubeadmConfig{ObjectMeta: meta, Spec: desired.kubeadmConfigSpec()}
			// A control plane Machine that joined, as KubeadmControlPlane computes its config.
			c.currentKubeadmConfig.Spec.JoinConfiguration.ControlPlane = &bootstrapv1.JoinControlPlane{}
			c.desiredKubeadmConfig.Spec.JoinConfiguration.ControlPlane = &bootstrapv1.JoinControlPlane{}
			c.currentInfra = object("infrastructure.cluster.x-k8s.io/v1beta2", current.infraKind, name, labels, current.infraSpec())
			c.desiredInfra = object("infrastructure.cluster.x-k8s.io/v1beta2", desired.infraKind, name, labels, desired.infraSpec())
			continue
		}
		ms := func(name string, s inPlaceSpecs) *clusterv1.MachineSet {
			return &clusterv1.MachineSet{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
				Spec: clusterv1.MachineSetSpec{ClusterName: "c1", Replicas: ptrTo(int32(1)),
					Template: clusterv1.MachineTemplateSpec{Spec: s.machineSpec(name + "-template")}},
			}
		}
		c.oldMS, c.newMS = ms(fmt.Sprintf("ms-old-%d-%d", seed, i), current), ms(fmt.Sprintf("ms-new-%d-%d", seed, i), desired)
		c.currentBootstrapTemplate = kubeadmConfigTemplate(c.oldMS.Name, current)
		c.desiredBootstrapTemplate = kubeadmConfigTemplate(c.newMS.Name, desired)
		c.currentInfraTemplate = object("infrastructure.cluster.x-k8s.io/v1beta2", current.infraKind+"Template", c.oldMS.Name, nil,
			map[string]any{"template": map[string]any{"spec": current.infraSpec()}})
		c.desiredInfraTemplate = object("infrastructure.cluster.x-k8s.io/v1beta2", desired.infraKind+"Template", c.newMS.Name, nil,
			map[string]any{"template": map[string]any{"spec": desired.infraSpec()}})
		if r.Intn(10) == 0 {
			// A MachineSet without a bootstrap config: CAPI sends no bootstrap templates.
			c.oldMS.Spec.Template.Spec.Bootstrap = clusterv1.Bootstrap{DataSecretName: ptrTo("data")}
			c.newMS.Spec.Template.Spec.Bootstrap = clusterv1.Bootstrap{DataSecretName: ptrTo("data")}
			c.currentBootstrapTemplate, c.desiredBootstrapTemplate = nil, nil
			c.changes = append(c.changes, "no bootstrap config")
		}
	}
	return cases
}

// inPlaceOutcome is what CAPI concluded from one extension's answers.
type inPlaceOutcome struct {
	CanUpdate bool
	Reasons   []string
	Err       string
	// For a Machine that can be updated: what callUpdateMachineHook made of two calls
	// (requeue after, message, error).
	Updates []string
}

func judgeInPlace(ctx context.Context, rc runtimeClientWithConfig, c *inPlaceCase) inPlaceOutcome {
	config := rc.discovered.DeepCopy()
	config.Spec.Settings = c.settings
	must(rc.client.Register(config))
	var out inPlaceOutcome
	var err error
	if c.machine != nil {
		// createRequest's server-side-apply dry-runs: the objects are taken as the API server
		// stored them (no defaulting here).
		dryRun := interceptor.NewClient(fake.NewClientBuilder().WithScheme(rc.scheme).Build(), interceptor.Funcs{
			Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
				return nil
			},
		})
		out.CanUpdate, out.Reasons, err = kubeadmcontrolplane.CapiExtCanExtensionsUpdateMachine(ctx, dryRun, rc.client, "can-update-machine."+extensionName,
			c.machine.DeepCopy(), c.desiredMachine.DeepCopy(), c.currentKubeadmConfig.DeepCopy(), c.desiredKubeadmConfig.DeepCopy(),
			c.currentInfra.DeepCopy(), c.desiredInfra.DeepCopy())
		if err == nil {
			bootstrap, convErr := runtime.DefaultUnstructuredConverter.ToUnstructured(c.desiredKubeadmConfig)
			must(convErr)
			kubeadmConfig := &unstructured.Unstructured{Object: bootstrap}
			kubeadmConfig.SetAPIVersion(bootstrapv1.GroupVersion.String())
			kubeadmConfig.SetKind("KubeadmConfig")
			for range 2 {
				after, message, updateErr := machine.CapiExtCallUpdateMachineHook(ctx, rc.client, c.desiredMachine.DeepCopy(), c.desiredInfra.DeepCopy(), kubeadmConfig)
				out.Updates = append(out.Updates, fmt.Sprintf("after %s %q error=%v", after, message, updateErr != nil))
			}
		}
	} else {
		var current, desired *unstructured.Unstructured
		if c.currentBootstrapTemplate != nil {
			current, desired = c.currentBootstrapTemplate.DeepCopy(), c.desiredBootstrapTemplate.DeepCopy()
		}
		out.CanUpdate, out.Reasons, err = machinedeployment.CapiExtCanExtensionsUpdateMachineSet(ctx, rc.client, "can-update-machineset."+extensionName,
			c.oldMS.DeepCopy(), c.newMS.DeepCopy(), current, desired, c.currentInfraTemplate.DeepCopy(), c.desiredInfraTemplate.DeepCopy())
	}
	if err != nil {
		out.Err = err.Error()
	}
	return out
}

// runInPlacePeer asks both extensions about n cases of each seed under CAPI's code; the
// outcomes must be the same (an error on both sides counts as the same: the messages are each
// extension's own). It returns whether every case agreed.
func runInPlacePeer(port, goes options, seeds []int64, n, parallel int) bool {
	must(feature.MutableGates.Set("InPlaceUpdates=true"))
	var cases []*inPlaceCase
	for _, seed := range seeds {
		cases = append(cases, inPlaceCases(seed, n)...)
	}
	start := time.Now()
	outcomes := make([][2]inPlaceOutcome, len(cases))
	inParallel(len(cases), parallel, func(ctx context.Context) func(int) result {
		p, g := newRuntimeClient(ctx, port), newRuntimeClient(ctx, goes)
		return func(i int) result {
			outcomes[i] = [2]inPlaceOutcome{judgeInPlace(ctx, p, cases[i]), judgeInPlace(ctx, g, cases[i])}
			return result{}
		}
	})
	counts := map[string]int{}
	var mismatches []string
	for i, c := range cases {
		portOut, goOut := outcomes[i][0], outcomes[i][1]
		kind := "MachineSet"
		if c.machine != nil {
			kind = "Machine"
		}
		same := portOut.CanUpdate == goOut.CanUpdate && reflect.DeepEqual(portOut.Reasons, goOut.Reasons) &&
			(portOut.Err == "") == (goOut.Err == "") && reflect.DeepEqual(portOut.Updates, goOut.Updates)
		switch {
		case !same:
			mismatches = append(mismatches, fmt.Sprintf("MISMATCH %s (%s; %s):\n  Go:   %+v\n  port: %+v", c.name, kind, strings.Join(c.changes, ", "), goOut, portOut))
		case goOut.Err != "":
			counts[kind+": refused by both"]++
		case goOut.CanUpdate:
			counts[kind+": in place"]++
		default:
			counts[kind+": rolled out"]++
		}
	}
	sort.Strings(mismatches)
	for i, m := range mismatches {
		if i == 10 {
			fmt.Printf("... and %d more\n", len(mismatches)-10)
			break
		}
		fmt.Println(m)
	}
	var parts []string
	for _, k := range []string{"Machine: in place", "Machine: rolled out", "Machine: refused by both", "MachineSet: in place", "MachineSet: rolled out", "MachineSet: refused by both"} {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	fmt.Printf("in-place updates: %d cases in %.1fs (seeds %v), CAPI's verdict the same for the port and Go's: %s; %d mismatches\n",
		len(cases), time.Since(start).Seconds(), seeds, strings.Join(parts, ", "), len(mismatches))
	if len(mismatches) > 0 {
		fmt.Fprintln(os.Stderr, "the in-place update handlers of the port and of Go's test extension disagree (above)")
	}
	return len(mismatches) == 0
}
