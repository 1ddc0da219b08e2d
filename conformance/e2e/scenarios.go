package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	ns         = "e2e"
	extName    = "quickstart"
	clusterV   = "cluster.x-k8s.io/v1beta2"
	runtimeV   = "runtime.cluster.x-k8s.io/v1beta2"
	cpV        = "controlplane.cluster.x-k8s.io/v1beta2"
	infraV     = "infrastructure.cluster.x-k8s.io/v1beta2"
	bootstrapV = "bootstrap.cluster.x-k8s.io/v1beta2"
	approved   = "quickstart.capi-ext.io/approved"
	delOK      = "quickstart.capi-ext.io/delete-approved"
	pending    = "runtime.cluster.x-k8s.io/pending-hooks"
	goodRepo   = "registry.example.com"
	timeoutLg  = 120 * time.Second
)

// exampleHooks are the hooks the example extension serves, each called in the scenarios.
var exampleHooks = []string{"Discovery", "DiscoverVariables", "BeforeClusterCreate", "GeneratePatches", "ValidateTopology", "AfterControlPlaneInitialized", "BeforeClusterDelete"}

// lifecycleHooks and inplaceHooks: the same for the lifecycle and in-place extensions.
var (
	lifecycleHooks = append(append([]string{"Discovery"}, upgradeHooks...), "GenerateUpgradePlan")
	inplaceHooks   = []string{"Discovery", "CanUpdateMachineSet", "CanUpdateMachine", "UpdateMachine"}
)

type scenarios struct {
	// holdPool holds the Nodes of the MachinePools the upgrade scenarios play at their version.
	holdPool   atomic.Bool
	kube       *Kube
	caB64      string
	extURL     string
	extLog     string
	pki        *PKI
	metricsURL string
	// the example extension's own metrics, and the command that reads them as Prometheus does
	extMetricsURL, promcheck string
	// the KubeadmControlPlane manager's metrics (its runtime client calls CanUpdateMachine)
	kcpMetricsURL  string
	recorded       recorded
	extBin         string
	kubeconfig     string // the test API server's admin kubeconfig: also the workload cluster's
	execKubeconfig string // the same admin, credentials from an exec plugin
	apiPort        int    // the test API server's port (a Cluster's control plane endpoint)
	kcpLog         string // the KubeadmControlPlane manager's log
	minor          int    // the Cluster API release's minor (behaviour that changed is checked per release)
	capiLog        string
	// the lifecycle extension (upgrade hooks, GenerateUpgradePlan)
	lifecycleURL      string
	lifecycleLog      string
	lifecycleRecorded recorded
	// the in-place extension (CanUpdateMachineSet, UpdateMachine)
	inplaceURL     string
	inplaceLog     string
	extCertDir     string
	clientCert     string // signed by the CA the extension trusts for clients (capi-ext render uses it)
	clientKey      string
	ps             *Processes
	work           string
	capiExt        string
	conformanceBin string // capi-ext-conformance: the lifecycle and topology extensions
	testExtBin     string // the port of CAPI's test extension
	goTestExtBin   string // CAPI's test extension, built from the Go module proxy
	capiVersion    string // the Cluster API release of the manager
	// the manifests scenario: kustomize and cert-manager's CRDs
	kustomize       string
	helm            string
	clusterctl      string
	certManagerCRDs string
	// prometheus-operator's PodMonitor and PrometheusRule CRDs
	promOperatorCRDs string
	// the CRDs installed of the diff scenario's kinds (CAPI's, KCP's and Kubeadm's of the
	// release, CAPI's Docker provider's), which `capi-ext diff` is given
	diffCRDs []string
}

func (s *scenarios) discovery(ctx context.Context) error {
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %s}
---
apiVersion: %s
kind: ExtensionConfig
metadata: {name: %s}
spec:
  clientConfig: {url: %q, caBundle: %s}
  namespaceSelector: {}
  settings: {retryAfterSeconds: "1", origin: extensionconfig, owner: extensionconfig}
