package devenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// Builder builds a control plane's programs from the Go module proxy, each in a wrapper module
// of its own, into a cache keyed by version: Cache/e2e/bin/<program>-<version> and CAPI's CRDs
// and webhooks in Cache/e2e/assets/capi-<version>, the layout of the conformance suite's
// build-binaries.sh (so the suite and `capi-ext dev` share one cache). A warm cache makes
// Build a no-op.
type Builder struct {
	Cache string
	// Log receives what is being built and the go tool's output.
	Log io.Writer
	// Context, when set, stops a build in progress when it is cancelled (the go tool is killed).
	Context context.Context
	// WithKCP builds KubeadmControlPlane's manager too.
	WithKCP bool
	// Programs, when set, is a folder holding etcd, kube-apiserver and capi-manager (and
	// kcp-manager with WithKCP), taken instead of building them; CAPI's CRDs and webhooks are
	// still fetched from the module proxy.
	Programs string
}

func (b Builder) bin(name, version string) string {
	return filepath.Join(b.Cache, "e2e", "bin", name+"-"+version)
}

// Build builds (or finds) etcd, kube-apiserver and Cluster API's core and KubeadmControlPlane
// managers of a release, and fetches its CRDs and webhooks.
func (b Builder) Build(r Release) (Binaries, error) {
	out := Binaries{
		Etcd:        b.bin("etcd", EtcdVersion),
		APIServer:   b.bin("kube-apiserver", r.Kubernetes),
		CAPIManager: b.bin("capi-manager", r.CAPI),
		KCPManager:  b.bin("kcp-manager", r.CAPI),
		Assets:      filepath.Join(b.Cache, "e2e", "assets", "capi-"+r.CAPI),
	}
	if b.Programs != "" {
		out.Etcd, out.APIServer = filepath.Join(b.Programs, "etcd"), filepath.Join(b.Programs, "kube-apiserver")
		out.CAPIManager, out.KCPManager = filepath.Join(b.Programs, "capi-manager"), filepath.Join(b.Programs, "kcp-manager")
		need, names := []string{out.Etcd, out.APIServer, out.CAPIManager}, "etcd, kube-apiserver and capi-manager"
		if b.WithKCP {
			need, names = append(need, out.KCPManager), "etcd, kube-apiserver, capi-manager and kcp-manager (KubeadmControlPlane's manager runs)"
		}
		for _, p := range need {
			if !exists(p) {
				return out, fmt.Errorf("%s: no such program in the folder of binaries (it needs %s of Cluster API %s)", p, names, r.CAPI)
			}
		}
		return out, b.capi(r, out)
	}
	if err := b.tool("etcd", EtcdVersion, "go.etcd.io/etcd/server/v3", "-s -w"); err != nil {
		return out, err
	}
	if err := b.capi(r, out); err != nil {
		return out, err
	}
	if err := b.apiserver(r, out.APIServer); err != nil {
		return out, err
	}
	return out, nil
}

func (b Builder) context() context.Context {
	if b.Context == nil {
		return context.Background()
	}
	return b.Context
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// wrapper makes (or reuses) the wrapper module dir.
func (b Builder) wrapper(dir, module string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !exists(filepath.Join(dir, "go.mod")) {
		if err := b.goIn(dir, "mod", "init", module); err != nil {
			return err
		}
	}
	return b.goIn(dir, "mod", "edit", "-go=1.26.0")
}

// goIn runs the go tool in dir, its output to the log; a failure names the command.
func (b Builder) goIn(dir string, args ...string) error {
	cmd := exec.CommandContext(b.context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = b.Log, b.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %v in %s: %w (its output is above)", args, dir, err)
	}
	return nil
}

// goBuild builds pkg into out, through out.tmp so that a failed build leaves nothing behind.
func (b Builder) goBuild(dir, out, ldflags, pkg string) error {
	if err := b.goIn(dir, "build", "-trimpath", "-ldflags", ldflags, "-o", out+".tmp", pkg); err != nil {
		return err
	}
	return os.Rename(out+".tmp", out)
}

func (b Builder) src(name string) string { return filepath.Join(b.Cache, "e2e", "src", name) }

func (b Builder) tool(name, version, pkg, ldflags string) error {
	out := b.bin(name, version)
	if exists(out) {
		return nil
	}
	fmt.Fprintf(b.Log, "[build] %s %s\n", name, version)
	dir := b.src(name + "-" + version)
	if err := b.wrapper(dir, "capi-ext.local/"+name+"-build"); err != nil {
		return err
	}
	if err := b.goIn(dir, "get", "-tool", pkg+"@"+version); err != nil {
		return err
	}
	return b.goBuild(dir, out, ldflags, pkg)
}

var stagingReplace = regexp.MustCompile(`(?m)^\s*(k8s\.io/\S*) => \./staging/`)

func (b Builder) apiserver(r Release, out string) error {
	if exists(out) {
		return nil
	}
	fmt.Fprintf(b.Log, "[build] kube-apiserver %s\n", r.Kubernetes)
	dir := b.src("kube-apiserver-" + r.Kubernetes)
	if err := b.wrapper(dir, "capi-ext.local/kube-apiserver-build"); err != nil {
		return err
	}
	gomod, err := b.moduleFile(dir, "k8s.io/kubernetes@"+r.Kubernetes, "GoMod")
	if err != nil {
		return err
	}
	text, err := os.ReadFile(gomod)
	if err != nil {
		return err
	}
	for _, m := range stagingReplace.FindAllSubmatch(text, -1) {
		if err := b.goIn(dir, "mod", "edit", "-replace="+string(m[1])+"="+string(m[1])+"@"+r.Staging); err != nil {
			return err
		}
	}
	if err := b.goIn(dir, "get", "-tool", "k8s.io/kubernetes/cmd/kube-apiserver@"+r.Kubernetes); err != nil {
		return err
	}
	var minor int
	_, _ = fmt.Sscanf(r.Kubernetes, "v1.%d.", &minor)
	ldflags := "-s -w"
	for _, p := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ldflags += fmt.Sprintf(" -X %[1]s.gitVersion=%[2]s -X %[1]s.gitMajor=1 -X %[1]s.gitMinor=%[3]d -X %[1]s.gitTreeState=clean -X %[1]s.gitCommit=module-proxy", p, r.Kubernetes, minor)
	}
	return b.goBuild(dir, out, ldflags, "k8s.io/kubernetes/cmd/kube-apiserver")
}

