package main

// Clusters past creation: after a generated topology's first reconcile agrees, the objects
// CAPI computed exist (the Cluster references its infrastructure cluster and control plane),
// the Cluster is edited, and both sides compute again: CAPI's topology reconciler reads them as
// its current state; render is given them with the templates, as `render --kubeconfig` reads
// them. Names must be kept, objects of a removed topology dropped, new ones named afresh.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"sigs.k8s.io/cluster-api/exp/topology/scope"
)

// The edits of a Cluster past creation, one per case.
var edits = []string{
	"none",                 // reconciled again as it is
	"remove-last-md",       // its last MachineDeployment topology dropped
	"add-md",               // a new MachineDeployment topology
	"control-plane-labels", // a label on the control plane's topology metadata
	"md-replicas",          // the first MachineDeployment topology scaled and given minReadySeconds
	"variable",             // a Cluster variable given another valid value (set if it was not)
	"class-template",       // a field added to the templates the ClusterClass references for the control plane and its first MachineDeployment class
	"class-labels",         // a label on the ClusterClass's control plane and first MachineDeployment class metadata
	"patch-removed",        // the ClusterClass's last patch removed (inline or external)
	"version",              // the Kubernetes version one minor up, the control plane still provisioning (no status)
	"version-upgrade",      // the Kubernetes version one minor up, the control plane provisioned and stable
	"version-workers",      // the control plane already at the new minor, the workers still at the old one
	"version-skip",         // the Kubernetes version two minors up: no upgrade plan reaches it
	"version-planned",      // two minors up, the plan from the extension's GenerateUpgradePlan (see planAnswers)
}

// planAnswers are what the differential extension's GenerateUpgradePlan handler answers, by the
// Cluster's annotation (see conformance/rust/src/differential.rs): a minor at a time, the same
// with the workers straight to the target, straight to the target (a plan CAPI refuses) and
// Failure.
var planAnswers = []string{"", "workers", "direct", "refuse"}

// planAnnotation is the Cluster annotation the handler reads.
const planAnnotation = "differential.capi-ext/upgrade-plan"

// blockingAnnotation lists the lifecycle hooks the differential extension's `hold` handlers
// block for the Cluster (comma-separated; see conformance/rust/src/differential.rs).
const blockingAnnotation = "differential.capi-ext/blocking"

// upgradeHooks are the lifecycle hooks of an upgrade that can block it: a version edit draws
// none (half the cases) or one of them to block, and render is told with --blocking-hook.
var upgradeHooks = []string{"BeforeClusterUpgrade", "BeforeControlPlaneUpgrade", "AfterControlPlaneUpgrade", "BeforeWorkersUpgrade", "AfterWorkersUpgrade"}

// reachedHooks are, per version edit, the hooks CAPI calls in that state: three draws in four
// block one of them; the others draw any hook (one CAPI does not reach must change nothing).
var reachedHooks = map[string][]string{
	"version-upgrade": {"BeforeClusterUpgrade", "BeforeControlPlaneUpgrade"},
	"version-planned": {"BeforeClusterUpgrade", "BeforeControlPlaneUpgrade"},
	"version-workers": {"AfterControlPlaneUpgrade", "BeforeWorkersUpgrade"},
}

