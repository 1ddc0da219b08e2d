package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// The manifests scenario: what `capi-ext init` scaffolds for deployment (config/default, built
// by kustomize) and the chart of `capi-ext generate helm` (rendered by `helm template`, linted by
// `helm lint`) are applied server-side to the real kube-apiserver, with cert-manager's CRDs
// installed and CAPI's webhooks serving; every object must be admitted with no error and no
// warning, and a Pod made from the Deployment's template must pass the namespace's Pod Security
// `restricted` enforcement (the test API server runs no controllers, so no Pod is made for it).
// `capi-ext generate release` writes what clusterctl reads for a runtime extension provider,
// and `clusterctl generate provider --runtime-extension` (from that local repository, offline)
// prints the kustomize build's objects with clusterctl's labels.
// With default values the chart renders the kustomize build's objects, except the Namespace
// (Helm users create it with --create-namespace) and the namespace kustomize also writes into
// the cluster-scoped ExtensionConfig (which the API server ignores).

// warnings collects the warnings the API server sends back.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

func (s *scenarios) manifestsAdmitted(ctx context.Context) error {
	// cert-manager's CRDs, so that the Certificate and Issuer are admitted.
	crds, err := s.kube.ApplyFiles(ctx, s.certManagerCRDs, nil)
	if err != nil {
		return err
	}
	if err := s.kube.WaitEstablished(ctx, crds); err != nil {
		return err
	}

	// A project as a user starts one, with topology hooks (so DiscoverVariables too), that talks
	// to clusters (--kube: a ServiceAccount and the ClusterRole of its RBAC markers).
	project := filepath.Join(s.work, "scaffolded", "admitted")
	init := exec.Command(s.capiExt, "init", project, "--kube", "--hooks", "BeforeClusterCreate,GeneratePatches,ValidateTopology", "--capi-version", targetOf(s.capiVersion))
	if out, err := init.CombinedOutput(); err != nil {
		return fmt.Errorf("capi-ext init: %v\n%s", err, out)
	}
	built, err := output(s.kustomize, "build", filepath.Join(project, "config", "default"))
	if err != nil {
		return err
	}
	objs, err := Docs(built)
	if err != nil {
		return err
	}
	name := filepath.Base(project)
	if _, err := output(s.capiExt, "generate", "helm", "--project", project); err != nil {
		return err
	}
	if _, err := output(s.helm, "lint", "--strict", filepath.Join(project, "chart")); err != nil {
		return err
	}
	var namespace *unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" {
			namespace = obj.DeepCopy() // (applying writes the server's answer into obj)
		}
	}
	if namespace == nil {
		return fmt.Errorf("the kustomize build has no Namespace")
	}
	charted, err := s.helmTemplate(project, name, namespace.GetName())
	if err != nil {
		return err
	}
	if err := sameObjects(objs, charted); err != nil {
		return fmt.Errorf("helm template (default values) and kustomize build differ: %w", err)
	}

	// Server-side apply, as `kubectl apply --server-side` does, with a client that keeps warnings.
	w := &warnings{}
	cfg := rest.CopyConfig(s.kube.Cfg)
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	var problems, kinds []string
	var deployment *unstructured.Unstructured
	for _, obj := range objs {
		kinds = append(kinds, obj.GetKind())
		if obj.GetKind() == "Deployment" {
			deployment = obj.DeepCopy()
		}
		problems = append(problems, applyNoWarning(ctx, c, w, obj)...)
	}
	sort.Strings(kinds)
	if deployment == nil {
		problems = append(problems, "the kustomize build has no Deployment")
	} else {
		// The Pod the Deployment would make, created with dryRun=All: admission (Pod Security
		// `restricted` enforced by the namespace) runs, nothing is stored.
		spec, _, _ := unstructured.NestedMap(deployment.Object, "spec", "template", "spec")
		labels, _, _ := unstructured.NestedStringMap(deployment.Object, "spec", "template", "metadata", "labels")
		pod := &corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &pod.Spec); err != nil {
			return err
		}
		pod.Name, pod.Namespace, pod.Labels = deployment.GetName()+"-pod", deployment.GetNamespace(), labels
		if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
			problems = append(problems, fmt.Sprintf("a Pod from Deployment %s's template: %v", deployment.GetName(), err))
		}
		for _, warning := range w.take() {
			problems = append(problems, fmt.Sprintf("a Pod from Deployment %s's template: warning: %s", deployment.GetName(), warning))
		}
	}
	// The chart, rendered for another namespace (made like config/default's), applied the same way.
	helmNS := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	helmNS.SetName(namespace.GetName() + "-helm")
	helmNS.SetLabels(namespace.GetLabels())
	charted, err = s.helmTemplate(project, name, helmNS.GetName())
	if err != nil {
		return err
	}
	for _, obj := range append([]*unstructured.Unstructured{helmNS}, charted...) {
		for _, problem := range applyNoWarning(ctx, c, w, obj) {
			problems = append(problems, "helm: "+problem)
		}
	}
	problems = append(problems, s.serviceAccountMayDo(ctx, c, deployment, name)...)
	if len(problems) > 0 {
		return fmt.Errorf("%d problems applying the scaffolded project's manifests:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	// The namespace enforces `restricted`: a Pod that breaks it is refused (the check above can fail).
	bad := &corev1.Pod{}
	bad.Name, bad.Namespace = "privileged", deployment.GetNamespace()
	bad.Spec.Containers = []corev1.Container{{Name: "c", Image: "x", SecurityContext: &corev1.SecurityContext{Privileged: ptrTo(true)}}}
	if err := c.Create(ctx, bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "restricted") {
		return fmt.Errorf("a privileged Pod in %s was not refused by Pod Security: %v", bad.Namespace, err)
	}
	// The ExtensionConfig went through CAPI's webhooks and is stored.
	var extensionConfig string
	for _, obj := range objs {
		if obj.GetKind() == "ExtensionConfig" {
			extensionConfig = obj.GetName()
		}
	}
	if extensionConfig == "" {
		return fmt.Errorf("the kustomize build has no ExtensionConfig")
	}
	if _, err := s.kube.Get(ctx, runtimeV, "ExtensionConfig", "", extensionConfig); err != nil {
		return err
	}
	// It points at a Service nothing serves here: remove it so CAPI does not keep trying.
	if err := s.kube.Delete(ctx, runtimeV, "ExtensionConfig", "", extensionConfig); err != nil {
		return err
	}
	if err := s.clusterctlReads(project, name, objs); err != nil {
		return err
	}
	if err := s.tracingOn(ctx, c, w, project, name, namespace.GetName()); err != nil {
		return fmt.Errorf("tracing turned on: %w", err)
	}
	if err := s.monitoringOn(ctx, c, w, project, name, namespace.GetName()); err != nil {
		return fmt.Errorf("monitoring turned on: %w", err)
	}
	fmt.Printf("  kustomize build: %d objects admitted with no warning (%s); a Pod from the Deployment passes Pod Security restricted, a privileged one does not\n", len(objs), strings.Join(kinds, ", "))
	fmt.Printf("  RBAC: the Deployment runs as ServiceAccount %s, which the API server lets get Secrets (the marker of Clusters::workload) but not list or delete them\n", name)
	fmt.Printf("  helm: the chart lints; helm template renders the same %d objects (the Namespace aside), admitted with no warning in %s\n", len(charted), helmNS.GetName())
	return nil
}

// clusterctlReads writes the project's release and has clusterctl read it as a runtime
// extension provider: the objects must be the kustomize build's, with clusterctl's labels.
func (s *scenarios) clusterctlReads(project, name string, kustomized []*unstructured.Unstructured) error {
	const version = "v0.1.0"
	image := "registry.example.com/" + name + ":" + version
	config, err := output(s.capiExt, "generate", "release", "--project", project, "--version", version, "--image", image, "--kustomize", s.kustomize)
	if err != nil {
		return err
	}
	configFile := filepath.Join(project, "clusterctl.yaml")
	must(os.WriteFile(configFile, []byte(config), 0o644))
	home := filepath.Join(s.work, "clusterctl-home")
	must(os.MkdirAll(home, 0o755))
	cmd := exec.Command(s.clusterctl, "generate", "provider", "--runtime-extension", name+":"+version, "--config", configFile)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "CLUSTERCTL_DISABLE_VERSIONCHECK=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	printed, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("clusterctl generate provider --runtime-extension %s:%s: %v\n%s", name, version, err, stderr.String())
	}
	objs, err := Docs(string(printed))
	if err != nil {
		return err
	}
	label := "runtime-extension-" + name
	var problems []string
	for _, o := range objs {
		if got := o.GetLabels()["cluster.x-k8s.io/provider"]; got != label {
			problems = append(problems, fmt.Sprintf("%s %s: label cluster.x-k8s.io/provider=%q, want %q", o.GetKind(), o.GetName(), got, label))
		}
		if o.GetKind() == "Deployment" {
			got, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			if len(got) != 1 || got[0].(map[string]any)["image"] != image {
				problems = append(problems, fmt.Sprintf("Deployment %s: containers %v, want the image %s", o.GetName(), got, image))
			}
		}
	}
	keys := func(list []*unstructured.Unstructured) string {
		var out []string
		for _, o := range list {
			out = append(out, o.GetKind()+"/"+o.GetName())
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	if keys(objs) != keys(kustomized) {
		problems = append(problems, fmt.Sprintf("clusterctl printed %s; the kustomize build has %s", keys(objs), keys(kustomized)))
	}
	if len(problems) > 0 {
		return fmt.Errorf("clusterctl and the release of capi-ext generate release:\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Printf("  clusterctl generate provider --runtime-extension %s:%s read the release: the %d objects of the kustomize build, labelled %s, image %s\n", name, version, len(objs), label, image)
	return nil
}

// tracingOn turns tracing on as the scaffold says (the two commented lines of
// config/default/kustomization.yaml uncommented; the chart's tracing.otlpEndpoint set): both
// render the same objects, the Deployment exports to the Collector, the NetworkPolicy lets the
// export out (DNS and the Collector's port), and the changed objects are admitted with no warning.
func (s *scenarios) tracingOn(ctx context.Context, c client.Client, w *warnings, project, name, namespace string) error {
	const endpoint = "http://otel-collector.observability:4318"
	objs, err := s.turnOn(project, name, namespace, "# components:\n#   - ../tracing\n", "components:\n  - ../tracing\n",
		"tracing", "--set", "tracing.otlpEndpoint="+endpoint)
	if err != nil {
		return err
	}
	var problems []string
	seen := map[string]bool{}
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Deployment":
			for _, e := range containerItems(obj, "env") {
				if e["name"] == "OTEL_EXPORTER_OTLP_ENDPOINT" {
					seen["endpoint"] = e["value"] == endpoint
				}
			}
		case "NetworkPolicy":
			egress, _, _ := unstructured.NestedSlice(obj.Object, "spec", "egress")
			for _, rule := range egress {
				ports, _, _ := unstructured.NestedSlice(rule.(map[string]any), "ports")
				for _, port := range ports {
					port := port.(map[string]any)
					seen[fmt.Sprintf("%v/%v", port["protocol"], port["port"])] = true
				}
			}
		default:
			continue
		}
		problems = append(problems, applyNoWarning(ctx, c, w, obj)...)
	}
	if !seen["endpoint"] {
		problems = append(problems, "the Deployment does not export to "+endpoint+" (OTEL_EXPORTER_OTLP_ENDPOINT)")
	}
	for _, port := range []string{"UDP/53", "TCP/53", "TCP/4318"} {
		if !seen[port] {
			problems = append(problems, "the NetworkPolicy does not let "+port+" out")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n  "))
	}
	fmt.Printf("  tracing on (config/tracing; chart tracing.otlpEndpoint): the same %d objects, OTEL_EXPORTER_OTLP_ENDPOINT set, egress to DNS and TCP/4318, admitted with no warning\n", len(objs))
	return nil
}

// monitoringOn turns Prometheus monitoring on as the scaffold says (after tracing: the
// commented `- ../prometheus` of config/default/kustomization.yaml uncommented; the chart's
// monitoring.enabled set): both render the same objects, the PodMonitor scrapes the Deployment's
// metrics port, and the PodMonitor and PrometheusRule are admitted by prometheus-operator's CRDs
// with no warning. (The e2e's metrics scenarios evaluate the rules.)
func (s *scenarios) monitoringOn(ctx context.Context, c client.Client, w *warnings, project, name, namespace string) error {
	crds, err := s.kube.ApplyFiles(ctx, s.promOperatorCRDs, nil)
	if err != nil {
		return err
	}
	if err := s.kube.WaitEstablished(ctx, crds); err != nil {
		return err
	}
	objs, err := s.turnOn(project, name, namespace, "#   - ../prometheus\n", "  - ../prometheus\n",
		"monitoring", "--set", "tracing.otlpEndpoint=http://otel-collector.observability:4318", "--set", "monitoring.enabled=true")
	if err != nil {
		return err
	}
	var problems []string
	ports := map[string]bool{}
	var selected, scraped, scrapedPorts []string
	applied := 0
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Deployment":
			for _, p := range containerItems(obj, "ports") {
				ports[fmt.Sprint(p["name"])] = true
			}
			labels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", "labels")
			for k, v := range labels {
				selected = append(selected, k+"="+v)
			}
			continue
		case "PodMonitor":
			match, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
			for k, v := range match {
				scraped = append(scraped, k+"="+v)
			}
			endpoints, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podMetricsEndpoints")
			for _, e := range endpoints {
				scrapedPorts = append(scrapedPorts, fmt.Sprint(e.(map[string]any)["port"]))
			}
		case "PrometheusRule":
		default:
			continue
		}
		problems = append(problems, applyNoWarning(ctx, c, w, obj)...)
		applied++
	}
	for _, port := range scrapedPorts {
		if !ports[port] {
			problems = append(problems, "the PodMonitor scrapes port "+port+", which the Deployment's container does not name")
		}
	}
	for _, l := range scraped {
		if !strings.Contains(" "+strings.Join(selected, " ")+" ", " "+l+" ") {
			problems = append(problems, "the PodMonitor selects "+l+", which the Deployment's Pods do not carry")
		}
	}
	if applied != 2 || len(scraped) == 0 || len(scrapedPorts) == 0 {
		problems = append(problems, fmt.Sprintf("expected a PodMonitor with a selector and a PrometheusRule; applied %d objects", applied))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n  "))
	}
	fmt.Printf("  monitoring on (config/prometheus; chart monitoring.enabled): the same %d objects, the PodMonitor selects the Deployment's Pods and scrapes their metrics port, PodMonitor and PrometheusRule admitted by prometheus-operator's CRDs with no warning\n", len(objs))
	return nil
}

// turnOn turns an optional part of the scaffold on as a user would: the commented text of
// config/default/kustomization.yaml replaced by the uncommented; then kustomize build and helm
// template with flags (the chart's values for the same parts) must give the same objects.
func (s *scenarios) turnOn(project, name, namespace, commented, uncommented, what string, flags ...string) ([]*unstructured.Unstructured, error) {
	path := filepath.Join(project, "config", "default", "kustomization.yaml")
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// With `components:` already on (../rbac), only the component's own line is uncommented.
	if strings.Contains(string(text), "\ncomponents:\n") {
		commented = strings.TrimPrefix(commented, "# components:\n")
		uncommented = strings.TrimPrefix(uncommented, "components:\n")
	}
	if !strings.Contains(string(text), commented) {
		return nil, fmt.Errorf("%s has no %q to uncomment for %s:\n%s", path, commented, what, text)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(text), commented, uncommented, 1)), 0o644); err != nil {
		return nil, err
	}
	built, err := output(s.kustomize, "build", filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	objs, err := Docs(built)
	if err != nil {
		return nil, err
	}
	charted, err := s.helmTemplate(project, name, namespace, flags...)
	if err != nil {
		return nil, err
	}
	if err := sameObjects(objs, charted); err != nil {
		return nil, fmt.Errorf("%s on: helm template %v and kustomize build differ: %w", what, flags, err)
	}
	return objs, nil
}

