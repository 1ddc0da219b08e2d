package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const (
	namespace     = "default"
	extensionName = "diff"
	infraGroup    = "infrastructure.cluster.x-k8s.io/v1beta2"
	cpGroup       = "controlplane.cluster.x-k8s.io/v1beta2"
	bootGroup     = "bootstrap.cluster.x-k8s.io/v1beta2"
)

type obj = map[string]any

// testCase is one generated topology: a new Cluster, its ClusterClass, the templates and the
// ExtensionConfig's settings.
type testCase struct {
	name         string
	cluster      obj
	clusterClass obj
	templates    []obj
	settings     map[string]string
	// The CRDs of the template kinds (nil: CAPI's Generic test kinds).
	crds []*apiextensionsv1.CustomResourceDefinition
	// Where a case of a real ClusterClass comes from.
	origin string
	// What both sides must do: expectComputed, a step to be refused at, or expectBounded.
	expect string
	// For a generated topology (expectBounded), the steps its invalid draws may make both
	// sides refuse at: a refusal at any other step is a mismatch. nil: any step (an edit past
	// creation).
	mayRefuse map[string]bool
	// The kind of value (gen.value) of each variable the class defines, inline or discovered;
	// nil for CAPI's own classes.
	variableKinds map[string]string
	// The lifecycle hooks the extension blocks for this Cluster (its blockingAnnotation),
	// given to render with --blocking-hook.
	blocking []string
}

