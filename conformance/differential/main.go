// Command differential is the differential test of `capi-ext render`: for generated
// topologies, Cluster API's own code (the ClusterClass reconciler's variable discovery, the
// Cluster webhook's defaulting and validation, the topology reconciler's blueprint and current
// state, and the desired-state generator with its patch engine, calling the extension through
// CAPI's runtime client) and `capi-ext render` compute the objects of a new Cluster, and every
// difference fails with the case, the object and the field path.
//
// It is built inside a copy of the Cluster API module (conformance/scripts/differential.sh),
// since the runtime client and the steps of the reconcilers are internal to it. No API
// server: a controller-runtime fake client holds the objects, as in CAPI's own unit tests.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/core/reconcilers/clusterclass"
	topologycluster "sigs.k8s.io/cluster-api/core/reconcilers/topology/cluster"
	coreadmission "sigs.k8s.io/cluster-api/core/webhooks/admission"
	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
	"sigs.k8s.io/cluster-api/exp/topology/scope"
	"sigs.k8s.io/cluster-api/feature"
	internalruntimeclient "sigs.k8s.io/cluster-api/internal/runtime/client"
	runtimeregistry "sigs.k8s.io/cluster-api/internal/runtime/registry"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/test/builder"
)

// newScheme is a scheme for one worker: controller-runtime's fake client writes into the scheme
// it is given while another builds its REST mapper from it, so workers must not share one.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(clusterv1.AddToScheme(scheme))
	must(runtimev1.AddToScheme(scheme))
	must(apiextensionsv1.AddToScheme(scheme))
	return scheme
}

type options struct {
	capiExt, url, caFile, work, capiVersion string
	ca                                      []byte
}

func main() {
	capiExt := flag.String("capi-ext", "", "the capi-ext CLI")
	url := flag.String("url", "", "the differential extension's URL (capi-ext-conformance differential-extension)")
	caFile := flag.String("ca", "", "the CA of its serving certificate")
	n := flag.Int("n", 200, "topologies per seed")
	seed := flag.Int64("seed", 1, "the fixed seed")
	randomSeed := flag.Int64("random-seed", 0, "a second seed, new each run (0: none)")
	inPlaceN := flag.Int("inplace-n", 200, "with -test-extension-url: in-place update cases per seed")
	work := flag.String("work", "", "directory the cases are written to (each failing one is kept)")
	capiVersion := flag.String("capi-version", "", "the Cluster API release this is built from (render plays its engine)")
	parallel := flag.Int("parallel", 2, "cases computed at once")
	verbose := flag.Bool("v", false, "also print why both sides refused a case")
	rootModule := flag.String("capi-module", "", "the Cluster API module of -capi-version (its KubeadmControlPlane and KubeadmConfig CRDs)")
	testModule := flag.String("test-module", "", "the Cluster API test module of -capi-version: its ClusterClasses are cases too")
	portURL := flag.String("test-extension-url", "", "the port of CAPI's test extension (CA: -ca): with -go-test-extension-url, compare it with Go's under CAPI's code instead")
	goURL := flag.String("go-test-extension-url", "", "CAPI's test extension (Go; CA: -ca)")
	flag.Parse()
	if *capiExt == "" || *url == "" || *caFile == "" || *work == "" || *capiVersion == "" {
		fmt.Fprintln(os.Stderr, "usage: differential -capi-ext BIN -url URL -ca FILE -work DIR -capi-version V [-n N] [-seed S] [-random-seed S]")
		os.Exit(2)
	}
	ca, err := os.ReadFile(*caFile)
	must(err)
	// CAPI logs through controller-runtime and klog; the test reports what matters itself.
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	must(feature.MutableGates.Set("RuntimeSDK=true,ClusterTopology=true"))
	opts := options{capiExt: *capiExt, url: *url, caFile: *caFile, work: *work, capiVersion: *capiVersion, ca: ca}

	if *portURL != "" || *goURL != "" {
		if *portURL == "" || *goURL == "" || *testModule == "" {
			fmt.Fprintln(os.Stderr, "usage: differential ... -test-extension-url URL -go-test-extension-url URL -test-module DIR -capi-module DIR")
			os.Exit(2)
		}
		port, goes := opts, opts
		port.url, goes.url = *portURL, *goURL
		start := time.Now()
		cases := peerCases(*testModule, loadCRDs(*rootModule, *testModule))
		fmt.Printf("CAPI's test extension, the port against Go's, under CAPI's code: %d topologies\n", len(cases))
		results := runPeerCases(port, goes, cases, *parallel)
		reportByOrigin(cases, results)
		seeds := []int64{*seed}
		if *randomSeed != 0 {
			seeds = append(seeds, *randomSeed)
		}
		inPlaceAgree := runInPlacePeer(port, goes, seeds, *inPlaceN, *parallel)
		report(results, time.Since(start), *verbose)
		if !inPlaceAgree {
			os.Exit(1)
		}
		return
	}

	seeds := []int64{*seed}
	if *randomSeed != 0 {
		seeds = append(seeds, *randomSeed)
	}
	start := time.Now()
	var results []result
	for _, s := range seeds {
		fmt.Printf("seed %d: %d topologies\n", s, *n)
		results = append(results, runSeed(opts, s, *n, *parallel)...)
	}
	if *testModule != "" {
		cases := realCases(*testModule, loadCRDs(*rootModule, *testModule))
		fmt.Printf("Cluster API's own ClusterClasses: %d topologies\n", len(cases))
		real := runCases(opts, cases, *parallel)
		reportByOrigin(cases, real)
		results = append(results, real...)
	}
	report(results, time.Since(start), *verbose)
}

