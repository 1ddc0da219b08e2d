package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/exp/topology/scope"
	"sigs.k8s.io/yaml"
)

// render runs `capi-ext render` on the case's files and returns its objects by key.
func render(opts options, dir string, blocking []string) (map[string]map[string]any, error) {
	args := []string{"render",
		"--cluster", filepath.Join(dir, "cluster.yaml"),
		"--clusterclass", filepath.Join(dir, "clusterclass.yaml"),
		"--templates", filepath.Join(dir, "templates.yaml"),
		"--extension-config", filepath.Join(dir, "extensionconfig.yaml"),
		"--url", opts.url, "--ca", opts.caFile,
		"--capi-version", opts.capiVersion, "--json"}
	for _, hook := range blocking {
		args = append(args, "--blocking-hook", hook)
	}
	cmd := exec.Command(opts.capiExt, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	_ = os.WriteFile(filepath.Join(dir, "render.stderr"), stderr.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "render.json"), stdout.Bytes(), 0o644)
	if err != nil {
		// render --json reports the step it stopped at on stdout.
		var failure struct {
			Kind, Step, Message string
		}
		if json.Unmarshal(stdout.Bytes(), &failure) == nil && failure.Kind == "RenderError" {
			return nil, refused(failure.Step, fmt.Errorf("%s", failure.Message))
		}
		return nil, fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 6))
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &list); err != nil {
		return nil, fmt.Errorf("render printed no JSON list: %v", err)
	}
	out := map[string]map[string]any{}
	for _, item := range list.Items {
		out[objectKey(item)] = item
	}
	return out, nil
}

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// objectKey names an object by what it is, not by its (random) name: its kind and the
// MachineDeployment or MachinePool topology it belongs to (a MachineHealthCheck: the one its
// selector names, else the control plane).
func objectKey(o map[string]any) string {
	labels, _, _ := unstructured.NestedStringMap(o, "metadata", "labels")
	if o["kind"] == "MachineHealthCheck" {
		labels, _, _ = unstructured.NestedStringMap(o, "spec", "selector", "matchLabels")
		if labels["topology.cluster.x-k8s.io/deployment-name"] == "" {
			return "MachineHealthCheck of the control plane"
		}
	}
	key := fmt.Sprint(o["kind"])
	if md := labels["topology.cluster.x-k8s.io/deployment-name"]; md != "" {
		key += " of MachineDeployment topology " + md
	}
	if mp := labels["topology.cluster.x-k8s.io/pool-name"]; mp != "" {
		key += " of MachinePool topology " + mp
	}
	return key
}

// compareObjects lists every difference between CAPI's objects and render's, by object and
// field path. Both go through JSON first so numbers compare alike. generated lists the names
// CAPI generated for the MachineDeployments and MachinePools: a patch may copy them
// (builtin.machineDeployment.name) into a template.
func compareObjects(want, got map[string]map[string]any, generated []string) []string {
	return sides{want: "CAPI", got: "render", generated: generated}.compareObjects(want, got)
}

// sides names what is compared in the differences: the reference, then the one checked; the
// reference's generated names of objects not compared (generated); and the random parts of
// the generated names of one and the other (names).
type sides struct {
	want, got string
	generated []string
	names     map[string]string
}

func (s sides) compareObjects(want, got map[string]map[string]any) []string {
	var diffs []string
	s.names, diffs = randomParts(want, got, s.generated)
	for _, k := range unionKeys(want, got) {
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot:
			diffs = append(diffs, fmt.Sprintf("%s: %s computes it, %s does not", k, s.want, s.got))
		case !inWant:
			diffs = append(diffs, fmt.Sprintf("%s: %s computes it, %s does not", k, s.got, s.want))
		default:
			diffs = append(diffs, s.compareValues(k, "", normalize(w), normalize(g))...)
		}
	}
	return diffs
}

// unionKeys lists the keys of both maps, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func normalize(v any) any {
	b, err := json.Marshal(v)
	must(err)
	var out any
	must(json.Unmarshal(b, &out))
	return out
}

