package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The proof of `capi-ext diff` by the real manager: one topology extension deployed in
// successive versions behind one ExtensionConfig (capi-ext-conformance topology-extension
// --variant, each adding one class of change), a Cluster of its own, and before each deployment
// `capi-ext diff` between the running version and the next; after it, what CAPI did, read from
// the API server, must be exactly what diff predicted, object by object.

const (
	// VariantLast is the last version of diffSteps, deployed again after the renamed handler.
	VariantLast     = "pool"
	diffClusterName = "d1"
	versionsExt     = "versions"
	deployedAnn     = "e2e.capi-ext.io/deployed"
	upgradeStepAnn  = "topology.internal.cluster.x-k8s.io/upgrade-step"
	// The annotation that pauses the reconcile of the object that carries it.
	pausedAnn = "cluster.x-k8s.io/paused"
)

// diffSteps are the versions after the first, each with the change it must make CAPI do:
// the role of the object that changes and how (what diff calls the effect), or nothing.
var diffSteps = []struct {
	variant string
	want    map[string]string
	rollout bool
}{
	{"rebuilt", map[string]string{}, false},
	{"labels", map[string]string{"MachineDeployment md-0's infrastructure template": "metadata-in-place"}, false},
	{"infrastructure", map[string]string{"the infrastructure cluster": "in-place"}, false},
	{"control-plane", map[string]string{"the control plane": "in-place"}, false},
	{"rollout", map[string]string{"MachineDeployment md-0's infrastructure template": "template-rotated"}, true},
	{"control-plane-machine", map[string]string{"the control plane's infrastructure machine template": "template-rotated"}, true},
	{"bootstrap", map[string]string{"MachineDeployment md-0's bootstrap template": "template-rotated"}, true},
	{"pool", map[string]string{"MachinePool mp-0's infrastructure machine pool": "in-place"}, false},
}

// versionProcess is one running version of the topology extension.
type versionProcess struct {
	proc *Process
	port int
}

func (s *scenarios) startVersion(variant string, port int) (*versionProcess, error) {
	probes := FreePort()
	p := s.ps.Start(fmt.Sprintf("topology-%s-%d", variant, port), s.conformanceBin, "topology-extension", "--variant", variant,
		"--target=1."+fmt.Sprint(s.minor), "--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", port),
		"--webhook-cert-dir="+s.extCertDir, "--webhook-client-ca-name=client-ca.crt", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes), "--log-format=json")
	if err := WaitHTTP(HTTPClient(nil, "", ""), fmt.Sprintf("http://127.0.0.1:%d/readyz", probes), 60*time.Second, p); err != nil {
		return nil, err
	}
	return &versionProcess{proc: p, port: port}, nil
}

// stop stops one process by its PID and waits for it.
func (v *versionProcess) stop() {
	v.proc.Stop()
}

func (v *versionProcess) url() string { return fmt.Sprintf("https://127.0.0.1:%d", v.port) }

// diff's names of the control plane's machines' template, the MachineDeployment, its
// infrastructure template and MachineHealthCheck, and the MachinePool.
const (
	clusterRole       = "the Cluster"
	cpMachineRole     = "the control plane's infrastructure machine template"
	mdInfraRole       = "MachineDeployment md-0's infrastructure template"
	mdRole            = "MachineDeployment md-0"
	mdHealthCheckRole = "MachineDeployment md-0's MachineHealthCheck"
	mpRole            = "MachinePool mp-0"
)

// diffState is what the scenario reads of the Cluster's objects: each object's labels,
// annotations and spec (the Cluster's own topology-managed fields, and every object the topology owns: the infrastructure cluster, the
// control plane and its machines' template, md-0, its templates and MachineHealthCheck, mp-0
// and its bootstrap config and infrastructure machine pool), the references to them, md-0's
// MachineSets.
type diffState struct {
	objects     map[string]map[string]any // by diff's role name
	refs        map[string]string         // role → the name the holder references
	machineSets int
}

func content(u *unstructured.Unstructured) map[string]any {
	spec, _, _ := unstructured.NestedFieldCopy(u.Object, "spec")
	return map[string]any{"labels": u.GetLabels(), "annotations": u.GetAnnotations(), "spec": spec}
}

