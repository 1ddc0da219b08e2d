package kubeadmcontrolplane

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API).

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controlplane/kubeadm/pkg"
	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
)

// CapiExtCanExtensionsUpdateMachine is KubeadmControlPlane's canExtensionsUpdateMachine for
// one CanUpdateMachine handler: the request built by createRequest (its server-side-apply
// dry-runs go to c), the handler called through runtimeClient, its patches applied to the
// request's current objects and those matched with the desired ones. It answers whether the
// Machine can be updated in place and, when not, CAPI's reasons.
func CapiExtCanExtensionsUpdateMachine(ctx context.Context, c client.Client, runtimeClient runtimeclient.Client, handler string,
	machine, desiredMachine *clusterv1.Machine, currentKubeadmConfig, desiredKubeadmConfig *bootstrapv1.KubeadmConfig,
	currentInfraMachine, desiredInfraMachine *unstructured.Unstructured) (bool, []string, error) {
	r := &Reconciler{Client: c, RuntimeClient: runtimeClient}
	return r.canExtensionsUpdateMachine(ctx, machine, pkg.UpToDateResult{
		DesiredMachine:       desiredMachine,
		CurrentInfraMachine:  currentInfraMachine,
		DesiredInfraMachine:  desiredInfraMachine,
		CurrentKubeadmConfig: currentKubeadmConfig,
		DesiredKubeadmConfig: desiredKubeadmConfig,
	}, []string{handler})
}
