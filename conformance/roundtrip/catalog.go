//go:build !capi_pre114

package main

// From Cluster API v1.14 the runtime catalog lives in the api module.
import runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"

type (
	catalog          = runtimecatalog.Catalog
	groupVersionHook = runtimecatalog.GroupVersionHook
	hook             = runtimecatalog.Hook
)

var newCatalog = runtimecatalog.New

// knownHooks is the number of hooks in CAPI's catalog.
func knownHooks(c *catalog) int { return len(c.AllKnownHooks()) }
