package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKubeadmControlPlaneManagerRunsWhenAnAppliedFileNeedsIt(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	generic := write("generic.yaml", "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: GenericControlPlaneTemplate\nmetadata: {name: cp}\n")
	kcp := write("kcp.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# KubeadmControlPlaneTemplate in a comment does not count\napiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlaneTemplate\nmetadata: {name: cp}\n")
	mentioned := write("mentioned.yaml", "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {name: c, annotations: {note: KubeadmControlPlaneTemplate}}\n")
	for _, c := range []struct {
		name  string
		o     options
		wants bool
	}{
		{"generic templates only", options{apply: list{generic}}, false},
		{"the kind named in a value only", options{apply: list{generic, mentioned}}, false},
		{"a KubeadmControlPlaneTemplate among other documents", options{apply: list{generic, kcp}}, true},
		{"-kcp", options{apply: list{generic}, kcp: true}, true},
	} {
		got, err := needsKCP(c.o)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.wants {
			t.Errorf("%s: needsKCP = %v, want %v", c.name, got, c.wants)
		}
	}
	if _, err := needsKCP(options{apply: list{filepath.Join(dir, "missing.yaml")}}); err == nil {
		t.Error("a missing -apply file: no error")
	}
}