// result is the outcome of one case.
type result struct {
	name        string
	dir         string
	outcome     string // "equal", "both-failed", "mismatch"
	step        string // the step both refused at
	expect      string // the case's expectation (testCase.expect)
	differences []string
	objects     int
	// The edit of the Cluster past creation that was computed too (again.go), if any, and
	// how many names of the first reconcile CAPI kept there (render must keep them exactly).
	again string
	kept  int
	// The step both refused the edited Cluster at, if they did.
	againRefused string
	// The lifecycle hooks the extension blocked for the edited Cluster (render was told).
	againBlocking []string
	// Why each side refused, when both did.
	capiErr, renderErr error
	// The steps the case's invalid draws aim at (testCase.mayRefuse).
	mayRefuse map[string]bool
}

// runCases computes the given cases, `parallel` at a time.
func runCases(opts options, cases []*testCase, parallel int) []result {
	return inParallel(len(cases), parallel, func(ctx context.Context) func(int) result {
		rc := newRuntimeClient(ctx, opts)
		return func(i int) result { return runCase(ctx, opts, rc, cases[i]) }
	})
}

// inParallel computes n results, `parallel` at a time: each worker makes its own state once
// (newWorker: CAPI's runtime client and scheme are not shared between workers) and computes
// the results it takes, by index.
func inParallel(n, parallel int, newWorker func(context.Context) func(int) result) []result {
	results := make([]result, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			compute := newWorker(context.Background())
			for i := range jobs {
				results[i] = compute(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results
}

func runSeed(opts options, seed int64, n, parallel int) []result {
	cases := make([]*testCase, n)
	for i := range cases {
		// Each case has a generator of its own, so the cases do not depend on the order the
		// workers take them in.
		cases[i] = generate(rand.New(rand.NewSource(seed*1_000_003+int64(i))), fmt.Sprintf("s%d-%03d", seed, i), opts.capiVersion)
		cases[i].expect = expectBounded
	}
	return runCases(opts, cases, parallel)
}

// runtimeClientWithConfig is CAPI's runtime client with the extension discovered once; each
// case registers it again with the case's ExtensionConfig settings.
type runtimeClientWithConfig struct {
	client     runtimeclient.Client
	discovered *runtimev1.ExtensionConfig
	scheme     *runtime.Scheme
}

func newRuntimeClient(ctx context.Context, opts options) runtimeClientWithConfig {
	scheme := newScheme()
	catalog := runtimecatalog.New()
	must(runtimehooksv1.AddToCatalog(catalog))
	registry := runtimeregistry.New()
	must(registry.WarmUp(&runtimev1.ExtensionConfigList{}))
	namespaces := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}).Build()
	rc, err := internalruntimeclient.CapiExtNew(ctx, internalruntimeclient.Options{Catalog: catalog, Registry: registry, Client: namespaces})
	must(err)
	config := &runtimev1.ExtensionConfig{
		ObjectMeta: metav1.ObjectMeta{Name: extensionName},
		Spec: runtimev1.ExtensionConfigSpec{
			ClientConfig: runtimev1.ClientConfig{URL: opts.url, CABundle: opts.ca},
		},
	}
	must(coreadmission.CapiExtDefaultExtensionConfig(ctx, config))
	discovered, err := rc.Discover(ctx, config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "CAPI's runtime client could not discover the extension at %s: %v\n", opts.url, err)
		os.Exit(2)
	}
	return runtimeClientWithConfig{client: rc, discovered: discovered, scheme: scheme}
}

