package main

// The API-server rules differential: objects generated from real CRDs' schemas (valid ones,
// and ones mutated the ways patches go wrong: unknown fields, wrong types, nulls, numbers out
// of range or not integers, required fields dropped, duplicates in sets and maps) are created
// with a server-side dry run on the real kube-apiserver and given to render's API-server rules
// (`capi-ext-conformance api-rules`). For each object: both store it, with the same object
// (spec and everything else but the server's metadata) and the same pruned fields (the API
// server's `unknown field` warnings), or both refuse it with the same causes (field path and
// type, as a multiset). Each object the server stores is also applied the way Cluster API writes
// its objects, by a server-side apply dry run without its status (CAPI's desired objects have
// none): accepted when nothing outside the status was pruned, refused naming every such pruned
// field (`field not declared in schema`) otherwise, as render's error for a field a patch sets
// that the CRD lacks says.

import (
	"bufio"
	"bytes"
	"capi-ext.local/devenv"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type apiRulesOptions struct {
	crds        string // comma-separated files or directories
	cases       int
	seed        int64
	randomSeed  int64
	failuresDir string
}

type crdUnderTest struct {
	source     string
	group      string
	kind       string
	plural     string
	namespaced bool
	version    string
	schema     map[string]any
}

func runAPIRules(o options, work string, ps *Processes) error {
	ctx := context.Background()
	p := NewPKI(filepath.Join(work, "pki"), "capi-ext-api-rules-ca")
	adminCert, adminKey := p.Leaf("admin", "admin", []string{"system:masters"}, false)
	apiPort, kube, err := devenv.StartAPIServer(o.binaries(), work, ps, p, adminCert, adminKey)
	if err != nil {
		return err
	}
	var crds []crdUnderTest
	var paths []string
	for _, path := range strings.Split(o.apiRules.crds, ",") {
		if path == "" {
			continue
		}
		paths = append(paths, path)
		found, err := readCRDs(path)
		if err != nil {
			return err
		}
		crds = append(crds, found...)
	}
	step(fmt.Sprintf("install %d CRDs", len(crds)))
	var names []string
	for _, path := range paths {
		files, err := yamlFiles(path)
		if err != nil {
			return err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			created, err := kube.Apply(ctx, string(data))
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			names = append(names, created...)
		}
	}
	if err := kube.WaitEstablished(ctx, names); err != nil {
		return err
	}
	if _, err := kube.Apply(ctx, "apiVersion: v1\nkind: Namespace\nmetadata: {name: api-rules}\n"); err != nil {
		return err
	}
	admin := HTTPClient(p.CAPEM, adminCert, adminKey)
	admin.Timeout = 60 * time.Second
	base := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	total := 0
	failed := false
	for _, seed := range []int64{o.apiRules.seed, o.apiRules.randomSeed} {
		report, err := apiRulesRound(o, admin, base, crds, paths, seed)
		if err != nil {
			return err
		}
		total += report.cases
		fmt.Println(report.String())
		// A rule render could not run leaves the object unproven, whatever the answers were.
		if report.differences > 0 || report.unchecked > 0 {
			failed = true
		}
	}
	if failed {
		return fmt.Errorf("render's API-server rules differ from kube-apiserver's, or left CEL rules unchecked (cases in %s)", o.apiRules.failuresDir)
	}
	fmt.Printf("ok: %d objects over %d CRDs, render's API-server rules equal kube-apiserver's on every one\n", total, len(crds))
	return nil
}

func yamlFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.Walk(path, func(f string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() && (strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") || strings.HasSuffix(f, ".json")) {
			files = append(files, f)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

func readCRDs(path string) ([]crdUnderTest, error) {
	files, err := yamlFiles(path)
	if err != nil {
		return nil, err
	}
	var out []crdUnderTest
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := Docs(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, obj := range objs {
			if obj.GetKind() != "CustomResourceDefinition" {
				continue
			}
			c := crdUnderTest{source: filepath.Base(f)}
			c.group, _, _ = unstructured.NestedString(obj.Object, "spec", "group")
			c.kind, _, _ = unstructured.NestedString(obj.Object, "spec", "names", "kind")
			c.plural, _, _ = unstructured.NestedString(obj.Object, "spec", "names", "plural")
			scope, _, _ := unstructured.NestedString(obj.Object, "spec", "scope")
			c.namespaced = scope != "Cluster"
			versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
			for _, v := range versions {
				vm := v.(map[string]any)
				if storage, _ := vm["storage"].(bool); storage {
					c.version, _ = vm["name"].(string)
					c.schema, _, _ = unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
				}
			}
			if c.schema != nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// One generated object and what each side made of it.
type apiRulesCase struct {
	crd      *crdUnderTest
	object   map[string]any
	mutation string
	server   apiRulesAnswer
	render   apiRulesAnswer
	// applied: the server-side apply dry run's refusal ("" when accepted), for an object the
	// create stored, its causes (a validation refusal), and the object it would store when
	// accepted
	applied       string
	appliedCauses []apiRulesCause
	appliedObject map[string]any
}

type apiRulesCause struct {
	Field   string `json:"field"`
	Type    string `json:"reason"`
	Message string `json:"message"`
}

type apiRulesAnswer struct {
	Stored    map[string]any  `json:"object,omitempty"`
	Pruned    []string        `json:"pruned,omitempty"`
	Causes    []apiRulesCause `json:"errors,omitempty"`
	Unchecked []any           `json:"unchecked,omitempty"`
	Refused   string          `json:"refused,omitempty"`
	NoCRD     bool            `json:"noCrd,omitempty"`
	Other     string          `json:"other,omitempty"` // an answer that is neither (the server's)
	// render's answer for the object's server-side apply (without its status)
	Apply *apiRulesAnswer `json:"apply,omitempty"`
}

type apiRulesReport struct {
	seed                                           int64
	cases, stored, refused, differences, unchecked int
	// server-side apply of the stored objects: accepted (nothing pruned: the same object),
	// refused naming the pruned fields, accepted with them dropped (a schema server-side apply
	// cannot type), refused for a null the create dropped (the same causes)
	applyAccepted, applyRefused, applyDropped, applyNull int
	byMutation                                           map[string]int
}

func (r apiRulesReport) String() string {
	var muts []string
	for m, n := range r.byMutation {
		muts = append(muts, fmt.Sprintf("%s %d", m, n))
	}
	sort.Strings(muts)
	return fmt.Sprintf("seed %d: %d objects: %d stored by both (same object, same pruned fields; server-side apply: %d accepted storing the same object, %d refused naming every pruned field, %d accepted with every pruned field dropped, %d refused for a null with the same causes), %d refused by both (same causes), %d differences; %d with CEL rules render could not run; mutations: %s",
		r.seed, r.cases, r.stored, r.applyAccepted, r.applyRefused, r.applyDropped, r.applyNull, r.refused, r.differences, r.unchecked, strings.Join(muts, ", "))
}

func apiRulesRound(o options, admin *http.Client, base string, crds []crdUnderTest, paths []string, seed int64) (apiRulesReport, error) {
	rng := rand.New(rand.NewSource(seed))
	report := apiRulesReport{seed: seed, byMutation: map[string]int{}}
	var cases []*apiRulesCase
	for i := 0; i < o.apiRules.cases; i++ {
		crd := &crds[i%len(crds)]
		g := &objectGen{rng: rng}
		obj := g.object(crd, fmt.Sprintf("o%d-%d", seed%100000, i))
		mutation := "none"
		if rng.Intn(3) > 0 {
			mutation = g.mutate(obj, crd.schema)
		}
		report.byMutation[mutation]++
		cases = append(cases, &apiRulesCase{crd: crd, object: obj, mutation: mutation})
	}
	// The API server: four at a time.
	var wg sync.WaitGroup
	next := make(chan *apiRulesCase)
	var firstErr error
	var mu sync.Mutex
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				a, err := dryRunCreate(admin, base, c)
				if err == nil && a.Stored != nil {
					c.applied, c.appliedCauses, c.appliedObject, err = dryRunApply(admin, base, c)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				c.server = a
			}
		}()
	}
	for _, c := range cases {
		next <- c
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return report, firstErr
	}
	// render: one process, one line per object.
	var in bytes.Buffer
	for _, c := range cases {
		line, _ := json.Marshal(c.object)
		in.Write(line)
		in.WriteByte('\n')
	}
	cmd := exec.Command(o.conformanceBin, append([]string{"api-rules"}, paths...)...)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return report, fmt.Errorf("capi-ext-conformance api-rules: %w", err)
	}
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(make([]byte, 1<<20), 1<<28)
	i := 0
	for scanner.Scan() {
		if i >= len(cases) {
			break
		}
		if err := json.Unmarshal(scanner.Bytes(), &cases[i].render); err != nil {
			return report, fmt.Errorf("render's answer %d: %w", i, err)
		}
		i++
	}
	if i != len(cases) {
		return report, fmt.Errorf("render answered %d of %d objects", i, len(cases))
	}
	shown := 0
	for n, c := range cases {
		report.cases++
		if len(c.render.Unchecked) > 0 {
			report.unchecked++
		}
		diff := compareAPIRules(c)
		if diff == "" && c.server.Stored != nil {
			diff = compareApply(c)
		}
		if diff == "" {
			if len(c.server.Causes) > 0 {
				report.refused++
			} else {
				report.stored++
				switch applyOutcome(c) {
				case "null":
					report.applyNull++
				case "dropped":
					report.applyDropped++
				case "refused":
					report.applyRefused++
				default:
					report.applyAccepted++
				}
			}
			continue
		}
		report.differences++
		if o.apiRules.failuresDir != "" {
			_ = os.MkdirAll(o.apiRules.failuresDir, 0o755)
			data, _ := json.MarshalIndent(map[string]any{"crd": c.crd.source, "kind": c.crd.kind, "mutation": c.mutation, "object": c.object,
				"server": c.server, "render": c.render, "difference": diff}, "", "  ")
			_ = os.WriteFile(filepath.Join(o.apiRules.failuresDir, fmt.Sprintf("seed-%d-case-%d.json", seed, n)), data, 0o644)
		}
		if shown < 5 {
			shown++
			fmt.Printf("  DIFFERENT %s %s (mutation %s): %s\n", c.crd.kind, c.object["metadata"].(map[string]any)["name"], c.mutation, diff)
		}
	}
	return report, nil
}

func dryRunCreate(client *http.Client, base string, c *apiRulesCase) (apiRulesAnswer, error) {
	url := fmt.Sprintf("%s/apis/%s/%s/", base, c.crd.group, c.crd.version)
	if c.crd.namespaced {
		url += "namespaces/api-rules/"
	}
	url += c.crd.plural + "?dryRun=All"
	body, _ := json.Marshal(c.object)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return apiRulesAnswer{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var a apiRulesAnswer
	for _, w := range resp.Header.Values("Warning") {
		// 299 - "unknown field \"spec.x\""
		if i := strings.Index(w, `"`); i >= 0 {
			var text string
			if json.Unmarshal([]byte(w[i:]), &text) == nil && strings.HasPrefix(text, "unknown field ") {
				var field string
				if json.Unmarshal([]byte(strings.TrimPrefix(text, "unknown field ")), &field) == nil {
					a.Pruned = append(a.Pruned, field)
				}
			}
		}
	}
	switch resp.StatusCode {
	case http.StatusCreated, http.StatusOK:
		a.Stored = map[string]any{}
		if err := json.Unmarshal(data, &a.Stored); err != nil {
			return a, err
		}
	case http.StatusUnprocessableEntity:
		var status struct {
			Details struct {
				Causes []apiRulesCause `json:"causes"`
			} `json:"details"`
		}
		if err := json.Unmarshal(data, &status); err != nil {
			return a, err
		}
		a.Causes = status.Details.Causes
	default:
		a.Other = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return a, nil
}

// dryRunApply applies the object as Cluster API writes its objects (server-side apply, its
// field manager, forced), dry run, and returns the server's refusal ("" when it accepts) with
// its causes, or the object it would store.
func dryRunApply(client *http.Client, base string, c *apiRulesCase) (string, []apiRulesCause, map[string]any, error) {
	url := fmt.Sprintf("%s/apis/%s/%s/", base, c.crd.group, c.crd.version)
	if c.crd.namespaced {
		url += "namespaces/api-rules/"
	}
	name, _ := c.object["metadata"].(map[string]any)["name"].(string)
	url += c.crd.plural + "/" + name + "?dryRun=All&fieldManager=capi-topology&force=true"
	body, _ := json.Marshal(withoutStatus(c.object))
	req, _ := http.NewRequest(http.MethodPatch, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/apply-patch+yaml")
	resp, err := client.Do(req)
	if err != nil {
		return "", nil, nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
		stored := map[string]any{}
		return "", nil, stored, json.Unmarshal(data, &stored)
	}
	var status struct {
		Message string
		Details struct {
			Causes []apiRulesCause `json:"causes"`
		} `json:"details"`
	}
	if json.Unmarshal(data, &status) != nil || status.Message == "" {
		status.Message = strings.TrimSpace(string(data))
	}
	return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, status.Message), status.Details.Causes, nil, nil
}

// applyOutcome is how the server-side apply of a stored object went, once compareApply agrees:
// "null", "dropped", "refused" or "accepted".
func applyOutcome(c *apiRulesCase) string {
	switch {
	case c.applied != "" && len(prunedOutsideStatus(c)) == 0:
		return "null"
	case c.applied != "":
		return "refused"
	case len(prunedOutsideStatus(c)) > 0:
		return "dropped"
	}
	return "accepted"
}

func withoutStatus(object map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range object {
		if k != "status" {
			out[k] = v
		}
	}
	return out
}

func prunedOutsideStatus(c *apiRulesCase) []string {
	var pruned []string
	for _, field := range c.server.Pruned {
		if field != "status" && !strings.HasPrefix(field, "status.") && !strings.HasPrefix(field, "status[") {
			pruned = append(pruned, field)
		}
	}
	return pruned
}

// fieldAt is the value at a field path as the API server writes it (`spec.items[0].name`).
func fieldAt(object any, path string) (any, bool) {
	at := object
	for _, segment := range strings.Split(strings.ReplaceAll(path, "[", ".["), ".") {
		if segment == "" {
			continue
		}
		if strings.HasPrefix(segment, "[") {
			var i int
			list, ok := at.([]any)
			if _, err := fmt.Sscanf(segment, "[%d]", &i); err != nil || !ok || i >= len(list) {
				return nil, false
			}
			at = list[i]
			continue
		}
		m, ok := at.(map[string]any)
		if !ok {
			return nil, false
		}
		if at, ok = m[segment]; !ok {
			return nil, false
		}
	}
	return at, true
}

// compareApply says how the server-side apply of a stored object (without its status) differs
// from render's apply of it ("" when it agrees). Nothing pruned outside the status: refused with
// the same causes (a null the create dropped: `must be of type string: "null"`), or accepted
// storing the same object. Else refused naming each pruned field. A list item is named by its
// index in the create's warning and by its key in the apply's refusal: items are compared
// without either.
func compareApply(c *apiRulesCase) string {
	r := c.render.Apply
	if r == nil {
		return "render gave no answer for the server-side apply"
	}
	pruned := prunedOutsideStatus(c)
	if len(pruned) == 0 {
		switch {
		case c.applied != "" && len(c.appliedCauses) == 0:
			return "server-side apply refused an object nothing was pruned from: " + c.applied
		case c.applied != "" || len(r.Causes) > 0:
			if !sameCauses(c.appliedCauses, r.Causes) {
				return fmt.Sprintf("server-side apply causes: API server %v, render %v", describeCauses(c.appliedCauses), describeCauses(r.Causes))
			}
			return ""
		}
		if got, want := normalizeStored(r.Stored), normalizeStored(c.appliedObject); !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("server-side apply stored objects differ: %s", firstDifference("", want, got))
		}
		return ""
	}
	if c.applied == "" {
		// A CRD whose schema server-side apply cannot type (it then types nothing) takes the
		// apply; the fields must still be dropped.
		for _, field := range pruned {
			if _, found := fieldAt(c.appliedObject, field); found {
				return fmt.Sprintf("server-side apply accepted and kept %s, which the create pruned", field)
			}
		}
		return ""
	}
	refusal := listItem.ReplaceAllString(c.applied, "[]")
	for _, field := range pruned {
		if !strings.Contains(refusal, "."+listItem.ReplaceAllString(field, "[]")+": field not declared in schema") {
			return fmt.Sprintf("server-side apply refused it, but not naming the pruned field %s: %s", field, c.applied)
		}
	}
	return ""
}

// listItem is a list item's index or key in a field path.
var listItem = regexp.MustCompile(`\[[^\]]*\]`)

// compareAPIRules says how the two answers differ ("" when they agree).
func compareAPIRules(c *apiRulesCase) string {
	s, r := c.server, c.render
	if s.Other != "" {
		return "the API server answered " + s.Other
	}
	if r.Refused != "" || r.NoCRD {
		return fmt.Sprintf("render refused the object (%q, no CRD: %v)", r.Refused, r.NoCRD)
	}
	sort.Strings(s.Pruned)
	sort.Strings(r.Pruned)
	if !reflect.DeepEqual(nonNil(s.Pruned), nonNil(r.Pruned)) {
		return fmt.Sprintf("pruned fields: API server %v, render %v", s.Pruned, r.Pruned)
	}
	if len(s.Causes) > 0 || len(r.Causes) > 0 {
		if !sameCauses(s.Causes, r.Causes) {
			return fmt.Sprintf("causes: API server %v, render %v", describeCauses(s.Causes), describeCauses(r.Causes))
		}
		return ""
	}
	got, want := normalizeStored(r.Stored), normalizeStored(s.Stored)
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("stored objects differ: %s", firstDifference("", want, got))
	}
	return ""
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func causeKeys(causes []apiRulesCause) []string {
	var keys []string
	for _, c := range causes {
		keys = append(keys, c.Type+" "+c.Field)
	}
	sort.Strings(keys)
	return keys
}

// sameCauses: the same type at the same field, each with the same text (the server's message
// begins with the value, `Invalid value: "null": `, which render's leaves out).
func sameCauses(server, render []apiRulesCause) bool {
	if !reflect.DeepEqual(causeKeys(server), causeKeys(render)) {
		return false
	}
	for _, s := range server {
		found := false
		for _, r := range render {
			if r.Type == s.Type && r.Field == s.Field && strings.HasSuffix(s.Message, r.Message) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func describeCauses(causes []apiRulesCause) []string {
	var out []string
	for _, c := range causes {
		out = append(out, fmt.Sprintf("%s %s (%s)", c.Type, c.Field, c.Message))
	}
	sort.Strings(out)
	return out
}

// normalizeStored drops what the server adds to metadata and reads every number as float64.
func normalizeStored(obj map[string]any) any {
	out := map[string]any{}
	for k, v := range obj {
		if k == "metadata" {
			m, _ := v.(map[string]any)
			out[k] = map[string]any{"name": m["name"], "namespace": m["namespace"], "labels": m["labels"], "annotations": m["annotations"]}
			continue
		}
		out[k] = numbersAsFloats(v)
	}
	return out
}

func numbersAsFloats(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = numbersAsFloats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbersAsFloats(e)
		}
		return out
	case json.Number:
		f, _ := x.Float64()
		return f
	case int64:
		return float64(x)
	case int:
		return float64(x)
	default:
		return v
	}
}

func firstDifference(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: API server %v, render %v", path, want, got)
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if d := firstDifference(path+"."+k, w[k], g[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: API server %v, render %v", path, want, got)
		}
		for i := range w {
			if d := firstDifference(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("%s: API server %v, render %v", path, want, got)
		}
		return ""
	}
}

// objectGen draws objects from a CRD schema: required properties always, others often near
// the root and rarely deep down, values inside the schema's bounds and enums mostly.
type objectGen struct {
	rng *rand.Rand
}

func (g *objectGen) object(crd *crdUnderTest, name string) map[string]any {
	obj, _ := g.value(crd.schema, 0).(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	obj["apiVersion"] = crd.group + "/" + crd.version
	obj["kind"] = crd.kind
	meta := map[string]any{"name": name}
	if crd.namespaced {
		meta["namespace"] = "api-rules"
	}
	obj["metadata"] = meta
	return obj
}

func schemaType(s map[string]any) string {
	if b, _ := s["x-kubernetes-int-or-string"].(bool); b {
		return "int-or-string"
	}
	t, _ := s["type"].(string)
	return t
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

var friendly = []string{"a", "abc", "web-1", "10.0.0.1", "v1.34.0", "kube-system", "Ready", "True", "x.y.z", "/var/lib", "192.168.0.0/16", "2025-01-01T00:00:00Z", "30s", "1h", "aGVsbG8=", "us-east-1", "https://example.com", "", "A_B", "ünïcode", "with space"}

func (g *objectGen) str(s map[string]any) string {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 && g.rng.Intn(5) > 0 {
		if e, ok := enum[g.rng.Intn(len(enum))].(string); ok {
			return e
		}
	}
	switch s["format"] {
	case "date-time":
		if g.rng.Intn(4) > 0 {
			return time.Unix(g.rng.Int63n(2e9), 0).UTC().Format(time.RFC3339)
		}
	case "byte":
		if g.rng.Intn(4) > 0 {
			return []string{"aGVsbG8=", "", "Zm9vYmFy", "YQ=="}[g.rng.Intn(4)]
		}
	case "duration":
		return []string{"30s", "1h2m", "5 minutes", "forever", "10ms"}[g.rng.Intn(5)]
	case "cidr":
		return []string{"10.0.0.0/16", "fd00::/8", "10.0.0.1", "300.0.0.0/8", "010.0.0.0/8"}[g.rng.Intn(5)]
	case "uri":
		return []string{"https://example.com/x", "/path", "not a uri", "mailto:a@b", "http://[::1]:80/"}[g.rng.Intn(5)]
	}
	out := friendly[g.rng.Intn(len(friendly))]
	if g.rng.Intn(3) == 0 {
		out += fmt.Sprint(g.rng.Intn(1000))
	}
	if max, ok := num(s["maxLength"]); ok && g.rng.Intn(4) > 0 && len([]rune(out)) > int(max) {
		out = string([]rune(out)[:int(max)])
	}
	if min, ok := num(s["minLength"]); ok && g.rng.Intn(4) > 0 {
		for len([]rune(out)) < int(min) {
			out += "a"
		}
	}
	return out
}

func (g *objectGen) integer(s map[string]any) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 && g.rng.Intn(5) > 0 {
		return enum[g.rng.Intn(len(enum))]
	}
	lo, hasLo := num(s["minimum"])
	hi, hasHi := num(s["maximum"])
	switch {
	case hasLo && hasHi && g.rng.Intn(4) > 0:
		return int64(lo) + g.rng.Int63n(int64(hi-lo)+1)
	case hasLo && g.rng.Intn(4) > 0:
		return int64(lo) + g.rng.Int63n(100)
	case hasHi && g.rng.Intn(4) > 0:
		return int64(hi) - g.rng.Int63n(100)
	}
	return []int64{0, 1, 3, 10, 443, 6443, -1, 65536, 1 << 31, -(1 << 40)}[g.rng.Intn(10)]
}

func (g *objectGen) value(s map[string]any, depth int) any {
	if s == nil {
		return g.scalar()
	}
	if d, ok := s["default"]; ok && g.rng.Intn(3) == 0 {
		return deepCopyJSON(d)
	}
	switch schemaType(s) {
	case "int-or-string":
		if g.rng.Intn(2) == 0 {
			return g.integer(s)
		}
		return []string{"50%", "8080", "http", "10"}[g.rng.Intn(4)]
	case "string":
		return g.str(s)
	case "integer":
		return g.integer(s)
	case "number":
		return float64(g.rng.Intn(2000))/8 - 10
	case "boolean":
		return g.rng.Intn(2) == 0
	case "array":
		items, _ := s["items"].(map[string]any)
		n := g.rng.Intn(3)
		if depth > 6 {
			n = g.rng.Intn(2)
		}
		if min, ok := num(s["minItems"]); ok && g.rng.Intn(4) > 0 && n < int(min) {
			n = int(min)
		}
		out := []any{}
		for i := 0; i < n; i++ {
			out = append(out, g.value(items, depth+1))
		}
		return out
	case "object", "":
		props, _ := s["properties"].(map[string]any)
		if props == nil && schemaType(s) == "" {
			if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); !b {
				return g.scalar()
			}
		}
		out := map[string]any{}
		required := map[string]bool{}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					required[name] = true
				}
			}
		}
		p := 0.6
		if depth > 2 {
			p = 0.35
		}
		if depth > 5 {
			p = 0.1
		}
		var names []string
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if required[name] || g.rng.Float64() < p {
				ps, _ := props[name].(map[string]any)
				out[name] = g.value(ps, depth+1)
			}
		}
		if add, ok := s["additionalProperties"].(map[string]any); ok && depth < 8 {
			for i := g.rng.Intn(3); i > 0; i-- {
				out[[]string{"k1", "key.example.com/x", "k-3"}[g.rng.Intn(3)]] = g.value(add, depth+1)
			}
		}
		if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b && props == nil && g.rng.Intn(2) == 0 {
			out["free"] = map[string]any{"form": g.scalar()}
		}
		return out
	}
	return g.scalar()
}

func (g *objectGen) scalar() any {
	switch g.rng.Intn(5) {
	case 0:
		return friendly[g.rng.Intn(len(friendly))]
	case 1:
		return int64(g.rng.Intn(100))
	case 2:
		return g.rng.Intn(2) == 0
	case 3:
		return 2.5
	}
	return nil
}

func deepCopyJSON(v any) any {
	data, _ := json.Marshal(v)
	var out any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	_ = d.Decode(&out)
	return fixNumbers(out)
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// A place in the object and the schema there.
type spot struct {
	parent any    // map[string]any or []any
	key    string // in a map
	index  int    // in a list
	schema map[string]any
}

func (g *objectGen) spots(v any, s map[string]any, out *[]spot) {
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		add, _ := s["additionalProperties"].(map[string]any)
		// In key order: a seed must draw the same mutation every run (map order is random).
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e := x[k]
			if k == "apiVersion" || k == "kind" || k == "metadata" {
				continue
			}
			ps, _ := props[k].(map[string]any)
			if ps == nil {
				ps = add
			}
			*out = append(*out, spot{parent: x, key: k, schema: ps})
			g.spots(e, ps, out)
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		for i, e := range x {
			*out = append(*out, spot{parent: x, index: i, schema: items})
			g.spots(e, items, out)
		}
	}
}

func setSpot(sp spot, v any) {
	switch p := sp.parent.(type) {
	case map[string]any:
		p[sp.key] = v
	case []any:
		p[sp.index] = v
	}
}

func getSpot(sp spot) any {
	switch p := sp.parent.(type) {
	case map[string]any:
		return p[sp.key]
	case []any:
		return p[sp.index]
	}
	return nil
}

// mutate breaks the object in one of the ways a patch can, and names the way.
func (g *objectGen) mutate(obj map[string]any, root map[string]any) string {
	var spots []spot
	g.spots(obj, root, &spots)
	if len(spots) == 0 {
		obj["spec"] = map[string]any{"unknownField": "x"}
		return "unknown-field"
	}
	sp := spots[g.rng.Intn(len(spots))]
	cur := getSpot(sp)
	switch g.rng.Intn(9) {
	case 0, 1: // an unknown field in an object near there
		if m, ok := cur.(map[string]any); ok {
			m["unknownField"] = g.scalar()
		} else if m, ok := sp.parent.(map[string]any); ok {
			m["unknwonField"] = map[string]any{"x": int64(1)}
		} else {
			obj["unknownTopField"] = true
		}
		return "unknown-field"
	case 2: // a wrong type
		switch cur.(type) {
		case string:
			setSpot(sp, int64(g.rng.Intn(10)))
		case map[string]any:
			setSpot(sp, "not-an-object")
		case []any:
			setSpot(sp, map[string]any{"a": "b"})
		case bool:
			setSpot(sp, "true")
		default:
			setSpot(sp, []any{"x"})
		}
		return "wrong-type"
	case 3: // a null; half the time on a field that is nullable or has a default, if any
		var kept []spot
		for _, candidate := range spots {
			if _, inMap := candidate.parent.(map[string]any); inMap && (candidate.schema["nullable"] == true || candidate.schema["default"] != nil) {
				kept = append(kept, candidate)
			}
		}
		if len(kept) > 0 && g.rng.Intn(2) == 0 {
			sp = kept[g.rng.Intn(len(kept))]
			setSpot(sp, nil)
			if sp.schema["nullable"] == true {
				return "null-nullable"
			}
			return "null-defaulted"
		}
		setSpot(sp, nil)
		return "null"
	case 4: // numbers: not integers, out of int32/int64, huge
		setSpot(sp, []any{1.5, 2.0, float64(math.MaxInt32) + 1, 1e19, -0.0, int64(math.MaxInt64)}[g.rng.Intn(6)])
		return "number"
	case 5: // a required property dropped
		if m, ok := cur.(map[string]any); ok {
			if keys := slices.Sorted(maps.Keys(m)); len(keys) > 0 {
				delete(m, keys[g.rng.Intn(len(keys))])
			}
			return "drop-property"
		}
		if m, ok := sp.parent.(map[string]any); ok {
			delete(m, sp.key)
			return "drop-property"
		}
		return "none"
	case 6: // a duplicate list item
		if l, ok := cur.([]any); ok && len(l) > 0 {
			setSpot(sp, append(l, deepCopyJSON(l[0])))
			return "duplicate-item"
		}
		if l, ok := sp.parent.([]any); ok && len(l) > 0 {
			_ = l
		}
		setSpot(sp, g.value(sp.schema, 3))
		return "redraw"
	case 7: // a string that breaks its enum, pattern, format or length
		setSpot(sp, []string{"NOT-IN-ENUM", strings.Repeat("x", 300), "Bad_Value!", "", "2025-13-45T99:99:99Z", "%%%"}[g.rng.Intn(6)])
		return "bad-string"
	default: // another draw of the same schema
		setSpot(sp, g.value(sp.schema, 3))
		return "redraw"
	}
}
