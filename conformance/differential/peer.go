package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cluster-api/exp/topology/scope"
	"sigs.k8s.io/yaml"
)

// The port of CAPI's test extension (examples/capi-test-extension) against the Go original,
// both judged by Cluster API's own code: the ClusterClasses CAPI's runtimesdk e2e uses (their
// patches are the test extension's GeneratePatches, their variables its DiscoverVariables,
// their validation its ValidateTopology), with their Cluster templates and real CRDs, over a
// grid of versions, replicas and variable values. CAPI computes each case twice, once calling
// each extension; the desired objects (the Cluster, the templates' objects, the
// MachineDeployments and MachinePools) must be identical, or both refusals at the same step.
var peerClasses = []struct{ class, cluster string }{
	{"e2e/data/infrastructure-docker/main/clusterclass-quick-start-runtimesdk.yaml",
		"e2e/data/infrastructure-docker/main/cluster-template-upgrades-runtimesdk/cluster-runtimesdk.yaml"},
	// Not clusterclass-quick-start-runtimesdk-v1beta1.yaml: its ClusterClass, Cluster and
	// templates are v1beta1, which only the API server's conversion webhooks turn into what
	// CAPI's code reads (the fake client here stores what it is given).
}

// peerVariants are the values of the test extension's variables a case sets (beside the
// template's own): 0 none; 1 every variable; 2 other values, a percentage surge and a
// templated file; 3 values the extension's schemas refuse (CAPI's webhook judges them by the
// schemas each extension declared).
func peerVariants(variant int) []any {
	variable := func(name string, value any) any { return obj{"name": name, "value": value} }
	switch variant {
	case 1:
		return []any{
			variable("kubeadmControlPlaneMaxSurge", ""), variable("imageRepository", "registry.example.com/mirror"),
			variable("files", []any{obj{"path": "/etc/example/a.conf", "content": "a=1"}}),
			variable("preKubeadmCommands", []any{"echo one", "echo two"}),
			variable("kubeadmConfigTemplateAnnotations", obj{"example.com/owner": "team-a"}),
		}
	case 2:
		return []any{
			variable("kubeadmControlPlaneMaxSurge", "33%"), variable("imageRepository", "kindest"),
			variable("files", []any{obj{"path": "/etc/example/b.conf", "content": "{{ ds.meta_data.hostname }}", "contentFormat": "Template"}}),
			variable("preKubeadmCommands", []any{}),
		}
	case 3:
		return []any{
			variable("kubeadmControlPlaneMaxSurge", 3), variable("files", []any{obj{"path": 1}}),
		}
	}
	return nil
}

// peerCases: each class and Cluster over Kubernetes versions (one the kind mapper does not
// know), control plane replicas and variable values.
func peerCases(testModule string, crds []*apiextensionsv1.CustomResourceDefinition) []*testCase {
	var cases []*testCase
	for i, pc := range peerClasses {
		values := map[string]string{"EXTENSION_CONFIG_NAME": extensionName, "NAMESPACE": namespace}
		class, templates := classAndTemplates(documentsOf(envsubst(read(filepath.Join(testModule, pc.class)), values)))
		n := 0
		for _, version := range []string{"v1.33.4", "v1.34.1", "v1.35.0", "v1.99.0"} {
			for _, cp := range []string{"1", "3"} {
				for variant := 0; variant < 4; variant++ {
					name := fmt.Sprintf("peer%d-%s-%s-%d", i, strings.ReplaceAll(version, ".", ""), cp, variant)
					for k, v := range map[string]string{
						"CLUSTER_NAME": "c-" + name, "KUBERNETES_VERSION": version, "CONTROL_PLANE_MACHINE_COUNT": cp,
						"WORKER_MACHINE_COUNT": "2", "DOCKER_SERVICE_CIDRS": "10.128.0.0/12",
						"DOCKER_POD_CIDRS": "192.168.0.0/16", "DOCKER_SERVICE_DOMAIN": "cluster.local",
					} {
						values[k] = v
					}
					var cluster obj
					for _, o := range documentsOf(envsubst(read(filepath.Join(testModule, pc.cluster)), values)) {
						if o["kind"] == "Cluster" {
							cluster = o
						}
					}
					if cluster == nil {
						panic(fmt.Sprintf("no Cluster in %s", pc.cluster))
					}
					metadata := cluster["metadata"].(obj)
					metadata["namespace"] = namespace
					metadata["uid"] = fmt.Sprintf("5d1b2c8e-0000-4000-9000-%012d", i*1000+n)
					topology := cluster["spec"].(obj)["topology"].(obj)
					variables, _ := topology["variables"].([]any)
					for _, v := range peerVariants(variant) {
						variables = setVariable(variables, v.(obj))
					}
					topology["variables"] = variables
					expect := expectComputed
					if variant == 3 {
						expect = stepValues
					}
					cases = append(cases, &testCase{
						name: name, cluster: cluster, clusterClass: deepCopyObj(class),
						templates: deepCopyList(templates), crds: crds, expect: expect,
						origin: pc.class + " + " + filepath.Base(filepath.Dir(pc.cluster)),
					})
					n++
				}
			}
		}
	}
	return cases
}