// capiState computes the case with Cluster API's code: the ClusterClass reconciled (its
// variables discovered), the Cluster defaulted and validated by the webhook, then the
// topology reconciler's steps up to the desired state.
func capiState(ctx context.Context, rc runtimeClientWithConfig, tc *testCase) (*scope.ClusterState, error) {
	config := rc.discovered.DeepCopy()
	config.Spec.Settings = tc.settings
	if err := rc.client.Register(config); err != nil {
		return nil, err
	}
	var objects []client.Object
	crds := tc.crds
	if crds == nil {
		crds = []*apiextensionsv1.CustomResourceDefinition{
			builder.GenericInfrastructureClusterTemplateCRD, builder.GenericInfrastructureClusterCRD,
			builder.GenericControlPlaneTemplateCRD, builder.GenericControlPlaneCRD,
			builder.GenericInfrastructureMachineTemplateCRD, builder.GenericInfrastructureMachineCRD,
			builder.GenericBootstrapConfigTemplateCRD, builder.GenericBootstrapConfigCRD,
			builder.GenericInfrastructureMachinePoolTemplateCRD, builder.GenericInfrastructureMachinePoolCRD,
		}
	}
	for _, crd := range crds {
		objects = append(objects, crd.DeepCopy())
	}
	objects = append(objects, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	for _, t := range tc.templates {
		objects = append(objects, unstructuredOf(t))
	}
	clusterClass := &clusterv1.ClusterClass{}
	must(convert(tc.clusterClass, clusterClass))
	objects = append(objects, clusterClass)
	c := fake.NewClientBuilder().WithScheme(rc.scheme).WithObjects(objects...).
		WithStatusSubresource(&clusterv1.ClusterClass{}, &clusterv1.Cluster{}).Build()

	// The ClusterClass controller: references, DiscoverVariables, status.variables.
	// The first reconcile only sets the Paused condition; the controller runs again on that
	// update, as here.
	reconciler := clusterclass.CapiExtReconciler(ctx, c, rc.client)
	reconciled := &clusterv1.ClusterClass{}
	for i := 0; ; i++ {
		if _, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(clusterClass)}); err != nil {
			return nil, refused(stepDefinitions, fmt.Errorf("ClusterClass reconcile: %w", err))
		}
		must(c.Get(ctx, client.ObjectKeyFromObject(clusterClass), reconciled))
		if conditions.Has(reconciled, clusterv1.ClusterClassVariablesReadyCondition) || i == 2 {
			break
		}
	}
	if condition := conditions.Get(reconciled, clusterv1.ClusterClassVariablesReadyCondition); condition != nil && condition.Status != metav1.ConditionTrue {
		return nil, refused(stepDefinitions, fmt.Errorf("ClusterClass reconcile: %s %s: %s", condition.Type, condition.Reason, condition.Message))
	}

	// The Cluster as the API server stores it: through the defaulting webhook.
	cluster := &clusterv1.Cluster{}
	must(convert(tc.cluster, cluster))
	if err := coreadmission.CapiExtDefaultCluster(ctx, c, cluster); err != nil {
		return nil, refused(stepValues, fmt.Errorf("Cluster webhook: %w", err))
	}
	if err := c.Create(ctx, cluster); err != nil {
		return nil, err
	}

	generator, err := topologycluster.CapiExtGenerator(ctx, c, cluster, rc.client)
	must(err)
	state, err := topologycluster.CapiExtDesiredState(ctx, c, generator, cluster)
	if err != nil {
		// The generator runs ValidateTopology, then the patches; its error says which
		// (CAPI wraps a ValidateTopology failure as "validation of patch ...").
		step := stepPatches
		switch {
		case strings.Contains(err.Error(), "validation of patch"):
			step = stepValidate
		case strings.Contains(err.Error(), "upgrade plan"), strings.Contains(err.Error(), "is upgrading"):
			// ComputeUpgradePlan, or reading which workers are upgrading, before any patch.
			step = stepUpgrade
		}
		return nil, refused(step, err)
	}
	return state, nil
}

