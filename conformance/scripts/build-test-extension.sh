#!/usr/bin/env bash
# Builds CAPI's own test extension (module sigs.k8s.io/cluster-api/test, extension/), the Go
# peer of examples/capi-test-extension, at the release the port targets (versions.env's
# CAPI_VERSION), into the e2e's binary cache, and prints its path. A warm cache makes this a
# no-op.
#
# The test module points at the root and api modules with relative replaces, which a
# dependency's go.mod cannot carry: the wrapper module pins both to the same release.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
source "$here/versions.env"
v=$CAPI_VERSION
cache=${CAPI_EXT_CACHE:-$HOME/.cache/capi-ext}/e2e
out=$cache/bin/capi-test-extension-$v
if [ ! -x "$out" ]; then
  echo "[build-test-extension] building CAPI's test extension $v" >&2
  export CGO_ENABLED=0 GOFLAGS=-mod=mod
  src=$cache/src/capi-test-extension-$v
  mkdir -p "$src" "$cache/bin"
  cd "$src"
  [ -f go.mod ] || go mod init capi-ext.local/capi-test-extension-build >/dev/null 2>&1
  go mod edit -go=1.26.0 \
    -require="sigs.k8s.io/cluster-api@$v" -replace="sigs.k8s.io/cluster-api=sigs.k8s.io/cluster-api@$v" \
    -require="sigs.k8s.io/cluster-api/api@$v" -replace="sigs.k8s.io/cluster-api/api=sigs.k8s.io/cluster-api/api@$v"
  go get -tool "sigs.k8s.io/cluster-api/test/extension@$v" >&2
  go build -trimpath -ldflags "-s -w" -o "$out.tmp" sigs.k8s.io/cluster-api/test/extension
  mv "$out.tmp" "$out"
fi
echo "$out"
