package devenv

import "testing"

func TestAProviderCRDWithoutAContractLabelGetsV1beta2WithItsServedVersions(t *testing.T) {
	docs, err := Docs(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: a}
spec:
  versions: [{name: v1beta1, served: true}, {name: v1alpha4, served: false}, {name: v1beta2, served: true}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: b, labels: {cluster.x-k8s.io/v1beta1: v1beta1}}
spec:
  versions: [{name: v1beta1, served: true}]
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		addContractLabel(d)
	}
	if got := docs[0].GetLabels()["cluster.x-k8s.io/v1beta2"]; got != "v1beta1_v1beta2" {
		t.Errorf("unlabelled CRD: cluster.x-k8s.io/v1beta2=%q, want v1beta1_v1beta2", got)
	}
	if got := docs[1].GetLabels(); len(got) != 1 || got["cluster.x-k8s.io/v1beta1"] != "v1beta1" {
		t.Errorf("labelled CRD: labels %v, want its own only", got)
	}
}