`, ns, runtimeV, extName, s.extURL, s.caB64)); err != nil {
		return err
	}
	want := []string{
		"control-plane-ready.quickstart AfterControlPlaneInitialized 10 Fail",
		"hold-delete.quickstart BeforeClusterDelete 5 Fail",
		"hold-until-approved.quickstart BeforeClusterCreate 5 Fail",
		"patches.quickstart GeneratePatches 10 Fail",
		"validate.quickstart ValidateTopology 10 Fail",
		"variables.quickstart DiscoverVariables 10 Fail",
	}
	return Eventually(timeoutLg, "ExtensionConfig Discovered=True with the advertised handlers", func() (bool, string) {
		u, err := s.kube.Get(ctx, runtimeV, "ExtensionConfig", "", extName)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "Discovered")
		handlers, _, _ := unstructured.NestedSlice(u.Object, "status", "handlers")
		var got []string
		for _, h := range handlers {
			m := h.(map[string]any)
			hook, _, _ := unstructured.NestedString(m, "requestHook", "hook")
			got = append(got, fmt.Sprintf("%v %s %v %v", m["name"], hook, m["timeoutSeconds"], m["failurePolicy"]))
		}
		sort.Strings(got)
		return st == "True" && reason == "Discovered" && reflect.DeepEqual(got, want),
			fmt.Sprintf("Discovered=%s/%s %q handlers=%v", st, reason, msg, got)
	})
}

// badDiscovery serves a Discovery answer capi-ext's registrations would refuse (a name with
// a dot and uppercase letters, a timeout over 30) and checks CAPI refuses it the same way.
func (s *scenarios) badDiscovery(ctx context.Context) error {
	cert, err := tls.LoadX509KeyPair(s.pki.Leaf("bad-discovery", "127.0.0.1", nil, true))
	must(err)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	must(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"Success","handlers":[{"name":"Bad.Name","requestHook":{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","hook":"BeforeClusterCreate"},"timeoutSeconds":31}]}`)
	})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	url := "https://" + l.Addr().(*net.TCPAddr).String()
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %s
kind: ExtensionConfig
metadata: {name: bad-discovery}
spec:
  clientConfig: {url: %q, caBundle: %s}
  namespaceSelector: {matchLabels: {nothing: matches}}
