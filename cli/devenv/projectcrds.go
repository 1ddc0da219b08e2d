package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// InstallProjectCRDs installs the CustomResourceDefinitions of a project's crds/ folder (every
// *.yaml and *.yml file; other documents there are an error naming the file) and waits until
// they are established; it returns their names. A CRD with no Cluster API contract label (as in
// a provider's config/crd/bases, before its release's kustomize build adds one) gets
// cluster.x-k8s.io/v1beta2 with its served versions, as that build would: CAPI reads the
// contract from it. Installed before the Generic* kinds, a project's CRD of one of those kinds
// wins.
func InstallProjectCRDs(ctx context.Context, kube *Kube, dir string) ([]string, error) {
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		found, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	sort.Strings(files)
	var names []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return names, err
		}
		objs, err := Docs(string(data))
		if err != nil {
			return names, fmt.Errorf("%s: %w", file, err)
		}
		for _, crd := range objs {
			if crd.GetKind() != "CustomResourceDefinition" {
				return names, fmt.Errorf("%s: %s %s is not a CustomResourceDefinition (crds/ holds the CRDs of the project's provider kinds)", file, crd.GetKind(), crd.GetName())
			}
			addContractLabel(crd)
			if err := kube.C.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
				return names, fmt.Errorf("%s: CRD %s: %w", file, crd.GetName(), err)
			}
			names = append(names, crd.GetName())
		}
	}
	return names, kube.WaitEstablished(ctx, names)
}

// addContractLabel gives a CRD without a cluster.x-k8s.io/<contract> label the v1beta2 one,
// its served versions joined by "_".
func addContractLabel(crd *unstructured.Unstructured) {
	labels := crd.GetLabels()
	for key := range labels {
		if strings.HasPrefix(key, "cluster.x-k8s.io/v1beta") {
			return
		}
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var served []string
	for _, v := range versions {
		if v, ok := v.(map[string]any); ok && v["served"] == true {
			served = append(served, fmt.Sprint(v["name"]))
		}
	}
	if len(served) == 0 {
		return
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels["cluster.x-k8s.io/v1beta2"] = strings.Join(served, "_")
	crd.SetLabels(labels)
}
