package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// renderMatchesManager checks `capi-ext render` against the real manager: for the Cluster,
// ClusterClass and templates as stored in the API server, the GeneratePatches request render
// builds equals the one the manager last sent (item uids aside; CAPI makes them random).
func (s *scenarios) renderMatchesManager(ctx context.Context) error {
	const hookPath = "GeneratePatches"
	// The control plane is initialized and reports its version (previous scenario), so CAPI
	// creates the MachineDeployment; wait for it, then let any in-flight reconcile finish.
	var mds, mps []unstructured.Unstructured
	if err := Eventually(timeoutLg, "MachineDeployment md-0 and MachinePool mp-0 created by the topology controller", func() (bool, string) {
		var err error
		if mds, err = s.kube.List(ctx, clusterV, "MachineDeployment", ns, map[string]string{"topology.cluster.x-k8s.io/deployment-name": "md-0"}); err != nil {
			return false, err.Error()
		}
		if mps, err = s.kube.List(ctx, clusterV, "MachinePool", ns, map[string]string{"topology.cluster.x-k8s.io/pool-name": "mp-0"}); err != nil {
			return false, err.Error()
		}
		u, _ := s.cluster(ctx)
		st, reason, msg := Condition(u, "TopologyReconciled")
		return len(mds) == 1 && len(mps) == 1 && st == "True",
			fmt.Sprintf("%d MachineDeployments, %d MachinePools, TopologyReconciled=%s/%s %q", len(mds), len(mps), st, reason, msg)
	}); err != nil {
		return err
	}
	for round := 1; ; round++ {
		stateChanged, err := s.renderAttempt(ctx, hookPath, mds[0].GetName(), mps[0].GetName())
		if err == nil || !stateChanged || round == 3 {
			return err
		}
		fmt.Printf("  the manager's view changed during attempt %d (%v); again\n", round, err)
	}
}