`, runtimeV, url, s.caB64)); err != nil {
		return err
	}
	defer func() { _ = s.kube.Delete(ctx, runtimeV, "ExtensionConfig", "", "bad-discovery") }()
	var message string
	err = Eventually(timeoutLg, "Discovered=False with CAPI's validation message", func() (bool, string) {
		u, err := s.kube.Get(ctx, runtimeV, "ExtensionConfig", "", "bad-discovery")
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "Discovered")
		message = msg
		return st == "False" && reason == "NotDiscovered" && strings.Contains(msg, "Bad.Name") && strings.Contains(msg, "31"),
			fmt.Sprintf("Discovered=%s/%s %q", st, reason, msg)
	})
	if err == nil {
		fmt.Printf("  CAPI: %s\n", message)
	}
	return err
}

// mutualTLS: the extension of every other scenario requires a client certificate from the
// manager's client CA, so each call CAPI made there is proof that mTLS works. Here: a caller
// without that certificate is refused by the extension, and a second extension that trusts
// another CA refuses the manager, which CAPI reports in the ExtensionConfig's Discovered condition.
func (s *scenarios) mutualTLS(ctx context.Context) error {
	noCert := HTTPClient(s.pki.CAPEM, "", "")
	discoveryPath := "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery"
	if resp, err := noCert.Post(s.extURL+discoveryPath, "", strings.NewReader("{}")); err == nil {
		_ = resp.Body.Close()
		return fmt.Errorf("the extension answered a caller without a client certificate (HTTP %d)", resp.StatusCode)
	} else {
		fmt.Printf("  a caller without a client certificate: %v\n", err)
	}

	otherCA := NewPKI(filepath.Join(s.work, "other-client-pki"), "capi-ext-e2e-other-ca")
	dir := filepath.Join(s.work, "other-ca-extension-certs")
	must(os.MkdirAll(dir, 0o755))
	for _, f := range []string{"tls.crt", "tls.key"} {
		data, err := os.ReadFile(filepath.Join(s.extCertDir, f))
		must(err)
		must(os.WriteFile(filepath.Join(dir, f), data, 0o600))
	}
	must(os.WriteFile(filepath.Join(dir, "client-ca.crt"), otherCA.CAPEM, 0o644))
	port, probes, otherMetrics := FreePort(), FreePort(), FreePort()
	other := s.ps.Start("extension-other-ca", s.extBin, "--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", port),
		"--webhook-cert-dir="+dir, "--webhook-client-ca-name=client-ca.crt", fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", otherMetrics),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes), "--log-format=json")
	if err := WaitHTTP(HTTPClient(nil, "", ""), fmt.Sprintf("http://127.0.0.1:%d/readyz", probes), 60*time.Second, other); err != nil {
		return err
	}
	otherURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", otherMetrics)
	before := filepath.Join(s.work, "metrics-other-ca-1.json")
	if _, err := scrape(s.promcheck, otherURL, before); err != nil {
		return err
	}
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %s
kind: ExtensionConfig
metadata: {name: other-ca}
spec:
  clientConfig: {url: "https://127.0.0.1:%d", caBundle: %s}
  namespaceSelector: {matchLabels: {nothing: matches}}
`, runtimeV, port, s.caB64)); err != nil {
		return err
	}
	defer func() { _ = s.kube.Delete(ctx, runtimeV, "ExtensionConfig", "", "other-ca") }()
	var message string
	err := Eventually(timeoutLg, "Discovered=False with a TLS error about the client certificate", func() (bool, string) {
		u, err := s.kube.Get(ctx, runtimeV, "ExtensionConfig", "", "other-ca")
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "Discovered")
		message = msg
		return st == "False" && reason == "NotDiscovered" && strings.Contains(msg, "tls:") && strings.Contains(msg, "certificate"),
			fmt.Sprintf("Discovered=%s/%s %q", st, reason, msg)
	})
	if err != nil {
		return err
	}
	fmt.Printf("  CAPI: %s\n", message)
	// The extension saw it too: CAPI's handshakes with a certificate it does not trust.
	after := filepath.Join(s.work, "metrics-other-ca-2.json")
	m, err := scrape(s.promcheck, otherURL, after)
	if err != nil {
		return err
	}
	failed := m.value("capi_ext_tls_handshake_failures_total", map[string]string{"reason": "error"})
	if failed < 1 {
		return fmt.Errorf("the extension that refused CAPI's client certificate counted %v failed handshakes", failed)
	}
	holding, err := s.alertsHolding(before, after)
	if err != nil {
		return err
	}
	if err := expectAlerts(holding, "CapiExtTLSHandshakesFailing", "CapiExtCertificateExpiresSoon"); err != nil {
		return err
	}
	fmt.Printf("  the refusing extension counted %v failed TLS handshakes; the scaffold's CapiExtTLSHandshakesFailing holds for %v\n", failed, holding["CapiExtTLSHandshakesFailing"])
	return nil
}

