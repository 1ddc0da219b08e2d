// Command roundtrip makes Cluster API's own Go types the judge of capi-ext's wire format.
//
// For every hook of hooks.runtime.cluster.x-k8s.io/v1alpha1 it fills CAPI's request and
// response types with random (seeded) contents, marshals them with encoding/json as CAPI
// does, has the Rust types decode and re-encode them (capi-ext-conformance roundtrip), decodes
// the result back into CAPI's types and compares. Any field lost, renamed or re-typed fails
// with the hook and the field path.
//
// With -recorded it replays the requests Cluster API's managers sent to the e2e's extensions
// (each extension's --record-requests-dir, kept by the e2e): every field CAPI sent must come
// back from the Rust types unchanged and be read by the typed view.
//
// It also checks the fixtures in cli/fixtures/hooks against CAPI's types (no unknown fields, same
// JSON after CAPI's decode and encode) and validates the example extension's Discovery and
// DiscoverVariables responses with the rules CAPI applies to them.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/randfill"

	hooks "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
)

var allHooks = []hook{
	hooks.Discovery,
	hooks.BeforeClusterCreate, hooks.AfterControlPlaneInitialized, hooks.BeforeClusterUpgrade,
	hooks.BeforeControlPlaneUpgrade, hooks.AfterControlPlaneUpgrade, hooks.BeforeWorkersUpgrade,
	hooks.AfterWorkersUpgrade, hooks.AfterClusterUpgrade, hooks.BeforeClusterDelete,
	hooks.GeneratePatches, hooks.ValidateTopology, hooks.DiscoverVariables,
	hooks.CanUpdateMachine, hooks.CanUpdateMachineSet, hooks.UpdateMachine,
	hooks.GenerateUpgradePlan,
}

type rustSide struct {
	in  *bufio.Writer
	out *bufio.Reader
}

type rustAnswer struct {
	OK    bool            `json:"ok"`
	Body  json.RawMessage `json:"body"`
	Error string          `json:"error"`
	// TypedView: the typed fields of the embedded objects, by the JSON path CAPI gives them.
	TypedView map[string]json.RawMessage `json:"typedView"`
}

// typedFieldsCompared counts the non-empty typed fields typedViewProblems compared.
var typedFieldsCompared int

// typedViewProblems compares each typed field the Rust side read with the value at its path
// in CAPI's JSON. The round trip alone cannot see a typed field with a wrong serde name: the
// key lands in the object's `extra` map and comes back unchanged.
func typedViewProblems(body []byte, view map[string]json.RawMessage) []string {
	var doc any
	must(json.Unmarshal(body, &doc))
	empty := func(v any) bool {
		switch v := v.(type) {
		case nil:
			return true
		case string:
			return v == ""
		case map[string]any:
			return len(v) == 0
		case []any:
			return len(v) == 0
		}
		return false
	}
	// Absent, null and empty read the same here (Go omits empty fields, serde writes defaults).
	var prune func(v any) any
	prune = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range v {
				if e = prune(e); !empty(e) {
					out[k] = e
				}
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = prune(e)
			}
			return out
		}
		return v
	}
	var problems []string
	for path, raw := range view {
		var rust any
		must(json.Unmarshal(raw, &rust))
		var capi any = doc
		for _, key := range strings.Split(path, ".") {
			m, _ := capi.(map[string]any)
			capi = m[key]
		}
		rust, capi = prune(rust), prune(capi)
		if empty(rust) && empty(capi) {
			continue
		}
		typedFieldsCompared++
		if !reflect.DeepEqual(rust, capi) {
			r, _ := json.Marshal(rust)
			c, _ := json.Marshal(capi)
			problems = append(problems, fmt.Sprintf("typed field %s: Rust read %s, CAPI sent %s", path, r, c))
		}
	}
	sort.Strings(problems)
	return problems
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func (r *rustSide) roundtrip(hook, part string, body []byte) (rustAnswer, error) {
	line, err := json.Marshal(map[string]any{"hook": hook, "part": part, "body": json.RawMessage(body)})
	if err != nil {
		return rustAnswer{}, err
	}
	if _, err := r.in.Write(append(line, '\n')); err != nil {
		return rustAnswer{}, err
	}
	if err := r.in.Flush(); err != nil {
		return rustAnswer{}, err
	}
	answer, err := r.out.ReadBytes('\n')
	if err != nil {
		return rustAnswer{}, fmt.Errorf("reading the Rust answer: %w", err)
	}
	var a rustAnswer
	return a, json.Unmarshal(answer, &a)
}