// capiObjects lists the desired objects render also computes, keyed alike.
func capiObjects(state *scope.ClusterState) map[string]map[string]any {
	out := map[string]map[string]any{}
	add := func(o interface{ UnstructuredContent() map[string]any }) {
		if o == nil {
			return
		}
		content := o.UnstructuredContent()
		if content == nil {
			return
		}
		out[objectKey(content)] = content
	}
	addTyped := func(o any, kind string) {
		content := typedContent(o, kind)
		out[objectKey(content)] = content
	}
	if state.InfrastructureCluster != nil {
		add(state.InfrastructureCluster)
	}
	if state.Cluster != nil {
		content := clusterFields(typedContent(state.Cluster, "Cluster"))
		out[objectKey(content)] = content
	}
	if state.ControlPlane != nil {
		if state.ControlPlane.Object != nil {
			add(state.ControlPlane.Object)
		}
		if state.ControlPlane.InfrastructureMachineTemplate != nil {
			add(state.ControlPlane.InfrastructureMachineTemplate)
		}
		if state.ControlPlane.MachineHealthCheck != nil {
			addTyped(state.ControlPlane.MachineHealthCheck, "MachineHealthCheck")
		}
	}
	for _, md := range state.MachineDeployments {
		add(md.BootstrapTemplate)
		add(md.InfrastructureMachineTemplate)
		if md.Object != nil {
			addTyped(md.Object, "MachineDeployment")
		}
		if md.MachineHealthCheck != nil {
			addTyped(md.MachineHealthCheck, "MachineHealthCheck")
		}
	}
	for _, mp := range state.MachinePools {
		add(mp.BootstrapObject)
		add(mp.InfrastructureMachinePoolObject)
		if mp.Object != nil {
			addTyped(mp.Object, "MachinePool")
		}
	}
	return out
}

// clusterFields keeps of the desired Cluster the fields its topology controller writes
// (reconcileCluster patches labels, annotations and the two references): what render prints
// of the Cluster.
func clusterFields(cluster map[string]any) map[string]any {
	metadata := map[string]any{}
	for _, field := range []string{"name", "namespace", "labels", "annotations"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(cluster, "metadata", field); ok && v != nil {
			metadata[field] = v
		}
	}
	spec := map[string]any{}
	for _, field := range []string{"infrastructureRef", "controlPlaneRef"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(cluster, "spec", field); ok && v != nil {
			spec[field] = v
		}
	}
	return map[string]any{"apiVersion": cluster["apiVersion"], "kind": "Cluster", "metadata": metadata, "spec": spec}
}

