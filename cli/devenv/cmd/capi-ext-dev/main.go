// Command capi-ext-dev is the engine of `capi-ext dev`: it starts etcd, kube-apiserver and the
// Cluster API core manager of a release on 127.0.0.1 (built from the Go module proxy and cached
// by version), runs the project's extension with development certificates that require CAPI's
// client certificate, registers it with an ExtensionConfig, applies the project's objects, prints
// each call the extension answers, plays the providers of the Generic* kinds (devenv.Providers)
// so that Clusters go through creation, upgrades and deletion, and stops everything on SIGINT or
// SIGTERM. SIGHUP restarts the extension (the CLI sends it after a rebuild); the cluster keeps
// running.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"capi-ext.local/devenv"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type options struct {
	stateDir, capiVersion, cache, programs, extension, name, crds string
	port                                                          int
	apply                                                         list
	kcp                                                           bool
}

// list is a flag given more than once.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var o options
	flag.StringVar(&o.stateDir, "state-dir", "", "the folder of the run: logs, certificates, etcd's data, the kubeconfig (required)")
	flag.StringVar(&o.capiVersion, "capi-version", "1.14", "the Cluster API release (v1.14.2) or minor (1.14)")
	flag.StringVar(&o.cache, "cache", "", "the cache of programs built from the Go module proxy (required)")
	flag.StringVar(&o.programs, "binaries", "", "a folder holding etcd, kube-apiserver and capi-manager (and kcp-manager when KubeadmControlPlane's manager runs) to run instead of building them")
	flag.StringVar(&o.extension, "extension", "", "the extension's program (required)")
	flag.StringVar(&o.name, "name", "", "the ExtensionConfig's name: the project's name (required)")
	flag.IntVar(&o.port, "port", 9443, "the extension's port on 127.0.0.1")
	flag.Var(&o.apply, "apply", "a YAML file of objects to create once CAPI runs (repeatable)")
	flag.StringVar(&o.crds, "crds", "", "a folder of the project's CRDs (*.yaml, *.yml) to install with Cluster API's")
	flag.BoolVar(&o.kcp, "kcp", false, "run KubeadmControlPlane's manager too (it runs anyway when an -apply file holds a KubeadmControlPlane or its template)")
	buildOnly := flag.Bool("build-only", false, "build (or find) the programs of -capi-version in -cache, KubeadmControlPlane's manager included, print their paths as NAME=path lines and exit (the conformance suite's build-binaries.sh)")
	flag.Parse()
	if *buildOnly {
		os.Exit(build(o))
	}
	for name, v := range map[string]string{"state-dir": o.stateDir, "cache": o.cache, "extension": o.extension, "name": o.name} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "capi-ext-dev: -%s is required\n", name)
			os.Exit(2)
		}
	}
	os.Exit(up(o))
}

// build is -build-only.
func build(o options) int {
	release, err := devenv.FindRelease(o.capiVersion)
	if err == nil && o.cache == "" {
		err = fmt.Errorf("-cache is required")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	bins, err := devenv.Builder{Cache: o.cache, Log: os.Stderr, WithKCP: true}.Build(release)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	fmt.Printf("ETCD=%s\nKUBE_APISERVER=%s\nCAPI_MANAGER=%s\nKCP_MANAGER=%s\nCAPI_ASSETS=%s\n", bins.Etcd, bins.APIServer, bins.CAPIManager, bins.KCPManager, bins.Assets)
	return 0
}

func up(o options) (code int) {
	release, err := devenv.FindRelease(o.capiVersion)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	if err := claim(o.stateDir); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	pidFile := filepath.Join(o.stateDir, "engine.pid")
	defer os.Remove(pidFile)
	ps := &devenv.Processes{Dir: filepath.Join(o.stateDir, "logs")}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n%s", r, debug.Stack())
			code = 1
		}
		ps.StopAll()
	}()
	received := make(chan os.Signal, 4)
	signal.Notify(received, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// While the cluster starts (minutes, when the programs are built), SIGINT and SIGTERM stop
	// what has started and exit; once it serves, serve takes every signal.
	var serving atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 4)
	go func() {
		for s := range received {
			switch {
			case serving.Load():
				signals <- s
			case s != syscall.SIGHUP:
				fmt.Printf("\n%s while starting: stopping\n", s)
				cancel()
				ps.StopAll()
				os.Remove(pidFile)
				os.Exit(130)
			}
		}
	}()
	if err := run(ctx, o, release, ps, signals, &serving); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		ps.DumpLogs(20)
		return 1
	}
	return 0
}

