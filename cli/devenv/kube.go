package devenv

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

type Kube struct {
	C   client.Client
	Cfg *rest.Config // the admin's, for clients of another configuration
}

func NewKube(host, caFile, certFile, keyFile string) *Kube {
	cfg := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}, QPS: 50, Burst: 100}
	c, err := client.New(rest.CopyConfig(cfg), client.Options{})
	must(err)
	return &Kube{C: c, Cfg: cfg}
}

// WriteKubeconfig writes the admin's kubeconfig of the API server on 127.0.0.1:port into dir
// and returns its path; its cluster and context are named capi-ext-dev (what `kubectl config
// get-contexts` shows to an author of `capi-ext dev`).
func WriteKubeconfig(dir string, port int, ca, cert, key string) string {
	path := filepath.Join(dir, "admin.kubeconfig")
	must(os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: capi-ext-dev, cluster: {server: "https://127.0.0.1:%d", certificate-authority: %q}}]
users: [{name: admin, user: {client-certificate: %q, client-key: %q}}]
contexts: [{name: capi-ext-dev, context: {cluster: capi-ext-dev, user: admin}}]
current-context: capi-ext-dev
`, port, ca, cert, key)), 0o600))
	return path
}

// WriteExecKubeconfig writes a kubeconfig of the same admin whose credentials come from an exec
// credential plugin (a script printing an ExecCredential with the client certificate), as EKS,
// GKE and AKS kubeconfigs do: what capi-ext's kube-rs clients must run.
func WriteExecKubeconfig(dir string, port int, ca, cert, key string) string {
	certPEM, err := os.ReadFile(cert)
	must(err)
	keyPEM, err := os.ReadFile(key)
	must(err)
	credential, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]string{"clientCertificateData": string(certPEM), "clientKeyData": string(keyPEM)},
	})
	must(err)
	credentialPath := filepath.Join(dir, "exec-credential.json")
	must(os.WriteFile(credentialPath, credential, 0o600))
	plugin := filepath.Join(dir, "exec-credential.sh")
	must(os.WriteFile(plugin, []byte(fmt.Sprintf("#!/bin/sh\ncat %q\n", credentialPath)), 0o700))
	path := filepath.Join(dir, "exec.kubeconfig")
	must(os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: capi-ext-dev, cluster: {server: "https://127.0.0.1:%d", certificate-authority: %q}}]
users: [{name: exec-admin, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never}}}]
contexts: [{name: capi-ext-dev, context: {cluster: capi-ext-dev, user: exec-admin}}]
current-context: capi-ext-dev
`, port, ca, plugin)), 0o600))
	return path
}

// Docs splits multi-document YAML into objects.
func Docs(text string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split("\n"+text, "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	return out, nil
}

// Apply creates every object of a YAML text (retrying while a new kind is not served yet)
// and returns their names.
func (k *Kube) Apply(ctx context.Context, text string) ([]string, error) {
	return k.ApplyLabelled(ctx, text, nil)
}

// ApplyLabelled is apply with labels added to every object.
func (k *Kube) ApplyLabelled(ctx context.Context, text string, labels map[string]string) ([]string, error) {
	objs, err := Docs(text)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if len(labels) > 0 {
			l := obj.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			for k, v := range labels {
				l[k] = v
			}
			obj.SetLabels(l)
		}
	}
	var names []string
	for _, obj := range objs {
		var err error
		for i := 0; i < 30; i++ {
			if err = k.C.Create(ctx, obj); err == nil || apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return names, fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		names = append(names, obj.GetName())
	}
	return names, nil
}

// ApplyFiles creates the objects of every *.yaml file in dir, with labels added, and returns
// their names.
func (k *Kube) ApplyFiles(ctx context.Context, dir string, labels map[string]string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml in %s", dir)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return names, err
		}
		created, err := k.ApplyLabelled(ctx, string(data), labels)
		if err != nil {
			return names, fmt.Errorf("%s: %w", f, err)
		}
		names = append(names, created...)
	}
	return names, nil
}

func (k *Kube) Get(ctx context.Context, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	err := k.C.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u)
	return u, err
}