// againCase is tc past its first reconcile, which CAPI computed as state: the objects exist and
// the Cluster is edited (which edit depends on the case's name). Also returns the edit.
func againCase(tc *testCase, state *scope.ClusterState) (*testCase, string) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tc.name))
	r := rand.New(rand.NewSource(int64(h.Sum64())))
	edit := edits[r.Intn(len(edits))]
	if edit == "class-template" && tc.crds != nil {
		// The templates of CAPI's own ClusterClasses have real schemas, which a made-up field
		// breaks: their class edit is the label one.
		edit = "class-labels"
	}

	cluster := deepCopyObj(tc.cluster)
	spec, _ := cluster["spec"].(obj)
	topology, _ := spec["topology"].(obj)
	// The references CAPI wrote into the Cluster when it created the objects.
	desired := map[string]any{}
	data, err := json.Marshal(state.Cluster)
	must(err)
	must(json.Unmarshal(data, &desired))
	desiredSpec, _ := desired["spec"].(map[string]any)
	for _, ref := range []string{"infrastructureRef", "controlPlaneRef"} {
		if v, ok := desiredSpec[ref]; ok {
			spec[ref] = v
		}
	}

	workers, _ := topology["workers"].(obj)
	mds := list(workers["machineDeployments"])
	switch edit {
	case "remove-last-md":
		if len(mds) == 0 {
			edit = "none"
			break
		}
		workers["machineDeployments"] = mds[:len(mds)-1]
	case "add-md":
		classes := list(tc.clusterClass["spec"].(obj)["workers"].(obj)["machineDeployments"])
		if len(classes) == 0 {
			edit = "none"
			break
		}
		if workers == nil {
			workers = obj{}
			topology["workers"] = workers
		}
		class := classes[r.Intn(len(classes))].(obj)["class"]
		workers["machineDeployments"] = append(mds, obj{"class": class, "name": "md-new", "replicas": float64(1)})
	case "control-plane-labels":
		child(child(child(topology, "controlPlane"), "metadata"), "labels")["edited"] = "again"
	case "variable":
		if !editVariable(topology, tc.variableKinds, r) {
			edit = "none"
		}
	case "version", "version-upgrade", "version-workers":
		topology["version"] = minorUp(topology["version"].(string), 1)
	case "version-skip", "version-planned":
		topology["version"] = minorUp(topology["version"].(string), 2)
	case "md-replicas":
		if len(mds) == 0 {
			edit = "none"
			break
		}
		md := mds[0].(obj)
		replicas, _ := md["replicas"].(float64)
		md["replicas"] = replicas + 1
		md["minReadySeconds"] = float64(11)
	}

	again := &testCase{
		name:         tc.name + "-again",
		cluster:      cluster,
		clusterClass: deepCopyObj(tc.clusterClass),
		templates:    deepCopyList(tc.templates),
		settings:     tc.settings,
		crds:         tc.crds,
		expect:       expectComputed,
	}
	switch edit {
	case "class-template":
		editClassTemplates(again)
	case "class-labels":
		editClassLabels(again)
	case "patch-removed":
		spec := again.clusterClass["spec"].(obj)
		patches := list(spec["patches"])
		if len(patches) == 0 {
			edit = "none"
			break
		}
		spec["patches"] = patches[:len(patches)-1]
	}
	if edit != "none" {
		// An edit may make the topology invalid (a patch of the class that cannot apply to a new
		// MachineDeployment): then both must refuse it at the same step.
		again.expect = expectBounded
	}
	if edit == "version-skip" {
		again.expect = stepUpgrade
	}
	if edit == "version-planned" {
		child(again.clusterClass, "spec")["upgrade"] = obj{"external": obj{"generateUpgradePlanExtension": "plan." + extensionName}}
		how := planAnswers[r.Intn(len(planAnswers))]
		if how != "" {
			child(child(again.cluster, "metadata"), "annotations")[planAnnotation] = how
		}
		if how == "direct" || how == "refuse" {
			again.expect = stepUpgrade
		}
	}
	for _, current := range capiObjects(state) {
		if current["kind"] == "Cluster" {
			continue // its references are in the Cluster above
		}
		current = deepCopyObj(current)
		if state.ControlPlane != nil && state.ControlPlane.Object != nil && current["kind"] == state.ControlPlane.Object.GetKind() {
			progress(current, edit, topology["version"].(string))
		}
		again.templates = append(again.templates, current)
	}
	if edit == "version-workers" {
		upgradeUnderWay(again, r)
	}
	if strings.HasPrefix(edit, "version") && r.Intn(2) == 0 {
		hooks := upgradeHooks
		if reached := reachedHooks[edit]; len(reached) > 0 && r.Intn(4) != 0 {
			hooks = reached
		}
		hook := hooks[r.Intn(len(hooks))]
		again.blocking = []string{hook}
		child(child(again.cluster, "metadata"), "annotations")[blockingAnnotation] = hook
	}
	return again, edit
}