// claim makes the state folder for a new run: a run already using it is an error; what an
// earlier run left (its cluster's data, certificates and logs) is removed, each run starts a new
// cluster.
func claim(dir string) error {
	pidFile := filepath.Join(dir, "engine.pid")
	if data, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("a capi-ext dev run (pid %d) already uses %s: stop it with `capi-ext dev down` or choose another --state-dir", pid, dir)
		}
	}
	for _, sub := range []string{"etcd", "pki", "client-pki", "apiserver", "logs", "extension-certs", "capi-webhook-certs"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

func run(ctx context.Context, o options, release devenv.Release, ps *devenv.Processes, signals chan os.Signal, serving *atomic.Bool) error {
	started := time.Now()
	withKCP, err := needsKCP(o)
	if err != nil {
		return err
	}
	devenv.Step(fmt.Sprintf("Cluster API %s, kube-apiserver %s, etcd %s", release.CAPI, release.Kubernetes, devenv.EtcdVersion))
	bins, err := devenv.Builder{Cache: o.cache, Log: os.Stderr, Programs: o.programs, Context: ctx, WithKCP: withKCP}.Build(release)
	if err != nil {
		return err
	}
	fmt.Printf("  programs ready in %s\n", time.Since(started).Round(time.Second))
	work := o.stateDir
	certs := devenv.NewCerts(work, "capi-ext-dev", "capi-manager")
	p := certs.PKI

	apiPort, kube, err := devenv.StartAPIServer(bins, work, ps, p, certs.AdminCert, certs.AdminKey)
	if err != nil {
		return err
	}
	if o.crds != "" {
		devenv.Step("install the project's CRDs (" + o.crds + ")")
		names, err := devenv.InstallProjectCRDs(ctx, kube, o.crds)
		if err != nil {
			return err
		}
		fmt.Printf("  %d CRDs established: %s\n", len(names), strings.Join(names, ", "))
	}
	devenv.Step("install the CRDs of Cluster API, KubeadmControlPlane and KubeadmConfig, and the Generic* kinds of render/")
	crds, err := devenv.InstallCRDs(ctx, kube, bins.Assets)
	if err != nil {
		return err
	}
	fmt.Printf("  %d CRDs established\n", crds)
	kubeconfig := devenv.WriteKubeconfig(work, apiPort, filepath.Join(p.Dir, "ca.crt"), certs.AdminCert, certs.AdminKey)

	devenv.Step("start the extension")
	ext := &extension{ps: ps, bin: o.extension, port: o.port, certDir: certs.ExtensionDir}
	if err := ext.start(); err != nil {
		return err
	}
	plain := devenv.HTTPClient(nil, "", "")
	mgr := devenv.Managers{Kubeconfig: kubeconfig, WebhookDir: certs.WebhookDir, ClientCert: certs.CAPIClientCert, ClientKey: certs.CAPIClientKey, CA: p.CAPEM, Kube: kube, Processes: ps, Plain: plain}
	devenv.Step("start the Cluster API core manager")
	if _, _, err := mgr.Start(ctx, "capi-manager", bins.CAPIManager, "ClusterTopology=true,RuntimeSDK=true,InPlaceUpdates=true", filepath.Join(bins.Assets, "webhooks.yaml"), "capi-"); err != nil {
		return err
	}
	if withKCP {
		devenv.Step("start KubeadmControlPlane's manager")
		if _, _, err := mgr.Start(ctx, "kcp-manager", bins.KCPManager, "ClusterTopology=true,InPlaceUpdates=true", filepath.Join(bins.Assets, "kcp-webhooks.yaml"), "capi-kubeadm-control-plane-"); err != nil {
			return err
		}
	}
	devenv.Step("register the extension: ExtensionConfig " + o.name)
	if _, err := kube.Apply(ctx, fmt.Sprintf(`apiVersion: runtime.cluster.x-k8s.io/v1beta2
kind: ExtensionConfig
metadata:
  name: %s
spec:
  clientConfig:
    url: https://127.0.0.1:%d
    caBundle: %s
  namespaceSelector: {}
`, o.name, o.port, base64.StdEncoding.EncodeToString(p.CAPEM))); err != nil {
		return err
	}
	var handlers []any
	if err := devenv.Eventually(60*time.Second, "the ExtensionConfig's discovery", func() (bool, string) {
		u, err := kube.Get(ctx, "runtime.cluster.x-k8s.io/v1beta2", "ExtensionConfig", "", o.name)
		if err != nil {
			return false, err.Error()
		}
		handlers, _, _ = unstructured.NestedSlice(u.Object, "status", "handlers")
		st, reason, msg := devenv.Condition(u, "Discovered")
		// The handlers may reach the status in a later update than the condition.
		return st == "True" && len(handlers) > 0, fmt.Sprintf("Discovered=%s %s %s, %d handlers", st, reason, msg, len(handlers))
	}); err != nil {
		return err
	}
	for _, h := range handlers {
		m, _ := h.(map[string]any)
		hook, _ := m["requestHook"].(map[string]any)
		fmt.Printf("  %s (%v)\n", m["name"], hook["hook"])
	}
	devenv.Step("play the providers of the Generic* kinds, kubeadm and the kubelet")
	player := (&devenv.Providers{Kube: kube, Kubeconfig: kubeconfig, Clusters: true, MachinePools: true, APIPort: apiPort,
		JoinControlPlane: devenv.Kubeadm{Kube: kube, Version: release.Kubernetes}.Joined, EtcdPKI: p,
		Played: func(what, object string) {
			fmt.Printf("%s  %-28s %s\n", time.Now().Format("15:04:05"), "(provider played)", what+": "+object)
		},
		Warn: func(message string) {
			fmt.Printf("%s  %-28s %s\n", time.Now().Format("15:04:05"), "(warning)", message)
		}}).Start(ctx)
	defer player.Close()
	for _, file := range o.apply {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		created, err := kube.Apply(ctx, string(data))
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		fmt.Printf("  created from %s: %s\n", file, strings.Join(created, ", "))
	}
	fmt.Printf("\nready in %s: Cluster API %s calls the extension at https://127.0.0.1:%d\n  export KUBECONFIG=%s\n  logs: %s\n  Ctrl-C (or capi-ext dev down) stops everything\n\n",
		time.Since(started).Round(100*time.Millisecond), release.CAPI, o.port, kubeconfig, ps.Dir)
	ready := filepath.Join(work, "ready")
	must(os.WriteFile(ready, []byte(kubeconfig+"\n"), 0o644))
	defer os.Remove(ready)
	serving.Store(true)
	return ext.serve(signals)
}

// needsKCP says whether KubeadmControlPlane's manager runs: -kcp, or an -apply file holds a
// KubeadmControlPlane or a KubeadmControlPlaneTemplate.
func needsKCP(o options) (bool, error) {
	if o.kcp {
		return true, nil
	}
	for _, file := range o.apply {
		data, err := os.ReadFile(file)
		if err != nil {
			return false, err
		}
		if holdsKCP(string(data)) {
			return true, nil
		}
	}
	return false, nil
}

// holdsKCP says whether a YAML text holds a KubeadmControlPlane or its template (a text that
// does not parse says no: its apply reports the error).
func holdsKCP(text string) bool {
	objs, err := devenv.Docs(text)
	if err != nil {
		return false
	}
	for _, obj := range objs {
		if obj.GetKind() == "KubeadmControlPlane" || obj.GetKind() == "KubeadmControlPlaneTemplate" {
			return true
		}
	}
	return false
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// extension is the project's extension process, restarted on SIGHUP.
type extension struct {
	ps            *devenv.Processes
	bin, certDir  string
	port, probes  int
	proc          *devenv.Process
	logOffset     int64
	reportedCrash bool
}

func (e *extension) start() error {
	e.probes = devenv.FreePort()
	e.proc = e.ps.StartWith("extension", nil, e.bin, "--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", e.port),
		"--webhook-cert-dir="+e.certDir, "--webhook-client-ca-name=client-ca.crt", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", e.probes), "--log-format=json")
	e.logOffset, e.reportedCrash = 0, false
	return devenv.WaitHTTP(devenv.HTTPClient(nil, "", ""), fmt.Sprintf("http://127.0.0.1:%d/readyz", e.probes), 60*time.Second, e.proc)
}

// serve prints each call the extension answers until SIGINT or SIGTERM; SIGHUP restarts it.
func (e *extension) serve(signals chan os.Signal) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case s := <-signals:
			if s != syscall.SIGHUP {
				e.printCalls()
				fmt.Printf("\n%s: stopping\n", s)
				return nil
			}
			e.printCalls()
			t := time.Now()
			e.proc.Stop()
			if err := e.start(); err != nil {
				fmt.Printf("the new extension did not start: %v (its log: %s); waiting for the next rebuild\n", err, e.proc.Log)
				continue
			}
			fmt.Printf("extension restarted in %s\n", time.Since(t).Round(time.Millisecond))
		case <-tick.C:
			e.printCalls()
			if e.proc.Exited() && !e.reportedCrash {
				e.reportedCrash = true
				fmt.Printf("the extension exited (%s; its log: %s); waiting for the next rebuild\n", e.proc.Cmd.ProcessState, e.proc.Log)
			}
		}
	}
}

