package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The port of Cluster API's own test extension (examples/capi-test-extension) under the real
// manager, driven as CAPI's runtimesdk e2e spec drives the Go one: answers preloaded in the
// Cluster's ConfigMap, every answer recorded in it. The handlers read and write the ConfigMap
// through the management cluster's client (capi_ext::clusters, KUBECONFIG).
const testExtName = "capi-test-ext"

func (s *scenarios) capiTestExtension(ctx context.Context) error {
	port, probes := freePort(), freePort()
	p := s.ps.startWith("capi-test-extension", []string{"KUBECONFIG=" + s.kubeconfig}, s.testExtBin,
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", port), "--webhook-cert-dir="+s.extCertDir,
		"--webhook-client-ca-name=client-ca.crt", "--metrics-bind-address=0",
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes), "--log-format=json")
	if err := waitHTTP(httpClient(nil, "", ""), fmt.Sprintf("http://127.0.0.1:%d/readyz", probes), 60*time.Second, p); err != nil {
		return err
	}
	if _, err := s.kube.apply(ctx, fmt.Sprintf(`apiVersion: %s
kind: ExtensionConfig
metadata: {name: %s}
spec:
  clientConfig: {url: "https://127.0.0.1:%d", caBundle: %s}
  namespaceSelector: {}
  settings: {extensionConfigName: %s, defaultAllHandlersToBlocking: "true"}
`, runtimeV, testExtName, port, s.caB64, testExtName)); err != nil {
		return err
	}
	defer func() { _ = s.kube.delete(ctx, runtimeV, "ExtensionConfig", "", testExtName) }()
	// The Go extension's handlers, in its order.
	want := []string{"generate-patches", "validate-topology", "discover-variables", "before-cluster-create", "after-control-plane-initialized", "before-cluster-upgrade", "before-control-plane-upgrade",
		"after-control-plane-upgrade", "before-workers-upgrade", "after-workers-upgrade", "after-cluster-upgrade", "before-cluster-delete",
		"can-update-machine", "can-update-machineset", "update-machine", "generate-upgrade-plan"}
	if err := eventually(timeoutLg, "the port's Discovery in the ExtensionConfig's status", func() (bool, string) {
		u, err := s.kube.get(ctx, runtimeV, "ExtensionConfig", "", testExtName)
		if err != nil {
			return false, err.Error()
		}
		handlers, _, _ := unstructured.NestedSlice(u.Object, "status", "handlers")
		var names []string
		for _, h := range handlers {
			name, _, _ := unstructured.NestedString(h.(map[string]any), "name")
			names = append(names, strings.TrimSuffix(name, "."+testExtName))
		}
		return strings.Join(names, ",") == strings.Join(want, ","), fmt.Sprintf("handlers %v", names)
	}); err != nil {
		return err
	}

	const cluster = "ct1"
	configMap := cluster + "-" + testExtName + "-test-extension-hookresponses"
	recordedAs := func(key, value string) func() (bool, string) {
		return func() (bool, string) {
			cm, err := s.kube.get(ctx, "v1", "ConfigMap", ns, configMap)
			if err != nil {
				return false, err.Error()
			}
			got, _, _ := unstructured.NestedString(cm.Object, "data", key)
			return got == value, fmt.Sprintf("%s=%q", key, got)
		}
	}
	preload := func(hook, answer string) error {
		return s.kube.mergePatch(ctx, "v1", "ConfigMap", ns, configMap,
			fmt.Sprintf(`{"data":{%q:%q}}`, hook+"-preloadedResponse", answer), false)
	}
	// The quickstart's own gates (registered for every namespace too) let this Cluster pass.
	if _, err := s.kube.apply(ctx, clusterYAML(cluster, goodRepo, map[string]string{approved: "true", delOK: "true"})); err != nil {
		return err
	}
	if err := eventually(timeoutLg, "BeforeClusterCreate held by the port's default answer, recorded in the ConfigMap it created",
		recordedAs("BeforeClusterCreate-actualResponseStatus", "Status: Success, RetryAfterSeconds: 5")); err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	u, err := s.kube.get(ctx, clusterV, "Cluster", ns, cluster)
	if err != nil {
		return err
	}
	if cp, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name"); cp != "" {
		return fmt.Errorf("the control plane was created while the port's BeforeClusterCreate held")
	}
	fmt.Printf("  BeforeClusterCreate held: recorded %q\n", "Status: Success, RetryAfterSeconds: 5")
	if err := preload("BeforeClusterCreate", `{"Status": "Success"}`); err != nil {
		return err
	}
	var cpName string
	if err := eventually(timeoutLg, "the topology created once the preloaded answer lets go", func() (bool, string) {
		u, err := s.kube.get(ctx, clusterV, "Cluster", ns, cluster)
		if err != nil {
			return false, err.Error()
		}
		cpName, _, _ = unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name")
		ok, rec := recordedAs("BeforeClusterCreate-actualResponseStatus", "Status: Success, RetryAfterSeconds: 0")()
		return cpName != "" && ok, fmt.Sprintf("controlPlaneRef=%q %s", cpName, rec)
	}); err != nil {
		return err
	}
	if err := s.kube.mergePatch(ctx, cpV, "GenericControlPlane", ns, cpName, `{"status":{"initialization":{"controlPlaneInitialized":true},"version":"v1.34.0"}}`, true); err != nil {
		return err
	}
	if err := eventually(timeoutLg, "AfterControlPlaneInitialized recorded",
		recordedAs("AfterControlPlaneInitialized-actualResponseStatus", "Success")); err != nil {
		return err
	}
	fmt.Println("  released by the preloaded answer; AfterControlPlaneInitialized recorded \"Success\"")
	if err := s.kube.delete(ctx, clusterV, "Cluster", ns, cluster); err != nil {
		return err
	}
	if err := eventually(timeoutLg, "BeforeClusterDelete held by the port, recorded",
		recordedAs("BeforeClusterDelete-actualResponseStatus", "Status: Success, RetryAfterSeconds: 5")); err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	if _, err := s.kube.get(ctx, clusterV, "Cluster", ns, cluster); err != nil {
		return fmt.Errorf("the Cluster went away while the port's BeforeClusterDelete held: %w", err)
	}
	if err := preload("BeforeClusterDelete", `{"Status": "Success"}`); err != nil {
		return err
	}
	if err := eventually(timeoutLg, "the Cluster deleted once the preloaded answer lets go", func() (bool, string) {
		_, err := s.kube.get(ctx, clusterV, "Cluster", ns, cluster)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	}); err != nil {
		return err
	}
	fmt.Println("  BeforeClusterDelete held, then released by the preloaded answer; the Cluster deleted")
	return nil
}