// typedContent is a typed CAPI object as it goes over the wire (Go's JSON encoding, what
// CAPI's server-side apply sends), with its kind: CAPI leaves the type meta of the desired
// MachineDeployment, MachinePool and MachineHealthCheck empty from 1.14 and sets it when it
// applies.
func typedContent(o any, kind string) map[string]any {
	b, err := json.Marshal(o)
	must(err)
	var content map[string]any
	must(json.Unmarshal(b, &content))
	content["apiVersion"], content["kind"] = clusterv1.GroupVersion.String(), kind
	// Not sent meaningfully: an empty creation time and status.
	unstructured.RemoveNestedField(content, "metadata", "creationTimestamp")
	delete(content, "status")
	return content
}

// generatedNames lists the names CAPI generated for the MachineDeployments and MachinePools,
// whose random parts render replaces with deterministic ones.
func generatedNames(state *scope.ClusterState) []string {
	var names []string
	for _, md := range state.MachineDeployments {
		if md.Object != nil {
			names = append(names, md.Object.Name)
		}
	}
	for _, mp := range state.MachinePools {
		if mp.Object != nil {
			names = append(names, mp.Object.Name)
		}
	}
	return names
}

func runCase(ctx context.Context, opts options, rc runtimeClientWithConfig, tc *testCase) result {
	dir := filepath.Join(opts.work, tc.name)
	must(tc.write(dir))
	r := result{name: tc.name, dir: dir}
	state, capiErr := capiState(ctx, rc, tc)
	rendered, renderErr := render(opts, dir, tc.blocking)
	agree(&r, sides{want: "CAPI", got: "render"}, capiErr, renderErr, func() []string {
		want := capiObjects(state)
		r.objects = len(want)
		return compareObjects(want, rendered, generatedNames(state))
	})
	judge(&r, tc)
	if r.outcome == "mismatch" {
		writeFailure(dir, r, capiErr, renderErr, state)
		return r
	}
	_ = os.RemoveAll(dir)
	// Generated topologies and CAPI's own ClusterClasses are computed again past creation.
	if r.outcome == "equal" && (tc.expect == expectBounded || tc.origin != "") {
		runAgain(ctx, opts, rc, tc, state, &r)
	}
	return r
}

// agree sets the outcome of a case from both sides' errors (refErr: the reference's, s.want;
// gotErr: the checked side's, s.got): both refused at the same step, one refused alone, or,
// when both computed, what compare finds.
func agree(r *result, s sides, refErr, gotErr error, compare func() []string) {
	switch {
	case refErr != nil && gotErr != nil:
		r.outcome = "both-failed"
		r.capiErr, r.renderErr = refErr, gotErr
		if a, b := stepOf(refErr), stepOf(gotErr); a != b || a == "other" {
			r.outcome = "mismatch"
			r.differences = []string{fmt.Sprintf("both refused, at different steps: %s (%s): %v; %s (%s): %v", s.want, a, refErr, s.got, b, gotErr)}
		} else {
			r.step = a
		}
	case refErr != nil:
		r.outcome = "mismatch"
		r.differences = []string{fmt.Sprintf("%s failed but %s succeeded: %v", s.want, s.got, refErr)}
	case gotErr != nil:
		r.outcome = "mismatch"
		r.differences = []string{fmt.Sprintf("%s failed but %s succeeded: %v", s.got, s.want, gotErr)}
	default:
		r.differences = compare()
		r.outcome = "equal"
		if len(r.differences) > 0 {
			r.outcome = "mismatch"
		}
	}
}

