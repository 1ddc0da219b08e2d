#!/usr/bin/env bash
# Builds etcd, kube-apiserver, the Cluster API core manager, kustomize, helm, clusterctl and CAPI's
# test extension from the Go module proxy, each in a wrapper module of its own, into a cache
# outside the repository keyed by version:
#   $CAPI_EXT_CACHE/e2e/bin/{etcd,kube-apiserver,capi-manager,kcp-manager,kustomize,helm,clusterctl,capi-test-extension}-<version>
#   $CAPI_EXT_CACHE/e2e/assets/capi-<version>/{crds/*.yaml,webhooks.yaml,kcp-crds/*.yaml,kcp-webhooks.yaml}
#   $CAPI_EXT_CACHE/e2e/assets/cert-manager-<version>/*.yaml (cert-manager's CRDs)
# A warm cache makes this a no-op. Prints the paths it produced.
# Usage: build-binaries.sh [<CAPI version>:<kube-apiserver version>:<staging version>]
# (default: the newest entry of versions.env).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
source "$here/versions.env"
if [ $# -gt 0 ]; then
  IFS=: read -r CAPI_VERSION KUBERNETES_VERSION KUBERNETES_STAGING_VERSION <<<"$1"
fi
CACHE=${CAPI_EXT_CACHE:-$HOME/.cache/capi-ext}/e2e
BIN=$CACHE/bin; SRC=$CACHE/src
mkdir -p "$BIN" "$SRC"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { echo "[build-binaries] $*" >&2; }

wrapper() { # dir module
  mkdir -p "$1"; cd "$1"
  [ -f go.mod ] || go mod init "$2" >/dev/null 2>&1
  go mod edit -go=1.26.0
}

# A command built from one Go package of the proxy, in a wrapper module of its own:
# build_tool NAME VERSION PACKAGE [EXTRA LDFLAGS]
build_tool() {
  local name=$1 version=$2 pkg=$3 ldflags="-s -w ${4:-}" out=$BIN/$1-$2
  [ -x "$out" ] && return
  log "building $name $version"
  wrapper "$SRC/$name-$version" "capi-ext.local/$name-build"
  go get -tool "$pkg@$version" >&2
  go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg"
  mv "$out.tmp" "$out"
}

build_clusterctl() {
  local out=$BIN/clusterctl-$CLUSTERCTL_VERSION minor
  [ -x "$out" ] && return
  log "building clusterctl $CLUSTERCTL_VERSION"
  minor=$(echo "$CLUSTERCTL_VERSION" | cut -d. -f2)
  wrapper "$SRC/clusterctl-$CLUSTERCTL_VERSION" capi-ext.local/clusterctl-build
  # The API types are a module of their own (v1.14+), as for the manager.
  go mod edit -require="sigs.k8s.io/cluster-api/api@$CLUSTERCTL_VERSION" \
    -replace="sigs.k8s.io/cluster-api/api=sigs.k8s.io/cluster-api/api@$CLUSTERCTL_VERSION"
  go get -tool "sigs.k8s.io/cluster-api/cmd/clusterctl@$CLUSTERCTL_VERSION" >&2
  go build -trimpath -o "$out.tmp" \
    -ldflags "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$CLUSTERCTL_VERSION -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=$minor" \
    sigs.k8s.io/cluster-api/cmd/clusterctl
  mv "$out.tmp" "$out"
}

# Files of a Go module's release (CRDs), copied out of the module cache into $1 once.
module_files() {
  local out=$1 module=$2 dir f; shift 2
  [ -d "$out" ] && return
  log "fetching $(basename "$out") from $module"
  dir=$(go mod download -json "$module" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  mkdir -p "$out.tmp"
  # shellcheck disable=SC2086 # each pattern is a glob in the module
  for f in "$@"; do cp "$dir"/$f "$out.tmp/"; done
  rm -rf "$out"; mv "$out.tmp" "$out"
}

# etcd, kube-apiserver and the managers, with CAPI's CRDs and webhooks: built by the Go builder
# `capi-ext dev` runs (cli/devenv/build.go), into the same cache, so both share it.
control_plane=$(cd "$here/../cli/devenv" && go run ./cmd/capi-ext-dev -build-only -capi-version "$CAPI_VERSION" -cache "${CAPI_EXT_CACHE:-$HOME/.cache/capi-ext}") \
  || { log "building the control plane of Cluster API $CAPI_VERSION failed (see above)"; exit 1; }
(build_tool kustomize "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5)
(build_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION")
(build_clusterctl)
GO_TEST_EXTENSION=$("$here/scripts/build-test-extension.sh")
(module_files "$CACHE/assets/cert-manager-$CERT_MANAGER_VERSION" "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION" 'deploy/crds/*.yaml')
(module_files "$CACHE/assets/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION" "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
  example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml)
echo "$control_plane"
echo "KUSTOMIZE=$BIN/kustomize-$KUSTOMIZE_VERSION"
echo "HELM=$BIN/helm-$HELM_VERSION"
echo "CLUSTERCTL=$BIN/clusterctl-$CLUSTERCTL_VERSION"
echo "GO_TEST_EXTENSION=$GO_TEST_EXTENSION"
echo "CERT_MANAGER_CRDS=$CACHE/assets/cert-manager-$CERT_MANAGER_VERSION"
echo "PROMETHEUS_OPERATOR_CRDS=$CACHE/assets/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION"
