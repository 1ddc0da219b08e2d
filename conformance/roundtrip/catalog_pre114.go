//go:build capi_pre114

package main

// Before Cluster API v1.14 the runtime catalog lives in exp/runtime (built with -tags capi_pre114
// by scripts/roundtrip.sh for those releases).
import runtimecatalog "sigs.k8s.io/cluster-api/exp/runtime/catalog"

type (
	catalog          = runtimecatalog.Catalog
	groupVersionHook = runtimecatalog.GroupVersionHook
	hook             = runtimecatalog.Hook
)

var newCatalog = runtimecatalog.New

// knownHooks is the number of allHooks in CAPI's catalog (it cannot list its hooks before
// v1.14), so a hook missing there fails the count.
func knownHooks(c *catalog) int {
	n := 0
	for _, h := range allHooks {
		if gvh, err := c.GroupVersionHook(h); err == nil && c.IsHookRegistered(gvh) {
			n++
		}
	}
	return n
}