// What a case expects of both sides (testCase.expect): computed, refused at one step, or,
// for a generated topology, either: refused only at a step its invalid draws aim at
// (testCase.mayRefuse), and refusals then counted against refusalBounds.
const (
	expectComputed = ""
	expectBounded  = "bounded"
)

// judge holds an agreeing outcome to the case's expectation: a case meant to be computed that
// both refused, one meant to be refused at a step that both computed or refused elsewhere, or
// a generated topology both refused at a step none of its invalid draws aims at, is a mismatch
// too.
func judge(r *result, tc *testCase) {
	expect := tc.expect
	r.expect, r.mayRefuse = expect, tc.mayRefuse
	switch {
	case r.outcome == "mismatch":
	case expect == expectBounded:
		if r.outcome == "both-failed" && tc.mayRefuse != nil && !tc.mayRefuse[r.step] {
			r.outcome = "mismatch"
			r.differences = []string{fmt.Sprintf("both refused at %s a generated topology with no invalid draw for that step: %v", r.step, r.capiErr)}
		}
	case expect == expectComputed && r.outcome == "both-failed":
		r.outcome = "mismatch"
		r.differences = []string{fmt.Sprintf("both refused a topology meant to be computed, at %s: %v", r.step, r.capiErr)}
	case expect != expectComputed && r.outcome == "equal":
		r.outcome = "mismatch"
		r.differences = []string{fmt.Sprintf("both computed a topology meant to be refused at %s", expect)}
	case expect != expectComputed && r.step != expect:
		r.outcome = "mismatch"
		r.differences = []string{fmt.Sprintf("both refused at %s a topology meant to be refused at %s: %v", r.step, expect, r.capiErr)}
	}
}

// The steps of CAPI's reconcile at which a topology can be refused, named as
// `capi-ext render --json` names them (render_error.step).
const (
	stepInput       = "input"
	stepDefinitions = "variable definitions"
	stepValues      = "variable values"
	stepUpgrade     = "upgrade"
	stepValidate    = "ValidateTopology"
	stepPatches     = "patches"
	stepAPIServer   = "API server"
)

// stepError is a refusal and the step it happened at: CAPI's side knows it from the call that
// failed (ClusterClass reconcile, Cluster webhook, desired-state generator), render's from the
// error it reports (`capi-ext render --json`).
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func refused(step string, err error) error { return &stepError{step: step, err: err} }

// stepOf is the step of a refusal; "other" for an error that is not one (a crash, a
// transport error of the harness itself).
func stepOf(err error) string {
	var se *stepError
	if errors.As(err, &se) {
		return se.step
	}
	return "other"
}

// pastCreation counts the cases computed again past creation, per edit ("" when none was).
func pastCreation(results []result) string {
	byEdit, byHook := map[string]int{}, map[string]int{}
	total, kept, refused := 0, 0, 0
	for _, r := range results {
		if r.again != "" && r.outcome == "equal" {
			byEdit[r.again]++
			total++
			kept += r.kept
			for _, hook := range r.againBlocking {
				byHook[hook]++
			}
			if r.againRefused != "" {
				refused++
			}
		}
	}
	if total == 0 {
		return ""
	}
	parts := []string{}
	for _, edit := range edits {
		if byEdit[edit] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", edit, byEdit[edit]))
		}
	}
	blocked := []string{}
	for _, hook := range upgradeHooks {
		if byHook[hook] > 0 {
			blocked = append(blocked, fmt.Sprintf("%s %d", hook, byHook[hook]))
		}
	}
	held := ""
	if len(blocked) > 0 {
		held = fmt.Sprintf("; version edits with a blocking lifecycle hook: %s", strings.Join(blocked, ", "))
	}
	return fmt.Sprintf("%d (%s; %d edited Clusters refused by both at the same step%s), %d names kept by CAPI and by render",
		total, strings.Join(parts, ", "), refused, held, kept)
}

