package machine

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API).

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
	"sigs.k8s.io/cluster-api/util/cache"
)

// CapiExtCallUpdateMachineHook is the Machine reconciler's callUpdateMachineHook: the
// UpdateMachine request built from the Machine and its infrastructure machine and bootstrap
// config, the hook called through runtimeClient. It answers when CAPI would call again
// (0: the update is done) and the message CAPI keeps.
func CapiExtCallUpdateMachineHook(ctx context.Context, runtimeClient runtimeclient.Client,
	machine *clusterv1.Machine, infraMachine, bootstrapConfig *unstructured.Unstructured) (time.Duration, string, error) {
	r := &Reconciler{RuntimeClient: runtimeClient, hookCache: cache.New[cache.HookEntry](ctx, cache.HookCacheDefaultTTL)}
	result, message, err := r.callUpdateMachineHook(ctx, &scope{machine: machine, infraMachine: infraMachine, bootstrapConfig: bootstrapConfig})
	return result.RequeueAfter, message, err
}
