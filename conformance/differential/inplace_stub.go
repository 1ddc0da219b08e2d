//go:build !capiext_inplace

package main

// runInPlacePeer is left out of the releases before v1.14, whose reconcilers the in-place
// shims do not reach (see inplace.go); the peer run there is the topologies alone.
func runInPlacePeer(_, _ options, _ []int64, _, _ int) bool {
	return true
}