// moduleFile is a field (Dir, GoMod) of `go mod download -json module@version`.
func (b Builder) moduleFile(dir, module, field string) (string, error) {
	cmd := exec.CommandContext(b.context(), "go", "mod", "download", "-json", module)
	cmd.Dir = dir
	cmd.Stderr = b.Log
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	}
	var info map[string]any
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&info); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	}
	path, _ := info[field].(string)
	if path == "" {
		return "", fmt.Errorf("go mod download %s: no %s in %s", module, field, out)
	}
	return path, nil
}

func (b Builder) capi(r Release, out Binaries) error {
	minor := r.Minor()
	managerPkg, config := "sigs.k8s.io/cluster-api", "config"
	if minor >= 14 {
		managerPkg, config = "sigs.k8s.io/cluster-api/core", "core/config"
	}
	ldflags := fmt.Sprintf("-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=%s -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=%d", r.CAPI, minor)
	dir := b.src("capi-" + r.CAPI)
	buildCore := b.Programs == "" && !exists(out.CAPIManager)
	buildKCP := b.Programs == "" && b.WithKCP && !exists(out.KCPManager)
	if buildCore || buildKCP || !exists(filepath.Join(out.Assets, "webhooks.yaml")) || !exists(filepath.Join(out.Assets, "kcp-webhooks.yaml")) {
		if err := b.wrapper(dir, "capi-ext.local/capi-build"); err != nil {
			return err
		}
		if minor >= 14 {
			// From v1.14 the API types are a module of their own and the manager lives in core/.
			api := "sigs.k8s.io/cluster-api/api"
			if err := b.goIn(dir, "mod", "edit", "-require="+api+"@"+r.CAPI, "-replace="+api+"="+api+"@"+r.CAPI); err != nil {
				return err
			}
		}
	}
	if buildCore {
		fmt.Fprintf(b.Log, "[build] the Cluster API core manager %s\n", r.CAPI)
		if err := b.goIn(dir, "get", "-tool", managerPkg+"@"+r.CAPI); err != nil {
			return err
		}
		if err := b.goBuild(dir, out.CAPIManager, ldflags, managerPkg); err != nil {
			return err
		}
	}
	if buildKCP {
		fmt.Fprintf(b.Log, "[build] the KubeadmControlPlane manager %s\n", r.CAPI)
		kcp := "sigs.k8s.io/cluster-api/controlplane/kubeadm"
		if err := b.goIn(dir, "get", "-tool", kcp+"@"+r.CAPI); err != nil {
			return err
		}
		if err := b.goBuild(dir, out.KCPManager, ldflags, kcp); err != nil {
			return err
		}
	}
	if exists(filepath.Join(out.Assets, "webhooks.yaml")) && exists(filepath.Join(out.Assets, "kcp-webhooks.yaml")) {
		return nil
	}
	root, err := b.moduleFile(dir, "sigs.k8s.io/cluster-api@"+r.CAPI, "Dir")
	if err != nil {
		return err
	}
	copies := []struct{ from, to string }{
		{filepath.Join(root, config, "crd", "bases"), filepath.Join(out.Assets, "crds")},
		{filepath.Join(root, "controlplane", "kubeadm", "config", "crd", "bases"), filepath.Join(out.Assets, "kcp-crds")},
		{filepath.Join(root, "bootstrap", "kubeadm", "config", "crd", "bases"), filepath.Join(out.Assets, "kcp-crds")},
	}
	for _, c := range copies {
		if err := copyYAML(c.from, c.to); err != nil {
			return err
		}
	}
	for from, to := range map[string]string{
		filepath.Join(root, "controlplane", "kubeadm", "config", "webhook", "manifests.yaml"): filepath.Join(out.Assets, "kcp-webhooks.yaml"),
		filepath.Join(root, config, "webhook", "manifests.yaml"):                              filepath.Join(out.Assets, "webhooks.yaml"),
	} {
		if err := copyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}

func copyYAML(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(from, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s (%v)", from, err)
	}
	for _, f := range files {
		if err := copyFile(f, filepath.Join(to, filepath.Base(f))); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies through a temporary file, so that a copy cut short leaves nothing.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.WriteFile(to+".tmp", data, 0o644); err != nil {
		return err
	}
	return os.Rename(to+".tmp", to)
}