// renderAttempt reads the objects, renders them and compares. On a mismatch it also says
// whether the manager has sent a different request since (its state moved under the reads).
func (s *scenarios) renderAttempt(ctx context.Context, hookPath, mdName, mpName string) (stateChanged bool, err error) {
	var managerSent []byte
	dir := filepath.Join(s.work, "render")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return s.changedSince(hookPath, managerSent), err
	}
	_, cpName := s.refs(ctx)
	objects := []struct{ file, apiVersion, kind, ns, name string }{
		{"cluster.json", clusterV, "Cluster", ns, "c1"},
		{"clusterclass.json", clusterV, "ClusterClass", ns, "e2e-class"},
		{"infra.json", infraV, "GenericInfrastructureClusterTemplate", ns, "e2e-infra"},
		{"cp.json", cpV, "GenericControlPlaneTemplate", ns, "e2e-cp"},
		{"cp-machine.json", infraV, "GenericInfrastructureMachineTemplate", ns, "e2e-cp-machine"},
		{"worker-machine.json", infraV, "GenericInfrastructureMachineTemplate", ns, "e2e-worker-machine"},
		{"worker-bootstrap.json", bootstrapV, "GenericBootstrapConfigTemplate", ns, "e2e-worker-bootstrap"},
		{"controlplane.json", cpV, "GenericControlPlane", ns, cpName},
		{"machinedeployment.json", clusterV, "MachineDeployment", ns, mdName},
		{"pool.json", infraV, "GenericInfrastructureMachinePoolTemplate", ns, "e2e-pool"},
		{"machinepool.json", clusterV, "MachinePool", ns, mpName},
		{"extensionconfig.json", runtimeV, "ExtensionConfig", "", extName},
	}
	// The manager reconciles whenever its objects change (status updates of the MachinePool and
	// MachineDeployment included), each time with new item uids. Read the objects between two
	// identical requests (uids aside), so both describe the same state.
	for attempt := 1; ; attempt++ {
		time.Sleep(2 * time.Second)
		before := s.recorded.lastRequest(hookPath, "patches")
		if before == nil {
			return s.changedSince(hookPath, managerSent), fmt.Errorf("the extension recorded no GeneratePatches request from the manager")
		}
		for _, o := range objects {
			u, err := s.kube.Get(ctx, o.apiVersion, o.kind, o.ns, o.name)
			if err != nil {
				return s.changedSince(hookPath, managerSent), err
			}
			data, _ := json.MarshalIndent(u.Object, "", "  ")
			if err := os.WriteFile(filepath.Join(dir, o.file), data, 0o644); err != nil {
				return s.changedSince(hookPath, managerSent), err
			}
		}
		managerSent = s.recorded.lastRequest(hookPath, "patches")
		if reflect.DeepEqual(normalizeRequest(before), normalizeRequest(managerSent)) {
			break
		}
		if attempt == 10 {
			return s.changedSince(hookPath, managerSent), fmt.Errorf("the manager's GeneratePatches request kept changing while the objects were read (10 attempts)")
		}
	}
	// The manager's ValidateTopology request of the same reconcile, read before render calls
	// the same extension (its own requests would be recorded over the manager's).
	managerValidate := s.recorded.lastRequest("ValidateTopology", "validate")
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, s.pki.CAPEM, 0o644); err != nil {
		return s.changedSince(hookPath, managerSent), err
	}
	requests := filepath.Join(dir, "requests")
	cmd := exec.CommandContext(ctx, s.capiExt, "render", "--extension", s.extURL, "--ca", caFile, "--cert", s.clientCert, "--key", s.clientKey,
		"--cluster", filepath.Join(dir, "cluster.json"), "--clusterclass", filepath.Join(dir, "clusterclass.json"),
		"--templates", filepath.Join(dir, "infra.json"), filepath.Join(dir, "cp.json"), filepath.Join(dir, "cp-machine.json"),
		filepath.Join(dir, "worker-machine.json"), filepath.Join(dir, "worker-bootstrap.json"),
		filepath.Join(dir, "controlplane.json"), filepath.Join(dir, "machinedeployment.json"),
		filepath.Join(dir, "pool.json"), filepath.Join(dir, "machinepool.json"),
		"--extension-config", filepath.Join(dir, "extensionconfig.json"), "--write-requests", requests, "--json", "--capi-crds",
		"--capi-version", fmt.Sprintf("1.%d", s.minor))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return s.changedSince(hookPath, managerSent), fmt.Errorf("capi-ext render failed: %v\n%s", err, stderr.String())
	}
	// Every object CAPI made for the topology: the infrastructure cluster, the control plane,
	// its machine template and MachineHealthCheck, the MachineDeployment, its bootstrap and
	// machine templates and MachineHealthCheck, the MachinePool and its bootstrap config and
	// infrastructure machine pool; and the Cluster's topology-managed fields.
	if err := s.renderedObjectsMatch(ctx, out, []string{"Cluster", "GenericBootstrapConfig", "GenericBootstrapConfigTemplate", "GenericControlPlane",
		"GenericInfrastructureCluster", "GenericInfrastructureMachinePool", "GenericInfrastructureMachineTemplate", "GenericInfrastructureMachineTemplate",
		"MachineDeployment", "MachineHealthCheck", "MachineHealthCheck", "MachinePool"}); err != nil {
		return s.changedSince(hookPath, managerSent), err
	}
	rendered, err := os.ReadFile(filepath.Join(requests, "02-GeneratePatches-quickstart.request.json"))
	if err != nil {
		return s.changedSince(hookPath, managerSent), fmt.Errorf("render wrote no GeneratePatches request: %w\n%s", err, stderr.String())
	}
	want, got := normalizeRequest(managerSent), normalizeRequest(rendered)
	if !reflect.DeepEqual(want, got) {
		w, _ := json.MarshalIndent(want, "", "  ")
		g, _ := json.MarshalIndent(got, "", "  ")
		_ = os.WriteFile(filepath.Join(dir, "manager.json"), w, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "render.json"), g, 0o644)
		return s.changedSince(hookPath, managerSent), fmt.Errorf("render's GeneratePatches request differs from the manager's at %s (both in %s)",
			strings.Join(differences("", want, got), ", "), dir)
	}
	// ValidateTopology: CAPI sends the GeneratePatches request as patched by every patch, with
	// the variables of the last patch only (convertToValidationRequest in the patch engine).
	if managerValidate == nil {
		return s.changedSince(hookPath, managerSent), fmt.Errorf("the extension recorded no ValidateTopology request")
	} else {
		renderedValidate, err := os.ReadFile(filepath.Join(requests, "03-ValidateTopology-quickstart.request.json"))
		if err != nil {
			return s.changedSince(hookPath, managerSent), fmt.Errorf("render wrote no ValidateTopology request: %w", err)
		}
		if want, got := normalizeRequest(managerValidate), normalizeRequest(renderedValidate); !reflect.DeepEqual(want, got) {
			return s.changedSince(hookPath, managerSent), fmt.Errorf("render's ValidateTopology request differs from the manager's at %s",
				strings.Join(differences("", want, got), ", "))
		}
		fmt.Printf("  render's ValidateTopology request equals the manager's (%d bytes)\n", len(managerValidate))
	}
	var parsed map[string]any
	_ = json.Unmarshal(managerSent, &parsed)
	items, _, _ := unstructured.NestedSlice(parsed, "items")
	var holders []string
	for _, item := range items {
		h, _, _ := unstructured.NestedString(item.(map[string]any), "holderReference", "kind")
		f, _, _ := unstructured.NestedString(item.(map[string]any), "holderReference", "fieldPath")
		holders = append(holders, h+" "+f)
	}
	fmt.Printf("  render's request equals the manager's: %d items (%s), %d bytes\n", len(items), strings.Join(holders, "; "), len(managerSent))
	if err := s.renderedNamesMatch(ctx, dir, out, managerSent); err != nil {
		return false, err
	}
	// The same render from the live objects: render --kubeconfig reads the Cluster, its class,
	// templates and current objects itself and must print the same objects. Its kubeconfig's
	// credentials come from an exec plugin, as EKS, GKE and AKS kubeconfigs' do.
	live := exec.CommandContext(ctx, s.capiExt, "render", "--extension", s.extURL, "--ca", caFile, "--cert", s.clientCert, "--key", s.clientKey,
		"--kubeconfig", s.execKubeconfig, "--cluster", ns+"/c1", "--write-inputs", filepath.Join(dir, "live"), "--json", "--capi-crds",
		"--capi-version", fmt.Sprintf("1.%d", s.minor))
	var liveErr strings.Builder
	live.Stderr = &liveErr
	liveOut, err := live.Output()
	if err != nil {
		return false, fmt.Errorf("capi-ext render --kubeconfig failed: %v\n%s", err, liveErr.String())
	}
	if string(liveOut) != string(out) {
		_ = os.WriteFile(filepath.Join(dir, "render-files.json"), out, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "render-live.json"), liveOut, 0o644)
		return false, fmt.Errorf("render --kubeconfig printed other objects than render from the files (both in %s):\n%s", dir, liveErr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "live", ns+"-c1.yaml")); err != nil {
		return false, fmt.Errorf("render --kubeconfig --write-inputs: %w", err)
	}
	fmt.Printf("  render --kubeconfig %s/c1 (%s) prints the same objects (%d bytes)\n", ns,
		strings.TrimSpace(strings.Split(liveErr.String(), "\n")[0]), len(liveOut))
	return false, nil
}

