#!/usr/bin/env bash
# CAPI's Go types judge capi-ext's hook types and the template types of capi-ext-types: random CAPI objects through the Rust types and
# back (ROUNDTRIP_CASES per hook, part and seed: the fixed ROUNDTRIP_SEED, default 1, and a
# new ROUNDTRIP_RANDOM_SEED each run, both printed), the fixtures through CAPI's types, and the
# example's Discovery/DiscoverVariables through CAPI's rules. Runs for every Cluster API release
# of versions.env (CAPI_MATRIX), or those named in E2E_VERSIONS: the newest with the module in
# conformance/roundtrip, older ones with the same program built against that release's types
# (a module of its own in the cache; -tags capi_pre114 where the catalog lives in exp/runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=../versions.env
source conformance/versions.env
cargo build --quiet -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
rust="$target_dir/debug/capi-ext-conformance"
# capi-ext-types is what `capi-ext generate types` writes from this release's CRDs (the types
# the round trip below checks against CAPI's Go types).
fresh=$(mktemp -d)
./scripts/update-types.sh "$fresh" >/dev/null
for f in src/kubeadm/v1beta2.rs src/kubeadm/v1beta1.rs src/docker/v1beta2.rs src/CAPI_VERSION; do
  if ! diff -u "types/$f" "$fresh/$f" >&2; then
    echo "types/$f differs from what scripts/update-types.sh writes now: run it and commit the result" >&2
    rm -rf "$fresh"
    exit 1
  fi
done
rm -rf "$fresh"
echo "capi-ext-types: up to date with capi-ext generate types" >&2
cache=${CAPI_EXT_CACHE:-$HOME/.cache/capi-ext}/roundtrip
random_seed=${ROUNDTRIP_RANDOM_SEED:-$(date +%s%N)}
dump=$(mktemp -d)
trap 'rm -rf "$dump"' EXIT
# The release conformance/roundtrip/go.mod pins runs from the repository's module; the others from
# a copy that requires their version.
pinned=$(sed -n 's|^[[:space:]]*sigs.k8s.io/cluster-api/api \(v[^[:space:]]*\)$|\1|p' conformance/roundtrip/go.mod)
for entry in $CAPI_MATRIX; do
  IFS=: read -r capi _ staging <<<"$entry"
  if [ -n "${E2E_VERSIONS:-}" ] && [[ " $E2E_VERSIONS " != *" $capi "* ]]; then continue; fi
  echo "======== round trip through Cluster API $capi's types" >&2
  args=(-rust "$rust" -n "${ROUNDTRIP_CASES:-1000}" -seed "${ROUNDTRIP_SEED:-1}" -random-seed "$random_seed" -dump "$dump")
  # The e2e's replay: what the managers of this release sent (ROUNDTRIP_RECORDED, one folder per extension).
  [ -n "${ROUNDTRIP_RECORDED:-}" ] && args+=(-recorded "$ROUNDTRIP_RECORDED" -recorded-hooks "${ROUNDTRIP_RECORDED_HOOKS:-1}")
  # The fixtures are shaped as the newest release sends them: not checked against older types.
  fixtures=""
  [ "$capi" = "$CAPI_VERSION" ] && fixtures="$root/cli/fixtures/hooks"
  if [ "$capi" = "$pinned" ]; then
    (cd conformance/roundtrip && go run . "${args[@]}" -fixtures "$fixtures")
    continue
  fi
  minor=$(echo "$capi" | cut -d. -f2)
  tags=()
  [ "$minor" -lt 14 ] && tags=(-tags capi_pre114)
  module="$cache/capi-$capi"
  mkdir -p "$module"
  # The program's files as they are now (a file removed here must not linger in the copy).
  rm -f "$module"/*.go
  cp conformance/roundtrip/*.go "$module/"
  if [ ! -f "$module/go.mod" ]; then
    # Not `go mod tidy`: it reads every build tag and would pull in both catalogs; -mod=mod adds
    # what the tagged build needs.
    cat >"$module/go.mod" <<MOD
module capi-ext.local/conformance/roundtrip
go 1.26.0
require (
	sigs.k8s.io/cluster-api $capi
	k8s.io/apimachinery $staging
	k8s.io/apiextensions-apiserver $staging
)
MOD
  fi
  (cd "$module" && GOFLAGS=-mod=mod go run "${tags[@]}" . "${args[@]}" -fixtures "$fixtures")
done