// blocks says whether the case's extension blocks hook.
func (tc *testCase) blocks(hook string) bool {
	return slices.Contains(tc.blocking, hook)
}

// editVariable gives one variable of the Cluster's topology another valid value of its kind
// (a generated case), or the other values of CAPI's own classes' examples; false if nothing
// changed.
func editVariable(topology obj, kinds map[string]string, r *rand.Rand) bool {
	before := deepCopyObj(obj{"v": topology["variables"]})
	if len(kinds) == 0 {
		varyVariables(obj{"spec": obj{"topology": topology}})
		return !reflect.DeepEqual(before, deepCopyObj(obj{"v": topology["variables"]}))
	}
	names := make([]string, 0, len(kinds))
	for name := range kinds {
		names = append(names, name)
	}
	sortStrings(names)
	name := names[r.Intn(len(names))]
	g := &gen{r: r, mayRefuse: map[string]bool{}}
	var variable obj
	for _, v := range list(topology["variables"]) {
		if v.(obj)["name"] == name {
			variable = v.(obj)
		}
	}
	if variable == nil {
		variable = obj{"name": name}
		topology["variables"] = append(list(topology["variables"]), variable)
	}
	for range 10 {
		value := normalize(obj{"v": g.value(kinds[name], false)}).(obj)["v"]
		if !reflect.DeepEqual(value, variable["value"]) {
			variable["value"] = value
			return true
		}
	}
	return false
}

// minorUp is a Kubernetes version n minors up, patch 0.
func minorUp(version string, n int) string {
	var major, minor, patch int
	if _, err := fmt.Sscanf(version, "v%d.%d.%d", &major, &minor, &patch); err != nil {
		panic(fmt.Sprintf("the generator's version %q is not vX.Y.Z", version))
	}
	return fmt.Sprintf("v%d.%d.0", major, minor+n)
}

// progress sets what the control plane's controller has reported by the time of the edit:
// nothing yet (provisioning), the version it runs (stable), or, for an upgrade under way, the
// new version in spec and status both.
func progress(controlPlane obj, edit, version string) {
	spec := child(controlPlane, "spec")
	switch edit {
	case "version-upgrade", "version-skip", "version-planned":
		controlPlane["status"] = obj{"version": spec["version"]}
	case "version-workers":
		spec["version"] = version
		controlPlane["status"] = obj{"version": version}
	}
}

// upgradeUnderWay makes again's Cluster one whose control plane finished its upgrade step:
// the hooks CAPI recorded when the step started are pending, maybe more workers may upgrade at
// once, and maybe a Machine of the first MachineDeployment is already at the new version
// (rolling out, so that MachineDeployment counts as upgrading).
func upgradeUnderWay(again *testCase, r *rand.Rand) {
	metadata := child(again.cluster, "metadata")
	annotations := child(metadata, "annotations")
	annotations["runtime.cluster.x-k8s.io/pending-hooks"] = "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade"
	if r.Intn(2) == 0 {
		annotations["topology.cluster.x-k8s.io/upgrade-concurrency"] = "2"
	}
	if r.Intn(2) == 0 {
		return
	}
	version := again.cluster["spec"].(obj)["topology"].(obj)["version"].(string)
	for _, current := range again.templates {
		if current["kind"] != "MachineDeployment" {
			continue
		}
		md := current
		selector, _, _ := unstructured.NestedStringMap(md, "spec", "selector", "matchLabels")
		labels := obj{}
		for k, v := range selector {
			labels[k] = v
		}
		mdMeta := md["metadata"].(obj)
		template := md["spec"].(obj)["template"].(obj)["spec"].(obj)
		infrastructure := template["infrastructureRef"].(obj)
		again.templates = append(again.templates, obj{
			"apiVersion": "cluster.x-k8s.io/v1beta2",
			"kind":       "Machine",
			"metadata":   obj{"name": fmt.Sprintf("%s-rolled", mdMeta["name"]), "namespace": mdMeta["namespace"], "labels": labels},
			"spec": obj{
				"clusterName":       again.cluster["metadata"].(obj)["name"],
				"bootstrap":         obj{"dataSecretName": "bootstrap-data"},
				"infrastructureRef": obj{"apiGroup": infrastructure["apiGroup"], "kind": infrastructure["kind"], "name": fmt.Sprintf("%s-rolled", mdMeta["name"])},
				"version":           version,
			},
		})
		return
	}
}

