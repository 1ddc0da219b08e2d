package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster API's own test extension under the real manager twice, driven as CAPI's runtimesdk
// e2e spec drives it: the port (examples/capi-test-extension) and the Go extension of CAPI's
// test module (built from the Go module proxy at the port's release), both registered at once,
// each by an ExtensionConfig of its own whose namespaceSelector names a namespace of its own.
// Each run, in its namespace: CAPI's Discovery of the extension (ExtensionConfig
// status.handlers), CAPI's DiscoverVariables through a ClusterClass whose external patch is the
// extension's (ClusterClass status.variables), and the lifecycle protocol (answers preloaded in
// the Cluster's ConfigMap, every answer recorded in it) through creation, an upgrade with each of
// its six hooks held and released, and deletion. The two runs must agree on all three: the
// handlers field by field, the variables field by field and the ConfigMaps' records; and CAPI
// must have called neither extension for the other's namespace.
const (
	testExtName   = "capi-test-ext"
	goTestExtName = "capi-test-ext-go"
)

// testExtension is one implementation of the test extension under the manager.
type testExtension struct {
	name      string // its ExtensionConfig
	namespace string // the one namespace its ExtensionConfig selects, where its run's objects are
	cluster   string // its run's Cluster
	process   *Process
	port      int
	out       strings.Builder // what its run reports, printed once both runs are done
}

// say adds a line (format as fmt.Printf's) to what the extension's run reports. The two runs
// go at once, so each keeps its lines apart and they are printed one run after the other.
func (e *testExtension) say(format string, args ...any) {
	fmt.Fprintf(&e.out, format, args...)
}

// testExtRun is what one run saw, as CAPI and the API server hold it.
type testExtRun struct {
	handlers  []any             // status.handlers, names without the ExtensionConfig's suffix
	variables []any             // status.variables of the ClusterClass using the extension's patch
	records   map[string]string // the Cluster's ConfigMap once the Cluster is gone
	chained   []string          // the chained upgrade's holds in CAPI's order, with the versions each saw
	steps     []string          // the control plane's versions in the chained upgrade
}