func report(results []result, took time.Duration, verbose bool) {
	counts := map[string]int{}
	objects := 0
	var failed []result
	// Refusals per step, of the generated topologies (bounded) and of the others (expected).
	bounded, expected := map[string]int{}, map[string]int{}
	// The generated topologies with an invalid draw aimed at each step.
	drawn := map[string]int{}
	generated := 0
	for _, r := range results {
		counts[r.outcome]++
		objects += r.objects
		if r.outcome == "mismatch" {
			failed = append(failed, r)
		}
		if r.expect == expectBounded {
			generated++
			for step := range r.mayRefuse {
				drawn[step]++
			}
		}
		if r.outcome == "both-failed" {
			if r.expect == expectBounded {
				bounded[r.step]++
			} else {
				expected[r.step]++
			}
			if verbose {
				fmt.Printf("refused %s at %s:\n  CAPI:   %v\n  render: %v\n", r.name, r.step, r.capiErr, r.renderErr)
			}
		}
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].name < failed[j].name })
	for i, r := range failed {
		if i == 10 {
			fmt.Printf("... and %d more mismatching cases\n", len(failed)-10)
			break
		}
		fmt.Printf("MISMATCH %s (inputs and both outputs in %s):\n  %s\n", r.name, r.dir, strings.Join(limit(r.differences, 8), "\n  "))
	}
	fmt.Printf("%d topologies in %.1fs: %d computed identically (%d objects), %d refused by both at the same step (%s), %d mismatches\n",
		len(results), took.Seconds(), counts["equal"], objects, counts["both-failed"], bySteps(bounded, expected), counts["mismatch"])
	if generated > 0 {
		fmt.Printf("  generated topologies with an invalid draw, per step (refused by both / drawn): %s\n", refusedOfDrawn(bounded, drawn))
	}
	if again := pastCreation(results); again != "" {
		fmt.Printf("  of those computed identically, also past creation (the objects existing, the Cluster or its ClusterClass edited, computed again): %s\n", again)
	}
	if len(failed) > 0 {
		os.Exit(1)
	}
	// The generated topologies' refusals, step by step, within the generator's bounds: a side
	// that refuses more than the generator's invalid draws explain fails here.
	over := false
	if generated > 0 && generated < 100 {
		fmt.Printf("(refusal bounds not checked: %d generated topologies, the bounds hold for runs of 100 and more)\n", generated)
		bounded = nil
	}
	for step, n := range bounded {
		bound := refusalBounds[step]
		if share := float64(n) / float64(generated); share > bound {
			fmt.Printf("too many generated topologies refused at %s: %d of %d (%.1f%%), the generator's bound is %.1f%%\n", step, n, generated, 100*share, 100*bound)
			over = true
		}
	}
	if over {
		os.Exit(1)
	}
}

// refusedOfDrawn prints, per step, the generated topologies both refused there and those with
// an invalid draw aimed there (a draw need not fail: a selector may match nothing).
func refusedOfDrawn(refused, drawn map[string]int) string {
	var parts []string
	for _, step := range slices.Sorted(maps.Keys(drawn)) {
		parts = append(parts, fmt.Sprintf("%s %d/%d", step, refused[step], drawn[step]))
	}
	return strings.Join(parts, ", ")
}

// bySteps prints refusal counts per step: the generated topologies' (with their bound) and the
// cases expected to be refused.
func bySteps(bounded, expected map[string]int) string {
	var parts []string
	for _, counts := range []struct {
		what string
		n    map[string]int
	}{{"generated", bounded}, {"expected", expected}} {
		steps := make([]string, 0, len(counts.n))
		for step := range counts.n {
			steps = append(steps, step)
		}
		sort.Strings(steps)
		for _, step := range steps {
			parts = append(parts, fmt.Sprintf("%s at %s: %d", counts.what, step, counts.n[step]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func limit(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n:n], fmt.Sprintf("... %d more", len(lines)-n))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