// serviceAccountMayDo asks the API server (SubjectAccessReview) what the Deployment's
// ServiceAccount may do: get Secrets, as the scaffold's RBAC marker says, and not list or
// delete them.
func (s *scenarios) serviceAccountMayDo(ctx context.Context, c client.Client, deployment *unstructured.Unstructured, name string) []string {
	if deployment == nil {
		return nil
	}
	var problems []string
	account, _, _ := unstructured.NestedString(deployment.Object, "spec", "template", "spec", "serviceAccountName")
	mount, _, _ := unstructured.NestedBool(deployment.Object, "spec", "template", "spec", "automountServiceAccountToken")
	if account != name || !mount {
		problems = append(problems, fmt.Sprintf("the Deployment runs as ServiceAccount %q with automountServiceAccountToken %v, want %q and true", account, mount, name))
	}
	for verb, want := range map[string]bool{"get": true, "list": false, "delete": false} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + deployment.GetNamespace() + ":" + name,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + deployment.GetNamespace()},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: verb, Resource: "secrets"},
		}}
		if err := c.Create(ctx, review); err != nil {
			problems = append(problems, fmt.Sprintf("SubjectAccessReview: %v", err))
			continue
		}
		if review.Status.Allowed != want {
			problems = append(problems, fmt.Sprintf("ServiceAccount %s may %s secrets: %v, want %v (%s)", name, verb, review.Status.Allowed, want, review.Status.Reason))
		}
	}
	return problems
}