// dropNulls removes object members whose value is null: for encoding/json an explicit null
// and an absent member decode alike (k8s 0.36 no longer writes creationTimestamp: null, older
// releases did).
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if x == nil {
				delete(t, k)
			} else {
				t[k] = dropNulls(x)
			}
		}
	case []any:
		for i := range t {
			t[i] = dropNulls(t[i])
		}
	}
	return v
}

func jsonEqual(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b)) || string(bytes.TrimSpace(a)) == "null" || string(bytes.TrimSpace(b)) == "null"
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

var compareOptions = []cmp.Option{
	cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b runtime.RawExtension) bool { return jsonEqual(a.Raw, b.Raw) }),
	cmp.Comparer(func(a, b apiextensionsv1.JSON) bool { return jsonEqual(a.Raw, b.Raw) }),
	cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) }),
	cmp.Comparer(func(a, b metav1.FieldsV1) bool { return jsonEqual(a.Raw, b.Raw) }),
	// Patch documents are JSON inside base64: CAPI parses them, so they compare as JSON
	// (Go escapes <, > and & as \u003c...; serde_json does not).
	cmp.Comparer(func(a, b hooks.Patch) bool { return a.PatchType == b.PatchType && jsonEqual(a.Patch, b.Patch) }),
	cmp.Comparer(func(a, b hooks.GeneratePatchesResponseItem) bool {
		return a.UID == b.UID && a.PatchType == b.PatchType && jsonEqual(a.Patch, b.Patch)
	}),
}

// filler produces contents shaped as CAPI produces them: valid JSON in raw fields, valid
// enums where the wire has enums, patches that are real patch documents, second-precision
// timestamps (what RFC 3339 on the wire carries).
func filler(seed int64) *randfill.Filler {
	jsonValue := func(c randfill.Continue, depth int) any {
		var value func(int) any
		value = func(d int) any {
			switch k := c.Rand.Intn(6); {
			case k == 0:
				return c.Rand.Int63n(1 << 40)
			case k == 1:
				return c.Rand.Intn(2) == 0
			case k == 2 && d > 0:
				return []any{value(d - 1), value(d - 1)}
			case k >= 3 && d > 0:
				m := map[string]any{}
				for i := 0; i < 1+c.Rand.Intn(3); i++ {
					m[fmt.Sprintf("k%d%d", c.Rand.Intn(1000), i)] = value(d - 1)
				}
				return m
			default:
				return c.String(12)
			}
		}
		return value(depth)
	}
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	patchDoc := func(c randfill.Continue, t hooks.PatchType) []byte {
		if t == hooks.JSONMergePatchType {
			return marshal(map[string]any{"spec": jsonValue(c, 2)})
		}
		ops := []any{}
		for i := 0; i < c.Rand.Intn(3); i++ {
			switch c.Rand.Intn(3) {
			case 0:
				ops = append(ops, map[string]any{"op": "add", "path": "/spec/template/spec/x" + fmt.Sprint(i), "value": jsonValue(c, 2)})
			case 1:
				ops = append(ops, map[string]any{"op": "remove", "path": "/metadata/labels/a~1b"})
			default:
				ops = append(ops, map[string]any{"op": "replace", "path": "/spec/version", "value": c.String(8)})
			}
		}
		return marshal(ops)
	}
	patchType := func(c randfill.Continue) hooks.PatchType {
		return []hooks.PatchType{hooks.JSONPatchType, hooks.JSONMergePatchType}[c.Rand.Intn(2)]
	}
	return randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 3).MaxDepth(7).Funcs(
		func(j *apiextensionsv1.JSON, c randfill.Continue) { j.Raw = marshal(jsonValue(c, 2)) },
		func(r *runtime.RawExtension, c randfill.Continue) {
			if c.Rand.Intn(8) == 0 {
				return
			}
			r.Raw = marshal(map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": c.String(10),
				"metadata": map[string]any{"name": c.String(10), "creationTimestamp": nil}, "spec": jsonValue(c, 3)})
		},
		func(f *metav1.FieldsV1, c randfill.Continue) { f.Raw = []byte(`{"f:spec":{}}`) },
		func(t *metav1.Time, c randfill.Continue) { *t = metav1.Unix(c.Rand.Int63n(4e9), 0) },
		func(x *intstr.IntOrString, c randfill.Continue) {
			if c.Rand.Intn(2) == 0 {
				*x = intstr.FromInt32(c.Rand.Int31())
			} else {
				*x = intstr.FromString(c.String(6))
			}
		},
		func(s *hooks.ResponseStatus, c randfill.Continue) {
			*s = []hooks.ResponseStatus{hooks.ResponseStatusSuccess, hooks.ResponseStatusFailure}[c.Rand.Intn(2)]
		},
		func(p *hooks.FailurePolicy, c randfill.Continue) {
			*p = []hooks.FailurePolicy{hooks.FailurePolicyFail, hooks.FailurePolicyIgnore}[c.Rand.Intn(2)]
		},
		func(p *hooks.PatchType, c randfill.Continue) { *p = patchType(c) },
		func(p *hooks.Patch, c randfill.Continue) {
			if c.Rand.Intn(4) == 0 {
				return
			}
			p.PatchType = patchType(c)
			p.Patch = patchDoc(c, p.PatchType)
		},
		func(i *hooks.GeneratePatchesResponseItem, c randfill.Continue) {
			i.UID = types.UID(c.String(36))
			i.PatchType = patchType(c)
			i.Patch = patchDoc(c, i.PatchType)
		},
	)
}

