package main

import (
	"capi-ext.local/devenv"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The upgrade scenarios: the real manager drives the Cluster's upgrades through the lifecycle
// extension (`capi-ext-conformance lifecycle-extension`), and the harness plays the control
// plane provider: it reports status.version = spec.version once CAPI moves spec.version (a
// provider does so when its rollout is done). The workers have one replica each: md-0's Machine
// (the harness plays its bootstrap, infrastructure and Node), which CAPI's MachineSet controller
// replaces, and mp-0's Node (the harness plays its infrastructure machine pool and the Node's
// kubelet, devenv's PlayMachinePools, which replaces the Node at a new version), whose kubelet
// version CAPI reads from the workload cluster to tell whether the MachinePool is upgraded.

const (
	holdAnnotation = "e2e.capi-ext.io/hold"
	lifecycleExt   = "lifecycle"
)

// upgradeHooks are the six lifecycle hooks of an upgrade, in the order CAPI calls them for one
// step (exp/topology/desiredstate: computeControlPlaneVersion and the MachineDeployment and
// MachinePool version computations).
var upgradeHooks = []string{"BeforeClusterUpgrade", "BeforeControlPlaneUpgrade", "AfterControlPlaneUpgrade", "BeforeWorkersUpgrade", "AfterWorkersUpgrade", "AfterClusterUpgrade"}

// lifecycleCall is one call the lifecycle extension logged: what it decoded from CAPI's request.
type lifecycleCall struct {
	Hook                 string   `json:"hook"`
	From                 string   `json:"from"`
	To                   string   `json:"to"`
	FromControlPlane     string   `json:"fromControlPlane"`
	FromWorkers          string   `json:"fromWorkers"`
	ControlPlaneUpgrades []string `json:"controlPlaneUpgrades"`
	WorkersUpgrades      []string `json:"workersUpgrades"`
	Held                 bool     `json:"held"`
}

// normalized has empty lists for absent ones (JSON `[]`, absent and `null` mean the same here).
func (c lifecycleCall) normalized() lifecycleCall {
	if c.ControlPlaneUpgrades == nil {
		c.ControlPlaneUpgrades = []string{}
	}
	if c.WorkersUpgrades == nil {
		c.WorkersUpgrades = []string{}
	}
	return c
}

func (c lifecycleCall) String() string {
	s := c.Hook
	if c.From != "" {
		s += " " + c.From + "→" + c.To
	} else if c.To != "" {
		s += " " + c.To
	}
	if c.Held {
		s += " (held)"
	}
	return s
}

// loggedCalls reads the calls an extension of the harness logged as JSON lines with `message`
// and a `call` field holding the call as JSON.
func loggedCalls[T any](logPath, message string) []T {
	data, _ := os.ReadFile(logPath)
	var out []T
	for _, line := range strings.Split(string(data), "\n") {
		var l struct {
			Message string `json:"message"`
			Call    string `json:"call"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Message != message {
			continue
		}
		var c T
		must(json.Unmarshal([]byte(l.Call), &c))
		out = append(out, c)
	}
	return out
}

// lifecycleCalls reads the lifecycle extension's log.
func lifecycleCalls(logPath string) []lifecycleCall {
	return loggedCalls[lifecycleCall](logPath, "upgrade hook called")
}

// fakeControlPlane reports status.version = spec.version, and remembers each spec.version it
// had to catch up with: the control plane's upgrade steps, none missed.
type fakeControlPlane struct {
	once  sync.Once
	mu    sync.Mutex
	steps []string
	stop  chan struct{}
	done  chan struct{}
}

func (s *scenarios) startFakeControlPlane(ctx context.Context) *fakeControlPlane {
	_, cpName := s.refs(ctx)
	return s.startFakeControlPlaneOf(ctx, ns, cpName)
}

// startFakeControlPlaneOf plays the provider of the GenericControlPlane namespace/cpName.
func (s *scenarios) startFakeControlPlaneOf(ctx context.Context, namespace, cpName string) *fakeControlPlane {
	f := &fakeControlPlane{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for {
			select {
			case <-f.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			u, err := s.kube.Get(ctx, cpV, "GenericControlPlane", namespace, cpName)
			if err != nil {
				continue
			}
			spec, _, _ := unstructured.NestedString(u.Object, "spec", "version")
			status, _, _ := unstructured.NestedString(u.Object, "status", "version")
			if spec == "" || spec == status {
				continue
			}
			if s.kube.MergePatch(ctx, cpV, "GenericControlPlane", namespace, cpName, fmt.Sprintf(`{"status":{"version":%q}}`, spec), true) == nil {
				f.mu.Lock()
				f.steps = append(f.steps, spec)
				f.mu.Unlock()
			}
		}
	}()
	return f
}

func (f *fakeControlPlane) close() []string {
	f.once.Do(func() { close(f.stop) })
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.steps
}

// clusterNameLabel is the label CAPI puts on every object of a Cluster.
const clusterNameLabel = "cluster.x-k8s.io/cluster-name"

// versions reads c1's control plane's spec.version and its workers' versions.
func (s *scenarios) versions(ctx context.Context) (cp, md, mp string) {
	_, cpName := s.refs(ctx)
	return s.versionsOf(ctx, ns, "c1", cpName)
}

// versionsOf reads the versions of the control plane cpName and of the Cluster's md-0 and mp-0,
// all in namespace.
func (s *scenarios) versionsOf(ctx context.Context, namespace, cluster, cpName string) (cp, md, mp string) {
	if u, err := s.kube.Get(ctx, cpV, "GenericControlPlane", namespace, cpName); err == nil {
		cp, _, _ = unstructured.NestedString(u.Object, "spec", "version")
	}
	if l, err := s.kube.List(ctx, clusterV, "MachineDeployment", namespace, map[string]string{clusterNameLabel: cluster, "topology.cluster.x-k8s.io/deployment-name": "md-0"}); err == nil && len(l) == 1 {
		md, _, _ = unstructured.NestedString(l[0].Object, "spec", "template", "spec", "version")
	}
	if l, err := s.kube.List(ctx, clusterV, "MachinePool", namespace, map[string]string{clusterNameLabel: cluster, "topology.cluster.x-k8s.io/pool-name": "mp-0"}); err == nil && len(l) == 1 {
		mp, _, _ = unstructured.NestedString(l[0].Object, "spec", "template", "spec", "version")
	}
	return
}

// registerExtension creates the ExtensionConfig `name` for the extension at url (every
// namespace), with settings (a YAML flow map, or "" for none), and waits until CAPI has
// discovered it with handlers that satisfy want.
func (s *scenarios) registerExtension(ctx context.Context, name, url, settings, what string, want func(handlers []string) bool) error {
	if settings != "" {
		settings = "  settings: " + settings + "\n"
	}
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %s
kind: ExtensionConfig
metadata: {name: %s}
spec:
  clientConfig: {url: %q, caBundle: %s}
  namespaceSelector: {}
%s`, runtimeV, name, url, s.caB64, settings)); err != nil {
		return err
	}
	return Eventually(timeoutLg, "ExtensionConfig "+name+" Discovered=True with "+what, func() (bool, string) {
		u, err := s.kube.Get(ctx, runtimeV, "ExtensionConfig", "", name)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "Discovered")
		handlers, _, _ := unstructured.NestedSlice(u.Object, "status", "handlers")
		var names []string
		for _, h := range handlers {
			names = append(names, h.(map[string]any)["name"].(string))
		}
		sort.Strings(names)
		return st == "True" && want(names), fmt.Sprintf("Discovered=%s/%s %q handlers=%v", st, reason, msg, names)
	})
}