// containerItems lists the items of a list field (env, ports) of every container of a
// Deployment.
func containerItems(deployment *unstructured.Unstructured, field string) []map[string]any {
	var items []map[string]any
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	for _, container := range containers {
		list, _, _ := unstructured.NestedSlice(container.(map[string]any), field)
		for _, item := range list {
			if item, ok := item.(map[string]any); ok {
				items = append(items, item)
			}
		}
	}
	return items
}

// applyNoWarning applies obj server-side, as `kubectl apply --server-side` does, and returns
// what went wrong: an error, or any warning the API server sent.
func applyNoWarning(ctx context.Context, c client.Client, w *warnings, obj *unstructured.Unstructured) []string {
	var problems []string
	if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner("capi-ext-e2e"), client.ForceOwnership); err != nil {
		problems = append(problems, fmt.Sprintf("%s %s: %v", obj.GetKind(), obj.GetName(), err))
	}
	for _, warning := range w.take() {
		problems = append(problems, fmt.Sprintf("%s %s: warning: %s", obj.GetKind(), obj.GetName(), warning))
	}
	return problems
}

// helmTemplate renders the project's chart as release name in namespace, with more flags of
// `helm template` (values), and returns its objects.
func (s *scenarios) helmTemplate(project, name, namespace string, flags ...string) ([]*unstructured.Unstructured, error) {
	rendered, err := output(s.helm, append([]string{"template", name, filepath.Join(project, "chart"), "--namespace", namespace}, flags...)...)
	if err != nil {
		return nil, err
	}
	return Docs(rendered)
}

