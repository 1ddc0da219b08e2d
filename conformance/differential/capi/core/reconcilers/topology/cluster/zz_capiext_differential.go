package cluster

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API):
// it exposes the steps of Reconciler.reconcile that compute the desired state, unchanged.

import (
	"context"
	"time"

	pkgerrors "github.com/pkg/errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	coreadmission "sigs.k8s.io/cluster-api/core/webhooks/admission"
	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
	"sigs.k8s.io/cluster-api/exp/topology/desiredstate"
	"sigs.k8s.io/cluster-api/exp/topology/scope"
	"sigs.k8s.io/cluster-api/util/cache"
	"sigs.k8s.io/cluster-api/util/conditions"
)

// CapiExtDesiredState runs what Reconciler.reconcile runs before it writes anything: the
// ClusterClass read and checked, the Cluster's variables defaulted and validated, the
// blueprint and the current state read, and the generator's desired state.
func CapiExtDesiredState(ctx context.Context, c client.Client, generator desiredstate.Generator, cluster *clusterv1.Cluster) (*scope.ClusterState, error) {
	r := &Reconciler{Client: c, desiredStateGenerator: generator}
	s := scope.New(cluster)

	clusterClass := &clusterv1.ClusterClass{}
	key := s.Current.Cluster.GetClassKey()
	if err := r.Client.Get(ctx, key, clusterClass); err != nil {
		return nil, pkgerrors.Wrapf(err, "failed to retrieve ClusterClass %s", key)
	}
	s.Blueprint.ClusterClass = clusterClass
	if !conditions.Has(clusterClass, clusterv1.ClusterClassVariablesReadyCondition) ||
		conditions.IsFalse(clusterClass, clusterv1.ClusterClassVariablesReadyCondition) {
		return nil, pkgerrors.Errorf("ClusterClass is not successfully reconciled: status of %s condition on ClusterClass must be \"True\"", clusterv1.ClusterClassVariablesReadyCondition)
	}
	if errs := (&coreadmission.Cluster{}).DefaultAndValidateVariables(ctx, s.Current.Cluster, nil, clusterClass); len(errs) > 0 {
		return nil, apierrors.NewInvalid(clusterv1.GroupVersion.WithKind("Cluster").GroupKind(), s.Current.Cluster.Name, errs)
	}
	var err error
	if s.Blueprint, err = r.getBlueprint(ctx, s.Current.Cluster, s.Blueprint.ClusterClass); err != nil {
		return nil, pkgerrors.Wrap(err, "error reading the ClusterClass")
	}
	if s.Current, err = r.getCurrentState(ctx, s); err != nil {
		return nil, pkgerrors.Wrap(err, "error reading current state of the Cluster topology")
	}
	desired, err := r.desiredStateGenerator.Generate(ctx, s)
	if err != nil {
		return nil, pkgerrors.Wrap(err, "error computing the desired state of the Cluster topology")
	}
	return desired, nil
}

// CapiExtGenerator is the desired-state generator SetupWithManager builds, with a fake cluster
// cache (no workload cluster).
func CapiExtGenerator(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, runtimeClient runtimeclient.Client) (desiredstate.Generator, error) {
	return desiredstate.NewGenerator(c,
		clustercache.NewFakeClusterCache(c, client.ObjectKeyFromObject(cluster)),
		runtimeClient,
		cache.New[cache.HookEntry](ctx, cache.HookCacheDefaultTTL),
		cache.New[desiredstate.GenerateUpgradePlanCacheEntry](ctx, 10*time.Minute))
}
