package admission

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API):
// the webhooks' defaulting, called the same way for every release.

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
)

// CapiExtDefaultCluster runs the Cluster webhook's defaulting (variables defaulted and checked).
func CapiExtDefaultCluster(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster) error {
	return (&Cluster{Client: c}).Default(ctx, cluster)
}

// CapiExtDefaultExtensionConfig runs the ExtensionConfig webhook's defaulting.
func CapiExtDefaultExtensionConfig(ctx context.Context, config *runtimev1.ExtensionConfig) error {
	return (&ExtensionConfig{}).Default(ctx, config)
}