// call is one line of the extension's JSON log that says a call was answered or rejected.
type call struct {
	Time      string  `json:"timestamp"`
	Message   string  `json:"message"`
	Status    string  `json:"status"`
	Code      int     `json:"code"`
	ElapsedMs float64 `json:"elapsed_ms"`
	Span      struct {
		Hook    string `json:"hook"`
		Handler string `json:"handler"`
		Cluster string `json:"cluster"`
	} `json:"span"`
}

// printCalls prints the calls logged since the last look: hook, handler, Cluster, answer, latency.
func (e *extension) printCalls() {
	f, err := os.Open(e.proc.Log)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(e.logOffset, 0); err != nil {
		return
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // a partial line is read again next time
		}
		e.logOffset += int64(len(line))
		var c call
		if json.Unmarshal([]byte(line), &c) != nil || (c.Message != "hook answered" && c.Message != "request rejected") {
			continue
		}
		answer := c.Status
		if c.Message == "request rejected" {
			answer = "rejected"
		}
		cluster := c.Span.Cluster
		if cluster == "" {
			cluster = "-"
		}
		fmt.Printf("%s  %-28s %-36s %-24s %-8s %3d %7.1f ms\n", time.Now().Format("15:04:05"), c.Span.Hook, c.Span.Handler, cluster, answer, c.Code, c.ElapsedMs)
	}
}