func (s *scenarios) diffSnapshot(ctx context.Context) (diffState, error) {
	st := diffState{objects: map[string]map[string]any{}, refs: map[string]string{}}
	c, err := s.kube.Get(ctx, clusterV, "Cluster", ns, diffClusterName)
	if err != nil {
		return st, err
	}
	infraName, _, _ := unstructured.NestedString(c.Object, "spec", "infrastructureRef", "name")
	cpName, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "name")
	// The Cluster's fields its topology controller writes (what render prints of it): labels,
	// the upgrade-step annotation (the other annotations are the harness's own and the hooks'
	// bookkeeping, which render does not print apart), the two references.
	clusterSpec := map[string]any{}
	for _, ref := range []string{"infrastructureRef", "controlPlaneRef"} {
		v, _, _ := unstructured.NestedFieldCopy(c.Object, "spec", ref)
		clusterSpec[ref] = v
	}
	clusterAnnotations := map[string]string{}
	for key, value := range c.GetAnnotations() {
		if key == upgradeStepAnn {
			clusterAnnotations[key] = value
		}
	}
	st.objects[clusterRole] = map[string]any{"labels": c.GetLabels(), "annotations": clusterAnnotations, "spec": clusterSpec}
	st.refs[clusterRole] = diffClusterName
	mds, err := s.kube.List(ctx, clusterV, "MachineDeployment", ns, map[string]string{
		"cluster.x-k8s.io/cluster-name": diffClusterName, "topology.cluster.x-k8s.io/deployment-name": "md-0"})
	if err != nil {
		return st, err
	}
	if infraName == "" || cpName == "" || len(mds) != 1 {
		return st, fmt.Errorf("Cluster %s: infrastructure %q, control plane %q, %d MachineDeployments md-0", diffClusterName, infraName, cpName, len(mds))
	}
	mps, err := s.kube.List(ctx, clusterV, "MachinePool", ns, map[string]string{
		"cluster.x-k8s.io/cluster-name": diffClusterName, "topology.cluster.x-k8s.io/pool-name": "mp-0"})
	if err != nil {
		return st, err
	}
	if len(mps) != 1 {
		return st, fmt.Errorf("Cluster %s: %d MachinePools mp-0", diffClusterName, len(mps))
	}
	md, mp := mds[0], mps[0]
	mdInfra, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	mdBootstrap, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	mpInfra, _, _ := unstructured.NestedString(mp.Object, "spec", "template", "spec", "infrastructureRef", "name")
	mpBootstrap, _, _ := unstructured.NestedString(mp.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	cpMachine := ""
	for _, o := range []struct{ role, apiVersion, kind, name string }{
		{"the infrastructure cluster", infraV, "DockerCluster", infraName},
		{"the control plane", cpV, "KubeadmControlPlane", cpName},
		{mdInfraRole, infraV, "DockerMachineTemplate", mdInfra},
		{"MachineDeployment md-0's bootstrap template", bootstrapV, "KubeadmConfigTemplate", mdBootstrap},
		{"MachinePool mp-0's infrastructure machine pool", infraV, "DockerMachinePool", mpInfra},
		{"MachinePool mp-0's bootstrap config", bootstrapV, "KubeadmConfig", mpBootstrap},
	} {
		u, err := s.kube.Get(ctx, o.apiVersion, o.kind, ns, o.name)
		if err != nil {
			return st, fmt.Errorf("%s: %w", o.role, err)
		}
		if o.kind == "KubeadmControlPlane" {
			cpMachine, _, _ = unstructured.NestedString(u.Object, "spec", "machineTemplate", "spec", "infrastructureRef", "name")
			// The reference to its machines' template is read as that template's rotation
			// (refs), as the MachineDeployment's references are: not as a change of its own.
			u = u.DeepCopy()
			unstructured.RemoveNestedField(u.Object, "spec", "machineTemplate", "spec", "infrastructureRef", "name")
		}
		st.objects[o.role] = content(u)
		st.refs[o.role] = o.name
	}
	// The MachineDeployment itself: its references read as its templates' rotations (refs), and
	// the revision its own controller writes left out. Its MachineHealthCheck (named as it) once
	// there is one.
	mdObject := md.DeepCopy()
	for _, path := range [][]string{
		{"spec", "template", "spec", "infrastructureRef", "name"},
		{"spec", "template", "spec", "bootstrap", "configRef", "name"},
		{"metadata", "annotations", "machinedeployment.clusters.x-k8s.io/revision"},
	} {
		unstructured.RemoveNestedField(mdObject.Object, path...)
	}
	st.objects[mdRole] = content(mdObject)
	st.refs[mdRole] = md.GetName()
	// The MachinePool itself, its references read as its objects' (refs).
	mpObject := mp.DeepCopy()
	for _, path := range [][]string{
		{"spec", "template", "spec", "infrastructureRef", "name"},
		{"spec", "template", "spec", "bootstrap", "configRef", "name"},
	} {
		unstructured.RemoveNestedField(mpObject.Object, path...)
	}
	st.objects[mpRole] = content(mpObject)
	st.refs[mpRole] = mp.GetName()
	if mhc, err := s.kube.Get(ctx, clusterV, "MachineHealthCheck", ns, md.GetName()); err == nil {
		st.objects[mdHealthCheckRole] = content(mhc)
		st.refs[mdHealthCheckRole] = mhc.GetName()
	} else if !apierrors.IsNotFound(err) {
		return st, err
	}
	if cpMachine != "" {
		u, err := s.kube.Get(ctx, infraV, "DockerMachineTemplate", ns, cpMachine)
		if err != nil {
			return st, err
		}
		st.objects[cpMachineRole] = content(u)
		st.refs[cpMachineRole] = cpMachine
	}
	sets, err := s.kube.List(ctx, clusterV, "MachineSet", ns, map[string]string{"cluster.x-k8s.io/deployment-name": md.GetName()})
	if err != nil {
		return st, err
	}
	st.machineSets = len(sets)
	return st, nil
}