// classEdited lists the control plane class and the first MachineDeployment class, if any, of
// a case's ClusterClass.
func classEdited(tc *testCase) []obj {
	spec := tc.clusterClass["spec"].(obj)
	classes := []obj{spec["controlPlane"].(obj)}
	if workers, ok := spec["workers"].(obj); ok {
		if mds := list(workers["machineDeployments"]); len(mds) > 0 {
			classes = append(classes, mds[0].(obj))
		}
	}
	return classes
}

// editClassTemplates adds a field to the spec of the templates the ClusterClass references for
// the control plane and the first MachineDeployment class's machines: CAPI computes the
// objects from the class's templates again, under the names it keeps.
func editClassTemplates(tc *testCase) {
	for _, class := range classEdited(tc) {
		infrastructure, _ := class["infrastructure"].(obj)
		refs := []obj{}
		if r, ok := class["templateRef"].(obj); ok {
			refs = append(refs, r)
		}
		if infrastructure != nil {
			refs = append(refs, infrastructure["templateRef"].(obj))
		}
		for _, r := range refs {
			for _, t := range tc.templates {
				if t["kind"] == r["kind"] && t["metadata"].(obj)["name"] == r["name"] {
					t["spec"].(obj)["template"].(obj)["spec"].(obj)["edited"] = "again"
				}
			}
		}
	}
}

// editClassLabels puts a label on the metadata of the ClusterClass's control plane class and
// first MachineDeployment class, which CAPI propagates to the objects it computes.
func editClassLabels(tc *testCase) {
	for _, class := range classEdited(tc) {
		child(child(class, "metadata"), "labels")["class-edited"] = "again"
	}
}

// child is the object under key in parent, made empty there when missing.
func child(parent obj, key string) obj {
	o, _ := parent[key].(obj)
	if o == nil {
		o = obj{}
		parent[key] = o
	}
	return o
}

// runAgain computes tc past creation with both sides and folds the outcome into r (a
// mismatch there is the case's mismatch).
func runAgain(ctx context.Context, opts options, rc runtimeClientWithConfig, tc *testCase, state *scope.ClusterState, r *result) {
	again, edit := againCase(tc, state)
	dir := filepath.Join(opts.work, again.name)
	must(again.write(dir))
	againState, capiErr := capiState(ctx, rc, again)
	rendered, renderErr := render(opts, dir, again.blocking)
	var second result
	agree(&second, sides{want: "CAPI", got: "render"}, capiErr, renderErr, func() []string {
		want := capiObjects(againState)
		second.objects = len(want)
		diffs := compareObjects(want, rendered, generatedNames(againState))
		// The comparison lets random parts of names differ; the names CAPI keeps from the
		// first reconcile must not: render must keep each of them exactly.
		first := capiObjects(state)
		kept := 0
		for key, object := range want {
			name := objectName(object)
			if before, ok := first[key]; !ok || objectName(before) != name {
				continue
			}
			kept++
			if got, ok := rendered[key]; ok && objectName(got) != name {
				diffs = append(diffs, fmt.Sprintf("%s: CAPI keeps the name %s, render names it %s", key, name, objectName(got)))
			}
		}
		// CAPI reads the objects back: reconciled again unedited, it keeps every name.
		if edit == "none" && kept != len(first) {
			diffs = append(diffs, fmt.Sprintf("the harness: CAPI kept %d of the %d names of its first reconcile with nothing edited", kept, len(first)))
		}
		if d := upgradeLanded(edit, again, againState); d != "" {
			diffs = append(diffs, "the harness: "+d)
		}
		// A ClusterClass edit reaches what CAPI computes (the control plane at least).
		if strings.HasPrefix(edit, "class-") && !changedAny(first, want) {
			diffs = append(diffs, fmt.Sprintf("the harness: the ClusterClass edit %s changed nothing CAPI computes", edit))
		}
		r.kept += kept
		return diffs
	})
	judge(&second, again)
	r.again = edit
	r.againBlocking = again.blocking
	if second.outcome == "both-failed" {
		r.againRefused = second.step
		_ = os.RemoveAll(dir)
		return
	}
	if second.outcome != "equal" {
		r.outcome = "mismatch"
		r.dir = dir
		for _, d := range second.differences {
			r.differences = append(r.differences, fmt.Sprintf("past creation, edit %s: %s", edit, d))
		}
		writeFailure(dir, second, capiErr, renderErr, againState)
		return
	}
	r.objects += second.objects
	_ = os.RemoveAll(dir)
}

