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
}

// againCase is tc past its first reconcile, which CAPI computed as state: the objects exist and
// the Cluster is edited (which edit depends on the case's name). Also returns the edit.
func againCase(tc *testCase, state *scope.ClusterState) (*testCase, string) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tc.name))
	r := rand.New(rand.NewSource(int64(h.Sum64())))
	edit := edits[r.Intn(len(edits))]

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
		controlPlane, _ := topology["controlPlane"].(obj)
		if controlPlane == nil {
			controlPlane = obj{}
			topology["controlPlane"] = controlPlane
		}
		metadata, _ := controlPlane["metadata"].(obj)
		if metadata == nil {
			metadata = obj{}
			controlPlane["metadata"] = metadata
		}
		labels, _ := metadata["labels"].(obj)
		if labels == nil {
			labels = obj{}
			metadata["labels"] = labels
		}
		labels["edited"] = "again"
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

// objectName is an object's metadata.name.
func objectName(o map[string]any) string {
	name, _, _ := unstructured.NestedString(o, "metadata", "name")
	return name
}