// output runs a command and returns its standard output; an error carries its standard error.
func output(bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// sameObjects compares the kustomize build with the chart's render: the same objects by kind and
// name, equal field by field, once the Namespace (not in the chart) and the namespace kustomize
// writes into the cluster-scoped ExtensionConfig are set aside.
func sameObjects(kustomized, charted []*unstructured.Unstructured) error {
	index := func(objs []*unstructured.Unstructured) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, o := range objs {
			if o.GetKind() == "Namespace" {
				continue
			}
			o = o.DeepCopy()
			if o.GetKind() == "ExtensionConfig" {
				o.SetNamespace("")
			}
			out[o.GetKind()+"/"+o.GetName()] = o.Object
		}
		return out
	}
	k, h := index(kustomized), index(charted)
	var problems []string
	for key, obj := range k {
		other, ok := h[key]
		switch {
		case !ok:
			problems = append(problems, key+": only in the kustomize build")
		case !reflect.DeepEqual(obj, other):
			a, _ := yaml.Marshal(obj)
			b, _ := yaml.Marshal(other)
			problems = append(problems, fmt.Sprintf("%s differs:\n--- kustomize\n%s--- helm\n%s", key, a, b))
		}
	}
	for key := range h {
		if _, ok := k[key]; !ok {
			problems = append(problems, key+": only in the chart")
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
