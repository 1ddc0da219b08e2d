#!/usr/bin/env bash
# The real Cluster API core manager, with kube-apiserver and etcd, calls the capi-ext example
# extension over TLS; see conformance/README.md for the scenarios and what proves each one.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
started=$(date +%s)
# Not `eval "$(...)"`: that would swallow a failed build and go on with empty paths.
binaries=$(./conformance/scripts/build-binaries.sh) || { echo "e2e: building the binaries failed (see above)" >&2; exit 1; }
eval "$binaries"
echo "binaries ready in $(( $(date +%s) - started ))s" >&2
cargo build --quiet -p capi-ext-example-quickstart -p capi-ext-cli -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cd conformance/e2e
go run . -etcd "$ETCD" -kube-apiserver "$KUBE_APISERVER" -capi-manager "$CAPI_MANAGER" -capi-assets "$CAPI_ASSETS" \
  -extension "$target_dir/debug/quickstart" -capi-ext "$target_dir/debug/capi-ext" \
  -conformance "$target_dir/debug/capi-ext-conformance" "$@"
