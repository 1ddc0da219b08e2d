package devenv

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The releases here are the conformance suite's matrix (conformance/versions.env), which the
// e2e proves: a release added there and not here (or the reverse) fails.
func TestReleasesAreTheConformanceMatrix(t *testing.T) {
	env, err := os.ReadFile("../../conformance/versions.env")
	if err != nil {
		t.Skipf("outside the repository: %v", err)
	}
	matrix := regexp.MustCompile(`(?m)^CAPI_MATRIX="([^"]*)"`).FindSubmatch(env)
	etcd := regexp.MustCompile(`(?m)^ETCD_VERSION=(\S+)`).FindSubmatch(env)
	if matrix == nil || etcd == nil {
		t.Fatal("versions.env has no CAPI_MATRIX or ETCD_VERSION")
	}
	var ours []string
	for _, r := range Releases {
		ours = append(ours, r.CAPI+":"+r.Kubernetes+":"+r.Staging)
	}
	if got := strings.Join(ours, " "); got != string(matrix[1]) {
		t.Errorf("Releases are %q, versions.env's CAPI_MATRIX is %q", got, matrix[1])
	}
	if EtcdVersion != string(etcd[1]) {
		t.Errorf("EtcdVersion is %s, versions.env's ETCD_VERSION is %s", EtcdVersion, etcd[1])
	}
}

func TestAMinorNamesItsRelease(t *testing.T) {
	for in, want := range map[string]string{"1.14": "v1.14.2", "v1.13": "v1.13.6", "v1.12.5": "v1.12.5"} {
		r, err := FindRelease(in)
		if err != nil || r.CAPI != want {
			t.Errorf("FindRelease(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
	if _, err := FindRelease("1.9"); err == nil || !strings.Contains(err.Error(), "v1.14.2, v1.13.6, v1.12.5") {
		t.Errorf("FindRelease(1.9) = %v; want an error naming the releases", err)
	}
}