func (s sides) compareValues(object, path string, want, got any) []string {
	at := func() string {
		if path == "" {
			return object
		}
		return object + " " + path
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s %s, %s %s", at(), s.want, show(want), s.got, show(got))}
		}
		var diffs []string
		for _, k := range unionKeys(w, g) {
			wv, inW := w[k]
			gv, inG := g[k]
			p := path + "." + k
			switch {
			case !inG:
				diffs = append(diffs, fmt.Sprintf("%s %s: %s %s, %s has no such field", object, p, s.want, show(wv), s.got))
			case !inW:
				diffs = append(diffs, fmt.Sprintf("%s %s: %s %s, %s has no such field", object, p, s.got, show(gv), s.want))
			default:
				diffs = append(diffs, s.compareValues(object, p, wv, gv)...)
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %s %s, %s %s", at(), s.want, show(want), s.got, show(got))}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, s.compareValues(object, fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	case string:
		if g, ok := got.(string); ok && s.sameModuloNames(w, g) {
			return nil
		}
	default:
		if fmt.Sprint(want) == fmt.Sprint(got) && fmt.Sprintf("%T", want) == fmt.Sprintf("%T", got) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: %s %s, %s %s", at(), s.want, show(want), s.got, show(got))}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// randomAlphabet is the alphabet of the five random characters CAPI appends to generated
// names (k8s.io/apimachinery/pkg/util/rand.String); render derives its own from the name.
const randomAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// randomParts pairs the random parts of the names both sides generated: wherever the two
// sides hold a name at the same place (a `name` field: an object's metadata.name, a holder
// reference, a builtin variable's machineDeployment.name...; or any field where the
// reference holds one of its generated names) and the two names differ inside five-character
// runs of the random alphabet, the reference's run maps to the other's. The pairing must be
// one to one: a run paired with two different runs (a name copied where another belongs) is
// a difference.
func randomParts(want, got map[string]map[string]any, generated []string) (map[string]string, []string) {
	parts := pairing{to: map[string]string{}, from: map[string]string{}}
	isGenerated := map[string]bool{}
	for _, n := range generated {
		isGenerated[n] = true
	}
	var walk func(w, g any, key string)
	walk = func(w, g any, key string) {
		switch w := w.(type) {
		case map[string]any:
			if g, ok := g.(map[string]any); ok {
				for k, v := range w {
					if gv, ok := g[k]; ok {
						walk(v, gv, k)
					}
				}
			}
		case []any:
			if g, ok := g.([]any); ok && len(g) == len(w) {
				for i := range w {
					walk(w[i], g[i], key)
				}
			}
		case string:
			if b, ok := g.(string); ok && (key == "name" || isGenerated[w]) {
				learnRandomParts(w, b, &parts)
			}
		}
	}
	for _, k := range unionKeys(want, got) {
		w, inWant := want[k]
		if g, ok := got[k]; ok && inWant {
			walk(normalize(w), normalize(g), "")
		}
	}
	return parts.to, parts.conflicts
}

// pairing is a one-to-one map of random parts, and the pairs that broke it.
type pairing struct {
	to, from  map[string]string
	conflicts []string
}

func (p *pairing) pair(a, b string) {
	if old, ok := p.to[a]; ok && old != b {
		p.conflicts = append(p.conflicts, fmt.Sprintf("the random part %q of a generated name stands for both %q and %q", a, old, b))
		return
	}
	if old, ok := p.from[b]; ok && old != a {
		p.conflicts = append(p.conflicts, fmt.Sprintf("the random part %q of a generated name stands for both %q and %q", b, old, a))
		return
	}
	p.to[a], p.from[b] = b, a
}

func learnRandomParts(a, b string, parts *pairing) {
	if a == b || len(a) != len(b) {
		return
	}
	random := func(st int) bool {
		return st >= 0 && st+5 <= len(a) && strings.Trim(a[st:st+5], randomAlphabet) == "" && strings.Trim(b[st:st+5], randomAlphabet) == ""
	}
	for i := 0; i < len(a); i++ {
		if a[i] == b[i] {
			continue
		}
		// The run of five that holds this first differing character (its first characters
		// may be equal by chance).
		for st := i; st >= i-4; st-- {
			if random(st) {
				parts.pair(a[st:st+5], b[st:st+5])
				i = st + 4
				break
			}
		}
	}
}

// sameModuloNames: the strings are equal, or equal once each random part of the reference's
// generated names is replaced by the other side's for the same object: the tolerance covers
// names and the copies of names a patch or a template made, not any string.
func (s sides) sameModuloNames(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) != len(b) || len(s.names) == 0 {
		return false
	}
	for from, to := range s.names {
		a = strings.ReplaceAll(a, from, to)
	}
	return a == b
}

func unstructuredOf(o map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: normalize(o).(map[string]any)}
}

// convert decodes a generated object into a typed one, refusing unknown fields so the
// generator cannot drift from CAPI's types unnoticed.
func convert(o map[string]any, into any) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// writeFailure keeps what both sides computed next to the inputs.
func writeFailure(dir string, r result, capiErr, renderErr error, state *scope.ClusterState) {
	var b strings.Builder
	fmt.Fprintf(&b, "case %s\n", r.name)
	if capiErr != nil {
		fmt.Fprintf(&b, "CAPI: %v\n", capiErr)
	}
	if renderErr != nil {
		fmt.Fprintf(&b, "render: %v\n", renderErr)
	}
	for _, d := range r.differences {
		fmt.Fprintln(&b, d)
	}
	_ = os.WriteFile(filepath.Join(dir, "differences.txt"), []byte(b.String()), 0o644)
	if state != nil {
		objects := capiObjects(state)
		keys := make([]string, 0, len(objects))
		for k := range objects {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var docs []string
		for _, k := range keys {
			y, err := yaml.Marshal(objects[k])
			if err == nil {
				docs = append(docs, "# "+k+"\n"+string(y))
			}
		}
		_ = os.WriteFile(filepath.Join(dir, "capi.yaml"), []byte(strings.Join(docs, "---\n")), 0o644)
	}
}
