// Command e2e runs the real Cluster API core manager, with a real kube-apiserver and etcd,
// against the capi-ext example extension over TLS, and checks what CAPI does with each answer.
//
// Every component is started here, on 127.0.0.1, with a PKI made for the run, and stopped by
// its PID at the end, pass or fail. When a scenario fails, the logs of all components are
// printed.
package main

import (
	"capi-ext.local/devenv"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// binaries are the control plane's programs of the run.
func (o options) binaries() devenv.Binaries {
	return devenv.Binaries{Etcd: o.etcd, APIServer: o.apiserver, CAPIManager: o.capi, KCPManager: o.kcp, Assets: o.assets}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

type options struct {
	etcd, apiserver, capi, kcp, assets, dockerCRDs, extension, capiExt, conformanceBin, testExtension, goTestExtension, capiVersion, kustomize, helm, clusterctl, certManagerCRDs, promOperatorCRDs, promcheck string
	keep                                                                                                                                                                                                       bool
	keepRequests                                                                                                                                                                                               string
	apiRules                                                                                                                                                                                                   apiRulesOptions
	only                                                                                                                                                                                                       string
}

func main() {
	var o options
	flag.StringVar(&o.etcd, "etcd", "", "etcd binary")
	flag.StringVar(&o.apiserver, "kube-apiserver", "", "kube-apiserver binary")
	flag.StringVar(&o.capi, "capi-manager", "", "Cluster API core manager binary")
	flag.StringVar(&o.kcp, "kcp-manager", "", "KubeadmControlPlane manager binary of the same release (the only caller of CanUpdateMachine)")
	flag.StringVar(&o.capiVersion, "capi-version", "v1.14.2", "the release of that manager: the extensions target its minor")
	flag.StringVar(&o.assets, "capi-assets", "", "directory with crds/, webhooks.yaml, kcp-crds/ and kcp-webhooks.yaml of that CAPI release")
	flag.StringVar(&o.dockerCRDs, "docker-crds", "", "directory with the CRDs of CAPI's Docker infrastructure provider (test module, infrastructure/docker/config/crd/bases): the diff scenario's templates are of its kinds")
	flag.StringVar(&o.extension, "extension", "", "the example extension binary")
	flag.StringVar(&o.capiExt, "capi-ext", "", "the capi-ext command (for render)")
	flag.StringVar(&o.testExtension, "capi-test-extension", "", "the port of CAPI's test extension (examples/capi-test-extension)")
	flag.StringVar(&o.goTestExtension, "go-capi-test-extension", "", "CAPI's test extension (Go, module sigs.k8s.io/cluster-api/test, extension/) at the port's release")
	flag.StringVar(&o.conformanceBin, "conformance", "", "the capi-ext-conformance binary (its lifecycle-extension mode serves the upgrade hooks)")
	flag.StringVar(&o.kustomize, "kustomize", "", "the kustomize binary (builds a scaffolded project's config/default)")
	flag.StringVar(&o.helm, "helm", "", "the helm binary (renders and lints a scaffolded project's chart)")
	flag.StringVar(&o.clusterctl, "clusterctl", "", "the clusterctl binary (reads what capi-ext generate release writes)")
	flag.StringVar(&o.certManagerCRDs, "cert-manager-crds", "", "directory with cert-manager's CRDs")
	flag.StringVar(&o.promOperatorCRDs, "prometheus-operator-crds", "", "directory with prometheus-operator's PodMonitor and PrometheusRule CRDs")
	flag.StringVar(&o.promcheck, "promcheck", "", "the promcheck binary (conformance/promcheck: reads a metrics endpoint as Prometheus does)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.StringVar(&o.keepRequests, "keep-requests", "", "copy the requests the managers sent to each extension here (one folder per extension), for the round trip's -recorded replay")
	flag.StringVar(&o.only, "only", "", "run only the scenarios whose name contains this text (or one of several, separated by |), and the first (Discovery: it creates the namespace); for working on one scenario")
	flag.StringVar(&o.apiRules.crds, "api-rules-crds", "", "run only the API-server rules differential, over the CRDs of these comma-separated files or directories")
	flag.IntVar(&o.apiRules.cases, "api-rules-cases", 6000, "objects per seed of the API-server rules differential")
	flag.Int64Var(&o.apiRules.seed, "api-rules-seed", 1, "the fixed seed of the API-server rules differential")
	flag.Int64Var(&o.apiRules.randomSeed, "api-rules-random-seed", 0, "its second seed (0: a new one, printed)")
	flag.StringVar(&o.apiRules.failuresDir, "api-rules-failures", "", "where the API-server rules differential writes differing cases")
	flag.Parse()
	if o.apiRules.randomSeed == 0 {
		o.apiRules.randomSeed = time.Now().UnixNano()%1000000000 + 2
	}

	work, err := os.MkdirTemp("", "capi-ext-e2e-")
	must(err)
	ps := &Processes{Dir: work}
	start := time.Now()
	// Every process is stopped on every way out: an error, a panic, or an interrupt.
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-interrupted
		ps.StopAll()
		fmt.Fprintf(os.Stderr, "\n%s: stopped every process\n", sig)
		os.Exit(130)
	}()
	err = runGuarded(o, work, ps)
	ps.StopAll()
	if err != nil {
		ps.DumpLogs(60)
		fmt.Fprintf(os.Stderr, "\nFAILED after %s: %v\n(work directory: %s)\n", time.Since(start).Round(time.Second), err, work)
		os.Exit(1)
	}
	if !o.keep {
		_ = os.RemoveAll(work)
	}
	if o.apiRules.crds != "" {
		fmt.Printf("\nok: the API-server rules differential passed in %s\n", time.Since(start).Round(time.Second))
		return
	}
	fmt.Printf("\nok: every scenario passed against the real Cluster API manager %s in %s\n", o.capiVersion, time.Since(start).Round(time.Second))
}

// runGuarded is run with a panic turned into an error, so the caller still stops every process.
func runGuarded(o options, work string, ps *Processes) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if o.apiRules.crds != "" {
		return runAPIRules(o, work, ps)
	}
	return run(o, work, ps)
}

func run(o options, work string, ps *Processes) error {
	ctx := context.Background()
	// mTLS: the manager presents a client certificate from its own CA; the extension requires
	// one signed by that CA (client-ca.crt in its certificate directory).
	certs := devenv.NewCerts(work, "capi-ext-e2e", managerClient)
	p, clientPKI := certs.PKI, certs.ClientPKI
	capiClientCert, capiClientKey, adminCert, adminKey := certs.CAPIClientCert, certs.CAPIClientKey, certs.AdminCert, certs.AdminKey
	webhookDir, extDir := certs.WebhookDir, certs.ExtensionDir
	renderCert, renderKey := clientPKI.Leaf("render", renderClient, nil, false)

	extPort, extProbes := FreePort(), FreePort()
	plain := HTTPClient(nil, "", "")

	apiPort, kube, err := devenv.StartAPIServer(o.binaries(), work, ps, p, adminCert, adminKey)
	if err != nil {
		return err
	}

	step("install CAPI's CRDs and the fake provider CRDs")
	crds, err := devenv.InstallCRDs(ctx, kube, o.assets)
	if err != nil {
		return err
	}
	fmt.Printf("  %d CRDs established\n", crds)
	if o.dockerCRDs == "" {
		return fmt.Errorf("-docker-crds is required (the diff scenario's templates are of CAPI's Docker kinds)")
	}
	// CAPI's Docker provider's CRDs, as its config/crd/bases has them (structural, no
	// conversion webhook; the contract label its release build adds).
	docker, err := devenv.InstallProjectCRDs(ctx, kube, o.dockerCRDs)
	if err != nil {
		return err
	}
	fmt.Printf("  %d CRDs of CAPI's Docker provider established\n", len(docker))

	step("start the capi-ext example extension")
	// The extension keeps the last request of each handler (the render scenario compares the
	// manager's with render's); the ExtensionConfig points at the extension itself.
	recordDir := filepath.Join(work, "recorded")
	must(os.MkdirAll(recordDir, 0o755))
	extMetrics := FreePort()
	ext := ps.Start("extension", o.extension, "--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", extPort),
		"--webhook-cert-dir="+extDir, fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", extMetrics), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", extProbes),
		"--log-format=json", "--record-requests-dir="+recordDir, "--webhook-client-ca-name=client-ca.crt")
	if err := WaitHTTP(plain, fmt.Sprintf("http://127.0.0.1:%d/readyz", extProbes), 60*time.Second, ext); err != nil {
		return err
	}

	step("start the lifecycle extension (upgrade hooks, GenerateUpgradePlan)")
	lifecyclePort, lifecycleProbes := FreePort(), FreePort()
	lifecycleRecord := filepath.Join(work, "recorded-lifecycle")
	must(os.MkdirAll(lifecycleRecord, 0o755))
	lifecycle := ps.Start("lifecycle-extension", o.conformanceBin, "lifecycle-extension", "--target="+targetOf(o.capiVersion), "--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", lifecyclePort),
		"--webhook-cert-dir="+extDir, "--webhook-client-ca-name=client-ca.crt", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", lifecycleProbes), "--log-format=json", "--record-requests-dir="+lifecycleRecord)
	if err := WaitHTTP(plain, fmt.Sprintf("http://127.0.0.1:%d/readyz", lifecycleProbes), 60*time.Second, lifecycle); err != nil {
		return err
	}

	step("start the in-place extension (CanUpdateMachineSet, CanUpdateMachine, UpdateMachine)")
	inplacePort, inplaceProbes := FreePort(), FreePort()
	inplaceRecord := filepath.Join(work, "recorded-inplace")
	must(os.MkdirAll(inplaceRecord, 0o755))
	inplace := ps.Start("inplace-extension", o.conformanceBin, "inplace-extension", "--target="+targetOf(o.capiVersion), "--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", inplacePort),
		"--webhook-cert-dir="+extDir, "--webhook-client-ca-name=client-ca.crt", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", inplaceProbes), "--log-format=json", "--record-requests-dir="+inplaceRecord)
	if err := WaitHTTP(plain, fmt.Sprintf("http://127.0.0.1:%d/readyz", inplaceProbes), 60*time.Second, inplace); err != nil {
		return err
	}

	kubeconfig := WriteKubeconfig(work, apiPort, filepath.Join(p.Dir, "ca.crt"), adminCert, adminKey)
	execKubeconfig := WriteExecKubeconfig(work, apiPort, filepath.Join(p.Dir, "ca.crt"), adminCert, adminKey)
	step("the runtime's Kubernetes clients: handlers read a ConfigMap and reach a workload cluster through its kubeconfig Secret (exec-plugin credentials)")
	if out, err := exec.Command(o.conformanceBin, "kube-clients", "--kubeconfig", execKubeconfig, "--workload-kubeconfig", kubeconfig).CombinedOutput(); err != nil {
		return fmt.Errorf("capi-ext-conformance kube-clients: %v\n%s", err, out)
	} else {
		fmt.Print(string(out))
	}
	mgr := devenv.Managers{Kubeconfig: kubeconfig, WebhookDir: webhookDir, ClientCert: capiClientCert, ClientKey: capiClientKey, CA: p.CAPEM, Kube: kube, Processes: ps, Plain: plain}
	step("start the Cluster API core manager")
	capi, capiMetrics, err := mgr.Start(ctx, "capi-manager", o.capi, "ClusterTopology=true,RuntimeSDK=true,InPlaceUpdates=true", filepath.Join(o.assets, "webhooks.yaml"), "capi-")
	if err != nil {
		return err
	}
	step("start the KubeadmControlPlane manager")
	kcp, kcpMetrics, err := mgr.Start(ctx, "kcp-manager", o.kcp, "ClusterTopology=true,InPlaceUpdates=true", filepath.Join(o.assets, "kcp-webhooks.yaml"), "capi-kubeadm-control-plane-")
	if err != nil {
		return err
	}

	minor, _ := strconv.Atoi(strings.Split(targetOf(o.capiVersion), ".")[1])
	s := &scenarios{minor: minor, kube: kube, caB64: base64.StdEncoding.EncodeToString(p.CAPEM), extURL: fmt.Sprintf("https://127.0.0.1:%d", extPort),
		extLog: ext.Log, apiPort: apiPort, kcpLog: kcp.Log, pki: p, extBin: o.extension, ps: ps, extCertDir: extDir, kubeconfig: kubeconfig, execKubeconfig: execKubeconfig, capiLog: capi.Log, lifecycleURL: fmt.Sprintf("https://127.0.0.1:%d", lifecyclePort), lifecycleLog: lifecycle.Log,
		lifecycleRecorded: recorded{lifecycleRecord}, inplaceURL: fmt.Sprintf("https://127.0.0.1:%d", inplacePort), inplaceLog: inplace.Log, clientCert: renderCert, clientKey: renderKey, metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", capiMetrics), extMetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", extMetrics), promcheck: o.promcheck, kcpMetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", kcpMetrics),
		recorded: recorded{recordDir}, work: work, capiExt: o.capiExt, conformanceBin: o.conformanceBin, testExtBin: o.testExtension, goTestExtBin: o.goTestExtension,
		capiVersion: o.capiVersion, kustomize: o.kustomize, helm: o.helm, clusterctl: o.clusterctl, certManagerCRDs: o.certManagerCRDs, promOperatorCRDs: o.promOperatorCRDs,
		diffCRDs: []string{filepath.Join(o.assets, "crds"), filepath.Join(o.assets, "kcp-crds"), o.dockerCRDs}}
	// Why a scenario does not apply to an older release, by scenario.
	skips := map[string]string{}
	if minor < 13 {
		// render builds v1beta2 requests; before v1.13 hooks embed v1beta1 objects. (Before
		// v1.14 CAPI drops the metadata patched onto templates: render --capi-version models it.)
		skips["render"] = "render builds the v1beta2 requests of v1.13+ (before v1.13 hooks embed v1beta1 objects)"
	}
	// What the managers sent, kept for the round trip's replay: the example extension's before
	// the render scenario (from there `capi-ext render` calls it too), the others at the end.
	keep := func(from, as string, skip ...string) {
		if o.keepRequests != "" {
			must(copyFiles(from, filepath.Join(o.keepRequests, as), skip...))
		}
	}
	for _, sc := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{"Discovery: status.handlers from the extension's registrations", s.discovery},
		{"Discovery: a bad discovery answer is rejected with CAPI's message", s.badDiscovery},
		{"Manifests: a scaffolded project's kustomize build and Helm chart are admitted (cert-manager CRDs, Pod Security restricted, CAPI's webhooks) with no warning; clusterctl reads its release", s.manifestsAdmitted},
		{"mTLS: the extension refuses callers without CAPI's client certificate; one trusting another CA fails CAPI's Discovery", s.mutualTLS},
		{"Discovery: the lifecycle extension's 7 handlers", s.lifecycleDiscovery},
		{"DiscoverVariables: ClusterClass status.variables from the extension", s.discoverVariables},
		{"DiscoverVariables: a Cluster violating the schema is rejected at admission", s.variableAdmission},
		{"BeforeClusterCreate: blocks, then unblocks", s.beforeClusterCreate},
		{"GeneratePatches: patches applied to the created objects, settings merged as CAPI does", s.generatePatches},
		{"GeneratePatches: a typed patch (capi-ext-types' KubeadmControlPlaneTemplate) sets its field on a real KubeadmControlPlane; the template's other fields kept", s.typedPatch},
		{"ValidateTopology: accepts, then rejects", s.validateTopology},
		{"AfterControlPlaneInitialized: called once the control plane is initialized", s.afterControlPlaneInitialized},
		{"render: capi-ext builds the GeneratePatches request the manager sends (control plane, its machines, a MachineDeployment, a MachinePool)", s.renderMatchesManager},
		{"Upgrade v1.34.0 → v1.35.0: the six lifecycle hooks in CAPI's order, each held once and guarding its step; AfterWorkersUpgrade waits for md-0's Machine to be replaced and for mp-0's Node's kubelet", s.upgrade},
		{"Chained upgrade v1.35.0 → v1.37.0: GenerateUpgradePlan's steps followed by the control plane and the workers (md-0's Machine and mp-0's Node), hooks per step", s.chainedUpgrade},
		{"diff: capi-ext diff predicts what the manager does with each new version of an extension (nothing, template metadata, the infrastructure cluster, the control plane, a MachineDeployment rollout, the control plane's machine template rotated, a bootstrap template rotated, a MachinePool) on real CRDs, KubeadmControlPlane's included, and render prints its objects as stored", s.diffPredictsCAPI},
		{"In-place updates: CanUpdateMachineSet accepts a change and UpdateMachine carries it out on the same Machine; a refused change rolls out", s.inPlaceUpdates},
		{"In-place updates through KubeadmControlPlane: CanUpdateMachine accepts a change and UpdateMachine carries it out on the same control plane Machine; a refused change replaces the Machine", s.kubeadmControlPlaneInPlace},
		{"Upgrade through KubeadmControlPlane v1.34.0 → v1.35.0: KCP replaces the control plane's Machine after BeforeControlPlaneUpgrade, and CAPI calls AfterControlPlaneUpgrade only once no Machine of v1.34.0 is left", s.kcpUpgrade},
		{"BeforeClusterDelete: blocks, then unblocks", s.beforeClusterDelete},
		{"CAPI's runtime SDK metrics count the calls, all answered with HTTP 200", s.capiMetrics},
		{"Metrics: the extension's own, read as Prometheus scrapes them and linted, count at least the calls CAPI counted; its certificate's expiry is the one Go reads", s.extensionMetrics},
		{"Transport: every call of the manager reached the extension itself, over HTTP/2, with HTTP 200", s.transport},
		{"CAPI's test extension, ported: lifecycle answers preloaded in the Cluster's ConfigMap hold and release creation, each step of an upgrade and deletion, every answer recorded in it, as CAPI's runtimesdk spec drives the Go one", s.capiTestExtension},
	} {
		step(sc.name)
		if strings.HasPrefix(sc.name, "render:") {
			keep(recordDir, "example")
		}
		named := slices.ContainsFunc(strings.Split(o.only, "|"), func(part string) bool { return strings.Contains(sc.name, part) })
		if o.only != "" && !named && sc.name != "Discovery: status.handlers from the extension's registrations" {
			fmt.Printf("  skipped: not named by -only %q\n", o.only)
			continue
		}
		if why := skips[strings.SplitN(sc.name, ":", 2)[0]]; why != "" {
			fmt.Printf("  skipped on %s: %s\n", o.capiVersion, why)
			continue
		}
		t := time.Now()
		if err := sc.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		fmt.Printf("  passed in %s\n", time.Since(t).Round(100*time.Millisecond))
	}
	// The example's hooks render does not call (BeforeClusterDelete, ...), as the manager sent them.
	keep(recordDir, "example-after-render", "GeneratePatches-", "ValidateTopology-", "DiscoverVariables-")
	keep(lifecycleRecord, "lifecycle")
	keep(inplaceRecord, "inplace")
	keep(filepath.Join(work, "recorded-test-extension"), "capi-test-extension")
	calls := countCalls(ext.Log)
	keys := make([]string, 0, len(calls))
	for k := range calls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Println("\ncalls the extension answered, by hook:")
	for _, k := range keys {
		fmt.Printf("  %-30s %d\n", k, calls[k])
	}
	return nil
}

