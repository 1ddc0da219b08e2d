#!/usr/bin/env bash
# render's Go-template engine against Go's text/template and sprig, as Cluster API executes
# ClusterClass inline patches (conformance/gotemplate): generated templates for every function
# and random compositions of the language, plus the inline patch templates of the ClusterClasses
# CAPI's own test module ships. Two seeds per run: the fixed TEMPLATE_SEED (default 1) and a new
# TEMPLATE_RANDOM_SEED (set it to replay); TEMPLATE_CASES per seed (default 50000).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source conformance/versions.env
cargo build --quiet -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

# The oracle must run the sprig, semver and cast that Cluster API's build selects.
capi_mod=$(go mod download -json "sigs.k8s.io/cluster-api@$CAPI_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
for module in github.com/Masterminds/sprig/v3 github.com/Masterminds/semver/v3 github.com/spf13/cast; do
  capi=$(awk -v m="$module" '$1 == m {print $2}' "$capi_mod")
  ours=$(awk -v m="$module" '$1 == m {print $2}' conformance/gotemplate/go.mod)
  if [ "$capi" != "$ours" ]; then
    echo "conformance/gotemplate/go.mod has $module $ours; Cluster API $CAPI_VERSION builds with $capi: update it (and render's port)" >&2
    exit 1
  fi
done
# The go directive decides Go's GODEBUG defaults (net/url's strict colons from 1.26): the
# oracle's must be the manager's.
capi_go=$(awk '$1 == "go" {print $2}' "$capi_mod")
ours_go=$(awk '$1 == "go" {print $2}' conformance/gotemplate/go.mod)
if [ "$capi_go" != "$ours_go" ]; then
  echo "conformance/gotemplate/go.mod says go $ours_go; Cluster API $CAPI_VERSION says go $capi_go (it decides GODEBUG defaults): update it" >&2
  exit 1
fi

test_dir=$(go mod download -json "sigs.k8s.io/cluster-api/test@$CAPI_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
classes=$(ls "$test_dir"/infrastructure/docker/templates/clusterclass-*.yaml "$test_dir"/e2e/data/infrastructure-docker/main/clusterclass-*.yaml | paste -sd, -)

failures=$(mktemp -d)
random_seed=${TEMPLATE_RANDOM_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "======== Go templates: render against text/template + sprig (seeds ${TEMPLATE_SEED:-1} and $random_seed)" >&2
(cd conformance/gotemplate && GOFLAGS=-mod=mod go build -o "$failures/gotemplate" .)
status=0
for seed in "${TEMPLATE_SEED:-1}" "$random_seed"; do
  # Cluster API's image sets no TZ and has no /etc/localtime: its time.Local is UTC without zones.
  TZ= "$failures/gotemplate" -render "$target_dir/debug/capi-ext-conformance" -seed "$seed" \
    -cases "${TEMPLATE_CASES:-50000}" -classes "$classes" -failures "$failures/seed-$seed" || status=1
done
if [ $status -ne 0 ]; then
  echo "the differing cases are in $failures" >&2
  exit 1
fi
rm -rf "$failures"