// lifecycleSettings are the lifecycle ExtensionConfig's settings: CAPI sends them to its
// handlers alone (the topology extension's ExtensionConfig has others).
const lifecycleSettings = "{owner: lifecycle-extensionconfig}"

// lifecycleDiscovery registers the lifecycle extension (before the ClusterClass names its
// GenerateUpgradePlan handler).
func (s *scenarios) lifecycleDiscovery(ctx context.Context) error {
	return s.registerExtension(ctx, lifecycleExt, s.lifecycleURL, lifecycleSettings, "7 handlers", func(h []string) bool { return len(h) == 7 })
}

// recordedUpgradeRequest is what CAPI sent to a lifecycle handler, read from the bytes the
// extension recorded (not from what it decoded).
func (s *scenarios) recordedUpgradeRequest(hook, handler string) (lifecycleCall, error) {
	body := s.lifecycleRecorded.lastRequest(hook, handler)
	if body == nil {
		return lifecycleCall{}, fmt.Errorf("no recorded %s request", hook)
	}
	var r struct {
		From                 string `json:"fromKubernetesVersion"`
		To                   string `json:"toKubernetesVersion"`
		Version              string `json:"kubernetesVersion"`
		ControlPlaneUpgrades []struct {
			Version string `json:"version"`
		} `json:"controlPlaneUpgrades"`
		WorkersUpgrades []struct {
			Version string `json:"version"`
		} `json:"workersUpgrades"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return lifecycleCall{}, err
	}
	c := lifecycleCall{Hook: hook, From: r.From, To: r.To}
	if r.Version != "" {
		c.To = r.Version
	}
	for _, u := range r.ControlPlaneUpgrades {
		c.ControlPlaneUpgrades = append(c.ControlPlaneUpgrades, u.Version)
	}
	for _, u := range r.WorkersUpgrades {
		c.WorkersUpgrades = append(c.WorkersUpgrades, u.Version)
	}
	return c, nil
}

var lifecycleHandlers = map[string]string{
	"BeforeClusterUpgrade": "before-cluster-upgrade", "BeforeControlPlaneUpgrade": "before-control-plane-upgrade",
	"AfterControlPlaneUpgrade": "after-control-plane-upgrade", "BeforeWorkersUpgrade": "before-workers-upgrade",
	"AfterWorkersUpgrade": "after-workers-upgrade", "AfterClusterUpgrade": "after-cluster-upgrade",
}

// waitHeld waits until the extension holds hook (at version to, when given) and checks the
// request it decoded equals the bytes CAPI sent.
func (s *scenarios) waitHeld(mark int, hook, to string) (lifecycleCall, error) {
	var held lifecycleCall
	err := Eventually(timeoutLg, hook+" called and held", func() (bool, string) {
		calls := lifecycleCalls(s.lifecycleLog)[mark:]
		var seen []string
		for _, c := range calls {
			if c.Hook == hook && c.Held && (to == "" || c.To == to) {
				held = c
				return true, ""
			}
			seen = append(seen, c.String())
		}
		return false, "calls so far: " + strings.Join(dedupe(seen), ", ")
	})
	if err != nil {
		return held, err
	}
	time.Sleep(1500 * time.Millisecond) // at least one more held call, so the recording is of a held one
	sent, err := s.recordedUpgradeRequest(hook, lifecycleHandlers[hook])
	if err != nil {
		return held, err
	}
	decoded := held
	decoded.Held, decoded.FromControlPlane, decoded.FromWorkers = false, "", ""
	if !reflect.DeepEqual(sent.normalized(), decoded.normalized()) {
		return held, fmt.Errorf("%s: CAPI sent %#v, the extension decoded %#v", hook, sent, decoded)
	}
	return held, nil
}

func (s *scenarios) setHolds(ctx context.Context, holds []string, version string) error {
	return s.setHoldsOf(ctx, ns, "c1", holds, version)
}

// setHoldsOf is setHolds for the Cluster namespace/cluster.
func (s *scenarios) setHoldsOf(ctx context.Context, namespace, cluster string, holds []string, version string) error {
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{holdAnnotation: strings.Join(holds, ",")}}}
	if version != "" {
		patch["spec"] = map[string]any{"topology": map[string]any{"version": version}}
	}
	body, _ := json.Marshal(patch)
	return s.kube.MergePatch(ctx, clusterV, "Cluster", namespace, cluster, string(body), false)
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// upgradeSequence is the calls since mark, held repeats and GenerateUpgradePlan left out.
func (s *scenarios) upgradeSequence(mark int) []string {
	var seq []string
	for _, c := range lifecycleCalls(s.lifecycleLog)[mark:] {
		if c.Hook == "GenerateUpgradePlan" {
			continue
		}
		c.Held = false
		seq = append(seq, c.String())
	}
	return dedupe(seq)
}

// waitUpgradeDone waits until AfterClusterUpgrade is no longer pending and the topology is
// reconciled at version.
func (s *scenarios) waitUpgradeDone(ctx context.Context, version string) error {
	return Eventually(timeoutLg, "upgrade to "+version+" complete", func() (bool, string) {
		u, err := s.cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		st, reason, msg := Condition(u, "TopologyReconciled")
		cp, md, mp := s.versions(ctx)
		pendingHooks := u.GetAnnotations()[pending]
		return st == "True" && cp == version && md == version && mp == version && !strings.Contains(pendingHooks, "AfterClusterUpgrade"),
			fmt.Sprintf("TopologyReconciled=%s/%s %q cp=%s md=%s mp=%s pending-hooks=%q", st, reason, msg, cp, md, mp, pendingHooks)
	})
}

// workloadCluster makes the test API server the Cluster's workload cluster (the kubeconfig
// Secret a control plane provider writes, the infrastructure reported provisioned): before a version change the Cluster webhook asks
// the workload cluster about the MachinePool's nodes, and refuses while it cannot connect.
func (s *scenarios) workloadCluster(ctx context.Context) error {
	infra, _ := s.refs(ctx)
	return s.workloadClusterOf(ctx, ns, "c1", infra)
}

// workloadClusterOf does it for the Cluster namespace/cluster, whose GenericInfrastructureCluster
// is infra.
func (s *scenarios) workloadClusterOf(ctx context.Context, namespace, cluster, infra string) error {
	return s.providers().WorkloadCluster(ctx, namespace, cluster, infra)
}

// startUpgrade sets the holds and the new version, retrying while the Cluster webhook cannot
// reach the workload cluster yet.
func (s *scenarios) startUpgrade(ctx context.Context, holds []string, to string) error {
	return s.startUpgradeOf(ctx, ns, "c1", holds, to)
}

// startUpgradeOf is startUpgrade for the Cluster namespace/cluster.
func (s *scenarios) startUpgradeOf(ctx context.Context, namespace, cluster string, holds []string, to string) error {
	var last error
	err := Eventually(timeoutLg, "the Cluster webhook admits version "+to, func() (bool, string) {
		last = s.setHoldsOf(ctx, namespace, cluster, holds, to)
		if last != nil && strings.Contains(last.Error(), "workload cluster") {
			return false, last.Error()
		}
		return true, ""
	})
	if err != nil {
		return err
	}
	return last
}

// upgrade: v1.34.0 → v1.35.0 with every lifecycle hook held once, in CAPI's order, each
// checked against the state it guards.
func (s *scenarios) upgrade(ctx context.Context) error {
	const from, to = "v1.34.0", "v1.35.0"
	if err := s.workloadCluster(ctx); err != nil {
		return err
	}
	fake := s.startFakeControlPlane(ctx)
	defer fake.close()
	// md-0 gets one Machine (the harness plays its bootstrap, infrastructure and Node), which
	// CAPI's MachineSet controller must replace for the workers to count as upgraded, and mp-0
	// one Node, whose kubelet must be at the new version.
	machines := s.startFakeWorkers(ctx)
	defer machines.Close()
	if err := s.scaleWorkers(ctx, 1); err != nil {
		return err
	}
	first, err := s.waitWorkerMachines(ctx, from)
	if err != nil {
		return err
	}
	if err := s.waitPoolNodes(ctx, from); err != nil {
		return err
	}
	mark := len(lifecycleCalls(s.lifecycleLog))
	if err := s.startUpgrade(ctx, upgradeHooks, to); err != nil {
		return err
	}
	// What each held hook guards: the versions (control plane, MachineDeployment, MachinePool)
	// while it holds.
	guard := map[string][3]string{
		"BeforeClusterUpgrade": {from, from, from}, "BeforeControlPlaneUpgrade": {from, from, from},
		"AfterControlPlaneUpgrade": {to, from, from}, "BeforeWorkersUpgrade": {to, from, from},
		"AfterWorkersUpgrade": {to, to, to}, "AfterClusterUpgrade": {to, to, to},
	}
	for i, hook := range upgradeHooks {
		call, err := s.waitHeld(mark, hook, "")
		if err != nil {
			return err
		}
		time.Sleep(time.Second) // CAPI had time to move on, if it were going to
		cp, md, mp := s.versions(ctx)
		if want := guard[hook]; [3]string{cp, md, mp} != want {
			return fmt.Errorf("while %s held: control plane %s, MachineDeployment %s, MachinePool %s; want %v", hook, cp, md, mp, want)
		}
		u, err := s.cluster(ctx)
		if err != nil {
			return err
		}
		st, reason, msg := Condition(u, "TopologyReconciled")
		pendingHooks := u.GetAnnotations()[pending]
		if hook != "AfterClusterUpgrade" && (st != "False" || !strings.Contains(msg, hook) || !strings.Contains(msg, "held by annotation")) {
			return fmt.Errorf("while %s held: TopologyReconciled=%s/%s %q does not say why", hook, st, reason, msg)
		}
		if hook == "AfterClusterUpgrade" && !strings.Contains(pendingHooks, "AfterClusterUpgrade") {
			return fmt.Errorf("while AfterClusterUpgrade held: pending-hooks=%q", pendingHooks)
		}
		// The Machines while it holds: md-0's first Machine, untouched, until the workers
		// upgrade; once AfterWorkersUpgrade is called no Machine of the old version is left and
		// its replacement is there (the rollout surges: the new Machine is made, and must be
		// Available, before the old one goes).
		// mp-0's Node likewise: at the old version until the workers upgrade, at the new one
		// once AfterWorkersUpgrade is called.
		workers := s.workerMachines(ctx)
		poolNodes := s.poolNodeVersions(ctx)
		switch hook {
		case "AfterWorkersUpgrade", "AfterClusterUpgrade":
			if err := onlyReplacement(hook, workers, to, first); err != nil {
				return err
			}
			if !reflect.DeepEqual(poolNodes, []string{to}) {
				return fmt.Errorf("%s was called while mp-0's Nodes run the kubelets %v", hook, poolNodes)
			}
		default:
			if len(workers) != 1 || workers[0].GetName() != first {
				return fmt.Errorf("while %s held: md-0's Machines are %v, want only %s", hook, names(workers), first)
			}
			if !reflect.DeepEqual(poolNodes, []string{from}) {
				return fmt.Errorf("while %s held: mp-0's Nodes run the kubelets %v, want [%s]", hook, poolNodes, from)
			}
		}
		fmt.Printf("  %s held: request %s→%s cp steps %v workers steps %v; versions cp=%s md=%s mp=%s; Machines %v; mp-0's kubelets %v; TopologyReconciled=%s/%s %q\n",
			hook, call.From, call.To, call.ControlPlaneUpgrades, call.WorkersUpgrades, cp, md, mp, names(workers), poolNodes, st, reason, msg)
		// render, told the hook blocks, prints what CAPI keeps while it holds.
		if _, err := s.renderHeldMatches(ctx, hook); err != nil {
			return err
		}
		if hook == "BeforeWorkersUpgrade" {
			// mp-0's instances are slow to upgrade: CAPI must wait for them.
			s.holdPool.Store(true)
		}
		if err := s.setHolds(ctx, upgradeHooks[i+1:], ""); err != nil {
			return err
		}
		if hook == "BeforeWorkersUpgrade" {
			if err := s.poolHoldsWorkersUpgrade(ctx, mark, from, to, first); err != nil {
				return err
			}
		}
	}
	if err := s.waitUpgradeDone(ctx, to); err != nil {
		return err
	}
	got := s.upgradeSequence(mark)
	want := []string{
		"BeforeClusterUpgrade " + from + "→" + to, "BeforeControlPlaneUpgrade " + from + "→" + to, "AfterControlPlaneUpgrade " + to,
		"BeforeWorkersUpgrade " + from + "→" + to, "AfterWorkersUpgrade " + to, "AfterClusterUpgrade " + to,
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("CAPI's calls were\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if steps := fake.close(); !reflect.DeepEqual(steps, []string{to}) {
		return fmt.Errorf("the control plane went through %v, want [%s]", steps, to)
	}
	fmt.Printf("  order: %s\n", strings.Join(got, " · "))
	return nil
}

// scaleWorkers sets the replicas of c1's md-0 and mp-0.
func (s *scenarios) scaleWorkers(ctx context.Context, replicas int64) error {
	u, err := s.cluster(ctx)
	if err != nil {
		return err
	}
	workers := map[string]any{}
	for _, w := range []struct{ list, name string }{{"machineDeployments", "md-0"}, {"machinePools", "mp-0"}} {
		topologies, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "workers", w.list)
		for _, t := range topologies {
			if m := t.(map[string]any); m["name"] == w.name {
				// md-0: the class's rollout (CAPI's default: one Machine surged, none
				// unavailable), so the new Machine must be Available before the old one goes.
				m["replicas"] = replicas
			}
		}
		workers[w.list] = topologies
	}
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"topology": map[string]any{"workers": workers}}})
	return s.kube.MergePatch(ctx, clusterV, "Cluster", ns, "c1", string(body), false)
}

// startFakeWorkers plays the providers of the namespace's Machines and MachinePools (mp-0's
// Nodes left as they are while s.holdPool is set).
func (s *scenarios) startFakeWorkers(ctx context.Context) *devenv.Player {
	p := s.providers()
	p.MachinePools = true
	p.HoldMachinePool = func(*unstructured.Unstructured) bool { return s.holdPool.Load() }
	return p.Start(ctx)
}

// poolNodeVersions returns the kubelet versions of the Nodes c1's mp-0 references
// (status.nodeRefs), as CAPI reads them to tell whether it is upgrading.
func (s *scenarios) poolNodeVersions(ctx context.Context) []string {
	l, err := s.kube.List(ctx, clusterV, "MachinePool", ns, map[string]string{clusterNameLabel: "c1", "topology.cluster.x-k8s.io/pool-name": "mp-0"})
	if err != nil || len(l) != 1 {
		return nil
	}
	refs, _, _ := unstructured.NestedSlice(l[0].Object, "status", "nodeRefs")
	out := []string{}
	for _, ref := range refs {
		name, _ := ref.(map[string]any)["name"].(string)
		node, err := s.kube.Get(ctx, "v1", "Node", "", name)
		if err != nil {
			out = append(out, "(no Node "+name+")")
			continue
		}
		v, _, _ := unstructured.NestedString(node.Object, "status", "nodeInfo", "kubeletVersion")
		out = append(out, v)
	}
	return out
}

// waitPoolNodes waits until c1's mp-0 references one Node, whose kubelet is at version.
func (s *scenarios) waitPoolNodes(ctx context.Context, version string) error {
	return Eventually(timeoutLg, "mp-0 with one Node at "+version, func() (bool, string) {
		v := s.poolNodeVersions(ctx)
		return reflect.DeepEqual(v, []string{version}), fmt.Sprintf("mp-0's kubelets %v", v)
	})
}

// poolHoldsWorkersUpgrade: with BeforeWorkersUpgrade released and mp-0's Node held at from,
// CAPI moves md-0 and mp-0 to the new version and md-0's Machine is replaced, but while mp-0's
// Node runs the old kubelet, AfterWorkersUpgrade is not called. Then the Node is let go.
func (s *scenarios) poolHoldsWorkersUpgrade(ctx context.Context, mark int, from, to, first string) error {
	defer s.holdPool.Store(false)
	if err := Eventually(timeoutLg, "md-0's Machine replaced and mp-0 at "+to, func() (bool, string) {
		_, md, mp := s.versions(ctx)
		workers := s.workerMachines(ctx)
		replaced := onlyReplacement("", workers, to, first) == nil
		return md == to && mp == to && replaced, fmt.Sprintf("md-0 %s (Machines %v), mp-0 %s", md, names(workers), mp)
	}); err != nil {
		return err
	}
	time.Sleep(5 * time.Second) // CAPI had time to move on, if it were going to
	for _, c := range lifecycleCalls(s.lifecycleLog)[mark:] {
		if c.Hook == "AfterWorkersUpgrade" {
			return fmt.Errorf("AfterWorkersUpgrade was called while mp-0's Node was held at %s", from)
		}
	}
	if v := s.poolNodeVersions(ctx); !reflect.DeepEqual(v, []string{from}) {
		return fmt.Errorf("mp-0's Node was held, yet its kubelets are %v", v)
	}
	fmt.Printf("  mp-0's Node held at %s for 5 s after md-0's Machine was replaced: no AfterWorkersUpgrade\n", from)
	return nil
}

// onlyReplacement checks md-0's Machines when hook was called: exactly one, of version, and not
// the Machine replaced (no Machine of an older version left, and the replicas back).
func onlyReplacement(hook string, workers []unstructured.Unstructured, version, replaced string) error {
	for _, m := range workers {
		if v, _, _ := unstructured.NestedString(m.Object, "spec", "version"); v != version || m.GetName() == replaced {
			return fmt.Errorf("%s was called while Machine %s of version %s exists", hook, m.GetName(), v)
		}
	}
	if len(workers) != 1 {
		return fmt.Errorf("%s was called while md-0 has the Machines %v, want its one replacement of %s", hook, names(workers), version)
	}
	return nil
}

// workerMachines returns the Machines of c1's md-0.
func (s *scenarios) workerMachines(ctx context.Context) []unstructured.Unstructured {
	l, _ := s.kube.List(ctx, clusterV, "Machine", ns, map[string]string{clusterNameLabel: "c1", "topology.cluster.x-k8s.io/deployment-name": "md-0"})
	return l
}

// waitWorkerMachines waits until md-0 has one Machine of version, with its Node, and none other;
// it returns its name.
func (s *scenarios) waitWorkerMachines(ctx context.Context, version string) (string, error) {
	var name string
	err := Eventually(timeoutLg, "md-0 with one Machine of "+version+" and its Node", func() (bool, string) {
		l := s.workerMachines(ctx)
		if len(l) != 1 {
			return false, fmt.Sprintf("Machines %v", names(l))
		}
		v, _, _ := unstructured.NestedString(l[0].Object, "spec", "version")
		node, _, _ := unstructured.NestedString(l[0].Object, "status", "nodeRef", "name")
		name = l[0].GetName()
		return v == version && node != "" && l[0].GetDeletionTimestamp() == nil, fmt.Sprintf("Machine %s version %s node %q", name, v, node)
	})
	return name, err
}

func names(l []unstructured.Unstructured) []string {
	var out []string
	for _, u := range l {
		out = append(out, u.GetName())
	}
	return out
}

// chainedUpgrade: v1.35.0 → v1.37.0 through the extension's GenerateUpgradePlan (one step per
// minor, workers included): the control plane and the workers go through exactly the planned
// versions, with the lifecycle hooks called per step.
func (s *scenarios) chainedUpgrade(ctx context.Context) error {
	const from, to = "v1.35.0", "v1.37.0"
	plan := []string{"v1.36.0", "v1.37.0"}
	fake := s.startFakeControlPlane(ctx)
	defer fake.close()
	machines := s.startFakeWorkers(ctx)
	defer machines.Close()
	// md-0's Machine of the upgrade before, which the first step must replace, and mp-0's Node.
	previous, err := s.waitWorkerMachines(ctx, from)
	if err != nil {
		return err
	}
	if err := s.waitPoolNodes(ctx, from); err != nil {
		return err
	}
	mark := len(lifecycleCalls(s.lifecycleLog))
	// Hold AfterWorkersUpgrade at each step, to read the objects at each step.
	var holds []string
	for _, v := range plan {
		holds = append(holds, "AfterWorkersUpgrade@"+v)
	}
	if err := s.startUpgrade(ctx, holds, to); err != nil {
		return err
	}
	for i, v := range plan {
		if _, err := s.waitHeld(mark, "AfterWorkersUpgrade", v); err != nil {
			return err
		}
		cp, md, mp := s.versions(ctx)
		if cp != v || md != v || mp != v {
			return fmt.Errorf("at step %s: control plane %s, MachineDeployment %s, MachinePool %s", v, cp, md, mp)
		}
		workers := s.workerMachines(ctx)
		if err := onlyReplacement("AfterWorkersUpgrade at step "+v, workers, v, previous); err != nil {
			return err
		}
		previous = workers[0].GetName()
		if pool := s.poolNodeVersions(ctx); !reflect.DeepEqual(pool, []string{v}) {
			return fmt.Errorf("AfterWorkersUpgrade at step %s was called while mp-0's Nodes run the kubelets %v", v, pool)
		}
		fmt.Printf("  step %s: control plane, MachineDeployment and MachinePool all at %s; md-0's only Machine %s (a new one) and mp-0's Node at %s\n", v, v, previous, v)
		// Mid-chain, render asks the lifecycle extension for the rest of the plan, as CAPI does,
		// and, told AfterWorkersUpgrade blocks, prints what CAPI keeps at this step.
		called, err := s.renderHeldMatches(ctx, "AfterWorkersUpgrade")
		if err != nil {
			return err
		}
		if asked := strings.Contains(called, "GenerateUpgradePlan"); asked != (v != to) {
			return fmt.Errorf("at step %s render asked GenerateUpgradePlan: %v, want %v (an upgrade is due before the last step)\n%s", v, asked, v != to, called)
		}
		if err := s.setHolds(ctx, holds[i+1:], ""); err != nil {
			return err
		}
	}
	if err := s.waitUpgradeDone(ctx, to); err != nil {
		return err
	}
	var planCall *lifecycleCall
	for _, c := range lifecycleCalls(s.lifecycleLog)[mark:] {
		if c.Hook == "GenerateUpgradePlan" {
			planCall = &c
			break
		}
	}
	if planCall == nil || planCall.FromControlPlane != from || planCall.FromWorkers != from || planCall.To != to || !reflect.DeepEqual(planCall.ControlPlaneUpgrades, plan) {
		return fmt.Errorf("GenerateUpgradePlan: %+v", planCall)
	}
	got := s.upgradeSequence(mark)
	want := []string{"BeforeClusterUpgrade " + from + "→" + to}
	prev := from
	for _, v := range plan {
		want = append(want, "BeforeControlPlaneUpgrade "+prev+"→"+v, "AfterControlPlaneUpgrade "+v, "BeforeWorkersUpgrade "+prev+"→"+v, "AfterWorkersUpgrade "+v)
		prev = v
	}
	want = append(want, "AfterClusterUpgrade "+to)
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("CAPI's calls were\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if steps := fake.close(); !reflect.DeepEqual(steps, plan) {
		return fmt.Errorf("the control plane went through %v, want %v", steps, plan)
	}
	fmt.Printf("  GenerateUpgradePlan %s→%s planned %v (workers %v); control plane went through %v\n", from, to, planCall.ControlPlaneUpgrades, planCall.WorkersUpgrades, plan)
	fmt.Printf("  order: %s\n", strings.Join(got, " · "))
	// Back to no Machine for the scenarios that follow.
	if err := s.scaleWorkers(ctx, 0); err != nil {
		return err
	}
	return Eventually(timeoutLg, "md-0 and mp-0 scaled back to no Machine and no Node", func() (bool, string) {
		l, pool := s.workerMachines(ctx), s.poolNodeVersions(ctx)
		return len(l) == 0 && len(pool) == 0, fmt.Sprintf("Machines %v, mp-0's kubelets %v", names(l), pool)
	})
}
