package client

// Added by capi-ext's differential test to a copy of this module (never part of Cluster API).

import (
	"context"

	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
)

// CapiExtNew builds the runtime client as the manager does, the same way for every release
// (before v1.14, New takes no context).
func CapiExtNew(_ context.Context, options Options) (runtimeclient.Client, error) {
	c, _, err := New(options)
	return c, err
}