type failure struct{ lines []string }

func (f *failure) add(format string, args ...any) {
	f.lines = append(f.lines, fmt.Sprintf(format, args...))
}

func fuzz(cat *catalog, rust *rustSide, n int, seed int64, dump string, fail *failure) map[string]int {
	counts := map[string]int{}
	for hi, hook := range allHooks {
		gvh, err := cat.GroupVersionHook(hook)
		if err != nil {
			panic(err)
		}
		name := gvh.Hook
		f := filler(seed + int64(hi)*1_000_003)
		for _, part := range []string{"request", "response"} {
			newObj := func() runtime.Object {
				var obj runtime.Object
				if part == "request" {
					obj, err = cat.NewRequest(gvh)
				} else {
					obj, err = cat.NewResponse(gvh)
				}
				if err != nil {
					panic(err)
				}
				return obj
			}
			kindGVK, _ := cat.Request(gvh)
			if part == "response" {
				kindGVK, _ = cat.Response(gvh)
			}
			reported := 0
			for i := 0; i < n; i++ {
				original := newObj()
				f.Fill(original)
				if part == "request" {
					original.GetObjectKind().SetGroupVersionKind(kindGVK)
				}
				// CAPI builds ValidateTopology items from the patched templates: never nil.
				if v, ok := original.(*hooks.ValidateTopologyRequest); ok {
					for i := range v.Items {
						if v.Items[i] == nil {
							v.Items[i] = &hooks.ValidateTopologyRequestItem{}
							f.Fill(v.Items[i])
						}
					}
				}
				body, err := json.Marshal(original)
				if err != nil {
					panic(err)
				}
				answer, err := rust.roundtrip(name, part, body)
				if err != nil {
					fail.add("%s %s #%d: %v", name, part, i, err)
					return counts
				}
				problem := ""
				if !answer.OK {
					problem = "the Rust types rejected CAPI's JSON: " + answer.Error
				} else {
					back := newObj()
					if err := json.Unmarshal(answer.Body, back); err != nil {
						problem = "CAPI's types cannot decode the Rust JSON: " + err.Error()
					} else if diff := cmp.Diff(original, back, compareOptions...); diff != "" {
						problem = "field differences (-CAPI +after Rust):\n" + diff
					} else if p := typedViewProblems(body, answer.TypedView); len(p) > 0 {
						problem = strings.Join(p, "; ")
					}
				}
				if problem != "" {
					if reported < 3 {
						path := filepath.Join(dump, fmt.Sprintf("%s-%s-%d.json", strings.ToLower(name), part, i))
						_ = os.WriteFile(path, body, 0o644)
						fail.add("%s %s (seed %d, case %d, input saved to %s): %s", name, part, seed, i, path, problem)
					}
					reported++
					continue
				}
				counts[name+" "+part]++
			}
		}
	}
	return counts
}