// observed is what CAPI did between two snapshots, in diff's words: per role the effect.
func observed(before, after diffState) map[string]string {
	out := map[string]string{}
	for role := range after.objects {
		if _, ok := before.objects[role]; !ok {
			out[role] = "created"
		}
	}
	for role, b := range before.objects {
		a, ok := after.objects[role]
		switch {
		case !ok:
			out[role] = "deleted"
		case before.refs[role] != after.refs[role]:
			out[role] = "template-rotated"
		case !reflect.DeepEqual(b["spec"], a["spec"]):
			out[role] = "in-place"
		case !reflect.DeepEqual(b["labels"], a["labels"]) || !reflect.DeepEqual(b["annotations"], a["annotations"]):
			out[role] = "metadata-in-place"
		}
	}
	return out
}

// writeDiffCases writes what diff needs, as stored in the API server: the Cluster, its
// ClusterClass and templates, and the current ControlPlane and MachineDeployment (for names).
func (s *scenarios) writeDiffCases(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c, err := s.kube.Get(ctx, clusterV, "Cluster", ns, diffClusterName)
	if err != nil {
		return err
	}
	cpName, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "name")
	mds, err := s.kube.List(ctx, clusterV, "MachineDeployment", ns, map[string]string{"cluster.x-k8s.io/cluster-name": diffClusterName})
	if err != nil {
		return err
	}
	objects := []*unstructured.Unstructured{c}
	for _, o := range []struct{ apiVersion, kind, name string }{
		{clusterV, "ClusterClass", "diff-class"},
		{infraV, "DockerClusterTemplate", "diff-infra"},
		{cpV, "KubeadmControlPlaneTemplate", "diff-cp"},
		{infraV, "DockerMachineTemplate", "diff-cp-machine"},
		{infraV, "DockerMachineTemplate", "diff-worker-machine"},
		{bootstrapV, "KubeadmConfigTemplate", "diff-worker-bootstrap"},
		{infraV, "DockerMachinePoolTemplate", "diff-pool"},
		{cpV, "KubeadmControlPlane", cpName},
	} {
		u, err := s.kube.Get(ctx, o.apiVersion, o.kind, ns, o.name)
		if err != nil {
			return err
		}
		objects = append(objects, u)
	}
	mps, err := s.kube.List(ctx, clusterV, "MachinePool", ns, map[string]string{"cluster.x-k8s.io/cluster-name": diffClusterName})
	if err != nil {
		return err
	}
	for i := range mds {
		objects = append(objects, &mds[i])
	}
	for i := range mps {
		objects = append(objects, &mps[i])
	}
	for i, u := range objects {
		data, _ := json.MarshalIndent(u.Object, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-%s.json", i, strings.ToLower(u.GetKind()))), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// diffPrediction is what `capi-ext diff --json` said about the Cluster.
type diffPrediction struct {
	effects map[string]string // role → effect, as CAPI sees it ("provider-decides" is CAPI's in-place patch)
	rollout string
	report  string
}

// diffReport is what `capi-ext diff --json` prints, as far as the scenario reads it.
type diffReport struct {
	Clusters []struct {
		Cluster, Outcome, Rollout, Error string
		Objects                          []struct{ Role, Effect string }
	}
	Inputs []struct {
		Cluster, Change, Head, Rollout, Error string
		Objects                               []struct{ Role, Effect string }
	}
}

// runDiff runs `capi-ext diff --json` between two running versions over the cases in dir and
// returns its report (about the scenario's Cluster alone), its output and its exit code.
func (s *scenarios) runDiff(ctx context.Context, base, head *versionProcess, dir string) (diffReport, string, int, error) {
	return s.runDiffOn(ctx, base, head, "--cases", dir)
}

// runDiffLive is runDiff over the Clusters that exist: read from the management cluster
// (through the exec-plugin kubeconfig), the scenario's Cluster picked by its label.
func (s *scenarios) runDiffLive(ctx context.Context, base, head *versionProcess) (diffReport, string, int, error) {
	return s.runDiffOn(ctx, base, head, "--kubeconfig", s.execKubeconfig, "--namespace", ns, "--selector", "e2e.capi-ext.io/scenario=diff")
}

func (s *scenarios) runDiffOn(ctx context.Context, base, head *versionProcess, cases ...string) (diffReport, string, int, error) {
	var report diffReport
	caFile := filepath.Join(s.work, "diff-ca.crt")
	if err := os.WriteFile(caFile, s.pki.CAPEM, 0o644); err != nil {
		return report, "", 0, err
	}
	// The versions require CAPI's client certificate, as every extension here does: diff
	// presents one too.
	args := append([]string{"diff", "--base", base.url(), "--base-ca", caFile, "--head", head.url(), "--head-ca", caFile,
		"--cert", s.clientCert, "--key", s.clientKey},
		append(cases, "--json", "--allow-rollout", "--capi-version", fmt.Sprintf("1.%d", s.minor))...)
	out, stderr, err := s.capiExtWithCRDs(ctx, args)
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		return report, "", 0, err
	}
	if code == 2 {
		return report, "", code, fmt.Errorf("capi-ext diff failed (exit 2):\n%s%s", out, stderr)
	}
	if err := json.Unmarshal(out, &report); err != nil {
		return report, "", code, fmt.Errorf("capi-ext diff --json: %w\n%s%s", err, out, stderr)
	}
	if len(report.Clusters) != 1 || report.Clusters[0].Cluster != ns+"/"+diffClusterName {
		return report, "", code, fmt.Errorf("capi-ext diff reported %d Clusters, not %s/%s alone:\n%s", len(report.Clusters), ns, diffClusterName, out)
	}
	return report, string(out), code, nil
}

func (s *scenarios) predict(ctx context.Context, base, head *versionProcess, dir string) (diffPrediction, error) {
	p := diffPrediction{effects: map[string]string{}}
	report, out, code, err := s.runDiff(ctx, base, head, dir)
	if err != nil {
		return p, err
	}
	p.report = out
	// The same diff over the Clusters that exist, read from the management cluster, says the same.
	live, liveOut, liveCode, err := s.runDiffLive(ctx, base, head)
	if err != nil {
		return p, fmt.Errorf("diff --kubeconfig: %w", err)
	}
	if liveCode != code || !reflect.DeepEqual(live, report) {
		return p, fmt.Errorf("diff --kubeconfig (exit %d) says other than diff --cases (exit %d):\n%s\n%s", liveCode, code, liveOut, out)
	}
	cluster := report.Clusters[0]
	if code != 0 {
		return p, fmt.Errorf("capi-ext diff exited %d with --allow-rollout:\n%s", code, out)
	}
	if cluster.Outcome != "changed" && cluster.Outcome != "unchanged" {
		return p, fmt.Errorf("capi-ext diff: the Cluster %s:\n%s", cluster.Outcome, out)
	}
	p.rollout = cluster.Rollout
	p.effects = asCAPISees(cluster.Objects)
	return p, nil
}

// asCAPISees is diff's effect per role, "provider-decides" read as CAPI's in-place patch.
func asCAPISees(objects []struct{ Role, Effect string }) map[string]string {
	effects := map[string]string{}
	for _, o := range objects {
		effect := o.Effect
		if effect == "provider-decides" {
			effect = "in-place"
		}
		effects[o.Role] = effect
	}
	return effects
}

func describe(m map[string]string) string {
	if len(m) == 0 {
		return "nothing"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, k+": "+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// settle waits until the manager has called the new version and the objects have stopped
// changing (the same snapshot three times, two seconds apart), then returns that snapshot.
func (s *scenarios) settle(ctx context.Context, deployed *versionProcess) (diffState, error) {
	if err := Eventually(timeoutLg, "the manager calls the new version", func() (bool, string) {
		n := 0
		for _, a := range answers(deployed.proc.Log) {
			if a.Span.Hook == "GeneratePatches" && a.Code == 200 {
				n++
			}
		}
		return n > 0, fmt.Sprintf("%d GeneratePatches calls answered", n)
	}); err != nil {
		return diffState{}, err
	}
	var last diffState
	same := 0
	deadline := time.Now().Add(timeoutLg)
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		st, err := s.diffSnapshot(ctx)
		if err != nil {
			return st, err
		}
		if reflect.DeepEqual(st, last) {
			same++
		} else {
			same = 0
		}
		last = st
		if same == 2 {
			return st, nil
		}
	}
	return last, fmt.Errorf("the Cluster's objects kept changing for %s after the deployment", timeoutLg)
}

func (s *scenarios) diffPredictsCAPI(ctx context.Context) error {
	portA := FreePort()
	deployed, err := s.startVersion("v1", portA)
	if err != nil {
		return err
	}
	// The templates are of real CRDs (CAPI's Docker provider's, Kubeadm's and
	// KubeadmControlPlane's), as installed. The control plane is a KubeadmControlPlane, checked
	// by its CRD and by the webhooks of the KCP manager; the class's metadata pauses it (KCP's
	// controller then reconciles nothing but its Paused condition), and the harness plays its
	// status: its Machines are the KCP scenario's subject, this one is CAPI's topology controller.
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %[1]s
kind: ExtensionConfig
metadata: {name: %[2]s}
spec:
  clientConfig: {url: %[3]q, caBundle: %[4]s}
  namespaceSelector: {}
---
apiVersion: %[7]s
kind: DockerClusterTemplate
metadata: {name: diff-infra, namespace: %[6]s}
spec: {template: {spec: {}}}
---
apiVersion: %[8]s
kind: KubeadmControlPlaneTemplate
metadata: {name: diff-cp, namespace: %[6]s}
spec: {template: {spec: {kubeadmConfigSpec: {clusterConfiguration: {dns: {imageRepository: registry.k8s.io/coredns}}}}}}
---
apiVersion: %[7]s
kind: DockerMachineTemplate
metadata: {name: diff-cp-machine, namespace: %[6]s}
spec: {template: {spec: {customImage: "e2e/node:control-plane"}}}
---
apiVersion: %[7]s
kind: DockerMachineTemplate
metadata: {name: diff-worker-machine, namespace: %[6]s}
spec: {template: {spec: {}}}
---
apiVersion: %[9]s
kind: KubeadmConfigTemplate
metadata: {name: diff-worker-bootstrap, namespace: %[6]s}
spec: {template: {spec: {joinConfiguration: {nodeRegistration: {kubeletExtraArgs: [{name: eviction-hard, value: "nodefs.available<0%%"}]}}}}}
---
apiVersion: %[7]s
kind: DockerMachinePoolTemplate
metadata: {name: diff-pool, namespace: %[6]s}
spec: {template: {spec: {template: {preLoadImages: ["e2e/pool:cache"]}}}}
---
apiVersion: %[5]s
kind: ClusterClass
metadata: {name: diff-class, namespace: %[6]s}
spec:
  infrastructure:
    templateRef: {apiVersion: %[7]s, kind: DockerClusterTemplate, name: diff-infra}
  controlPlane:
    metadata: {annotations: {%[13]q: ""}}
    templateRef: {apiVersion: %[8]s, kind: KubeadmControlPlaneTemplate, name: diff-cp}
    machineInfrastructure:
      templateRef: {apiVersion: %[7]s, kind: DockerMachineTemplate, name: diff-cp-machine}
  workers:
    machineDeployments:
    - class: default-worker
      bootstrap:
        templateRef: {apiVersion: %[9]s, kind: KubeadmConfigTemplate, name: diff-worker-bootstrap}
      infrastructure:
        templateRef: {apiVersion: %[7]s, kind: DockerMachineTemplate, name: diff-worker-machine}
    machinePools:
    - class: default-pool
      bootstrap:
        templateRef: {apiVersion: %[9]s, kind: KubeadmConfigTemplate, name: diff-worker-bootstrap}
      infrastructure:
        templateRef: {apiVersion: %[7]s, kind: DockerMachinePoolTemplate, name: diff-pool}
  variables:
  - name: %[12]s
    required: false
    schema: {openAPIV3Schema: {type: string, default: "e2e/node:a"}}
  patches:
  - name: versions
    external: {generatePatchesExtension: patches.%[2]s}
  - name: worker-image
    definitions:
    - selector:
        apiVersion: %[7]s
        kind: DockerMachineTemplate
        matchResources: {machineDeploymentClass: {names: [default-worker]}}
      jsonPatches:
      - {op: add, path: /spec/template/spec/customImage, valueFrom: {variable: %[12]s}}
---
apiVersion: %[5]s
kind: Cluster
metadata: {name: %[10]s, namespace: %[6]s, annotations: {%[11]q: "true"}, labels: {e2e.capi-ext.io/scenario: diff}}
spec:
  clusterNetwork: {pods: {cidrBlocks: [192.168.0.0/16]}}
  topology:
    classRef: {name: diff-class}
    version: v1.34.0
    controlPlane: {replicas: 1}
    variables:
    - {name: %[12]s, value: "e2e/node:a"}
    workers:
      machineDeployments:
      - {class: default-worker, name: md-0, replicas: 1}
      machinePools:
      - {class: default-pool, name: mp-0, replicas: 1}
`, runtimeV, versionsExt, deployed.url(), s.caB64, clusterV, ns, infraV, cpV, bootstrapV, diffClusterName, approved, imageVariable, pausedAnn)); err != nil {
		return err
	}
	// Play the control plane provider: initialized at the Cluster's version, so CAPI creates
	// the MachineDeployment.
	if err := Eventually(timeoutLg, "Cluster d1's control plane created", func() (bool, string) {
		c, err := s.kube.Get(ctx, clusterV, "Cluster", ns, diffClusterName)
		if err != nil {
			return false, err.Error()
		}
		cpName, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "name")
		if cpName == "" {
			return false, "no controlPlaneRef yet"
		}
		err = s.kube.MergePatch(ctx, cpV, "KubeadmControlPlane", ns, cpName, `{"status":{"initialization":{"controlPlaneInitialized":true},"version":"v1.34.0"}}`, true)
		return err == nil, fmt.Sprint(err)
	}); err != nil {
		return err
	}
	var state diffState
	if err := Eventually(timeoutLg, "MachineDeployment md-0 and its MachineSet created with v1", func() (bool, string) {
		st, err := s.diffSnapshot(ctx)
		if err != nil {
			return false, err.Error()
		}
		state = st
		return st.machineSets == 1, fmt.Sprintf("%d MachineSets", st.machineSets)
	}); err != nil {
		return err
	}
	if state, err = s.settle(ctx, deployed); err != nil {
		return err
	}
	for i, step := range diffSteps {
		dir := filepath.Join(s.work, "diff", step.variant)
		if err := s.writeDiffCases(ctx, dir); err != nil {
			return err
		}
		head, err := s.startVersion(step.variant, FreePort())
		if err != nil {
			return err
		}
		prediction, err := s.predict(ctx, deployed, head, dir)
		head.stop()
		if err != nil {
			return err
		}
		// Deploy: the next version takes the place of the running one, same URL.
		deployed.stop()
		if deployed, err = s.startVersion(step.variant, portA); err != nil {
			return err
		}
		if err := s.kube.MergePatch(ctx, clusterV, "Cluster", ns, diffClusterName,
			fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, deployedAnn, step.variant), false); err != nil {
			return err
		}
		after, err := s.settle(ctx, deployed)
		if err != nil {
			return err
		}
		want := step.want
		if step.variant == "labels" && s.minor < 14 {
			// Before v1.14 CAPI copies only spec.template.spec of a patched template: the label
			// is dropped, and diff (told the release) predicts nothing.
			want = map[string]string{}
		}
		did := observed(state, after)
		// Machines CAPI's objects would replace: md-0's new MachineSet, or the control plane's
		// machines cloned from a new template (a control plane provider rolls them out; the
		// harness's control plane has no Machines).
		rolled := after.machineSets > state.machineSets || did[cpMachineRole] == "template-rotated"
		fmt.Printf("  %d. %s: diff predicted %s (rollout: %s); CAPI did %s (MachineSets %d → %d)\n", i+1, step.variant,
			describe(prediction.effects), prediction.rollout, describe(did), state.machineSets, after.machineSets)
		if !reflect.DeepEqual(did, want) || rolled != step.rollout {
			return fmt.Errorf("deploying %s: CAPI did %s (new MachineSet: %v), the scenario expects %s (new MachineSet: %v)",
				step.variant, describe(did), rolled, describe(want), step.rollout)
		}
		if !reflect.DeepEqual(prediction.effects, did) || (prediction.rollout == "yes") != rolled {
			return fmt.Errorf("deploying %s: capi-ext diff predicted %s (rollout %s), CAPI did %s (new MachineSet: %v); diff's report:\n%s",
				step.variant, describe(prediction.effects), prediction.rollout, describe(did), rolled, prediction.report)
		}
		state = after
	}
	if deployed, err = s.faultyHeadsBreak(ctx, deployed, portA); err != nil {
		return err
	}
	if err := s.editsPredictCAPI(ctx, deployed); err != nil {
		return err
	}
	return s.renderStoredDiffCluster(ctx, deployed)
}

// capiExtWithCRDs runs capi-ext with args and the CRDs the API server has of the diff
// scenario's kinds (`--crds`: it renders as the API server stores); it returns its stdout and
// stderr.
func (s *scenarios) capiExtWithCRDs(ctx context.Context, args []string) ([]byte, string, error) {
	for _, crds := range s.diffCRDs {
		args = append(args, "--crds", crds)
	}
	cmd := exec.CommandContext(ctx, s.capiExt, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.String(), err
}

// renderStoredDiffCluster: `capi-ext render --kubeconfig` of the Cluster, through the running
// version and with the CRDs the API server has, prints every object of its topology as the
// API server stored it: CRD defaults (Docker's, Kubeadm's, KubeadmControlPlane's) and CAPI's
// defaulting webhooks (the MachineDeployment's, the MachinePool's, KubeadmControlPlane's)
// included.
func (s *scenarios) renderStoredDiffCluster(ctx context.Context, deployed *versionProcess) error {
	if _, err := s.settle(ctx, deployed); err != nil {
		return err
	}
	caFile := filepath.Join(s.work, "diff-ca.crt")
	args := []string{"render", "--extension", deployed.url(), "--ca", caFile, "--cert", s.clientCert, "--key", s.clientKey,
		"--kubeconfig", s.execKubeconfig, "--cluster", ns + "/" + diffClusterName, "--json", "--capi-version", fmt.Sprintf("1.%d", s.minor)}
	out, stderr, err := s.capiExtWithCRDs(ctx, args)
	if err != nil {
		return fmt.Errorf("capi-ext render --kubeconfig of %s: %v\n%s", diffClusterName, err, stderr)
	}
	return s.renderedObjectsMatch(ctx, out, []string{"Cluster", "DockerCluster", "DockerMachinePool", "DockerMachineTemplate", "DockerMachineTemplate",
		"KubeadmConfig", "KubeadmConfigTemplate", "KubeadmControlPlane", "MachineDeployment", "MachineHealthCheck", "MachinePool"})
}

// faultyHead is a head version that must never ship: what diff must say of the Cluster (its
// error contains diffSays, exit 1), and what CAPI does once it is deployed: its reconcile of
// the Cluster fails with a TopologyReconciled message containing capiSays.
type faultyHead struct {
	variant, why       string
	diffSays, capiSays string
	// rediscover: CAPI reads the new version's Discovery (a handler renamed) only when it
	// reconciles the ExtensionConfig again.
	rediscover bool
}

var faultyHeads = []faultyHead{
	{variant: "renamed", why: "the GeneratePatches handler the ClusterClass calls renamed",
		diffSays: "calls the GeneratePatches handler `patches`, which the head does not serve",
		capiSays: fmt.Sprintf("failed to call extension handler %q", "patches."+versionsExt), rediscover: true},
	// A plain create or update would drop (prune) the field; CAPI's server-side apply is
	// refused.
	{variant: "undeclared", why: "a field DockerMachineTemplate's CRD does not declare",
		diffSays: "/spec/template/spec/zone", capiSays: ".spec.template.spec.zone: field not declared in schema"},
	// A value of the wrong type: the API server refuses CAPI's apply.
	{variant: "invalid", why: "a number where DockerMachineTemplate's CRD says string",
		diffSays: "spec.template.spec.bootstrapTimeout", capiSays: "spec.template.spec.bootstrapTimeout"},
	// A null: a plain create would drop it; CAPI's server-side apply keeps it, and the API
	// server refuses it.
	{variant: "nulled", why: "a null where DockerMachineTemplate's CRD allows none",
		diffSays: `spec.template.spec.extraMounts: Invalid value: spec.template.spec.extraMounts in body must be of type array: "null"`,
		capiSays: "spec.template.spec.extraMounts in body must be of type array"},
}

// faultyHeadsBreak runs faultyHeads in turn from the last good version, which is deployed again
// after each, and returned.
func (s *scenarios) faultyHeadsBreak(ctx context.Context, deployed *versionProcess, port int) (*versionProcess, error) {
	for _, f := range faultyHeads {
		var err error
		if deployed, err = s.faultyHeadBreaks(ctx, deployed, port, f); err != nil {
			return nil, fmt.Errorf("the head %s (%s): %w", f.variant, f.why, err)
		}
	}
	return deployed, nil
}

// faultyHeadBreaks: diff says the head BREAKS the Cluster (exit 1) and why; deployed, CAPI's
// reconcile of the Cluster fails for that reason. The last good version is deployed again
// after, and returned.
func (s *scenarios) faultyHeadBreaks(ctx context.Context, deployed *versionProcess, port int, f faultyHead) (*versionProcess, error) {
	if _, err := s.settle(ctx, deployed); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.work, "diff", f.variant)
	if err := s.writeDiffCases(ctx, dir); err != nil {
		return nil, err
	}
	head, err := s.startVersion(f.variant, FreePort())
	if err != nil {
		return nil, err
	}
	report, out, code, err := s.runDiff(ctx, deployed, head, dir)
	head.stop()
	if err != nil {
		return nil, err
	}
	cluster := report.Clusters[0]
	if code != 1 || cluster.Outcome != "breaks" || !strings.Contains(cluster.Error, f.diffSays) {
		return nil, fmt.Errorf("capi-ext diff: exit %d, outcome %s, not 1 and breaks saying %q:\n%s", code, cluster.Outcome, f.diffSays, out)
	}
	deployed.stop()
	if deployed, err = s.startVersion(f.variant, port); err != nil {
		return nil, err
	}
	rediscover := func(variant string) error {
		return s.kube.MergePatch(ctx, runtimeV, "ExtensionConfig", "", versionsExt,
			fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, deployedAnn, variant), false)
	}
	if f.rediscover {
		if err := rediscover(f.variant); err != nil {
			return nil, err
		}
	}
	if err := s.kube.MergePatch(ctx, clusterV, "Cluster", ns, diffClusterName,
		fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, deployedAnn, f.variant), false); err != nil {
		return nil, err
	}
	var seen string
	if err := Eventually(timeoutLg, "TopologyReconciled=False saying "+f.capiSays, func() (bool, string) {
		u, err := s.kube.Get(ctx, clusterV, "Cluster", ns, diffClusterName)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "TopologyReconciled")
		seen = fmt.Sprintf("TopologyReconciled=%s/%s %q", st, reason, msg)
		return st == "False" && strings.Contains(msg, f.capiSays), seen
	}); err != nil {
		return nil, err
	}
	fmt.Printf("  %s (%s): diff said BREAKS (exit 1); CAPI: %s\n", f.variant, f.why, seen)
	deployed.stop()
	if deployed, err = s.startVersion(VariantLast, port); err != nil {
		return nil, err
	}
	if f.rediscover {
		if err := rediscover(VariantLast); err != nil {
			return nil, err
		}
	}
	// Reconciled again now, not after the back-off of its failed reconciles.
	return deployed, s.kube.MergePatch(ctx, clusterV, "Cluster", ns, diffClusterName,
		fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, deployedAnn, VariantLast), false)
}

// caseEdit sets key to value in the first entry of the list at path of a case's object.
type caseEdit struct {
	path  []string
	key   string
	value any
}

// inputEdit is an edit of the Cluster's inputs, not of the extension: of its ClusterClass, of
// the Cluster itself, or both, with what CAPI must do.
type inputEdit struct {
	what           string
	class, cluster *caseEdit
	want           map[string]string
	rollout        bool
}

// inputEdits are applied in turn, each after the one before has settled.
var inputEdits = []inputEdit{
	{
		what: "ClusterClass: md class health check; Cluster: md-0 minReadySeconds",
		class: &caseEdit{[]string{"spec", "workers", "machineDeployments"}, "healthCheck", map[string]any{"checks": map[string]any{
			"nodeStartupTimeoutSeconds": int64(0),
			"unhealthyNodeConditions":   []any{map[string]any{"type": "Ready", "status": "Unknown", "timeoutSeconds": int64(3600)}},
		}}},
		cluster: &caseEdit{[]string{"spec", "topology", "workers", "machineDeployments"}, "minReadySeconds", int64(7)},
		want:    map[string]string{mdRole: "in-place", mdHealthCheckRole: "created"},
	},
	{
		what:    "Cluster: variable " + imageVariable + " e2e/node:a → e2e/node:b",
		cluster: &caseEdit{[]string{"spec", "topology", "variables"}, "value", "e2e/node:b"},
		want:    map[string]string{mdInfraRole: "template-rotated"},
		rollout: true,
	},
	{
		what:    "Cluster: mp-0 minReadySeconds",
		cluster: &caseEdit{[]string{"spec", "topology", "workers", "machinePools"}, "minReadySeconds", int64(9)},
		want:    map[string]string{mpRole: "in-place"},
	},
}

// The ClusterClass's variable, which its inline patch copies into md-0's infrastructure
// template's customImage (the Cluster sets it to "e2e/node:a").
const imageVariable = "workerImage"

// editsPredictCAPI: the running version stays; each of inputEdits in turn. `capi-ext diff
// --base-cases <as stored> --cases <as edited>` says what the edit does; applied, CAPI must do
// exactly that (the first: the MachineDeployment patched in place, no new MachineSet, and its
// MachineHealthCheck created; the second: md-0's infrastructure template rotated, a new
// MachineSet; the third: the MachinePool patched in place).
func (s *scenarios) editsPredictCAPI(ctx context.Context, deployed *versionProcess) error {
	for i, edit := range inputEdits {
		if err := s.editPredictsCAPI(ctx, deployed, fmt.Sprint(i), edit); err != nil {
			return fmt.Errorf("the edit (%s): %w", edit.what, err)
		}
	}
	return nil
}

func (s *scenarios) editPredictsCAPI(ctx context.Context, deployed *versionProcess, id string, edit inputEdit) error {
	before, err := s.settle(ctx, deployed)
	if err != nil {
		return err
	}
	stored := filepath.Join(s.work, "diff", "edit-stored-"+id)
	edited := filepath.Join(s.work, "diff", "edit-edited-"+id)
	for _, dir := range []string{stored, edited} {
		if err := s.writeDiffCases(ctx, dir); err != nil {
			return err
		}
	}
	type applied struct {
		kind, name string
		path       []string
		list       []any
	}
	var apply []applied
	for _, e := range []struct {
		kind, name, file string
		edit             *caseEdit
	}{{"ClusterClass", "diff-class", "01-clusterclass.json", edit.class}, {"Cluster", diffClusterName, "00-cluster.json", edit.cluster}} {
		if e.edit == nil {
			continue
		}
		list, err := editCase(filepath.Join(edited, e.file), e.edit.path, e.edit.key, e.edit.value)
		if err != nil {
			return err
		}
		apply = append(apply, applied{e.kind, e.name, e.edit.path, list})
	}
	report, out, code, err := s.runDiffOn(ctx, deployed, deployed, "--base-cases", stored, "--cases", edited)
	if err != nil {
		return err
	}
	if code != 0 || report.Clusters[0].Outcome != "unchanged" || len(report.Inputs) != 1 || report.Inputs[0].Change != "changed" || report.Inputs[0].Head != "renders" {
		return fmt.Errorf("capi-ext diff of the edit (same version): exit %d, not 0 with the Cluster unchanged and its case changed, rendering:\n%s", code, out)
	}
	predicted := asCAPISees(report.Inputs[0].Objects)
	// Apply the edit: the class first, then the Cluster, and wait for the topology controller
	// to have reconciled the Cluster's new generation.
	for _, a := range apply {
		body := map[string]any{}
		at := body
		for _, key := range a.path[:len(a.path)-1] {
			next := map[string]any{}
			at[key] = next
			at = next
		}
		at[a.path[len(a.path)-1]] = a.list
		data, _ := json.Marshal(body)
		if err := s.kube.MergePatch(ctx, clusterV, a.kind, ns, a.name, string(data), false); err != nil {
			return err
		}
	}
	if err := Eventually(timeoutLg, "the Cluster's edit reconciled (TopologyReconciled=True at its generation)", func() (bool, string) {
		u, err := s.kube.Get(ctx, clusterV, "Cluster", ns, diffClusterName)
		if err != nil {
			return false, err.Error()
		}
		st, reason, _ := Condition(u, "TopologyReconciled")
		observedGeneration, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return st == "True" && observedGeneration == u.GetGeneration(),
			fmt.Sprintf("TopologyReconciled=%s/%s, observed generation %d of %d", st, reason, observedGeneration, u.GetGeneration())
	}); err != nil {
		return err
	}
	after, err := s.settle(ctx, deployed)
	if err != nil {
		return err
	}
	did := observed(before, after)
	rolled := after.machineSets > before.machineSets
	fmt.Printf("  edit (%s): diff predicted %s (rollout: %s); CAPI did %s (MachineSets %d → %d)\n",
		edit.what, describe(predicted), report.Inputs[0].Rollout, describe(did), before.machineSets, after.machineSets)
	if !reflect.DeepEqual(did, edit.want) || rolled != edit.rollout {
		return fmt.Errorf("CAPI did %s (new MachineSet: %v), the scenario expects %s (new MachineSet: %v)", describe(did), rolled, describe(edit.want), edit.rollout)
	}
	if !reflect.DeepEqual(predicted, did) || (report.Inputs[0].Rollout == "yes") != rolled {
		return fmt.Errorf("capi-ext diff predicted %s (rollout %s), CAPI did %s; diff's report:\n%s", describe(predicted), report.Inputs[0].Rollout, describe(did), out)
	}
	return nil
}

// editCase sets key to value in the first entry of the list at path of a case file (JSON),
// writes it back and returns the edited list.
func editCase(file string, path []string, key string, value any) ([]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var object map[string]any
	if err := json.Unmarshal(data, &object); err != nil {
		return nil, err
	}
	list, found, err := unstructured.NestedSlice(object, path...)
	if err != nil || !found || len(list) == 0 {
		return nil, fmt.Errorf("%s: no %s (%v)", file, strings.Join(path, "."), err)
	}
	list[0].(map[string]any)[key] = value
	if err := unstructured.SetNestedSlice(object, list, path...); err != nil {
		return nil, err
	}
	data, _ = json.MarshalIndent(object, "", "  ")
	return list, os.WriteFile(file, data, 0o644)
}
