#!/usr/bin/env bash
# The real Cluster API core manager, with kube-apiserver and etcd, calls the capi-ext example
# extension, the lifecycle extension and the in-place extension over mTLS, and the port of CAPI's
# test extension beside the Go original; see conformance/README.md for the scenarios
# and what proves each one. Runs once per Cluster API release of versions.env (CAPI_MATRIX), or
# for the releases named in E2E_VERSIONS (e.g. E2E_VERSIONS=v1.14.2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=../versions.env
source conformance/versions.env
# The port of CAPI's test extension reads the kind mapper of CAPI_VERSION: its table must be that release's.
./scripts/update-kind-images.sh --check
cargo build --quiet -p capi-ext-example-quickstart -p capi-ext-example-capi-test-extension -p capi-ext-cli -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
# Reads the extension's metrics with Prometheus's own parser and linter (its own module: the
# Prometheus module would raise the Kubernetes libraries the e2e shares with Cluster API).
promcheck="$target_dir/promcheck"
(cd conformance/promcheck && go build -o "$promcheck" .) || { echo "e2e: building conformance/promcheck failed (see above)" >&2; exit 1; }
# The harness's own tests (no servers), in cli/devenv, whose processes, PKI and players it
# shares with `capi-ext dev`: its guards, such as refusing an extension that would not check
# CAPI's client certificate, and its releases being versions.env's.
(cd cli/devenv && go vet ./... && go test -count=1 ./...) || { echo "e2e: the harness's own tests failed (see above)" >&2; exit 1; }
(cd conformance/e2e && go vet .) || { echo "e2e: go vet of the harness failed (see above)" >&2; exit 1; }
# The hooks whose requests the scenarios must have recorded: all 17, on every release of the
# matrix (the count found is printed).
recorded_hooks() {
  echo 17
}
# CAPI's Docker provider's CRDs (the diff scenario's templates), of the test module of the newest
# release: a provider of its own, on the v1beta2 contract every release of the matrix reads.
docker_crds=$(go mod download -json "sigs.k8s.io/cluster-api/test@$CAPI_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')/infrastructure/docker/config/crd/bases
[ -d "$docker_crds" ] || { echo "e2e: no Docker CRDs at $docker_crds" >&2; exit 1; }
# The releases' harnesses run at once, each with its own control plane, extensions and ports: a
# harness mostly waits for the managers (its load stays near one core), so three together take
# little longer than the slowest alone. Their binaries are built first, one release at a time
# (a build takes every core).
harness="$target_dir/e2e-harness"
(cd conformance/e2e && go build -o "$harness" .) || { echo "e2e: building the harness failed (see above)" >&2; exit 1; }
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
releases=()
for entry in $CAPI_MATRIX; do
  capi=${entry%%:*}
  if [ -n "${E2E_VERSIONS:-}" ] && [[ " $E2E_VERSIONS " != *" $capi "* ]]; then continue; fi
  started=$(date +%s)
  # The paths it prints go to a file the release's harness sources: a failed build stops here,
  # never going on with empty paths.
  ./conformance/scripts/build-binaries.sh "$entry" > "$logs/$capi.binaries" || { echo "e2e: building the binaries for $entry failed (see above)" >&2; exit 1; }
  echo "Cluster API $capi: binaries ready in $(( $(date +%s) - started ))s" >&2
  releases+=("$capi")
done
[ ${#releases[@]} -gt 0 ] || { echo "e2e: no entry of CAPI_MATRIX matches E2E_VERSIONS=${E2E_VERSIONS:-}" >&2; exit 2; }
pids=()
for capi in "${releases[@]}"; do
  mkdir -p "$logs/$capi.requests"
  (
    # shellcheck disable=SC1090 # the paths build-binaries.sh printed for this release
    source "$logs/$capi.binaries"
    cd conformance/e2e
    started=$(date +%s)
    rc=0
    "$harness" -keep-requests "$logs/$capi.requests" -capi-version "$capi" -etcd "$ETCD" -kube-apiserver "$KUBE_APISERVER" -capi-manager "$CAPI_MANAGER" -kcp-manager "$KCP_MANAGER" -capi-assets "$CAPI_ASSETS" -docker-crds "$docker_crds" \
      -extension "$target_dir/debug/quickstart" -capi-ext "$target_dir/debug/capi-ext" \
      -conformance "$target_dir/debug/capi-ext-conformance" -capi-test-extension "$target_dir/debug/capi-test-extension" -go-capi-test-extension "$GO_TEST_EXTENSION" -kustomize "$KUSTOMIZE" -helm "$HELM" -clusterctl "$CLUSTERCTL" -cert-manager-crds "$CERT_MANAGER_CRDS" \
      -prometheus-operator-crds "$PROMETHEUS_OPERATOR_CRDS" -promcheck "$promcheck" "$@" > "$logs/$capi.log" 2>&1 || rc=$?
    echo "$rc $(( $(date +%s) - started ))" > "$logs/$capi.rc"
    echo "Cluster API $capi: the harness ended (exit $rc) after $(( $(date +%s) - started ))s" >&2
  ) &
  pids+=($!)
done
wait "${pids[@]}" || true
summary=()
failed=0
for capi in "${releases[@]}"; do
  echo "======== Cluster API $capi" >&2
  cat "$logs/$capi.log"
  read -r rc took < "$logs/$capi.rc" || { rc=1; took=?; }
  if [ "$rc" != 0 ]; then
    summary+=("$capi: FAILED after ${took}s")
    failed=1
    continue
  fi
  # Every request the managers sent to the extensions, replayed through CAPI's types of this
  # release and the Rust types (the round trip's checks), and how many hooks that covers.
  if ! E2E_VERSIONS=$capi ROUNDTRIP_CASES=0 ROUNDTRIP_RECORDED="$logs/$capi.requests" ROUNDTRIP_RECORDED_HOOKS=$(recorded_hooks "$capi") \
    ./conformance/scripts/roundtrip.sh; then
    echo "e2e: the managers' requests of Cluster API $capi did not survive the round trip (see above)" >&2
    summary+=("$capi: the harness passed in ${took}s; the round trip of its requests FAILED")
    failed=1
    continue
  fi
  summary+=("$capi: passed in ${took}s")
done
printf '%s\n' "${summary[@]}"
exit "$failed"
