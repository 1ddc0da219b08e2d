package main

// The template types of capi-ext-types (generated from the newest release's CRDs) judged by
// each release's Go types (the api packages of the root module before v1.14):
// KubeadmControlPlaneTemplate and KubeadmConfigTemplate, v1beta2 and v1beta1, filled at random
// by randfill as the hooks are, marshalled by Go, decoded and re-encoded by the Rust types, and
// read back into the Go type: go-cmp must find the object unchanged, and every field Go sent
// must land in a typed Rust field (none in the `unknown` maps: that would be a field with a
// wrong name in Rust). Then lossless: the same JSON with fields the types do not know added at
// random places comes back from Rust unchanged.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"reflect"

	"github.com/google/go-cmp/cmp"
	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1beta2 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1beta1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta1"
	controlplanev1beta2 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	"sigs.k8s.io/randfill"
)

type templateKind struct {
	kind, version, group string
	new                  func() any
}

var templateKinds = []templateKind{
	{"KubeadmControlPlaneTemplate", "v1beta2", "controlplane.cluster.x-k8s.io", func() any { return &controlplanev1beta2.KubeadmControlPlaneTemplate{} }},
	{"KubeadmConfigTemplate", "v1beta2", "bootstrap.cluster.x-k8s.io", func() any { return &bootstrapv1beta2.KubeadmConfigTemplate{} }},
	{"KubeadmControlPlaneTemplate", "v1beta1", "controlplane.cluster.x-k8s.io", func() any { return &controlplanev1beta1.KubeadmControlPlaneTemplate{} }},
	{"KubeadmConfigTemplate", "v1beta1", "bootstrap.cluster.x-k8s.io", func() any { return &bootstrapv1beta1.KubeadmConfigTemplate{} }},
}

type typedAnswer struct {
	OK      bool            `json:"ok"`
	Body    json.RawMessage `json:"body"`
	Unknown []string        `json:"unknown"`
	Error   string          `json:"error"`
}

// addUnknownFields adds a field no type knows to some objects of v.
func addUnknownFields(v any, rng *rand.Rand, added *int) {
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			addUnknownFields(x, rng, added)
		}
		// A string: valid in a struct (values of mixed types) and in a map of strings (labels)
		// alike; not in a map whose values are all of another one type (feature gates).
		types := map[string]bool{}
		for _, x := range t {
			types[fmt.Sprintf("%T", x)] = true
		}
		if rng.Intn(4) == 0 && (len(types) > 1 || types["string"]) {
			t[fmt.Sprintf("zzNewField%d", rng.Intn(100))] = fmt.Sprintf("value-%d", rng.Intn(100))
			*added++
		}
	case []any:
		for _, x := range t {
			addUnknownFields(x, rng, added)
		}
	}
}

// roundtripTemplates runs n cases per kind with seed; returns the number that passed.
func roundtripTemplates(rustBin string, n int, seed int64, fail *failure) (int, int) {
	cmd := exec.Command(rustBin, "typed-template")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fail.add("cannot start %s typed-template: %v", rustBin, err)
		return 0, 0
	}
	in := bufio.NewWriter(stdin)
	out := bufio.NewReaderSize(stdout, 1<<20)
	ask := func(k templateKind, object any) (typedAnswer, error) {
		line, _ := json.Marshal(map[string]any{"kind": k.kind, "version": k.version, "object": object})
		if _, err := in.Write(append(line, '\n')); err != nil {
			return typedAnswer{}, err
		}
		if err := in.Flush(); err != nil {
			return typedAnswer{}, err
		}
		answer, err := out.ReadBytes('\n')
		if err != nil {
			return typedAnswer{}, err
		}
		var a typedAnswer
		return a, json.Unmarshal(answer, &a)
	}
	passed, unknownAdded := 0, 0
	rng := rand.New(rand.NewSource(seed))
	for _, k := range templateKinds {
		for i := 0; i < n; i++ {
			// A list of mounts never holds null (the API server refuses a null item).
			f := filler(seed*1000+int64(i)).Funcs(
				func(m *bootstrapv1beta2.MountPoints, c randfill.Continue) {
					*m = bootstrapv1beta2.MountPoints{c.String(5)}
				},
				func(m *bootstrapv1beta1.MountPoints, c randfill.Continue) {
					*m = bootstrapv1beta1.MountPoints{c.String(5)}
				},
			)
			original := k.new()
			f.Fill(original)
			// As the API server stores it (and CAPI reads it): TypeMeta set, nulls pruned
			// (Go writes null for a nil pointer; the API server drops non-nullable nulls).
			raw, _ := json.Marshal(original)
			var generic map[string]any
			_ = json.Unmarshal(raw, &generic)
			dropNulls(generic)
			generic["apiVersion"] = k.group + "/" + k.version
			generic["kind"] = k.kind
			raw, _ = json.Marshal(generic)
			expected := k.new()
			must(json.Unmarshal(raw, expected))

			a, err := ask(k, json.RawMessage(raw))
			if err != nil || !a.OK {
				fail.add("%s %s case %d (seed %d): Rust: %v %s", k.kind, k.version, i, seed, err, a.Error)
				continue
			}
			if len(a.Unknown) > 0 {
				fail.add("%s %s case %d (seed %d): fields Go sent that the Rust type does not know: %v", k.kind, k.version, i, seed, a.Unknown)
				continue
			}
			back := k.new()
			if err := json.Unmarshal(a.Body, back); err != nil {
				fail.add("%s %s case %d (seed %d): Go cannot read the Rust answer: %v", k.kind, k.version, i, seed, err)
				continue
			}
			if d := cmp.Diff(expected, back, compareOptions...); d != "" {
				fail.add("%s %s case %d (seed %d): changed by the Rust types (-Go +Rust):\n%s", k.kind, k.version, i, seed, d)
				continue
			}
			// Lossless: fields no type knows survive, in place.
			var withUnknown any
			_ = json.Unmarshal(raw, &withUnknown)
			addUnknownFields(withUnknown, rng, &unknownAdded)
			a, err = ask(k, withUnknown)
			if err != nil || !a.OK {
				fail.add("%s %s case %d (seed %d), unknown fields added: Rust: %v %s", k.kind, k.version, i, seed, err, a.Error)
				continue
			}
			var got any
			_ = json.Unmarshal(a.Body, &got)
			// Required fields Go omitted when empty come back empty: compare without empty values.
			if !reflect.DeepEqual(dropEmpty(withUnknown), dropEmpty(got)) {
				fail.add("%s %s case %d (seed %d): unknown fields not kept as they were", k.kind, k.version, i, seed)
				continue
			}
			passed++
		}
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	return passed, unknownAdded
}

// dropEmpty removes object members that are null, "", 0, false, [] or {} (after cleaning them).
func dropEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			x = dropEmpty(x)
			switch y := x.(type) {
			case nil:
				delete(t, k)
				continue
			case string:
				if y == "" {
					delete(t, k)
					continue
				}
			case float64:
				if y == 0 {
					delete(t, k)
					continue
				}
			case bool:
				if !y {
					delete(t, k)
					continue
				}
			case map[string]any:
				if len(y) == 0 {
					delete(t, k)
					continue
				}
			case []any:
				if len(y) == 0 {
					delete(t, k)
					continue
				}
			}
			t[k] = x
		}
	case []any:
		for i := range t {
			t[i] = dropEmpty(t[i])
		}
	}
	return v
}
