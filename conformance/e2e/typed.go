package main

// A typed patch through the real manager on a real CRD: a ClusterClass whose control plane is a
// KubeadmControlPlaneTemplate (KCP's own CRD), patched by the quickstart's typed patch
// (`NamedPatch::typed` over capi-ext-types' KubeadmControlPlaneTemplate). The manager must create
// the KubeadmControlPlane with the field the patch set, and with the template's other fields,
// which the patch's type round-trips, unchanged.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func (s *scenarios) typedPatch(ctx context.Context) error {
	if _, err := s.kube.Apply(ctx, fmt.Sprintf(`apiVersion: %[1]s
kind: GenericInfrastructureClusterTemplate
metadata: {name: e2e-kcp-infra, namespace: %[3]s}
spec: {template: {spec: {}}}
---
apiVersion: %[1]s
kind: GenericInfrastructureMachineTemplate
metadata: {name: e2e-kcp-machine, namespace: %[3]s}
spec: {template: {spec: {size: large}}}
---
apiVersion: %[2]s
kind: KubeadmControlPlaneTemplate
metadata: {name: e2e-kcp, namespace: %[3]s}
spec:
  template:
    spec:
      kubeadmConfigSpec:
        format: cloud-config
        clusterConfiguration:
          certificatesDir: /etc/kubernetes/pki-e2e
          apiServer:
            extraArgs:
            - {name: audit-log-maxage, value: "30"}
        files:
        - {path: /etc/e2e/typed, content: kept, permissions: "0600"}
      rollout:
        strategy:
          type: RollingUpdate
          rollingUpdate: {maxSurge: 1}
---
apiVersion: %[4]s
kind: ClusterClass
metadata: {name: e2e-kcp-class, namespace: %[3]s}
spec:
  infrastructure:
    templateRef: {apiVersion: %[1]s, kind: GenericInfrastructureClusterTemplate, name: e2e-kcp-infra}
  controlPlane:
    templateRef: {apiVersion: %[2]s, kind: KubeadmControlPlaneTemplate, name: e2e-kcp}
    machineInfrastructure:
      templateRef: {apiVersion: %[1]s, kind: GenericInfrastructureMachineTemplate, name: e2e-kcp-machine}
  patches:
  - name: quickstart
    external:
      generatePatchesExtension: patches.quickstart
      validateTopologyExtension: validate.quickstart
      discoverVariablesExtension: variables.quickstart
---
apiVersion: %[4]s
kind: Cluster
metadata:
  name: c-kcp
  namespace: %[3]s
  annotations: {%[5]q: "true"}
spec:
  topology:
    classRef: {name: e2e-kcp-class}
    version: v1.34.0
    controlPlane: {replicas: 1}
    variables:
    - {name: imageRepository, value: %[6]q}
`, infraV, cpV, ns, clusterV, approved, goodRepo)); err != nil {
		return err
	}
	var kcp *unstructured.Unstructured
	err := Eventually(timeoutLg, "the KubeadmControlPlane created from the typed-patched template", func() (bool, string) {
		u, err := s.kube.Get(ctx, clusterV, "Cluster", ns, "c-kcp")
		if err != nil {
			return false, err.Error()
		}
		name, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name")
		if name == "" {
			st, reason, msg := Condition(u, "TopologyReconciled")
			return false, fmt.Sprintf("no controlPlaneRef yet (TopologyReconciled=%s/%s %q)", st, reason, msg)
		}
		kcp, err = s.kube.Get(ctx, cpV, "KubeadmControlPlane", ns, name)
		if err != nil {
			return false, err.Error()
		}
		repo, _, _ := unstructured.NestedString(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "imageRepository")
		return repo == goodRepo, fmt.Sprintf("spec.kubeadmConfigSpec.clusterConfiguration.imageRepository=%q", repo)
	})
	if err != nil {
		return err
	}
	// The template's other fields, round-tripped by the patch's type, are there unchanged.
	spec := kcp.Object["spec"].(map[string]any)
	config := spec["kubeadmConfigSpec"].(map[string]any)
	cluster := config["clusterConfiguration"].(map[string]any)
	var wantArgs, wantFiles, wantRollout any
	must(json.Unmarshal([]byte(`[{"name": "audit-log-maxage", "value": "30"}]`), &wantArgs))
	must(json.Unmarshal([]byte(`[{"path": "/etc/e2e/typed", "content": "kept", "permissions": "0600"}]`), &wantFiles))
	must(json.Unmarshal([]byte(`{"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}`), &wantRollout))
	apiServer, _ := cluster["apiServer"].(map[string]any)
	rollout, _ := spec["rollout"].(map[string]any)
	checks := []struct {
		what      string
		got, want any
	}{
		{"format", config["format"], "cloud-config"},
		{"clusterConfiguration.certificatesDir", cluster["certificatesDir"], "/etc/kubernetes/pki-e2e"},
		{"clusterConfiguration.apiServer.extraArgs", apiServer["extraArgs"], wantArgs},
		{"files", config["files"], wantFiles},
		{"rollout.strategy", numbersAsFloats(rollout["strategy"]), numbersAsFloats(wantRollout)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(numbersAsFloats(c.got), numbersAsFloats(c.want)) {
			return fmt.Errorf("the KubeadmControlPlane's %s is %v, the template had %v", c.what, c.got, c.want)
		}
	}
	fmt.Printf("  KubeadmControlPlane %s: imageRepository=%s set by the typed patch; the template's other fields kept\n", kcp.GetName(), goodRepo)
	// Nothing more to see: no reconcile of it calls the extensions again.
	return s.kube.MergePatch(ctx, clusterV, "Cluster", ns, "c-kcp", `{"spec":{"paused":true}}`, false)
}
