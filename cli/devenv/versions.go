package devenv

import (
	"fmt"
	"strings"
)

// Release is a Cluster API release and the Kubernetes it runs with: the kube-apiserver of the
// Kubernetes minor of its client libraries, built from k8s.io/kubernetes and its staging modules.
type Release struct {
	CAPI, Kubernetes, Staging string
}

// EtcdVersion is the etcd every release runs with.
const EtcdVersion = "v3.6.16"

// Releases are the Cluster API releases capi-ext proves, newest first: the CAPI_MATRIX of the
// conformance suite's versions.env (a test of this package keeps the two equal).
var Releases = []Release{
	{CAPI: "v1.14.2", Kubernetes: "v1.36.3", Staging: "v0.36.3"},
	{CAPI: "v1.13.6", Kubernetes: "v1.35.4", Staging: "v0.35.4"},
	{CAPI: "v1.12.5", Kubernetes: "v1.34.3", Staging: "v0.34.3"},
}

// FindRelease is the release of a version: a release (v1.14.2) or a minor (1.14, v1.14), which
// names the newest release of that minor capi-ext proves.
func FindRelease(version string) (Release, error) {
	v := strings.TrimPrefix(version, "v")
	for _, r := range Releases {
		c := strings.TrimPrefix(r.CAPI, "v")
		if c == v || strings.HasPrefix(c, v+".") {
			return r, nil
		}
	}
	var known []string
	for _, r := range Releases {
		known = append(known, r.CAPI)
	}
	return Release{}, fmt.Errorf("Cluster API %s is not a release capi-ext dev runs; it runs %s (a release, or its minor such as 1.14)", version, strings.Join(known, ", "))
}

// Minor is the release's minor version: v1.14.2 → 14.
func (r Release) Minor() int {
	var major, minor, patch int
	_, _ = fmt.Sscanf(r.CAPI, "v%d.%d.%d", &major, &minor, &patch)
	return minor
}