// List returns the objects of a kind in a namespace that carry the given labels.
func (k *Kube) List(ctx context.Context, apiVersion, kind, ns string, labels map[string]string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind+"List"))
	err := k.C.List(ctx, l, client.InNamespace(ns), client.MatchingLabels(labels))
	return l.Items, err
}

func (k *Kube) MergePatch(ctx context.Context, apiVersion, kind, ns, name, patch string, status bool) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	u.SetNamespace(ns)
	u.SetName(name)
	p := client.RawPatch(types.MergePatchType, []byte(patch))
	if status {
		return k.C.Status().Patch(ctx, u, p)
	}
	return k.C.Patch(ctx, u, p)
}

func (k *Kube) Delete(ctx context.Context, apiVersion, kind, ns, name string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	u.SetNamespace(ns)
	u.SetName(name)
	return k.C.Delete(ctx, u)
}

func (k *Kube) WaitEstablished(ctx context.Context, names []string) error {
	for _, name := range names {
		err := Eventually(60*time.Second, "CRD "+name+" Established", func() (bool, string) {
			u, err := k.Get(ctx, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
			if err != nil {
				return false, err.Error()
			}
			st, _, _ := Condition(u, "Established")
			return st == "True", "Established=" + st
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// InstallWebhooks installs a manager's webhook configurations, pointed at its URL, each named
// with prefix (as the release's kustomize build names them: managers share the generated names).
func (k *Kube) InstallWebhooks(ctx context.Context, text, base string, ca []byte, prefix string) error {
	objs, err := Docs(text)
	if err != nil {
		return err
	}
	count := 0
	for _, obj := range objs {
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for i, h := range hooks {
			hook := h.(map[string]any)
			cc := hook["clientConfig"].(map[string]any)
			svc := cc["service"].(map[string]any)
			delete(cc, "service")
			cc["url"] = base + svc["path"].(string)
			cc["caBundle"] = base64.StdEncoding.EncodeToString(ca)
			hooks[i] = hook
			count++
		}
		must(unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"))
		obj.SetName(prefix + obj.GetName())
		if err := k.C.Create(ctx, obj); err != nil {
			return fmt.Errorf("webhook configuration %s: %w", obj.GetName(), err)
		}
	}
	fmt.Printf("  %d webhooks installed\n", count)
	return nil
}

// Condition returns status, reason and message of a Condition in status.conditions.
func Condition(u *unstructured.Unstructured, kind string) (string, string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == kind {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

// Eventually polls check until it reports done, or fails with the last state it saw.
func Eventually(timeout time.Duration, what string, check func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := check()
		if ok {
			return nil
		}
		last = state
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("timed out after %s waiting for %s; last seen: %s", timeout, what, last)
}

func FakeCRD(kind string) string {
	group := "infrastructure.cluster.x-k8s.io"
	if strings.Contains(kind, "ControlPlane") {
		group = "controlplane.cluster.x-k8s.io"
	}
	if strings.Contains(kind, "Bootstrap") {
		group = "bootstrap.cluster.x-k8s.io"
	}
	plural := strings.ToLower(kind) + "s"
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
  labels: {cluster.x-k8s.io/v1beta2: v1beta2}
spec:
  group: %[2]s
  scope: Namespaced
  names: {kind: %[3]s, plural: %[1]s, listKind: %[3]sList, singular: %[4]s}
  versions:
  - name: v1beta2
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, plural, group, kind, strings.ToLower(kind))
}

// GenericKinds are the provider kinds of the Generic* family that a scaffolded project's render/
// fixtures and the e2e's ClusterClasses use, installed as CRDs by FakeCRD.
var GenericKinds = []string{"GenericInfrastructureClusterTemplate", "GenericInfrastructureCluster", "GenericControlPlaneTemplate", "GenericControlPlane",
	"GenericInfrastructureMachineTemplate", "GenericInfrastructureMachine", "GenericBootstrapConfigTemplate", "GenericBootstrapConfig",
	"GenericInfrastructureMachinePoolTemplate", "GenericInfrastructureMachinePool"}
