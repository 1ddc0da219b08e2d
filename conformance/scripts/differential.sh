#!/usr/bin/env bash
# The differential test of `capi-ext render`: Cluster API's own code (ClusterClass reconciler,
# Cluster webhook, topology reconciler, desired-state generator and patch engine, runtime
# client) and `capi-ext render` compute the objects of generated topologies; any difference
# fails with the case, the object and the field path. No API server.
#
# The program is built inside a copy of the Cluster API module of versions.env's CAPI_VERSION
# (cached), since what it calls is internal to that module; conformance/differential/capi holds
# the two files it adds there to reach the reconcilers' steps.
# DIFFERENTIAL_CASES topologies per seed (default 200): the fixed DIFFERENTIAL_SEED (default 1)
# and a new DIFFERENTIAL_RANDOM_SEED each run, both printed. Then the ClusterClasses of CAPI's
# test module whose patches are inline (quick-start, in-memory), with its cluster templates and
# their real CRDs (KubeadmControlPlane, KubeadmConfig, Dev and Docker kinds).
#
# Then the port of CAPI's test extension against the Go original (built from the Go module
# proxy): CAPI's code computes the topologies of CAPI's runtimesdk ClusterClasses once calling
# each, and the objects must be the same (see conformance/differential/peer.go).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=../versions.env
source conformance/versions.env
cargo build --quiet -p capi-ext-cli -p capi-ext-conformance -p capi-ext-example-capi-test-extension
go_test_extension=$(./conformance/scripts/build-test-extension.sh)
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cache=${CAPI_EXT_CACHE:-$HOME/.cache/capi-ext}/differential
export CGO_ENABLED=0 GOFLAGS=-mod=mod
module_dir() { go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'; }

# build_program VERSION: the program, built inside a copy of that release's Cluster API module
# with the files of conformance/differential/capi (v1.14 on) or capi-v1.12 (v1.12 and v1.13,
# where the reconcilers and webhooks are internal and the hook catalog is under exp/) added, the
# program's imports moved to match; prints its path.
build_program() {
  local version=$1 module="$cache/capi-$1" shims=conformance/differential/capi
  if [ ! -f "$module/.capi-ext-ready" ]; then
    echo "[differential] copying the Cluster API $version module" >&2
    local src
    src=$(module_dir "sigs.k8s.io/cluster-api@$version") || return 1
    rm -rf "$module" "$module.tmp"
    mkdir -p "$cache"
    cp -r "$src" "$module.tmp"
    chmod -R u+w "$module.tmp"
    # From v1.14 the api module sits next to the root module in the repository, not in the
    # root's zip (before, api/ is a folder of the root module).
    if grep -q "sigs.k8s.io/cluster-api/api " "$module.tmp/go.mod"; then
      local api
      api=$(module_dir "sigs.k8s.io/cluster-api/api@$version") || return 1
      (cd "$module.tmp" && go mod edit -replace="sigs.k8s.io/cluster-api/api=$api")
    fi
    touch "$module.tmp/.capi-ext-ready"
    mv "$module.tmp" "$module"
  fi
  [ -d "$module/core/reconcilers" ] || shims=conformance/differential/capi-v1.12
  cp -r "$shims/." "$module/"
  mkdir -p "$module/capiextdifferential"
  rm -f "$module"/capiextdifferential/*.go
  cp conformance/differential/*.go "$module/capiextdifferential/"
  if [ "$shims" = conformance/differential/capi-v1.12 ]; then
    # The webhooks' shim is the same code in the package the webhooks have there.
    sed 's/^package admission$/package webhooks/' conformance/differential/capi/core/webhooks/admission/zz_capiext_differential.go \
      >"$module/internal/webhooks/zz_capiext_differential.go"
    sed -i -e 's#sigs.k8s.io/cluster-api/core/reconcilers/#sigs.k8s.io/cluster-api/internal/controllers/#' \
      -e 's#sigs.k8s.io/cluster-api/core/webhooks/admission"#sigs.k8s.io/cluster-api/internal/webhooks"#' \
      -e 's#sigs.k8s.io/cluster-api/api/runtime/catalog"#sigs.k8s.io/cluster-api/exp/runtime/catalog"#' \
      "$module"/capiextdifferential/*.go
  fi
  local program="$cache/differential-$version"
  # The in-place handlers' comparison reaches reconcilers the v1.12 shims do not (inplace.go).
  local tags=""
  [ "$shims" = conformance/differential/capi-v1.12 ] || tags=capiext_inplace
  (cd "$module" && go build -trimpath -tags "$tags" -o "$program" ./capiextdifferential) || return 1
  echo "$program"
}
program=$(build_program "$CAPI_VERSION") || exit 1
module="$cache/capi-$CAPI_VERSION"
(cd "$module" && go test -trimpath -vet=off -count=1 ./capiextdifferential >&2) || { echo "[differential] the comparison's own tests failed (see above)" >&2; exit 1; }
# The older releases of CAPI_MATRIX: generated topologies (DIFFERENTIAL_OLDER_CASES per seed,
# default 100), render playing that release's engine. Not CAPI's own ClusterClasses: the module
# proxy serves no test module of those exact releases.
older=()
for entry in ${CAPI_MATRIX#* }; do [ "$entry" = "$CAPI_MATRIX" ] || older+=("${entry%%:*}"); done

work=$(mktemp -d)
pids=()
finish() {
  status=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  if [ $status -eq 0 ]; then rm -rf "$work"; else echo "[differential] cases and the extensions' logs kept in $work" >&2; fi
  exit $status
}
trap finish EXIT
"$target_dir/debug/capi-ext" certs --out "$work/certs" >/dev/null 2>&1
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# serve NAME PORT COMMAND...: starts an extension and waits for its Discovery to answer.
serve() {
  local name=$1 port=$2; shift 2
  "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do
    curl -sf --cacert "$work/certs/ca.crt" -X POST -H 'Content-Type: application/json' -d '{}' \
      "https://127.0.0.1:$port/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery" >/dev/null && return
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "[differential] $name did not answer Discovery on port $port" >&2; exit 1
}
port=$(free_port)
serve extension "$port" "$target_dir/debug/capi-ext-conformance" differential-extension --webhook-host 127.0.0.1 \
  --webhook-port "$port" --webhook-cert-dir "$work/certs" --metrics-bind-address 0 \
  --health-probe-bind-address 0
random_seed=${DIFFERENTIAL_RANDOM_SEED:-$(( $(date +%s%N) % 1000000000 + 2 ))}
echo "======== capi-ext render against Cluster API $CAPI_VERSION's desired-state generator (seeds ${DIFFERENTIAL_SEED:-1} and $random_seed)" >&2
"$program" -capi-ext "$target_dir/debug/capi-ext" -url "https://127.0.0.1:$port" -ca "$work/certs/ca.crt" \
  -work "$work/cases" -capi-version "$CAPI_VERSION" -n "${DIFFERENTIAL_CASES:-200}" \
  -seed "${DIFFERENTIAL_SEED:-1}" -random-seed "$random_seed" \
  -capi-module "$(module_dir "sigs.k8s.io/cluster-api@$CAPI_VERSION")" \
  -test-module "$(module_dir "sigs.k8s.io/cluster-api/test@$CAPI_VERSION")" "$@"
for version in "${older[@]}"; do
  older_program=$(build_program "$version") || exit 1
  echo "======== capi-ext render --capi-version ${version%.*} against Cluster API $version's desired-state generator (seeds ${DIFFERENTIAL_SEED:-1} and $random_seed)" >&2
  "$older_program" -capi-ext "$target_dir/debug/capi-ext" -url "https://127.0.0.1:$port" -ca "$work/certs/ca.crt" \
    -work "$work/cases-$version" -capi-version "$version" -n "${DIFFERENTIAL_OLDER_CASES:-100}" \
    -seed "${DIFFERENTIAL_SEED:-1}" -random-seed "$random_seed" "$@"
done

# The port of CAPI's test extension and the Go original, both with no management cluster (their
# topology handlers do not use it; Go's manager needs a kubeconfig to start, never reached).
test_ext_port=$(free_port) go_port=$(free_port)
serve capi-test-extension "$test_ext_port" "$target_dir/debug/capi-test-extension" --webhook-host 127.0.0.1 \
  --webhook-port "$test_ext_port" --webhook-cert-dir "$work/certs" --metrics-bind-address 0 --health-probe-bind-address 0
printf '%s\n' 'apiVersion: v1' 'kind: Config' \
  'clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]' 'users: [{name: none, user: {token: none}}]' \
  'contexts: [{name: none, context: {cluster: none, user: none}}]' 'current-context: none' >"$work/unreachable.kubeconfig"
serve capi-test-extension-go "$go_port" env KUBECONFIG="$work/unreachable.kubeconfig" "$go_test_extension" \
  --webhook-port "$go_port" --webhook-cert-dir "$work/certs" --health-addr "127.0.0.1:$(free_port)" \
  --diagnostics-address "127.0.0.1:$(free_port)" --insecure-diagnostics
echo "======== CAPI's test extension: the port against Go's under Cluster API $CAPI_VERSION's code" >&2
"$program" -capi-ext "$target_dir/debug/capi-ext" -url "https://127.0.0.1:$test_ext_port" -ca "$work/certs/ca.crt" \
  -work "$work/peer-cases" -capi-version "$CAPI_VERSION" \
  -test-extension-url "https://127.0.0.1:$test_ext_port" -go-test-extension-url "https://127.0.0.1:$go_port" \
  -seed "${DIFFERENTIAL_SEED:-1}" -random-seed "$random_seed" -inplace-n "${DIFFERENTIAL_INPLACE_CASES:-200}" \
  -capi-module "$(module_dir "sigs.k8s.io/cluster-api@$CAPI_VERSION")" \
  -test-module "$(module_dir "sigs.k8s.io/cluster-api/test@$CAPI_VERSION")"
