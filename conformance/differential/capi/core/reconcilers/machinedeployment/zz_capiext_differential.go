package machinedeployment

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API).

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
)

// CapiExtCanExtensionsUpdateMachineSet is the MachineDeployment rollout planner's
// canExtensionsUpdateMachineSet for one CanUpdateMachineSet handler: the request built by
// createRequest from the two MachineSets and their templates, the handler called through
// runtimeClient, its patches applied to the request's current objects and those matched with
// the desired ones. It answers whether the MachineSet can be updated in place and, when not,
// CAPI's reasons.
func CapiExtCanExtensionsUpdateMachineSet(ctx context.Context, runtimeClient runtimeclient.Client, handler string,
	oldMS, newMS *clusterv1.MachineSet, currentBootstrapConfigTemplate, desiredBootstrapConfigTemplate,
	currentInfraMachineTemplate, desiredInfraMachineTemplate *unstructured.Unstructured) (bool, []string, error) {
	p := &rolloutPlanner{RuntimeClient: runtimeClient}
	return p.canExtensionsUpdateMachineSet(ctx, oldMS, newMS, &templateObjects{
		CurrentInfraMachineTemplate:    currentInfraMachineTemplate,
		DesiredInfraMachineTemplate:    desiredInfraMachineTemplate,
		CurrentBootstrapConfigTemplate: currentBootstrapConfigTemplate,
		DesiredBootstrapConfigTemplate: desiredBootstrapConfigTemplate,
	}, []string{handler})
}