func (tc *testCase) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	extensionConfig := obj{
		"apiVersion": "runtime.cluster.x-k8s.io/v1beta2", "kind": "ExtensionConfig",
		"metadata": obj{"name": extensionName},
		"spec":     obj{"clientConfig": obj{"url": "https://127.0.0.1"}, "settings": tc.settings},
	}
	files := map[string][]obj{
		"cluster.yaml":         {tc.cluster},
		"clusterclass.yaml":    {tc.clusterClass},
		"templates.yaml":       tc.templates,
		"extensionconfig.yaml": {extensionConfig},
	}
	for file, objects := range files {
		var docs []string
		for _, o := range objects {
			b, err := yaml.Marshal(o)
			if err != nil {
				return err
			}
			docs = append(docs, string(b))
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// refusalBounds is the share of the generated topologies each step may refuse (both sides
// alike, at the same step). A generated topology may be refused only at a step one of its
// invalid draws aims at (gen.mayRefuse, checked per case by judge): a value out of its schema
// (2% of the values set), a required variable (5% of the definitions) the Cluster may leave
// unset (variable values); a `remove` of a field the template may lack (3% of the JSON patch
// operations), a label added where the template may have no labels (3%), a variable an inline
// patch cannot see (3% of the `valueFrom.variable`s), a template that fails on some values
// (failingTemplates) (patches); the region the extension's ValidateTopology forbids (5% of the
// regions) (ValidateTopology); none at the variable definitions. The bounds keep the run's
// power (most topologies must be computed). Measured on seeds 1 and 101: v1.14.2 (800
// topologies) variable values 10.6%, patches 11.3%, ValidateTopology 0.6%; v1.13.6 and
// v1.12.5 (200 each) variable values 9% and 10.5%, patches 18% and 16%. Patches refuse more
// before v1.14 because CAPI sends those releases' patches the templates without
// spec.template.metadata, so every label added there fails (v1.13.6: 12 of 36 patch refusals,
// v1.14.2: 15 of 90); the bounds are those shares and about four standard deviations of a
// 200-topology run.
var refusalBounds = map[string]float64{
	stepValues:      0.20,
	stepPatches:     0.22,
	stepValidate:    0.03,
	stepDefinitions: 0,
}

// gen draws one topology. The draws favour valid topologies (most cases must render) and put
// a few invalid ones in (a bad variable value, a missing variable), which both sides must refuse.
type gen struct {
	r *rand.Rand
	// The steps the invalid draws made so far may be refused at (testCase.mayRefuse).
	mayRefuse map[string]bool
	// The user variables defined inline and discovered from the extension, by name: their
	// kind. Inline patches see only the inline ones (CAPI gives each patch the variables of
	// its own definitions).
	inline, external map[string]string
	// The class names.
	mdClasses, mpClasses []string
	// Whether the Cluster sets the control plane's replicas, and per MD/MP topology.
	cpReplicas bool
	// Whether the class gives the control plane machine infrastructure (a control plane
	// health check needs it).
	cpMachines bool
	templates  []obj
	// Whether the release's topology API has machine taints and the control plane's rollout
	// date (v1.13 and later).
	taints bool
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(options ...string) string { return options[g.r.Intn(len(options))] }

func generate(r *rand.Rand, name, capiVersion string) *testCase {
	g := &gen{r: r, mayRefuse: map[string]bool{}, inline: map[string]string{}, external: map[string]string{}, taints: !strings.HasPrefix(capiVersion, "v1.12.")}
	className := "cc-" + name
	clusterName := "c-" + name
	if g.chance(0.1) {
		// Long enough that CAPI's generated names pass 63 characters and are cut.
		clusterName = "a-cluster-with-a-rather-long-name-for-testing-" + name
	}

	// Templates, one per reference; some classes share one.
	infra := g.template(infraGroup, "GenericInfrastructureClusterTemplate", className+"-infra")
	cp := g.template(cpGroup, "GenericControlPlaneTemplate", className+"-cp")
	spec := obj{
		"infrastructure": obj{"templateRef": ref(infra)},
		"controlPlane":   obj{"templateRef": ref(cp)},
	}
	cpClass := spec["controlPlane"].(obj)
	if g.chance(0.8) {
		cpMachine := g.template(infraGroup, "GenericInfrastructureMachineTemplate", className+"-cp-machine")
		cpClass["machineInfrastructure"] = obj{"templateRef": ref(cpMachine)}
		g.cpMachines = true
		g.healthCheck(cpClass, "cc-cp", false, false)
	}
	if m := g.metadata("cc-cp"); m != nil {
		cpClass["metadata"] = m
	}
	g.machineFields(cpClass, "cc-cp")
	if g.chance(0.4) {
		cpClass["naming"] = obj{"template": g.pick("{{ .cluster.name }}-cp-{{ .random }}", "cp-{{ .random }}-{{ .cluster.name }}")}
	}
	if g.chance(0.4) {
		spec["infrastructure"].(obj)["naming"] = obj{"template": "{{ .cluster.name }}-infra-{{ .random }}"}
	}
	workers := obj{}
	var sharedBootstrap obj
	for i := 0; i < 1+g.r.Intn(3); i++ {
		class := fmt.Sprintf("md-class-%d", i)
		g.mdClasses = append(g.mdClasses, class)
		bootstrap := sharedBootstrap
		if bootstrap == nil || g.chance(0.6) {
			bootstrap = g.template(bootGroup, "GenericBootstrapConfigTemplate", className+"-"+class+"-bootstrap")
			sharedBootstrap = bootstrap
		}
		machine := g.template(infraGroup, "GenericInfrastructureMachineTemplate", className+"-"+class+"-machine")
		mdClass := obj{"class": class, "bootstrap": obj{"templateRef": ref(bootstrap)}, "infrastructure": obj{"templateRef": ref(machine)}}
		if m := g.metadata("cc-md"); m != nil {
			mdClass["metadata"] = m
		}
		if g.chance(0.4) {
			mdClass["naming"] = obj{"template": g.pick("{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}", "{{ .machineDeployment.topologyName }}-{{ .random }}")}
		}
		g.workerFields(mdClass, "cc-md", false)
		g.healthCheck(mdClass, "cc-md", true, false)
		workers["machineDeployments"] = append(list(workers["machineDeployments"]), mdClass)
	}
	for i := 0; i < g.r.Intn(3); i++ {
		class := fmt.Sprintf("mp-class-%d", i)
		g.mpClasses = append(g.mpClasses, class)
		bootstrap := g.template(bootGroup, "GenericBootstrapConfigTemplate", className+"-"+class+"-bootstrap")
		pool := g.template(infraGroup, "GenericInfrastructureMachinePoolTemplate", className+"-"+class+"-pool")
		mpClass := obj{"class": class, "bootstrap": obj{"templateRef": ref(bootstrap)}, "infrastructure": obj{"templateRef": ref(pool)}}
		if m := g.metadata("cc-mp"); m != nil {
			mpClass["metadata"] = m
		}
		if g.chance(0.4) {
			mpClass["naming"] = obj{"template": "{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}"}
		}
		g.poolFields(mpClass, "cc-mp")
		workers["machinePools"] = append(list(workers["machinePools"]), mpClass)
	}
	spec["workers"] = workers

	spec["variables"] = g.inlineVariables()
	g.cpReplicas = g.chance(0.6)
	var patches []any
	external := 0
	for i := 0; i < 5; i++ {
		if g.chance(0.45) {
			external++
			patches = append(patches, g.externalPatch(external))
		}
		if g.chance(0.55) {
			patches = append(patches, g.inlinePatch(i))
		}
	}
	if len(patches) > 0 {
		spec["patches"] = patches
	}
	settings := map[string]string{"owner": "extensionconfig"}
	if g.chance(0.3) {
		settings["key"] = "fromExtensionConfig"
	}
	clusterClass := obj{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
		"metadata": obj{"name": className, "namespace": namespace},
		"spec":     spec,
	}
	kinds := map[string]string{}
	for name, kind := range g.inline {
		kinds[name] = kind
	}
	for name, kind := range g.external {
		kinds[name] = kind
	}
	return &testCase{name: name, cluster: g.cluster(clusterName, className), clusterClass: clusterClass, templates: g.templates, settings: settings, mayRefuse: g.mayRefuse, variableKinds: kinds}
}

func ref(template obj) obj {
	return obj{"apiVersion": template["apiVersion"], "kind": template["kind"], "name": template["metadata"].(obj)["name"]}
}

func list(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return nil
}

func (g *gen) template(apiVersion, kind, name string) obj {
	spec := obj{"base": "base-" + name, "nested": obj{"a": obj{"b": float64(g.r.Intn(5))}}}
	if g.chance(0.7) {
		spec["removable"] = "yes"
	}
	if g.chance(0.5) {
		spec["items"] = []any{"one", "two"}
	}
	template := obj{"spec": spec}
	if m := g.metadata("tpl"); m != nil {
		template["metadata"] = m
	}
	t := obj{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": obj{"name": name, "namespace": namespace},
		"spec":     obj{"template": template},
	}
	if g.chance(0.3) {
		t["metadata"].(obj)["labels"] = obj{"template-owner": "platform"}
	}
	g.templates = append(g.templates, t)
	return t
}

// metadata draws labels and annotations (or nothing).
func (g *gen) metadata(prefix string) obj {
	if g.chance(0.5) {
		return nil
	}
	m := obj{}
	if g.chance(0.7) {
		m["labels"] = obj{prefix + "-label": g.pick("a", "b", "c")}
	}
	if g.chance(0.5) {
		m["annotations"] = obj{prefix + "-annotation": g.pick("x", "y z")}
	}
	return m
}

// machineFields draws the machine fields a ClusterClass's or a Cluster's control plane may
// set, which CAPI copies into the control plane object (the Cluster's win): readiness gates,
// taints (from v1.13) and deletion timeouts.
func (g *gen) machineFields(into obj, prefix string) {
	if g.chance(0.25) {
		gate := obj{"conditionType": prefix + "-ready"}
		if g.chance(0.5) {
			gate["polarity"] = g.pick("Positive", "Negative")
		}
		into["readinessGates"] = []any{gate}
	}
	if g.taints && g.chance(0.25) {
		taint := obj{"key": prefix + ".example.com/role", "effect": g.pick("NoSchedule", "PreferNoSchedule", "NoExecute"), "propagation": g.pick("Always", "OnInitialization")}
		if g.chance(0.5) {
			taint["value"] = g.pick("control-plane", "x")
		}
		into["taints"] = []any{taint}
	}
	if g.chance(0.3) {
		deletion := obj{}
		for _, field := range []string{"nodeDrainTimeoutSeconds", "nodeVolumeDetachTimeoutSeconds", "nodeDeletionTimeoutSeconds"} {
			if g.chance(0.5) {
				deletion[field] = float64(g.r.Intn(4000))
			}
		}
		into["deletion"] = deletion
	}
}

// workerFields draws what a ClusterClass's MachineDeployment class or a Cluster's
// MachineDeployment topology may set and CAPI copies into the MachineDeployment (the
// topology's win): the machine fields, the deletion order, failure domain, minReadySeconds and
// rollout strategy; a topology's rollout date too (from v1.13).
func (g *gen) workerFields(into obj, prefix string, topology bool) {
	g.machineFields(into, prefix)
	if g.chance(0.2) {
		deletion, _ := into["deletion"].(obj)
		if deletion == nil {
			deletion = obj{}
		}
		deletion["order"] = g.pick("Random", "Newest", "Oldest")
		into["deletion"] = deletion
	}
	if g.chance(0.2) {
		into["failureDomain"] = g.pick("fd-a", "fd-b")
	}
	if g.chance(0.2) {
		into["minReadySeconds"] = float64(g.r.Intn(30))
	}
	rollout := obj{}
	if g.chance(0.25) {
		strategy := obj{}
		switch g.r.Intn(3) {
		case 0:
			strategy["type"] = "OnDelete"
		case 1:
			strategy["type"] = "RollingUpdate"
			fallthrough
		default:
			rolling := obj{}
			if g.chance(0.6) {
				rolling["maxSurge"] = g.intOrPercent()
			}
			if g.chance(0.6) {
				rolling["maxUnavailable"] = g.intOrPercent()
			}
			if len(rolling) > 0 {
				strategy["rollingUpdate"] = rolling
			}
		}
		rollout["strategy"] = strategy
	}
	if topology && g.taints && g.chance(0.15) {
		// CAPI copies it as given; the API server stores it in UTC to the second.
		rollout["after"] = g.pick("2026-01-02T15:04:05Z", "2026-07-01T08:00:00+02:00")
	}
	if len(rollout) > 0 {
		into["rollout"] = rollout
	}
}

// poolFields draws what a ClusterClass's MachinePool class or a Cluster's MachinePool topology
// may set and CAPI copies into the MachinePool (the topology's win): deletion timeouts, taints
// (from v1.13), failure domains and minReadySeconds.
func (g *gen) poolFields(into obj, prefix string) {
	g.machineFields(into, prefix)
	delete(into, "readinessGates") // not a field of a MachinePool's class or topology
	if g.chance(0.2) {
		into["failureDomains"] = []any{g.pick("fd-a", "fd-b")}
		if g.chance(0.3) {
			into["failureDomains"] = []any{"fd-a", "fd-b"}
		}
	}
	if g.chance(0.2) {
		into["minReadySeconds"] = float64(g.r.Intn(30))
	}
}

// healthCheck draws a health check of a ClusterClass's control plane or MachineDeployment
// class, or of a Cluster's topology (which may also disable one), each valid for the Cluster
// webhook: CAPI makes a MachineHealthCheck of it; a MachineDeployment's remediation.maxInFlight
// also lands in the MachineDeployment.
func (g *gen) healthCheck(into obj, prefix string, machineDeployment, topology bool) {
	if !g.chance(0.35) {
		if topology && g.chance(0.1) {
			into["healthCheck"] = obj{"enabled": false}
		}
		return
	}
	checks := obj{}
	if g.chance(0.5) {
		checks["nodeStartupTimeoutSeconds"] = float64(30 + g.r.Intn(1200))
		if g.chance(0.2) {
			checks["nodeStartupTimeoutSeconds"] = float64(0)
		}
	}
	if g.chance(0.5) {
		checks["unhealthyNodeConditions"] = []any{obj{"type": "Ready", "status": g.pick("Unknown", "False"), "timeoutSeconds": float64(60 + g.r.Intn(300))}}
	}
	if g.chance(0.3) {
		checks["unhealthyMachineConditions"] = []any{obj{"type": prefix + "-healthy", "status": "False", "timeoutSeconds": float64(g.r.Intn(600))}}
	}
	remediation := obj{}
	if g.chance(0.4) {
		if g.chance(0.5) {
			remediation["triggerIf"] = obj{"unhealthyLessThanOrEqualTo": g.intOrPercent()}
		} else {
			remediation["triggerIf"] = obj{"unhealthyInRange": g.pick("[1-3]", "[0-10]")}
		}
	}
	if g.chance(0.2) {
		remediation["templateRef"] = obj{"kind": "GenericRemediationTemplate", "name": prefix + "-remediation", "apiVersion": "remediation.example.com/v1beta1"}
	}
	if machineDeployment && g.chance(0.3) {
		remediation["maxInFlight"] = g.intOrPercent()
	}
	healthCheck := obj{}
	if len(checks) > 0 {
		healthCheck["checks"] = checks
	}
	if len(remediation) > 0 {
		healthCheck["remediation"] = remediation
	}
	if len(healthCheck) == 0 {
		return
	}
	if topology && g.chance(0.2) {
		healthCheck["enabled"] = g.chance(0.5)
	}
	into["healthCheck"] = healthCheck
}

// intOrPercent is a rolling update's maxSurge or maxUnavailable: a number or a percentage.
func (g *gen) intOrPercent() any {
	if g.chance(0.5) {
		return float64(1 + g.r.Intn(3))
	}
	return g.pick("25%", "50%")
}

// inlineVariables defines some of a fixed set of variables in the ClusterClass.
func (g *gen) inlineVariables() []any {
	all := []struct {
		name, kind string
		schema     obj
	}{
		{"size", "enum", obj{"type": "string", "enum": []any{"small", "medium", "large"}, "default": "medium"}},
		{"cpu", "int", obj{"type": "integer", "minimum": 1, "maximum": 64, "default": 2}},
		{"ha", "bool", obj{"type": "boolean", "default": false}},
		{"tags", "array", obj{"type": "array", "items": obj{"type": "string"}, "maxItems": 4, "default": []any{"a", "b"}}},
		{"net", "object", obj{"type": "object", "default": obj{},
			"properties": obj{
				"cidr": obj{"type": "string", "default": "10.0.0.0/16"},
				"mtu":  obj{"type": "integer", "default": 1500},
			},
			"x-kubernetes-validations": []any{obj{"rule": "self.mtu >= 1280", "message": "mtu must be at least 1280"}},
		}},
	}
	var out []any
	for _, v := range all {
		if !g.chance(0.75) {
			continue
		}
		g.inline[v.name] = v.kind
		definition := obj{"name": v.name, "required": false, "schema": obj{"openAPIV3Schema": v.schema}}
		if g.chance(0.05) {
			// Left unset by the Cluster half of the time.
			definition["required"] = true
			g.mayRefuse[stepValues] = true
		}
		out = append(out, definition)
	}
	return out
}

func (g *gen) externalPatch(n int) obj {
	prefix := fmt.Sprintf("p%d", n)
	settings := obj{"prefix": prefix}
	if g.chance(0.6) {
		settings["key"] = fmt.Sprintf("e%d", n)
	}
	if g.chance(0.4) {
		settings["patchType"] = "merge"
	}
	external := obj{"generatePatchesExtension": "echo." + extensionName, "settings": settings}
	if g.chance(0.85) {
		external["discoverVariablesExtension"] = "variables." + extensionName
		g.external[prefix+"Region"] = "region"
		g.external[prefix+"Replicas"] = "replicas"
		g.external[prefix+"Proxy"] = "proxy"
	}
	if g.chance(0.5) {
		external["validateTopologyExtension"] = "validate." + extensionName
	}
	p := obj{"name": fmt.Sprintf("external-%d", n), "external": external}
	if g.chance(0.2) {
		p["enabledIf"] = g.enabledIf()
	}
	return p
}

// targets are what an inline patch's selector picks: the templates of one role.
var targets = []string{"infrastructureCluster", "controlPlane", "controlPlaneMachine", "mdBootstrap", "mdMachine", "mpBootstrap", "mpPool"}

func (g *gen) inlinePatch(i int) obj {
	var definitions []any
	for d := 0; d < 1+g.r.Intn(2); d++ {
		target := targets[g.r.Intn(len(targets))]
		var jsonPatches []any
		for j := 0; j < 1+g.r.Intn(3); j++ {
			jsonPatches = append(jsonPatches, g.jsonPatch(target, fmt.Sprintf("inline%d_%d_%d", i, d, j)))
		}
		definitions = append(definitions, obj{"selector": g.selector(target), "jsonPatches": jsonPatches})
	}
	p := obj{"name": fmt.Sprintf("inline-%d", i), "definitions": definitions}
	if g.chance(0.3) {
		p["enabledIf"] = g.enabledIf()
	}
	return p
}

func (g *gen) classNames(classes []string) []any {
	switch {
	case g.chance(0.3) || len(classes) == 0:
		return []any{"*"}
	case g.chance(0.3):
		return []any{strings.SplitN(classes[0], "-class-", 2)[0] + "-class-*"}
	default:
		var names []any
		for _, c := range classes {
			if g.chance(0.6) {
				names = append(names, c)
			}
		}
		if len(names) == 0 {
			names = []any{classes[0]}
		}
		return names
	}
}

func (g *gen) selector(target string) obj {
	switch target {
	case "infrastructureCluster":
		return obj{"apiVersion": infraGroup, "kind": "GenericInfrastructureClusterTemplate", "matchResources": obj{"infrastructureCluster": true}}
	case "controlPlane":
		return obj{"apiVersion": cpGroup, "kind": "GenericControlPlaneTemplate", "matchResources": obj{"controlPlane": true}}
	case "controlPlaneMachine":
		return obj{"apiVersion": infraGroup, "kind": "GenericInfrastructureMachineTemplate", "matchResources": obj{"controlPlane": true}}
	case "mdBootstrap":
		return obj{"apiVersion": bootGroup, "kind": "GenericBootstrapConfigTemplate", "matchResources": obj{"machineDeploymentClass": obj{"names": g.classNames(g.mdClasses)}}}
	case "mdMachine":
		return obj{"apiVersion": infraGroup, "kind": "GenericInfrastructureMachineTemplate", "matchResources": obj{"machineDeploymentClass": obj{"names": g.classNames(g.mdClasses)}}}
	case "mpBootstrap":
		return obj{"apiVersion": bootGroup, "kind": "GenericBootstrapConfigTemplate", "matchResources": obj{"machinePoolClass": obj{"names": g.classNames(g.mpClasses)}}}
	default:
		return obj{"apiVersion": infraGroup, "kind": "GenericInfrastructureMachinePoolTemplate", "matchResources": obj{"machinePoolClass": obj{"names": g.classNames(g.mpClasses)}}}
	}
}

// variablePaths lists the variable paths that exist for templates of a target.
func (g *gen) variablePaths(target string) []string {
	paths := []string{"builtin.cluster.name", "builtin.cluster.namespace", "builtin.cluster.topology.version", "builtin.cluster.topology.class"}
	for name, kind := range g.inline {
		switch kind {
		case "object":
			paths = append(paths, name, name+".cidr", name+".mtu")
		default:
			paths = append(paths, name)
		}
	}
	switch target {
	case "controlPlane", "controlPlaneMachine":
		paths = append(paths, "builtin.controlPlane.version", "builtin.controlPlane.name")
		if g.cpReplicas {
			paths = append(paths, "builtin.controlPlane.replicas")
		}
		if target == "controlPlaneMachine" {
			paths = append(paths, "builtin.controlPlane.machineTemplate.infrastructureRef.name")
		}
	case "mdBootstrap", "mdMachine":
		paths = append(paths, "builtin.machineDeployment.class", "builtin.machineDeployment.topologyName", "builtin.machineDeployment.version", "builtin.machineDeployment.name")
		if target == "mdBootstrap" {
			paths = append(paths, "builtin.machineDeployment.bootstrap.configRef.name")
		} else {
			paths = append(paths, "builtin.machineDeployment.infrastructureRef.name")
		}
	case "mpBootstrap", "mpPool":
		paths = append(paths, "builtin.machinePool.class", "builtin.machinePool.topologyName", "builtin.machinePool.version", "builtin.machinePool.name")
	}
	// Map iteration order is random; sort so a seed always draws the same.
	sortStrings(paths)
	return paths
}

func (g *gen) jsonPatch(target, field string) obj {
	switch {
	case g.chance(0.1):
		return obj{"op": "replace", "path": "/spec/template/spec/base", "value": "replaced-" + field}
	case g.chance(0.03):
		// Fails where the template has no such field; both sides must then refuse.
		g.mayRefuse[stepPatches] = true
		return obj{"op": "remove", "path": "/spec/template/spec/removable"}
	case g.chance(0.08):
		return obj{"op": "add", "path": "/spec/template/spec/nested/a/c", "value": []any{"x", float64(1), true}}
	case g.chance(0.03):
		// Fails where the template has no labels.
		g.mayRefuse[stepPatches] = true
		return obj{"op": "add", "path": "/spec/template/metadata/labels/" + strings.ToLower(strings.ReplaceAll(field, "_", "-")),
			"valueFrom": obj{"variable": "builtin.cluster.name"}}
	}
	path := "/spec/template/spec/" + field
	switch g.r.Intn(3) {
	case 0:
		values := []any{"text", float64(42), true, obj{"k": "v", "n": obj{"m": float64(1)}}, []any{"a", float64(2)}}
		return obj{"op": "add", "path": path, "value": values[g.r.Intn(len(values))]}
	case 1:
		paths := g.variablePaths(target)
		variable := paths[g.r.Intn(len(paths))]
		if g.chance(0.03) {
			// Not there for an inline patch: both sides must refuse.
			variable = g.pick("notAVariable", "p1Region")
			g.mayRefuse[stepPatches] = true
		}
		return obj{"op": "add", "path": path, "valueFrom": obj{"variable": variable}}
	default:
		return obj{"op": "add", "path": path, "valueFrom": obj{"template": g.valueTemplate(target)}}
	}
}

// valueTemplate draws a Go template of the kind ClusterClass authors write.
func (g *gen) valueTemplate(target string) string {
	options := []string{
		"{{ .builtin.cluster.name }}-suffix",
		"{{ .builtin.cluster.topology.version | quote }}",
		"name: {{ .builtin.cluster.name }}\nversion: {{ .builtin.cluster.topology.version }}",
		"- {{ .builtin.cluster.namespace }}\n- {{ .builtin.cluster.topology.class }}",
		`{{ default "fallback" .notAVariable }}`,
		`{{ printf "%s/%s" .builtin.cluster.namespace .builtin.cluster.name }}`,
		`{{ upper .builtin.cluster.name }}`,
		`{{ replace "-" "_" .builtin.cluster.name }}`,
		`{{ if hasPrefix "v1.3" .builtin.cluster.topology.version }}new{{ else }}old{{ end }}`,
	}
	if _, ok := g.inline["size"]; ok {
		options = append(options, "{{ .size }}", `{{ if eq .size "large" }}big{{ else }}small{{ end }}`, `{{ upper .size | quote }}`)
	}
	if _, ok := g.inline["cpu"]; ok {
		options = append(options, "{{ .cpu }}", "cores: {{ .cpu }}", `{{ if gt .cpu 8.0 }}many{{ else }}few{{ end }}`,
			`{{ printf "%d-cores" .cpu }}`, `{{ printf "%v" .cpu }}`, `{{ add1 .cpu }}`, `{{ .cpu | toString }}`)
	}
	if _, ok := g.inline["ha"]; ok {
		options = append(options, "{{ if .ha }}3{{ else }}1{{ end }}", `{{ ternary "ha" "single" .ha }}`)
	}
	if _, ok := g.inline["tags"]; ok {
		options = append(options, `{{ join "," .tags }}`, "{{ range .tags }}- {{ . }}\n{{ end }}", "{{ len .tags }}",
			`{{ index .tags 0 }}`, `{{ .tags }}`)
	}
	if _, ok := g.inline["net"]; ok {
		options = append(options, "cidr: {{ .net.cidr }}\nmtu: {{ .net.mtu }}", `{{ .net.cidr | quote }}`, `{{ .net }}`,
			`{{ with .net }}{{ .mtu }}{{ end }}`)
	}
	switch target {
	case "controlPlane", "controlPlaneMachine":
		options = append(options, "{{ .builtin.controlPlane.name }}", "cp-{{ .builtin.controlPlane.version }}")
	case "mdBootstrap", "mdMachine":
		options = append(options, "{{ .builtin.machineDeployment.class }}-{{ .builtin.machineDeployment.topologyName }}")
	case "mpBootstrap", "mpPool":
		options = append(options, "{{ .builtin.machinePool.class }}/{{ .builtin.machinePool.topologyName }}")
	}
	sortStrings(options)
	template := options[g.r.Intn(len(options))]
	if failingTemplates[template] {
		g.mayRefuse[stepPatches] = true
	}
	return template
}

// failingTemplates are the templates valueTemplate draws that fail on some values: `%d` of a
// number (JSON numbers are float64 to Go's templates: `%!d(float64=2)-cores` is not YAML) and
// the first of a list that may be empty.
var failingTemplates = map[string]bool{
	`{{ printf "%d-cores" .cpu }}`: true,
	`{{ index .tags 0 }}`:          true,
}

func (g *gen) enabledIf() string {
	options := []string{"true", "false", `{{ ne .builtin.cluster.topology.version "v1.33.0" }}`}
	if _, ok := g.inline["ha"]; ok {
		options = append(options, "{{ .ha }}")
	}
	if _, ok := g.inline["size"]; ok {
		options = append(options, `{{ eq .size "large" }}`, `{{ if ne .size "small" }}true{{ end }}`)
	}
	return options[g.r.Intn(len(options))]
}

// value draws a value for a variable of this kind; `invalid` breaks its schema.
func (g *gen) value(kind string, invalid bool) any {
	if invalid {
		g.mayRefuse[stepValues] = true
	}
	switch kind {
	case "enum":
		if invalid {
			return "huge"
		}
		return g.pick("small", "medium", "large")
	case "int":
		if invalid {
			return float64(100)
		}
		return float64(1 + g.r.Intn(16))
	case "bool":
		return g.chance(0.5)
	case "array":
		var tags []any
		for i := 0; i < g.r.Intn(4); i++ {
			tags = append(tags, g.pick("web", "db", "gpu"))
		}
		if invalid {
			tags = []any{"1", "2", "3", "4", "5"}
		}
		if tags == nil {
			return []any{}
		}
		return tags
	case "object":
		if invalid {
			return obj{"mtu": float64(1000)}
		}
		return []obj{{}, {"mtu": float64(9000)}, {"cidr": "10.1.0.0/16"}}[g.r.Intn(3)]
	case "region":
		if invalid {
			return "a-region-name-longer-than-twenty"
		}
		if g.chance(0.05) {
			g.mayRefuse[stepValidate] = true
			return "forbidden"
		}
		return g.pick("eu-1", "us-2")
	case "replicas":
		if invalid {
			return float64(0)
		}
		return float64(1 + g.r.Intn(9))
	default: // proxy
		return []obj{{}, {"http": "http://other:8080"}, {"noProxy": []any{"a", "b"}}, {"enabled": false}}[g.r.Intn(4)]
	}
}

func (g *gen) clusterVariables() []any {
	kinds := map[string]string{}
	for name, kind := range g.inline {
		kinds[name] = kind
	}
	for name, kind := range g.external {
		kinds[name] = kind
	}
	names := make([]string, 0, len(kinds))
	for name := range kinds {
		names = append(names, name)
	}
	sortStrings(names)
	var out []any
	for _, name := range names {
		if g.chance(0.5) {
			out = append(out, obj{"name": name, "value": g.value(kinds[name], g.chance(0.02))})
		}
	}
	return out
}

func (g *gen) overrides() obj {
	if !g.chance(0.3) {
		return nil
	}
	variables := g.clusterVariables()
	if len(variables) == 0 {
		return nil
	}
	return obj{"overrides": variables}
}

func (g *gen) cluster(name, className string) obj {
	topology := obj{
		"classRef": obj{"name": className},
		"version":  g.pick("v1.33.0", "v1.34.2", "v1.35.1"),
	}
	controlPlane := obj{}
	if g.cpReplicas {
		controlPlane["replicas"] = float64(1 + 2*g.r.Intn(2))
	}
	if m := g.metadata("topo-cp"); m != nil {
		controlPlane["metadata"] = m
	}
	g.machineFields(controlPlane, "topo-cp")
	if g.cpMachines {
		g.healthCheck(controlPlane, "topo-cp", false, true)
	}
	if g.taints && g.chance(0.2) {
		// CAPI copies it in UTC to the second.
		controlPlane["rollout"] = obj{"after": g.pick("2026-01-02T15:04:05Z", "2026-07-01T08:00:00.25+02:00")}
	}
	if o := g.overrides(); o != nil {
		controlPlane["variables"] = o
	}
	if len(controlPlane) > 0 {
		topology["controlPlane"] = controlPlane
	}
	workers := obj{}
	for i := 0; i < g.r.Intn(4); i++ {
		md := obj{"class": g.mdClasses[g.r.Intn(len(g.mdClasses))], "name": fmt.Sprintf("md-%d", i)}
		if g.chance(0.6) {
			md["replicas"] = float64(g.r.Intn(4))
		}
		if m := g.metadata("topo-md"); m != nil {
			md["metadata"] = m
		}
		g.workerFields(md, "topo-md", true)
		g.healthCheck(md, "topo-md", true, true)
		if o := g.overrides(); o != nil {
			md["variables"] = o
		}
		workers["machineDeployments"] = append(list(workers["machineDeployments"]), md)
	}
	for i := 0; len(g.mpClasses) > 0 && i < g.r.Intn(3); i++ {
		mp := obj{"class": g.mpClasses[g.r.Intn(len(g.mpClasses))], "name": fmt.Sprintf("mp-%d", i)}
		if g.chance(0.6) {
			mp["replicas"] = float64(g.r.Intn(4))
		}
		if m := g.metadata("topo-mp"); m != nil {
			mp["metadata"] = m
		}
		g.poolFields(mp, "topo-mp")
		workers["machinePools"] = append(list(workers["machinePools"]), mp)
	}
	if len(workers) > 0 {
		topology["workers"] = workers
	}
	if variables := g.clusterVariables(); len(variables) > 0 {
		topology["variables"] = variables
	}
	metadata := obj{"name": name, "namespace": namespace, "uid": "5d1b2c8e-0000-4000-8000-" + fmt.Sprintf("%012d", g.r.Intn(1_000_000))}
	if m := g.metadata("cluster"); m != nil {
		for k, v := range m {
			metadata[k] = v
		}
	}
	spec := obj{"topology": topology}
	if g.chance(0.5) {
		network := obj{"pods": obj{"cidrBlocks": []any{"192.168.0.0/16"}}}
		if g.chance(0.5) {
			network["services"] = obj{"cidrBlocks": []any{"10.128.0.0/12"}}
			network["serviceDomain"] = "cluster.local"
		}
		spec["clusterNetwork"] = network
	}
	return obj{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": metadata, "spec": spec}
}

func sortStrings(s []string) { sort.Strings(s) }
