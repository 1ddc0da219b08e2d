package clusterclass

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API).

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
	"sigs.k8s.io/cluster-api/util/cache"
)

// CapiExtReconciler is the Reconciler SetupWithManager would build, without a manager.
func CapiExtReconciler(_ context.Context, c client.Client, runtimeClient runtimeclient.Client) *Reconciler {
	return &Reconciler{
		Client:                 c,
		RuntimeClient:          runtimeClient,
		discoverVariablesCache: cache.New[runtimeclient.CallExtensionCacheEntry](cache.DefaultTTL),
	}
}