// randomPart matches the five characters CAPI's name generators add (names.SimpleNameGenerator
// and the `{{ .random }}` of naming templates): its alphabet, between dashes or at an end.
var randomPart = regexp.MustCompile(`(^|-)[bcdfghjklmnpqrstvwxz2456789]{5}(-|$)`)

// nameShape is a name with its random part replaced by "*".
func nameShape(name string) string {
	return randomPart.ReplaceAllString(name, "$1*$2")
}

// renderedNamesMatch renders as at creation (the Cluster without references, no current
// objects), so render names every object from the ClusterClass's naming templates and CAPI's
// name generators, and checks the names have the shape of those CAPI chose, random parts aside:
// the objects' names and the names in the builtins (controlPlane, machineDeployment, machinePool).
func (s *scenarios) renderedNamesMatch(ctx context.Context, dir string, existingOut, managerSent []byte) error {
	data, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	must(err)
	var cluster map[string]any
	must(json.Unmarshal(data, &cluster))
	unstructured.RemoveNestedField(cluster, "spec", "infrastructureRef")
	unstructured.RemoveNestedField(cluster, "spec", "controlPlaneRef")
	data, _ = json.Marshal(cluster)
	must(os.WriteFile(filepath.Join(dir, "cluster-new.json"), data, 0o644))
	requests := filepath.Join(dir, "requests-new")
	cmd := exec.CommandContext(ctx, s.capiExt, "render", "--extension", s.extURL, "--ca", filepath.Join(dir, "ca.crt"), "--cert", s.clientCert, "--key", s.clientKey,
		"--cluster", filepath.Join(dir, "cluster-new.json"), "--clusterclass", filepath.Join(dir, "clusterclass.json"),
		"--templates", filepath.Join(dir, "infra.json"), filepath.Join(dir, "cp.json"), filepath.Join(dir, "cp-machine.json"),
		filepath.Join(dir, "worker-machine.json"), filepath.Join(dir, "worker-bootstrap.json"), filepath.Join(dir, "pool.json"),
		"--extension-config", filepath.Join(dir, "extensionconfig.json"), "--write-requests", requests, "--json", "--capi-crds",
		"--capi-version", fmt.Sprintf("1.%d", s.minor))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	created, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("capi-ext render as at creation failed: %v\n%s", err, stderr.String())
	}
	shapes := func(out []byte) []string {
		var list struct {
			Items []map[string]any `json:"items"`
		}
		must(json.Unmarshal(out, &list))
		var got []string
		for _, item := range list.Items {
			u := unstructured.Unstructured{Object: item}
			got = append(got, u.GetKind()+" "+nameShape(u.GetName()))
		}
		sort.Strings(got)
		return got
	}
	if want, got := shapes(existingOut), shapes(created); !reflect.DeepEqual(want, got) {
		return fmt.Errorf("names render chose at creation\n  %s\ndo not have the shape of CAPI's\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	builtinNames := func(body []byte) []string {
		var request struct {
			Items []struct {
				Variables []struct {
					Name  string         `json:"name"`
					Value map[string]any `json:"value"`
				} `json:"variables"`
			} `json:"items"`
		}
		must(json.Unmarshal(body, &request))
		seen := map[string]bool{}
		for _, item := range request.Items {
			for _, v := range item.Variables {
				if v.Name != "builtin" {
					continue
				}
				for _, owner := range []string{"controlPlane", "machineDeployment", "machinePool"} {
					if name, _, _ := unstructured.NestedString(v.Value, owner, "name"); name != "" {
						seen[owner+" "+nameShape(name)] = true
					}
				}
			}
		}
		var out []string
		for k := range seen {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	renderedRequest, err := os.ReadFile(filepath.Join(requests, "02-GeneratePatches-quickstart.request.json"))
	if err != nil {
		return fmt.Errorf("render as at creation wrote no GeneratePatches request: %w", err)
	}
	want, got := builtinNames(managerSent), builtinNames(renderedRequest)
	if len(want) != 3 || !reflect.DeepEqual(want, got) {
		return fmt.Errorf("builtin names render chose at creation %v, CAPI's %v", got, want)
	}
	fmt.Printf("  names from the naming templates and name generators, as CAPI chose them (random parts aside): %s; %s\n",
		strings.Join(shapes(created), ", "), strings.Join(got, ", "))
	return nil
}

// changedSince says whether the manager sent a request different (uids aside) from sent.
func (s *scenarios) changedSince(hookPath string, sent []byte) bool {
	now := s.recorded.lastRequest(hookPath, "patches")
	return sent != nil && now != nil && !reflect.DeepEqual(normalizeRequest(now), normalizeRequest(sent))
}

// normalizeRequest drops item uids (CAPI makes them random) and sorts only what CAPI does not
// order: it iterates maps for MachineDeployments and MachinePools, so each run of items held by
// one of those kinds is sorted by holder name (stable: a holder's own items keep CAPI's order);
// the infrastructure cluster, control plane and its machine template keep their places.
func normalizeRequest(body []byte) map[string]any {
	var request map[string]any
	must(json.Unmarshal(body, &request))
	items, _ := request["items"].([]any)
	holder := func(item any) (kind, name string) {
		h, _ := item.(map[string]any)["holderReference"].(map[string]any)
		kind, _ = h["kind"].(string)
		name, _ = h["name"].(string)
		return kind, name
	}
	for _, item := range items {
		delete(item.(map[string]any), "uid")
	}
	for start := 0; start < len(items); {
		kind, _ := holder(items[start])
		end := start + 1
		for end < len(items) {
			if k, _ := holder(items[end]); k != kind {
				break
			}
			end++
		}
		if kind == "MachineDeployment" || kind == "MachinePool" {
			run := items[start:end]
			sort.SliceStable(run, func(i, j int) bool {
				_, a := holder(run[i])
				_, b := holder(run[j])
				return a < b
			})
		}
		start = end
	}
	return request
}

// differences lists the JSON paths where a and b differ.
func differences(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var out []string
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			out = append(out, differences(path+"."+k, am[k], bm[k])...)
		}
		sort.Strings(out)
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		var out []string
		for i := range al {
			out = append(out, differences(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return []string{fmt.Sprintf("%s (manager %s, render %s)", path, ja, jb)}
}

// renderedObjectsMatch compares the objects render prints with those CAPI created: the same
// kind and name, the same spec, labels and annotations (the API server's own metadata aside).
func (s *scenarios) renderedObjectsMatch(ctx context.Context, out []byte, want []string) error {
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return fmt.Errorf("render --json printed no List: %w", err)
	}
	var kinds []string
	for _, rendered := range list.Items {
		r := unstructured.Unstructured{Object: rendered}
		real, err := s.kube.Get(ctx, r.GetAPIVersion(), r.GetKind(), r.GetNamespace(), r.GetName())
		if err != nil {
			return fmt.Errorf("render printed %s %s, which CAPI did not create: %w", r.GetKind(), r.GetName(), err)
		}
		withoutControllers(real.Object)
		fields := [][]string{{"spec"}, {"metadata", "labels"}, {"metadata", "annotations"}}
		if r.GetKind() == "Cluster" {
			// render prints the fields of the Cluster its topology controller writes.
			fields = [][]string{{"spec", "infrastructureRef"}, {"spec", "controlPlaneRef"}, {"metadata", "labels"}, {"metadata", "annotations"}}
			if spec, _, _ := unstructured.NestedMap(r.Object, "spec"); len(spec) != 2 {
				return fmt.Errorf("render printed a Cluster whose spec is not its two references: %v", spec)
			}
		}
		for _, field := range fields {
			want, _, _ := unstructured.NestedFieldNoCopy(real.Object, field...)
			got, _, _ := unstructured.NestedFieldNoCopy(r.Object, field...)
			want, got = asJSON(want), asJSON(got)
			if !reflect.DeepEqual(want, got) {
				return fmt.Errorf("%s %s: render's %s differs from CAPI's at %s", r.GetKind(), r.GetName(),
					strings.Join(field, "."), strings.Join(differences(strings.Join(field, "."), want, got), ", "))
			}
		}
		kinds = append(kinds, r.GetKind())
	}
	// Every object CAPI made for the topology, none missing.
	got := append([]string(nil), kinds...)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("render printed %v, CAPI made %v", got, want)
	}
	fmt.Printf("  render's objects equal those CAPI created (spec, labels, annotations; the Cluster's references, labels, annotations): %s\n", strings.Join(kinds, ", "))
	return nil
}

// asJSON is v as encoding/json reads it back: every number a float64, so an int64 from the
// API server and the same number from render's output compare equal, as JSON numbers do.
func asJSON(v any) any {
	data, err := json.Marshal(v)
	must(err)
	var out any
	must(json.Unmarshal(data, &out))
	return out
}

// writtenByControllers lists, per kind, the fields controllers write after the topology
// controller created the object (neither the topology controller nor the API server does):
// the MachineDeployment controller's revision, what the MachinePool controller copies from
// its bootstrap config and infrastructure machine pool, and the instances' provider IDs the
// infrastructure provider (played by the harness) lists once a MachinePool has Nodes.
var writtenByControllers = map[string][][]string{
	"MachineDeployment":                {{"metadata", "annotations", "machinedeployment.clusters.x-k8s.io/revision"}},
	"MachinePool":                      {{"spec", "providerIDList"}, {"spec", "template", "spec", "bootstrap", "dataSecretName"}},
	"GenericInfrastructureMachinePool": {{"spec", "providerIDList"}},
}

// withoutControllers removes from a CAPI object what its controllers wrote (an annotation map
// left empty with it).
func withoutControllers(object map[string]any) {
	kind, _ := object["kind"].(string)
	for _, path := range writtenByControllers[kind] {
		unstructured.RemoveNestedField(object, path...)
	}
	if annotations, ok, _ := unstructured.NestedMap(object, "metadata", "annotations"); ok && len(annotations) == 0 {
		unstructured.RemoveNestedField(object, "metadata", "annotations")
	}
}

// renderHeldMatches renders c1 from the live objects while the lifecycle hook `held` holds its
// upgrade, telling render that hook blocks (`--blocking-hook`), and requires the objects CAPI
// stored: while a hook holds, CAPI's reconcile computes what is already stored. The class takes
// its upgrade plan from the lifecycle extension (`--extension-url`, `--extension-ca`). AfterClusterUpgrade is
// called after the desired state is written, so it is not named to render. When render asks
// GenerateUpgradePlan, it must send the settings CAPI's client sent the lifecycle extension
// (that ExtensionConfig's own, not the topology extension's). It returns render's status lines
// (the hooks it called).
func (s *scenarios) renderHeldMatches(ctx context.Context, held string) (string, error) {
	// A folder per render: a hook may hold more than once (each step of a chained upgrade).
	dir, err := os.MkdirTemp(s.work, "render-held-"+held+"-")
	if err != nil {
		return "", err
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, s.pki.CAPEM, 0o644); err != nil {
		return "", err
	}
	// The manager's last GenerateUpgradePlan request, read before render's is recorded over it.
	managerPlan := s.lifecycleRecorded.lastRequest("GenerateUpgradePlan", "upgrade-plan")
	requests := filepath.Join(dir, "requests")
	args := []string{"render", "--extension", s.extURL, "--ca", caFile, "--cert", s.clientCert, "--key", s.clientKey,
		"--extension-url", lifecycleExt + "=" + s.lifecycleURL, "--extension-ca", lifecycleExt + "=" + caFile,
		"--kubeconfig", s.execKubeconfig, "--cluster", ns + "/c1", "--write-inputs", dir, "--write-requests", requests, "--json", "--capi-crds",
		"--capi-version", fmt.Sprintf("1.%d", s.minor)}
	if held != "AfterClusterUpgrade" {
		args = append(args, "--blocking-hook", held)
	}
	cmd := exec.CommandContext(ctx, s.capiExt, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	_ = os.WriteFile(filepath.Join(dir, "render.json"), out, 0o644)
	if err != nil {
		return "", fmt.Errorf("capi-ext %s failed: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := s.renderedObjectsMatch(ctx, out, []string{"Cluster", "GenericBootstrapConfig", "GenericBootstrapConfigTemplate", "GenericControlPlane",
		"GenericInfrastructureCluster", "GenericInfrastructureMachinePool", "GenericInfrastructureMachineTemplate", "GenericInfrastructureMachineTemplate",
		"MachineDeployment", "MachineHealthCheck", "MachineHealthCheck", "MachinePool"}); err != nil {
		return "", fmt.Errorf("while %s held, render told it blocks (inputs and output in %s): %w", held, dir, err)
	}
	plans, _ := filepath.Glob(filepath.Join(requests, "*-GenerateUpgradePlan.request.json"))
	for _, plan := range plans {
		if err := sameSettings(managerPlan, plan); err != nil {
			return "", fmt.Errorf("while %s held, render's GenerateUpgradePlan request: %w", held, err)
		}
	}
	return stderr.String(), nil
}

// sameSettings checks the request render wrote to file sends the settings of the manager's
// request (what CAPI's runtime client merged from the ExtensionConfig).
func sameSettings(manager []byte, file string) error {
	if manager == nil {
		return fmt.Errorf("the manager sent no request to compare with")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var sent, rendered struct {
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal(manager, &sent); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &rendered); err != nil {
		return err
	}
	if !reflect.DeepEqual(sent.Settings, rendered.Settings) {
		return fmt.Errorf("settings %v, CAPI sent %v (%s)", rendered.Settings, sent.Settings, file)
	}
	return nil
}