// upgradeLanded says what is wrong, if anything, with where CAPI took a version edit: the
// control plane kept its version while provisioning, started the upgrade when stable, and
// once it is at the new version the first MachineDeployment (none is held) follows.
func upgradeLanded(edit string, again *testCase, state *scope.ClusterState) string {
	if !strings.HasPrefix(edit, "version") || state == nil || state.ControlPlane == nil || state.ControlPlane.Object == nil {
		return ""
	}
	version, _, _ := unstructured.NestedString(again.cluster, "spec", "topology", "version")
	cp, _, _ := unstructured.NestedString(state.ControlPlane.Object.Object, "spec", "version")
	switch edit {
	case "version":
		if cp == version {
			return "the control plane without a status picked up the new version " + version
		}
	case "version-upgrade", "version-planned":
		step := version
		if edit == "version-planned" {
			step = minorUp(version, -1)
		}
		held := again.blocks("BeforeClusterUpgrade") || again.blocks("BeforeControlPlaneUpgrade")
		if held && cp == step {
			return fmt.Sprintf("the stable control plane took the step to %s while a Before hook blocked (%v)", step, again.blocking)
		}
		if !held && cp != step {
			return fmt.Sprintf("the stable control plane did not take the step to %s towards %s (it is at %s)", step, version, cp)
		}
	case "version-workers":
		moved := false
		for _, md := range state.MachineDeployments {
			if md.Object != nil && md.Object.Spec.Template.Spec.Version == version {
				moved = true
			}
		}
		// A Machine already at the new version makes its MachineDeployment count as upgrading,
		// taking one of the slots the upgrade concurrency gives.
		rolling, slots := 0, 1
		for _, t := range again.templates {
			if t["kind"] == "Machine" {
				rolling++
			}
		}
		if again.cluster["metadata"].(obj)["annotations"].(obj)["topology.cluster.x-k8s.io/upgrade-concurrency"] == "2" {
			slots = 2
		}
		held := again.blocks("AfterControlPlaneUpgrade") || again.blocks("BeforeWorkersUpgrade")
		if held && moved {
			return fmt.Sprintf("a MachineDeployment followed the control plane to %s while a hook between them blocked (%v)", version, again.blocking)
		}
		if !held && slots > rolling && len(state.MachineDeployments) > rolling && !moved {
			return "no MachineDeployment follows the control plane to " + version
		}
	}
	return ""
}

// changedAny says whether an object of after differs from the one before under its key.
func changedAny(before, after map[string]map[string]any) bool {
	for key, object := range after {
		if !reflect.DeepEqual(before[key], object) {
			return true
		}
	}
	return false
}

// objectName is an object's metadata.name.
func objectName(o map[string]any) string {
	name, _, _ := unstructured.NestedString(o, "metadata", "name")
	return name
}