func (s *scenarios) capiTestExtension(ctx context.Context) error {
	if s.goTestExtBin == "" {
		return fmt.Errorf("no -go-capi-test-extension: Go's test extension, the peer of the port, is needed")
	}
	recorded := filepath.Join(s.work, "recorded-test-extension")
	if err := os.MkdirAll(recorded, 0o755); err != nil {
		return err
	}
	portExt, err := s.startTestExtension(testExtName, "e2e-test-ext", "ct1", func(webhook, probes int) *Process {
		return s.ps.StartWith("capi-test-extension", []string{"KUBECONFIG=" + s.kubeconfig}, s.testExtBin,
			"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", webhook), "--webhook-cert-dir="+s.extCertDir,
			"--webhook-client-ca-name=client-ca.crt", "--metrics-bind-address=0",
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes), "--log-format=json",
			"--record-requests-dir="+recorded)
	})
	if err != nil {
		return fmt.Errorf("the port: %w", err)
	}
	// A Cluster of another name: CAPI caches an upgrade plan by Cluster and versions (not by
	// extension).
	goExt, err := s.startTestExtension(goTestExtName, "e2e-test-ext-go", "ct2", func(webhook, probes int) *Process {
		// Go's test extension has no option to require a client certificate: its calls are
		// the only ones of the suite not checked against CAPI's client CA.
		return s.ps.StartPeer("capi-test-extension-go", []string{"KUBECONFIG=" + s.kubeconfig}, s.goTestExtBin,
			fmt.Sprintf("--webhook-port=%d", webhook), "--webhook-cert-dir="+s.extCertDir,
			fmt.Sprintf("--health-addr=127.0.0.1:%d", probes), fmt.Sprintf("--diagnostics-address=127.0.0.1:%d", FreePort()),
			"--insecure-diagnostics")
	})
	if err != nil {
		return fmt.Errorf("Go's test extension: %w", err)
	}
	both := []*testExtension{portExt, goExt}
	for _, e := range both {
		if err := s.registerTestExtension(ctx, e); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		defer func() { _ = s.kube.Delete(ctx, runtimeV, "ExtensionConfig", "", e.name) }()
	}
	// Both runs at once, as CAPI's e2e runs its specs: each in its namespace, with its Cluster.
	runs := make([]*testExtRun, len(both))
	errs := make([]error, len(both))
	var wg sync.WaitGroup
	for i, e := range both {
		wg.Go(func() { runs[i], errs[i] = s.testExtensionRun(ctx, e) })
	}
	wg.Wait()
	for i, e := range both {
		fmt.Print(e.out.String())
		if errs[i] != nil {
			return fmt.Errorf("%s: %w", e.name, errs[i])
		}
	}
	port, goRun := runs[0], runs[1]
	// Go lists its handlers in a random order: compared by name.
	sort.Slice(port.handlers, func(i, j int) bool {
		return port.handlers[i].(map[string]any)["name"].(string) < port.handlers[j].(map[string]any)["name"].(string)
	})
	for _, c := range []struct {
		what       string
		port, goes any
	}{
		{"Discovery (ExtensionConfig status.handlers)", port.handlers, goRun.handlers},
		{"DiscoverVariables (ClusterClass status.variables)", port.variables, goRun.variables},
		{"the lifecycle answers recorded in the Cluster's ConfigMap", port.records, goRun.records},
		{"the chained upgrade's holds, in CAPI's order, and the versions each saw", port.chained, goRun.chained},
		{"the chained upgrade's control plane steps (the extension's upgrade plan)", port.steps, goRun.steps},
	} {
		if !reflect.DeepEqual(c.port, c.goes) {
			pj, _ := json.Marshal(c.port)
			gj, _ := json.Marshal(c.goes)
			return fmt.Errorf("the port and Go's test extension differ in %s:\n  port: %s\n  Go:   %s", c.what, pj, gj)
		}
	}
	fmt.Printf("  the port equals Go's test extension: %d handlers, %d variables, %d records; the chained upgrade's %d holds and its steps %v\n", len(port.handlers), len(port.variables), len(port.records), len(port.chained), port.steps)
	return s.testExtensionsKeptApart(portExt, goExt)
}

// testExtensionsKeptApart checks that CAPI called each extension only for Clusters of its own
// namespace, read from each one's log: the port logs every answered call with its Cluster
// (`"cluster":"namespace/name"`), Go's handlers log `Cluster="namespace/name"`.
func (s *scenarios) testExtensionsKeptApart(portExt, goExt *testExtension) error {
	seen := []string{}
	for _, c := range []struct {
		e    *testExtension
		mark *regexp.Regexp
	}{
		{portExt, regexp.MustCompile(`"cluster":"([^"]+)"`)},
		{goExt, regexp.MustCompile(`Cluster="([^"]+)"`)},
	} {
		data, err := os.ReadFile(c.e.process.Log)
		if err != nil {
			return err
		}
		calls := 0
		for _, m := range c.mark.FindAllStringSubmatch(string(data), -1) {
			if m[1] != c.e.namespace+"/"+c.e.cluster {
				return fmt.Errorf("%s was called for Cluster %s; its ExtensionConfig selects namespace %s alone", c.e.name, m[1], c.e.namespace)
			}
			calls++
		}
		if calls == 0 {
			return fmt.Errorf("%s logged no call for a Cluster (%s)", c.e.name, c.e.process.Log)
		}
		seen = append(seen, fmt.Sprintf("%s %d", c.e.name, calls))
	}
	fmt.Printf("  each extension was called for Clusters of its own namespace only (lines naming a Cluster: %s)\n", strings.Join(seen, ", "))
	return nil
}

// startTestExtension starts one implementation of the test extension (start: its webhook and
// probe ports) and waits until it is ready.
func (s *scenarios) startTestExtension(name, namespace, cluster string, start func(webhook, probes int) *Process) (*testExtension, error) {
	e := &testExtension{name: name, namespace: namespace, cluster: cluster, port: FreePort()}
	probes := FreePort()
	e.process = start(e.port, probes)
	if err := WaitHTTP(HTTPClient(nil, "", ""), fmt.Sprintf("http://127.0.0.1:%d/readyz", probes), 60*time.Second, e.process); err != nil {
		return nil, err
	}
	return e, nil
}