func checkFixtures(cat *catalog, dir string, fail *failure) int {
	checked := 0
	for _, hook := range allHooks {
		gvh, _ := cat.GroupVersionHook(hook)
		for _, part := range []string{"request", "response"} {
			path := filepath.Join(dir, strings.ToLower(gvh.Hook), part+".json")
			data, err := os.ReadFile(path)
			if err != nil {
				fail.add("fixture %s: %v", path, err)
				continue
			}
			var obj runtime.Object
			if part == "request" {
				obj, _ = cat.NewRequest(gvh)
			} else {
				obj, _ = cat.NewResponse(gvh)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(obj); err != nil {
				fail.add("fixture %s does not decode strictly into CAPI's %T: %v", path, obj, err)
				continue
			}
			again, _ := json.Marshal(obj)
			var a, b any
			_ = json.Unmarshal(data, &a)
			_ = json.Unmarshal(again, &b)
			if !reflect.DeepEqual(dropNulls(a), dropNulls(b)) {
				fail.add("fixture %s changes through CAPI's types (-fixture +CAPI):\n%s", path, cmp.Diff(a, b))
				continue
			}
			checked++
		}
	}
	return checked
}

// validateDiscovery applies the checks CAPI's runtime client runs on a Discovery response
// (status, unique DNS-1123 names, timeouts in [0, 30], known failure policies, hooks known
// to this CAPI's catalog).
func validateDiscovery(cat *catalog, resp *hooks.DiscoveryResponse) []string {
	var errs []string
	if resp.Status != hooks.ResponseStatusSuccess {
		errs = append(errs, fmt.Sprintf("status is %q, not Success", resp.Status))
	}
	seen := map[string]bool{}
	for _, h := range resp.Handlers {
		if seen[h.Name] {
			errs = append(errs, fmt.Sprintf("handler %q: duplicate name", h.Name))
		}
		seen[h.Name] = true
		for _, msg := range validation.IsDNS1123Label(h.Name) {
			errs = append(errs, fmt.Sprintf("handler %q: %s", h.Name, msg))
		}
		if h.TimeoutSeconds != nil && (*h.TimeoutSeconds < 0 || *h.TimeoutSeconds > 30) {
			errs = append(errs, fmt.Sprintf("handler %q: timeoutSeconds %d outside [0, 30]", h.Name, *h.TimeoutSeconds))
		}
		if h.FailurePolicy != nil && *h.FailurePolicy != hooks.FailurePolicyFail && *h.FailurePolicy != hooks.FailurePolicyIgnore {
			errs = append(errs, fmt.Sprintf("handler %q: failurePolicy %q", h.Name, *h.FailurePolicy))
		}
		gv, err := schema.ParseGroupVersion(h.RequestHook.APIVersion)
		if err != nil {
			errs = append(errs, fmt.Sprintf("handler %q: apiVersion: %v", h.Name, err))
			continue
		}
		gvh := groupVersionHook{Group: gv.Group, Version: gv.Version, Hook: h.RequestHook.Hook}
		if !cat.IsHookRegistered(gvh) {
			errs = append(errs, fmt.Sprintf("handler %q: hook %s is not in CAPI's catalog", h.Name, gvh))
		}
	}
	return errs
}

// validateVariables applies CAPI's rules on DiscoverVariables answers that need no CEL
// environment: names, required set, non-empty schema of a known type, label syntax.
func validateVariables(resp *hooks.DiscoverVariablesResponse) []string {
	var errs []string
	if resp.Status != hooks.ResponseStatusSuccess {
		errs = append(errs, fmt.Sprintf("status is %q, not Success", resp.Status))
	}
	seen := map[string]bool{}
	for _, v := range resp.Variables {
		switch {
		case v.Name == "":
			errs = append(errs, "a variable has no name")
		case v.Name == "builtin":
			errs = append(errs, "variable name \"builtin\" is reserved")
		case strings.Contains(v.Name, "."):
			errs = append(errs, fmt.Sprintf("variable %q: names must not contain '.'", v.Name))
		case seen[v.Name]:
			errs = append(errs, fmt.Sprintf("variable %q: duplicate", v.Name))
		}
		seen[v.Name] = true
		// *bool from v1.13 (nil: not set), a plain bool before.
		if r := reflect.ValueOf(v.Required); r.Kind() == reflect.Pointer && r.IsNil() {
			errs = append(errs, fmt.Sprintf("variable %q: required is not set (the ClusterClass status needs it)", v.Name))
		}
		if reflect.ValueOf(v.Schema.OpenAPIV3Schema).IsZero() {
			errs = append(errs, fmt.Sprintf("variable %q: empty openAPIV3Schema", v.Name))
		}
		known := map[string]bool{"object": true, "array": true, "string": true, "integer": true, "number": true, "boolean": true, "": true}
		if !known[v.Schema.OpenAPIV3Schema.Type] {
			errs = append(errs, fmt.Sprintf("variable %q: type %q", v.Name, v.Schema.OpenAPIV3Schema.Type))
		}
	}
	return errs
}

func main() {
	n := flag.Int("n", 1000, "random cases per hook and part")
	seed := flag.Int64("seed", 1, "the fixed seed: every run checks the same cases with it")
	randomSeed := flag.Int64("random-seed", 0, "a second seed, new each run (0: from the clock); a failure prints it, to replay")
	rustBin := flag.String("rust", "", "path to the capi-ext-conformance binary")
	fixtures := flag.String("fixtures", "", "cli/fixtures/hooks directory (empty: not checked)")
	dump := flag.String("dump", os.TempDir(), "where failing inputs are saved")
	recordedDir := flag.String("recorded", "", "a folder of folders of requests the managers sent (<Hook>-<handler>.json), kept by the e2e: replayed through the Rust types")
	recordedHooks := flag.Int("recorded-hooks", 0, "with -recorded: fail unless at least this many hooks have a recorded request")
	flag.Parse()

	cat := newCatalog()
	if err := hooks.AddToCatalog(cat); err != nil {
		panic(err)
	}
	if known := knownHooks(cat); known != len(allHooks) {
		fmt.Fprintf(os.Stderr, "CAPI's catalog has %d hooks, this program checks %d: update allHooks\n", known, len(allHooks))
		os.Exit(1)
	}

	cmd := exec.Command(*rustBin, "roundtrip")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot start %s: %v\n", *rustBin, err)
		os.Exit(1)
	}
	rust := &rustSide{in: bufio.NewWriter(stdin), out: bufio.NewReaderSize(stdout, 1<<20)}
	fail := &failure{}

	if *randomSeed == 0 {
		*randomSeed = time.Now().UnixNano()
	}
	fmt.Printf("seeds: fixed %d, this run's %d (replay with ROUNDTRIP_SEED=%d ROUNDTRIP_RANDOM_SEED=%d)\n", *seed, *randomSeed, *seed, *randomSeed)
	counts := fuzz(cat, rust, *n, *seed, *dump, fail)
	for k, v := range fuzz(cat, rust, *n, *randomSeed, *dump, fail) {
		counts[k] += v
	}
	if *recordedDir != "" {
		replayed, byHook := replayRecorded(cat, rust, *recordedDir, *dump, fail)
		names := make([]string, 0, len(byHook))
		for h := range byHook {
			names = append(names, h)
		}
		sort.Strings(names)
		fmt.Printf("recorded: %d requests the managers sent, of %d hooks (%s), unchanged through the Rust types and read by the typed view\n", replayed, len(byHook), strings.Join(names, ", "))
		if len(byHook) < *recordedHooks {
			fail.add("recorded: requests of %d hooks, want at least %d: a scenario no longer records its extension's requests", len(byHook), *recordedHooks)
		}
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := 0
	for _, k := range keys {
		total += counts[k]
	}
	fmt.Printf("round trip: %d cases passed over %d hook parts (%d per part and seed, seeds %d and %d)\n", total, len(keys), *n, *seed, *randomSeed)

	fmt.Printf("typed fields of embedded objects: %d non-empty values compared with CAPI's JSON\n", typedFieldsCompared)
	templates, unknownAdded := roundtripTemplates(*rustBin, *n/10, *seed, fail)
	t2, u2 := roundtripTemplates(*rustBin, *n/10, *randomSeed, fail)
	templates, unknownAdded = templates+t2, unknownAdded+u2
	fmt.Printf("template types (capi-ext-types): %d KubeadmControlPlaneTemplate and KubeadmConfigTemplate objects (v1beta2, v1beta1) unchanged through the Rust types, every field typed; with %d fields no type knows added, all kept\n", templates, unknownAdded)
	if *fixtures == "" {
		fmt.Println("fixtures: not checked (they are shaped as the newest release sends them)")
	} else {
		fmt.Printf("fixtures: %d files match CAPI's types\n", checkFixtures(cat, *fixtures, fail))
	}

	out, err := exec.Command(*rustBin, "responses").Output()
	if err != nil {
		fail.add("example responses: %v", err)
	} else {
		var both struct {
			Discovery         json.RawMessage `json:"discovery"`
			DiscoverVariables json.RawMessage `json:"discoverVariables"`
		}
		_ = json.Unmarshal(out, &both)
		var disc hooks.DiscoveryResponse
		var vars hooks.DiscoverVariablesResponse
		if err := json.Unmarshal(both.Discovery, &disc); err != nil {
			fail.add("example Discovery does not decode: %v", err)
		}
		if err := json.Unmarshal(both.DiscoverVariables, &vars); err != nil {
			fail.add("example DiscoverVariables does not decode: %v", err)
		}
		for _, e := range validateDiscovery(cat, &disc) {
			fail.add("example Discovery: %s", e)
		}
		for _, e := range validateVariables(&vars) {
			fail.add("example DiscoverVariables: %s", e)
		}
		fmt.Printf("example: Discovery (%d handlers) and DiscoverVariables (%d variables) pass CAPI's rules\n", len(disc.Handlers), len(vars.Variables))
		// The validators must reject what CAPI rejects.
		bad := hooks.DiscoveryResponse{CommonResponse: hooks.CommonResponse{Status: hooks.ResponseStatusSuccess}, Handlers: []hooks.ExtensionHandler{
			{Name: "Bad.Name", RequestHook: hooks.GroupVersionHook{APIVersion: hooks.GroupVersion.String(), Hook: "NoSuchHook"}},
		}}
		if len(validateDiscovery(cat, &bad)) != 2 {
			fail.add("the Discovery validator misses known-bad input: %v", validateDiscovery(cat, &bad))
		}
	}

	if len(fail.lines) > 0 {
		fmt.Fprintf(os.Stderr, "\nFAILED (%d):\n", len(fail.lines))
		for _, l := range fail.lines {
			fmt.Fprintln(os.Stderr, "- "+l)
		}
		os.Exit(1)
	}
	fmt.Println("ok: CAPI's Go types and capi-ext agree")
}

// replayRecorded: every <Hook>-<handler>.json below dir (one folder per extension) decoded by
// CAPI's type of that hook's request (unknown fields refused: CAPI wrote it), sent through the
// Rust types and compared as the random cases are.
func replayRecorded(cat *catalog, rust *rustSide, dir, dump string, fail *failure) (int, map[string]int) {
	byName := map[string]hook{}
	for _, h := range allHooks {
		gvh, err := cat.GroupVersionHook(h)
		if err != nil {
			panic(err)
		}
		byName[strings.ToLower(gvh.Hook)] = h
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) == 0 {
		fail.add("recorded: no request files in %s/*/", dir)
	}
	replayed, byHook := 0, map[string]int{}
	for _, path := range files {
		// <Hook>-<handler>.json, or <Hook>.json for Discovery.
		name, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".json"), "-")
		h, ok := byName[strings.ToLower(name)]
		if !ok {
			fail.add("recorded %s: %q is no hook of this release's catalog", path, name)
			continue
		}
		gvh, _ := cat.GroupVersionHook(h)
		name = gvh.Hook
		body, err := os.ReadFile(path)
		if err != nil {
			fail.add("recorded %s: %v", path, err)
			continue
		}
		original, _ := cat.NewRequest(gvh)
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(original); err != nil {
			fail.add("recorded %s does not decode strictly into CAPI's %T: %v", path, original, err)
			continue
		}
		answer, err := rust.roundtrip(name, "request", body)
		if err != nil {
			fail.add("recorded %s: %v", path, err)
			continue
		}
		problem := ""
		if !answer.OK {
			problem = "the Rust types rejected what CAPI sent: " + answer.Error
		} else {
			back, _ := cat.NewRequest(gvh)
			if err := json.Unmarshal(answer.Body, back); err != nil {
				problem = "CAPI's types cannot decode the Rust JSON: " + err.Error()
			} else if diff := cmp.Diff(original, back, compareOptions...); diff != "" {
				problem = "field differences (-CAPI sent +after Rust):\n" + diff
			} else if diff := jsonDiff(body, answer.Body); diff != "" {
				problem = "the Rust JSON differs from what CAPI sent (-CAPI sent +after Rust):\n" + diff
			} else if p := typedViewProblems(body, answer.TypedView); len(p) > 0 {
				problem = strings.Join(p, "; ")
			}
		}
		if problem != "" {
			saved := filepath.Join(dump, "recorded-"+filepath.Base(filepath.Dir(path))+"-"+filepath.Base(path))
			_ = os.WriteFile(saved, body, 0o644)
			fail.add("recorded %s (saved to %s): %s", path, saved, problem)
			continue
		}
		replayed++
		byHook[name]++
	}
	return replayed, byHook
}

// jsonDiff: the difference of two JSON texts as values (absent and null members alike).
func jsonDiff(a, b []byte) string {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return err.Error()
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return err.Error()
	}
	return cmp.Diff(dropNulls(x), dropNulls(y))
}
