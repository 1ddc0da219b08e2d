package cluster

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API).
// Before 1.14 the lifecycle hooks send the Cluster as v1beta1, whose conversion asks the API
// version of each kind it references. CAPI's main sets that getter to read the CRDs
// (contract.GetAPIVersion with the manager's client); here the client holds the CRDs of the
// Generic kinds, the only kinds the differential's topologies use on these releases.

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	"sigs.k8s.io/cluster-api/internal/contract"
	"sigs.k8s.io/cluster-api/util/test/builder"
)

func init() {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	var crds []client.Object
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{
		builder.GenericInfrastructureClusterTemplateCRD, builder.GenericInfrastructureClusterCRD,
		builder.GenericControlPlaneTemplateCRD, builder.GenericControlPlaneCRD,
		builder.GenericInfrastructureMachineTemplateCRD, builder.GenericInfrastructureMachineCRD,
		builder.GenericBootstrapConfigTemplateCRD, builder.GenericBootstrapConfigCRD,
		builder.GenericInfrastructureMachinePoolTemplateCRD, builder.GenericInfrastructureMachinePoolCRD,
	} {
		crds = append(crds, crd.DeepCopy())
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(crds...).Build()
	clusterv1beta1.SetAPIVersionGetter(func(gk schema.GroupKind) (string, error) {
		return contract.GetAPIVersion(context.Background(), c, gk)
	})
}