func (s *scenarios) discoverVariables(ctx context.Context) error {
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %[1]s
kind: GenericInfrastructureClusterTemplate
metadata: {name: e2e-infra, namespace: %[3]s}
spec: {template: {spec: {}}}
---
apiVersion: %[2]s
kind: GenericControlPlaneTemplate
metadata: {name: e2e-cp, namespace: %[3]s}
spec: {template: {spec: {}}}
---
apiVersion: %[1]s
kind: GenericInfrastructureMachineTemplate
metadata: {name: e2e-cp-machine, namespace: %[3]s}
spec: {template: {spec: {size: large}}}
---
apiVersion: %[1]s
kind: GenericInfrastructureMachineTemplate
metadata: {name: e2e-worker-machine, namespace: %[3]s}
spec: {template: {spec: {size: medium}}}
---
apiVersion: %[5]s
kind: GenericBootstrapConfigTemplate
metadata: {name: e2e-worker-bootstrap, namespace: %[3]s}
spec: {template: {spec: {}}}
---
apiVersion: %[1]s
kind: GenericInfrastructureMachinePoolTemplate
metadata: {name: e2e-pool, namespace: %[3]s}
spec: {template: {spec: {size: small}}}
---
apiVersion: %[4]s
kind: ClusterClass
metadata: {name: e2e-class, namespace: %[3]s}
spec:
  infrastructure:
    templateRef: {apiVersion: %[1]s, kind: GenericInfrastructureClusterTemplate, name: e2e-infra}
    naming: {template: "{{ .cluster.name }}-infra-{{ .random }}"}
  controlPlane:
    templateRef: {apiVersion: %[2]s, kind: GenericControlPlaneTemplate, name: e2e-cp}
    naming: {template: "cp-{{ .cluster.name }}-{{ .random }}"}
    machineInfrastructure:
      templateRef: {apiVersion: %[1]s, kind: GenericInfrastructureMachineTemplate, name: e2e-cp-machine}
    # A MachineHealthCheck CAPI creates for the control plane (no Machine ever waits that long).
    healthCheck:
      checks: {nodeStartupTimeoutSeconds: 3600}
  workers:
    machineDeployments:
    - class: default-worker
      naming: {template: "{{ .cluster.name }}-workers-{{ .machineDeployment.topologyName }}-{{ .random }}"}
      bootstrap:
        templateRef: {apiVersion: %[5]s, kind: GenericBootstrapConfigTemplate, name: e2e-worker-bootstrap}
      infrastructure:
        templateRef: {apiVersion: %[1]s, kind: GenericInfrastructureMachineTemplate, name: e2e-worker-machine}
    machinePools:
    - class: default-pool
      naming: {template: "pool-{{ .machinePool.topologyName }}-{{ .random }}-{{ .cluster.name }}"}
      bootstrap:
        templateRef: {apiVersion: %[5]s, kind: GenericBootstrapConfigTemplate, name: e2e-worker-bootstrap}
      infrastructure:
        templateRef: {apiVersion: %[1]s, kind: GenericInfrastructureMachinePoolTemplate, name: e2e-pool}
  patches:
  - name: load-balancer
    definitions:
    - selector:
        apiVersion: %[1]s
        kind: GenericInfrastructureClusterTemplate
        matchResources: {infrastructureCluster: true}
      jsonPatches:
      - op: add
        path: /spec/template/spec/loadBalancer
        valueFrom:
          template: |
            name: {{ .builtin.cluster.name }}-lb
            kubernetesVersion: {{ .builtin.cluster.topology.version | quote }}
  # Go template values render must print as Go does (numbers of the data are float64) and
  # read back as CAPI does (YAML 1.1 scalars).
  - name: values
    definitions:
    - selector:
        apiVersion: %[1]s
        kind: GenericInfrastructureMachineTemplate
        matchResources: {machineDeploymentClass: {names: [default-worker]}}
      jsonPatches:
      - op: add
        path: /spec/template/spec/values
        valueFrom:
          template: |
            replicas: {{ .builtin.machineDeployment.replicas }}
            replicasText: "md-{{ .builtin.machineDeployment.replicas }}"
            printfD: "{{ printf "%%d" .builtin.machineDeployment.replicas }}"
            million: {{ 1000000.0 }}
            millionText: "{{ 1000000.0 }}"
            mode: 0644
            hex: 0x1F
            enabled: yes
            off: off
            thousands: 1_000
            octalEight: 08
            quoted: "0644"
  - name: quickstart
    external:
      generatePatchesExtension: patches.quickstart
      validateTopologyExtension: validate.quickstart
      discoverVariablesExtension: variables.quickstart
      settings: {origin: clusterclass}
  upgrade:
    external: {generateUpgradePlanExtension: upgrade-plan.lifecycle}
`, infraV, cpV, ns, clusterV, bootstrapV)); err != nil {
		return err
	}
	return Eventually(timeoutLg, "ClusterClass VariablesReady=True with imageRepository from quickstart", func() (bool, string) {
		u, err := s.kube.Get(ctx, clusterV, "ClusterClass", ns, "e2e-class")
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "VariablesReady")
		vars, _, _ := unstructured.NestedSlice(u.Object, "status", "variables")
		summary, _ := json.Marshal(vars)
		ok := st == "True" && len(vars) == 1
		if ok {
			v := vars[0].(map[string]any)
			defs, _, _ := unstructured.NestedSlice(v, "definitions")
			ok = v["name"] == "imageRepository" && len(defs) == 1 && defs[0].(map[string]any)["from"] == "quickstart" &&
				defs[0].(map[string]any)["required"] == false
		}
		gen, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return ok && gen == u.GetGeneration(), fmt.Sprintf("VariablesReady=%s/%s %q variables=%s", st, reason, msg, summary)
	})
}

func clusterYAML(name, repo string, annotations map[string]string) string {
	return clusterManifest(ns, "e2e-class", name, repo, annotations)
}

// clusterManifest is clusterYAML for the Cluster namespace/name of the ClusterClass class (in
// the same namespace).
func clusterManifest(namespace, class, name, repo string, annotations map[string]string) string {
	ann, _ := json.Marshal(annotations)
	return fmt.Sprintf(`apiVersion: %s
kind: Cluster
metadata: {name: %s, namespace: %s, annotations: %s}
spec:
  topology:
    classRef: {name: %s}
    version: v1.34.0
    workers:
      machineDeployments:
      # A MachineHealthCheck from the Cluster's topology (its remediation's maxInFlight also
      # lands in the MachineDeployment); no Node is Unknown for an hour in the e2e, and 0
      # turns the node startup check off.
      - class: default-worker
        name: md-0
        replicas: 0
        healthCheck:
          checks:
            nodeStartupTimeoutSeconds: 0
            unhealthyNodeConditions: [{type: Ready, status: Unknown, timeoutSeconds: 3600}]
          remediation: {maxInFlight: 1, triggerIf: {unhealthyInRange: "[0-5]"}}
      machinePools:
      - {class: default-pool, name: mp-0, replicas: 0}
    variables:
    - {name: imageRepository, value: %q}
`, clusterV, name, namespace, ann, class, repo)
}

func (s *scenarios) variableAdmission(ctx context.Context) error {
	_, err := s.kube.Apply(ctx, clusterYAML("invalid", goodRepo+"/", nil))
	if err == nil {
		return fmt.Errorf("a Cluster with imageRepository %q was admitted", goodRepo+"/")
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "imageRepository must not end with '/'") {
		return fmt.Errorf("rejected, but not by the variable's CEL rule: %w", err)
	}
	fmt.Printf("  CAPI: %s\n", err)
	return nil
}

func (s *scenarios) cluster(ctx context.Context) (*unstructured.Unstructured, error) {
	return s.kube.Get(ctx, clusterV, "Cluster", ns, "c1")
}

func (s *scenarios) beforeClusterCreate(ctx context.Context) error {
	if _, err := s.kube.Apply(ctx, clusterYAML("c1", goodRepo, nil)); err != nil {
		return err
	}
	// The quickstart's BeforeClusterCreate is two gates run together; the holding one names itself.
	blocked := "approval: waiting for annotation " + approved + "=true on Cluster e2e/c1"
	err := Eventually(timeoutLg, "TopologyReconciled=False/ClusterCreating naming the extension's message", func() (bool, string) {
		u, err := s.cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "TopologyReconciled")
		_, hasInfra, _ := unstructured.NestedMap(u.Object, "spec", "infrastructureRef")
		return st == "False" && reason == "ClusterCreating" && strings.Contains(msg, "BeforeClusterCreate: "+blocked) && !hasInfra,
			fmt.Sprintf("TopologyReconciled=%s/%s %q infrastructureRef set=%v", st, reason, msg, hasInfra)
	})
	if err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	u, _ := s.cluster(ctx)
	if _, has, _ := unstructured.NestedMap(u.Object, "spec", "controlPlaneRef"); has {
		return fmt.Errorf("the control plane was created while BeforeClusterCreate blocked")
	}
	if err := s.kube.MergePatch(ctx, clusterV, "Cluster", ns, "c1", fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, approved), false); err != nil {
		return err
	}
	return Eventually(timeoutLg, "topology created after approval", func() (bool, string) {
		u, err := s.cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		infra, _, _ := unstructured.NestedString(u.Object, "spec", "infrastructureRef", "name")
		cp, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name")
		hooks := u.GetAnnotations()[pending]
		return infra != "" && cp != "" && strings.Contains(hooks, "AfterControlPlaneInitialized"),
			fmt.Sprintf("infrastructureRef=%q controlPlaneRef=%q pending-hooks=%q", infra, cp, hooks)
	})
}

func (s *scenarios) refs(ctx context.Context) (infra, cp string) {
	u, _ := s.cluster(ctx)
	infra, _, _ = unstructured.NestedString(u.Object, "spec", "infrastructureRef", "name")
	cp, _, _ = unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name")
	return infra, cp
}

func (s *scenarios) generatePatches(ctx context.Context) error {
	infraName, cpName := s.refs(ctx)
	wantSettings := map[string]any{"retryAfterSeconds": "1", "origin": "clusterclass", "owner": "extensionconfig"}
	return Eventually(timeoutLg, "patched GenericControlPlane and GenericInfrastructureCluster", func() (bool, string) {
		cp, err := s.kube.Get(ctx, cpV, "GenericControlPlane", ns, cpName)
		if err != nil {
			return false, err.Error()
		}
		infra, err := s.kube.Get(ctx, infraV, "GenericInfrastructureCluster", ns, infraName)
		if err != nil {
			return false, err.Error()
		}
		repo, _, _ := unstructured.NestedString(cp.Object, "spec", "imageRepository")
		version, _, _ := unstructured.NestedString(cp.Object, "spec", "version")
		settings, _, _ := unstructured.NestedMap(infra.Object, "spec", "extensionSettings")
		lb, _, _ := unstructured.NestedMap(infra.Object, "spec", "loadBalancer")
		wantLB := map[string]any{"name": "c1-lb", "kubernetesVersion": "v1.34.0"}
		return repo == goodRepo && version == "v1.34.0" && reflect.DeepEqual(settings, wantSettings) && reflect.DeepEqual(lb, wantLB),
			fmt.Sprintf("controlPlane.spec.imageRepository=%q version=%q infra.spec.extensionSettings=%v infra.spec.loadBalancer (inline patch)=%v", repo, version, settings, lb)
	})
}

func (s *scenarios) validateTopology(ctx context.Context) error {
	if err := Eventually(timeoutLg, "TopologyReconciled=True", func() (bool, string) {
		u, err := s.cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "TopologyReconciled")
		return st == "True", fmt.Sprintf("TopologyReconciled=%s/%s %q", st, reason, msg)
	}); err != nil {
		return err
	}
	setRepo := func(repo string) error {
		return s.kube.MergePatch(ctx, clusterV, "Cluster", ns, "c1",
			fmt.Sprintf(`{"spec":{"topology":{"variables":[{"name":"imageRepository","value":%q}]}}}`, repo), false)
	}
	if err := setRepo("docker.io/library"); err != nil {
		return fmt.Errorf("the webhook should admit docker.io (only the extension rejects it): %w", err)
	}
	err := Eventually(timeoutLg, "TopologyReconciled=False/ReconcileFailed with the extension's message", func() (bool, string) {
		u, err := s.cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "TopologyReconciled")
		const message = "imageRepository docker.io/library is on docker.io, which is rate limited"
		if s.minor < 14 {
			// Before v1.14 the condition only says the call failed; the message is in CAPI's log.
			log, _ := os.ReadFile(s.capiLog)
			return st == "False" && reason == "ReconcileFailed" && strings.Contains(msg, "got failure response") &&
					strings.Contains(string(log), "got failure response with message "+message),
				fmt.Sprintf("TopologyReconciled=%s/%s %q", st, reason, msg)
		}
		return st == "False" && reason == "ReconcileFailed" && strings.Contains(msg, message),
			fmt.Sprintf("TopologyReconciled=%s/%s %q", st, reason, msg)
	})
	if err != nil {
		return err
	}
	_, cpName := s.refs(ctx)
	cp, err := s.kube.Get(ctx, cpV, "GenericControlPlane", ns, cpName)
	if err != nil {
		return err
	}
	if repo, _, _ := unstructured.NestedString(cp.Object, "spec", "imageRepository"); repo != goodRepo {
		return fmt.Errorf("a rejected topology was applied: imageRepository=%q", repo)
	}
	if err := setRepo(goodRepo); err != nil {
		return err
	}
	return Eventually(timeoutLg, "TopologyReconciled=True again", func() (bool, string) {
		u, _ := s.cluster(ctx)
		st, reason, msg := Condition(u, "TopologyReconciled")
		return st == "True", fmt.Sprintf("TopologyReconciled=%s/%s %q", st, reason, msg)
	})
}

func (s *scenarios) afterControlPlaneInitialized(ctx context.Context) error {
	_, cpName := s.refs(ctx)
	if err := s.kube.MergePatch(ctx, cpV, "GenericControlPlane", ns, cpName, `{"status":{"initialization":{"controlPlaneInitialized":true},"version":"v1.34.0"}}`, true); err != nil {
		return err
	}
	return Eventually(timeoutLg, "AfterControlPlaneInitialized called and marked done", func() (bool, string) {
		u, err := s.cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		hooks := u.GetAnnotations()[pending]
		st, _, _ := Condition(u, "ControlPlaneInitialized")
		called := countCalls(s.extLog)["AfterControlPlaneInitialized"] > 0
		return st == "True" && called && !strings.Contains(hooks, "AfterControlPlaneInitialized"),
			fmt.Sprintf("ControlPlaneInitialized=%s extension called=%v pending-hooks=%q", st, called, hooks)
	})
}

func (s *scenarios) beforeClusterDelete(ctx context.Context) error {
	if err := s.kube.Delete(ctx, clusterV, "Cluster", ns, "c1"); err != nil {
		return err
	}
	err := Eventually(timeoutLg, "deletion held by BeforeClusterDelete", func() (bool, string) {
		u, err := s.cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "Deleting")
		_, treason, tmsg := Condition(u, "TopologyReconciled")
		return u.GetDeletionTimestamp() != nil && reason == "WaitingForBeforeDeleteHook" && strings.Contains(tmsg, "BeforeClusterDelete: waiting for annotation "+delOK),
			fmt.Sprintf("Deleting=%s/%s %q TopologyReconciled=%s %q", st, reason, msg, treason, tmsg)
	})
	if err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	if _, err := s.cluster(ctx); err != nil {
		return fmt.Errorf("the Cluster went away while BeforeClusterDelete blocked: %w", err)
	}
	if err := s.kube.MergePatch(ctx, clusterV, "Cluster", ns, "c1", fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, delOK), false); err != nil {
		return err
	}
	return Eventually(timeoutLg, "Cluster deleted after approval", func() (bool, string) {
		u, err := s.cluster(ctx)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("still there, annotations=%v finalizers=%v", u.GetAnnotations(), u.GetFinalizers())
	})
}

// capiMetrics reads the runtime SDK request counters of both managers (CanUpdateMachine is
// KubeadmControlPlane's call, every other hook the core manager's).
func (s *scenarios) capiMetrics(ctx context.Context) error {
	var lines []string
	for _, url := range []string{s.metricsURL, s.kcpMetricsURL} {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "capi_runtime_sdk_requests_total{") {
				lines = append(lines, l)
			}
		}
	}
	// Calls to the extensions that exist to be refused (bad discovery, another client CA) are
	// expected to fail; every call to the example, lifecycle and in-place extensions must have got HTTP 200.
	var bad []string
	for _, ext := range []struct {
		url   string
		hooks []string
	}{{s.extURL, exampleHooks}, {s.lifecycleURL, lifecycleHooks}, {s.inplaceURL, inplaceHooks}} {
		host := `host="` + strings.TrimPrefix(ext.url, "https://") + `"`
		for _, hook := range ext.hooks {
			found := false
			for _, l := range lines {
				if strings.Contains(l, host) && strings.Contains(l, `hook="`+hook+`"`) && strings.Contains(l, `code="200"`) {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("no capi_runtime_sdk_requests_total with code 200 for %s at %s in:\n%s", hook, ext.url, strings.Join(lines, "\n"))
			}
		}
		for _, l := range lines {
			if strings.Contains(l, host) && !strings.Contains(l, `code="200"`) {
				bad = append(bad, l)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("CAPI counted calls that did not get HTTP 200:\n%s", strings.Join(bad, "\n"))
	}
	fmt.Printf("  %d request series, all hooks answered with HTTP 200\n", len(lines))
	return nil
}

// transport reads the extension's own log: every call it answered came over HTTP/2 (CAPI's
// runtime client negotiates it by ALPN), none was rejected, and every hook the scenarios
// exercised is there, so the manager talked to the Rust server itself.
// The common names of the client certificates of the e2e's callers (main.go's client PKI).
const (
	managerClient = "capi-manager"
	renderClient  = "capi-ext-render"
)

func (s *scenarios) transport(ctx context.Context) error {
	var problems []string
	total, byRender := 0, 0
	for _, ext := range []struct {
		log   string
		hooks []string
	}{{s.extLog, exampleHooks}, {s.lifecycleLog, lifecycleHooks}, {s.inplaceLog, inplaceHooks}} {
		seen := map[string]int{}
		for _, a := range answers(ext.log) {
			// Each call names its caller (the client certificate's common name): the manager's
			// calls are judged here; capi-ext render's (the render and diff scenarios) are
			// counted apart; any other caller is a problem.
			switch a.Span.Client {
			case managerClient:
			case renderClient:
				byRender++
				continue
			default:
				problems = append(problems, fmt.Sprintf("%s %s called by %q, neither the manager nor capi-ext render", a.Span.Hook, a.Span.Handler, a.Span.Client))
				continue
			}
			total++
			seen[a.Span.Hook]++
			if a.HTTP != "HTTP/2.0" {
				problems = append(problems, fmt.Sprintf("%s %s over %q", a.Span.Hook, a.Span.Handler, a.HTTP))
			}
			if a.Message != "hook answered" || a.Code != 200 {
				problems = append(problems, fmt.Sprintf("%s %s answered HTTP %d", a.Span.Hook, a.Span.Handler, a.Code))
			}
		}
		for _, hook := range ext.hooks {
			if seen[hook] == 0 {
				problems = append(problems, "no call of "+hook+" by the manager in "+ext.log)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	fmt.Printf("  %d calls of the manager to the three extensions (told by its client certificate), all over HTTP/2 with HTTP 200; %d calls of capi-ext render apart\n", total, byRender)
	return nil
}
