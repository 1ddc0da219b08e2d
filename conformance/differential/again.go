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
	"class-template",       // a field added to the templates the ClusterClass references for the control plane and its first MachineDeployment class
	"class-labels",         // a label on the ClusterClass's control plane and first MachineDeployment class metadata
	"patch-removed",        // the ClusterClass's last patch removed (inline or external)
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
	for _, current := range capiObjects(state) {
		if current["kind"] == "Cluster" {
			continue // its references are in the Cluster above
		}
		again.templates = append(again.templates, deepCopyObj(current))
	}
	return again, edit
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
	rendered, renderErr := render(opts, dir)
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
		// A ClusterClass edit reaches what CAPI computes (the control plane at least).
		if strings.HasPrefix(edit, "class-") && !changedAny(first, want) {
			diffs = append(diffs, fmt.Sprintf("the harness: the ClusterClass edit %s changed nothing CAPI computes", edit))
		}
		r.kept += kept
		return diffs
	})
	judge(&second, again)
	r.again = edit
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