// registerTestExtension makes the extension's namespace and registers it as ExtensionConfig
// e.name for that namespace alone, as CAPI's runtimesdk spec does.
func (s *scenarios) registerTestExtension(ctx context.Context, e *testExtension) error {
	_, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[5]s}
---
apiVersion: %[1]s
kind: ExtensionConfig
metadata: {name: %[2]s}
spec:
  clientConfig: {url: "https://127.0.0.1:%[3]d", caBundle: %[4]s}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[5]s}}
  settings: {extensionConfigName: %[2]s, defaultAllHandlersToBlocking: "true"}
`, runtimeV, e.name, e.port, s.caB64, e.namespace))
	return err
}

// testExtensionRun drives one implementation of the test extension, registered, with its
// Cluster in its namespace.
func (s *scenarios) testExtensionRun(ctx context.Context, e *testExtension) (*testExtRun, error) {
	name, cluster, space := e.name, e.cluster, e.namespace
	e.say("  %s (namespace %s):\n", name, space)
	run := &testExtRun{}
	// The Go extension's handlers, in the order its main registers them. Go's Discovery lists
	// them in a random order (a map's); the port's is the registration order, checked here.
	want := []string{"generate-patches", "validate-topology", "discover-variables", "before-cluster-create", "after-control-plane-initialized", "before-cluster-upgrade", "before-control-plane-upgrade",
		"after-control-plane-upgrade", "before-workers-upgrade", "after-workers-upgrade", "after-cluster-upgrade", "before-cluster-delete",
		"can-update-machine", "can-update-machineset", "update-machine", "generate-upgrade-plan"}
	inOrder := name == testExtName
	if !inOrder {
		sort.Strings(want)
	}
	if err := Eventually(timeoutLg, "the extension's Discovery in the ExtensionConfig's status", func() (bool, string) {
		u, err := s.kube.Get(ctx, runtimeV, "ExtensionConfig", "", name)
		if err != nil {
			return false, err.Error()
		}
		handlers, _, _ := unstructured.NestedSlice(u.Object, "status", "handlers")
		var names []string
		for _, h := range handlers {
			handler := h.(map[string]any)
			short := strings.TrimSuffix(handler["name"].(string), "."+name)
			handler["name"] = short
			names = append(names, short)
		}
		if !inOrder {
			sort.Strings(names)
			sort.Slice(handlers, func(i, j int) bool {
				return handlers[i].(map[string]any)["name"].(string) < handlers[j].(map[string]any)["name"].(string)
			})
		}
		run.handlers = handlers
		return strings.Join(names, ",") == strings.Join(want, ","), fmt.Sprintf("handlers %v", names)
	}); err != nil {
		return nil, err
	}
	e.say("    Discovery: the Go extension's %d handlers\n", len(want))

	variables, err := s.testExtensionVariables(ctx, space, name, e.say)
	if err != nil {
		return nil, err
	}
	run.variables = variables

	configMap := cluster + "-" + name + "-test-extension-hookresponses"
	recordedAs := func(key, value string) func() (bool, string) {
		return func() (bool, string) {
			cm, err := s.kube.Get(ctx, "v1", "ConfigMap", space, configMap)
			if err != nil {
				return false, err.Error()
			}
			got, _, _ := unstructured.NestedString(cm.Object, "data", key)
			return got == value, fmt.Sprintf("%s=%q", key, got)
		}
	}
	preload := func(hook, answer string) error {
		return s.kube.MergePatch(ctx, "v1", "ConfigMap", space, configMap,
			fmt.Sprintf(`{"data":{%q:%q}}`, hook+"-preloadedResponse", answer), false)
	}
	// The Cluster's class is e2e-class with the extension's upgrade plan handler, as in CAPI's
	// runtimesdk ClusterClass (spec.upgrade.external.generateUpgradePlanExtension).
	className := name + "-upgrade-class"
	remove, err := s.copyClass(ctx, space, className, func(spec map[string]any) {
		spec["upgrade"] = map[string]any{"external": map[string]any{"generateUpgradePlanExtension": "generate-upgrade-plan." + name}}
	})
	if err != nil {
		return nil, err
	}
	defer remove()
	// The quickstart's own gates (registered for every namespace) let this Cluster pass.
	manifest := clusterManifest(space, className, cluster, goodRepo, map[string]string{approved: "true", delOK: "true"})
	var applied error
	if err := Eventually(timeoutLg, "the Cluster admitted (its ClusterClass reconciled first)", func() (bool, string) {
		_, applied = s.kube.Apply(ctx, manifest)
		return applied == nil, fmt.Sprint(applied)
	}); err != nil {
		return nil, err
	}
	if err := Eventually(timeoutLg, "BeforeClusterCreate held by the port's default answer, recorded in the ConfigMap it created",
		recordedAs("BeforeClusterCreate-actualResponseStatus", "Status: Success, RetryAfterSeconds: 5")); err != nil {
		return nil, err
	}
	time.Sleep(3 * time.Second)
	u, err := s.kube.Get(ctx, clusterV, "Cluster", space, cluster)
	if err != nil {
		return nil, err
	}
	if cp, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name"); cp != "" {
		return nil, fmt.Errorf("the control plane was created while BeforeClusterCreate held")
	}
	e.say("    BeforeClusterCreate held: recorded %q\n", "Status: Success, RetryAfterSeconds: 5")
	if err := preload("BeforeClusterCreate", `{"Status": "Success"}`); err != nil {
		return nil, err
	}
	var cpName string
	if err := Eventually(timeoutLg, "the topology created once the preloaded answer lets go", func() (bool, string) {
		u, err := s.kube.Get(ctx, clusterV, "Cluster", space, cluster)
		if err != nil {
			return false, err.Error()
		}
		cpName, _, _ = unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name")
		ok, rec := recordedAs("BeforeClusterCreate-actualResponseStatus", "Status: Success, RetryAfterSeconds: 0")()
		return cpName != "" && ok, fmt.Sprintf("controlPlaneRef=%q %s", cpName, rec)
	}); err != nil {
		return nil, err
	}
	if err := s.kube.MergePatch(ctx, cpV, "GenericControlPlane", space, cpName, `{"status":{"initialization":{"controlPlaneInitialized":true},"version":"v1.34.0"}}`, true); err != nil {
		return nil, err
	}
	if err := Eventually(timeoutLg, "AfterControlPlaneInitialized recorded",
		recordedAs("AfterControlPlaneInitialized-actualResponseStatus", "Success")); err != nil {
		return nil, err
	}
	e.say("    released by the preloaded answer; AfterControlPlaneInitialized recorded \"Success\"\n")
	// Both extensions log this line per GenerateUpgradePlan call (Go's handler, and the port).
	plans := func() int {
		data, _ := os.ReadFile(e.process.Log)
		return strings.Count(string(data), "GenerateUpgradePlan is called")
	}
	if err := s.testExtensionUpgrade(ctx, space, cluster, cpName, recordedAs, preload, plans, e.say); err != nil {
		return nil, err
	}
	run.chained, run.steps, err = s.testExtensionChainedUpgrade(ctx, space, cluster, cpName, configMap, recordedAs, preload, plans, e.say)
	if err != nil {
		return nil, err
	}
	if err := s.kube.Delete(ctx, clusterV, "Cluster", space, cluster); err != nil {
		return nil, err
	}
	if err := Eventually(timeoutLg, "BeforeClusterDelete held by the port, recorded",
		recordedAs("BeforeClusterDelete-actualResponseStatus", "Status: Success, RetryAfterSeconds: 5")); err != nil {
		return nil, err
	}
	time.Sleep(3 * time.Second)
	if _, err := s.kube.Get(ctx, clusterV, "Cluster", space, cluster); err != nil {
		return nil, fmt.Errorf("the Cluster went away while BeforeClusterDelete held: %w", err)
	}
	if err := preload("BeforeClusterDelete", `{"Status": "Success"}`); err != nil {
		return nil, err
	}
	if err := Eventually(timeoutLg, "the Cluster deleted once the preloaded answer lets go", func() (bool, string) {
		_, err := s.kube.Get(ctx, clusterV, "Cluster", space, cluster)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	}); err != nil {
		return nil, err
	}
	e.say("    BeforeClusterDelete held, then released by the preloaded answer; the Cluster deleted\n")
	cm, err := s.kube.Get(ctx, "v1", "ConfigMap", space, configMap)
	if err != nil {
		return nil, err
	}
	run.records, _, _ = unstructured.NestedStringMap(cm.Object, "data")
	return run, s.kube.Delete(ctx, "v1", "ConfigMap", space, configMap)
}

// testExtensionUpgrade upgrades the Cluster space/cluster from v1.34.0 to v1.35.0 as CAPI's runtimesdk spec
// does: each upgrade hook held by the extension's default answer (recorded in the ConfigMap
// under the hook's name and versions), the versions it guards checked while it holds (control
// plane, MachineDeployment md-0, MachinePool mp-0), then released by a preloaded answer.
func (s *scenarios) testExtensionUpgrade(ctx context.Context, space, cluster, cpName string, recordedAs func(key, value string) func() (bool, string), preload func(hook, answer string) error, plans func() int, say func(string, ...any)) error {
	const from, to = "v1.34.0", "v1.35.0"
	plansBefore := plans()
	u, err := s.kube.Get(ctx, clusterV, "Cluster", space, cluster)
	if err != nil {
		return err
	}
	infra, _, _ := unstructured.NestedString(u.Object, "spec", "infrastructureRef", "name")
	if err := s.workloadClusterOf(ctx, space, cluster, infra); err != nil {
		return err
	}
	fake := s.startFakeControlPlaneOf(ctx, space, cpName)
	defer fake.close()
	if err := s.setVersionOf(ctx, space, cluster, to); err != nil {
		return err
	}
	steps := []struct {
		hook  string
		guard [3]string // control plane, md-0, mp-0 while it holds
	}{
		{"BeforeClusterUpgrade-" + from + "-" + to, [3]string{from, from, from}},
		{"BeforeControlPlaneUpgrade-" + from + "-" + to, [3]string{from, from, from}},
		{"AfterControlPlaneUpgrade-" + to, [3]string{to, from, from}},
		{"BeforeWorkersUpgrade-" + from + "-" + to, [3]string{to, from, from}},
		{"AfterWorkersUpgrade-" + to, [3]string{to, to, to}},
		{"AfterClusterUpgrade-" + to, [3]string{to, to, to}},
	}
	for _, step := range steps {
		if err := Eventually(timeoutLg, step.hook+" held by the default answer, recorded",
			recordedAs(step.hook+"-actualResponseStatus", "Status: Success, RetryAfterSeconds: 5")); err != nil {
			return err
		}
		time.Sleep(time.Second) // CAPI had time to move on, if it were going to
		if cp, md, mp := s.versionsOf(ctx, space, cluster, cpName); [3]string{cp, md, mp} != step.guard {
			return fmt.Errorf("while %s held: control plane %s, MachineDeployment %s, MachinePool %s; want %v", step.hook, cp, md, mp, step.guard)
		}
		if err := preload(step.hook, `{"Status": "Success"}`); err != nil {
			return err
		}
		if err := Eventually(timeoutLg, step.hook+" released by the preloaded answer, recorded",
			recordedAs(step.hook+"-actualResponseStatus", "Status: Success, RetryAfterSeconds: 0")); err != nil {
			return err
		}
	}
	if cpSteps := fake.close(); !reflect.DeepEqual(cpSteps, []string{to}) {
		return fmt.Errorf("the control plane went through %v, want [%s]", cpSteps, to)
	}
	// The plan the control plane followed is the extension's: CAPI asked its
	// generate-upgrade-plan handler (the kind mapper's versions: v1.35.0 is the one step).
	called := plans() - plansBefore
	if called == 0 {
		return fmt.Errorf("the upgrade did not call the extension's generate-upgrade-plan handler")
	}
	say("    upgrade %s→%s: the plan from the extension's generate-upgrade-plan (called %d times), [%s]; each of the six upgrade hooks held by the default answer with the versions it guards, then released by its preloaded answer\n", from, to, called, to)
	return nil
}

// testExtensionChainedUpgrade upgrades the Cluster space/cluster on from v1.35.0 to v1.37.0,
// two minors, with the plan CAPI asks the extension's generate-upgrade-plan for. The harness
// names no hook: every hold is the extension's default answer, found in the ConfigMap, and each
// is released by its preloaded answer once the versions it holds (control plane, md-0, mp-0) are
// read. It returns the holds in CAPI's order with those versions, and the control plane's steps.
func (s *scenarios) testExtensionChainedUpgrade(ctx context.Context, space, cluster, cpName, configMap string, recordedAs func(key, value string) func() (bool, string), preload func(hook, answer string) error, plans func() int, say func(string, ...any)) ([]string, []string, error) {
	const from, to = "v1.35.0", "v1.37.0"
	const held, let = "Status: Success, RetryAfterSeconds: 5", "Status: Success, RetryAfterSeconds: 0"
	plansBefore := plans()
	fake := s.startFakeControlPlaneOf(ctx, space, cpName)
	defer fake.close()
	if err := s.setVersionOf(ctx, space, cluster, to); err != nil {
		return nil, nil, err
	}
	final := "AfterClusterUpgrade-" + to
	released := map[string]bool{}
	var order []string
	deadline := time.Now().Add(4 * timeoutLg)
	for !released[final] {
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("chained upgrade %s→%s: %s not released in time; holds so far: %v", from, to, final, order)
		}
		cm, err := s.kube.Get(ctx, "v1", "ConfigMap", space, configMap)
		if err != nil {
			return nil, nil, err
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		var holding []string
		for key, value := range data {
			if hook, ok := strings.CutSuffix(key, "-actualResponseStatus"); ok && value == held && !released[hook] {
				holding = append(holding, hook)
			}
		}
		sort.Strings(holding)
		if len(holding) == 0 {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, hook := range holding {
			time.Sleep(time.Second) // CAPI had time to move on, if it were going to
			cp, md, mp := s.versionsOf(ctx, space, cluster, cpName)
			order = append(order, fmt.Sprintf("%s (control plane %s, md-0 %s, mp-0 %s)", hook, cp, md, mp))
			if err := preload(hook, `{"Status": "Success"}`); err != nil {
				return nil, nil, err
			}
			if err := Eventually(timeoutLg, hook+" released by the preloaded answer, recorded", recordedAs(hook+"-actualResponseStatus", let)); err != nil {
				return nil, nil, err
			}
			released[hook] = true
		}
	}
	steps := fake.close()
	if len(steps) < 2 || steps[len(steps)-1] != to {
		return nil, nil, fmt.Errorf("chained upgrade %s→%s: the control plane went through %v, want two steps or more, the last %s", from, to, steps, to)
	}
	if plans() == plansBefore {
		return nil, nil, fmt.Errorf("the chained upgrade did not call the extension's generate-upgrade-plan handler")
	}
	say("    chained upgrade %s→%s: the control plane through %v, the plan from the extension's generate-upgrade-plan; %d holds, each the default answer released by its preloaded one:\n      %s\n", from, to, steps, len(order), strings.Join(order, "\n      "))
	return order, steps, nil
}

// copyClass makes the ClusterClass space/name from e2e-class's spec, changed by edit, with
// copies of the templates it refers to (a ClusterClass's templates are in its own namespace); it
// returns what deletes the class.
func (s *scenarios) copyClass(ctx context.Context, space, name string, edit func(spec map[string]any)) (func(), error) {
	class, err := s.kube.Get(ctx, clusterV, "ClusterClass", ns, "e2e-class")
	if err != nil {
		return nil, err
	}
	spec, _, _ := unstructured.NestedMap(class.Object, "spec")
	if space != ns {
		for _, ref := range templateRefs(spec) {
			template, err := s.kube.Get(ctx, ref["apiVersion"], ref["kind"], ns, ref["name"])
			if err != nil {
				return nil, err
			}
			body, err := json.Marshal(map[string]any{"apiVersion": ref["apiVersion"], "kind": ref["kind"],
				"metadata": map[string]any{"name": ref["name"], "namespace": space}, "spec": template.Object["spec"]})
			if err != nil {
				return nil, err
			}
			if _, err := s.kube.Apply(ctx, string(body)); err != nil {
				return nil, err
			}
		}
	}
	edit(spec)
	body, err := json.Marshal(map[string]any{"apiVersion": clusterV, "kind": "ClusterClass",
		"metadata": map[string]any{"name": name, "namespace": space}, "spec": spec})
	if err != nil {
		return nil, err
	}
	if _, err := s.kube.Apply(ctx, string(body)); err != nil {
		return nil, err
	}
	return func() { _ = s.kube.Delete(ctx, clusterV, "ClusterClass", space, name) }, nil
}

// templateRefs lists every templateRef of a ClusterClass's spec (apiVersion, kind, name).
func templateRefs(spec map[string]any) []map[string]string {
	var refs []map[string]string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if ref, ok := child.(map[string]any); ok && k == "templateRef" {
					refs = append(refs, map[string]string{"apiVersion": fmt.Sprint(ref["apiVersion"]), "kind": fmt.Sprint(ref["kind"]), "name": fmt.Sprint(ref["name"])})
					continue
				}
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(spec)
	return refs
}

// testExtensionVariables makes a ClusterClass in space whose one patch is the extension's (its
// generate-patches, validate-topology and discover-variables handlers; the templates of
// e2e-class) and returns the variables CAPI's ClusterClass controller discovered from it.
func (s *scenarios) testExtensionVariables(ctx context.Context, space, name string, say func(string, ...any)) ([]any, error) {
	className := name + "-class"
	remove, err := s.copyClass(ctx, space, className, func(spec map[string]any) {
		delete(spec, "variables")
		spec["patches"] = []any{map[string]any{"name": "test-patch", "external": map[string]any{
			"generatePatchesExtension":   "generate-patches." + name,
			"validateTopologyExtension":  "validate-topology." + name,
			"discoverVariablesExtension": "discover-variables." + name,
		}}}
	})
	if err != nil {
		return nil, err
	}
	defer remove()
	var variables []any
	if err := Eventually(timeoutLg, "the variables CAPI discovered in the ClusterClass's status", func() (bool, string) {
		u, err := s.kube.Get(ctx, clusterV, "ClusterClass", space, className)
		if err != nil {
			return false, err.Error()
		}
		variables, _, _ = unstructured.NestedSlice(u.Object, "status", "variables")
		return len(variables) > 0, fmt.Sprintf("status %v", u.Object["status"])
	}); err != nil {
		return nil, err
	}
	var names []string
	for _, v := range variables {
		names = append(names, v.(map[string]any)["name"].(string))
	}
	say("    DiscoverVariables through ClusterClass %s: %v\n", className, names)
	return variables, nil
}

// setVersionOf sets the Kubernetes version of the Cluster space/cluster's topology, again while
// the Cluster webhook refuses it for a passing reason: the workload cluster not reachable yet,
// or the last upgrade's AfterClusterUpgrade, pending a moment after it was released.
func (s *scenarios) setVersionOf(ctx context.Context, space, cluster, to string) error {
	var last error
	if err := Eventually(timeoutLg, "the Cluster webhook admits version "+to, func() (bool, string) {
		last = s.kube.MergePatch(ctx, clusterV, "Cluster", space, cluster, fmt.Sprintf(`{"spec":{"topology":{"version":%q}}}`, to), false)
		return last == nil || !strings.Contains(last.Error(), "workload cluster") && !strings.Contains(last.Error(), "still blocking"), fmt.Sprint(last)
	}); err != nil {
		return err
	}
	return last
}
