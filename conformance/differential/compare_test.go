package main

import (
	"strings"
	"testing"
)

// The tolerance for random names: a copy of a name CAPI generated is accepted with the other
// side's random part, a name copied where another belongs is not.
func TestRandomNameTolerance(t *testing.T) {
	template := func(name, copied string) map[string]map[string]any {
		return map[string]map[string]any{"T": {
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"copied": copied},
		}}
	}
	capiMD, renderMD := "c-md-0-f2jzk", "c-md-0-jfnpb"
	capiT, renderT := "c-md-0-7skxt", "c-md-0-x9q2b"
	cases := []struct {
		name      string
		want, got map[string]map[string]any
		generated []string
		differs   string
	}{
		{"the MachineDeployment's name copied", template(capiT, capiMD), template(renderT, renderMD), []string{capiMD}, ""},
		{"a generated name not known to be one", template(capiT, capiMD), template(renderT, renderMD), nil, "spec.copied"},
		{"the template's name where the MachineDeployment's belongs", template(capiT, capiMD), template(renderT, renderT), []string{capiMD}, "stands for both"},
		{"the MachineDeployment's name where the template's belongs", template(capiT, capiT), template(renderT, renderMD), nil, "spec.copied"},
		{"any string is not a name", template(capiT, "value-bcdfg"), template(renderT, "value-hjklm"), nil, "spec.copied"},
	}
	for _, c := range cases {
		diffs := strings.Join(sides{want: "CAPI", got: "render", generated: c.generated}.compareObjects(c.want, c.got), "\n")
		if c.differs == "" && diffs != "" {
			t.Errorf("%s: want no difference, got %s", c.name, diffs)
		}
		if c.differs != "" && !strings.Contains(diffs, c.differs) {
			t.Errorf("%s: want a difference naming %q, got %q", c.name, c.differs, diffs)
		}
	}
}