// targetOf is the minor of a release, as extensions name their target: v1.12.5 → 1.12.
func targetOf(release string) string {
	parts := strings.SplitN(strings.TrimPrefix(release, "v"), ".", 3)
	must(func() error {
		if len(parts) < 2 {
			return fmt.Errorf("not a release: %q", release)
		}
		return nil
	}())
	return parts[0] + "." + parts[1]
}

// answered is one line the extension logged for a call: "hook answered" (HTTP 200) or
// "request rejected" (any other status).
type answered struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
	HTTP    string `json:"http"`
	Span    struct {
		Hook    string `json:"hook"`
		Handler string `json:"handler"`
		Client  string `json:"client"` // the caller's client certificate's common name
	} `json:"span"`
}

// answers reads the calls the extension logged (its log is JSON, one object per line).
func answers(logPath string) []answered {
	data, _ := os.ReadFile(logPath)
	var out []answered
	for _, line := range strings.Split(string(data), "\n") {
		var a answered
		if json.Unmarshal([]byte(line), &a) != nil || (a.Message != "hook answered" && a.Message != "request rejected") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// countCalls counts the calls the extension logged, by hook.
func countCalls(logPath string) map[string]int {
	out := map[string]int{}
	for _, a := range answers(logPath) {
		out[a.Span.Hook]++
	}
	return out
}

// copyFiles copies the files of from (not its folders, nor those named with a prefix of skip)
// into a new folder to.
func copyFiles(from, to string, skip ...string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if os.IsNotExist(err) {
		// The extension was not started on this release (its scenario was skipped).
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || slices.ContainsFunc(skip, func(p string) bool { return strings.HasPrefix(e.Name(), p) }) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