// setVariable sets a Cluster variable, replacing one of the same name.
func setVariable(variables []any, v obj) []any {
	for i, existing := range variables {
		if existing.(obj)["name"] == v["name"] {
			variables[i] = v
			return variables
		}
	}
	return append(variables, v)
}

func read(path string) string {
	body, err := os.ReadFile(path)
	must(err)
	return string(body)
}

// peerObjects is every desired object of the state, keyed as objectKey keys them.
func peerObjects(state *scope.ClusterState) map[string]map[string]any {
	out := capiObjects(state)
	add := func(o any) {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		must(err)
		content = normalize(content).(map[string]any)
		out[objectKey(content)] = content
	}
	add(state.Cluster)
	for _, md := range state.MachineDeployments {
		add(md.Object)
	}
	for _, mp := range state.MachinePools {
		add(mp.Object)
	}
	return out
}

// runPeerCases computes each case with CAPI's code twice, calling the port (opts.url) and the
// Go extension (peer), and compares the desired objects or the step of the refusals.
func runPeerCases(opts, peer options, cases []*testCase, parallel int) []result {
	return inParallel(len(cases), parallel, func(ctx context.Context) func(int) result {
		port, goes := newRuntimeClient(ctx, opts), newRuntimeClient(ctx, peer)
		return func(i int) result { return runPeerCase(ctx, opts.work, port, goes, cases[i]) }
	})
}

func runPeerCase(ctx context.Context, work string, port, goes runtimeClientWithConfig, tc *testCase) result {
	dir := filepath.Join(work, tc.name)
	must(tc.write(dir))
	r := result{name: tc.name, dir: dir}
	portState, portErr := capiState(ctx, port, tc)
	goState, goErr := capiState(ctx, goes, tc)
	agree(&r, sides{want: "Go", got: "port"}, goErr, portErr, func() []string {
		want := peerObjects(goState)
		r.objects = len(want)
		return sides{want: "Go", got: "port"}.compareObjects(want, peerObjects(portState))
	})
	judge(&r, tc)
	if r.outcome == "mismatch" {
		var b strings.Builder
		fmt.Fprintf(&b, "case %s\n%s\n", r.name, strings.Join(r.differences, "\n"))
		for side, state := range map[string]*scope.ClusterState{"go": goState, "port": portState} {
			if state == nil {
				continue
			}
			y, err := yaml.Marshal(peerObjects(state))
			if err == nil {
				_ = os.WriteFile(filepath.Join(dir, side+".yaml"), y, 0o644)
			}
		}
		_ = os.WriteFile(filepath.Join(dir, "differences.txt"), []byte(b.String()), 0o644)
	} else {
		_ = os.RemoveAll(dir)
	}
	return r
}
