#!/usr/bin/env bash
# render's API-server rules (pruning, defaulting, validation, CEL) against the real
# kube-apiserver of the newest CAPI_MATRIX entry: objects generated from real CRDs (Cluster
# API's core, KubeadmControlPlane and Kubeadm bootstrap CRDs, the Dev and Docker kinds of its
# test module, and the providers of API_RULES_PROVIDERS), valid and mutated, created with a
# server-side dry run and given to render's rules; each object must be stored the same (same
# pruned fields) or refused the same (same causes). API_RULES_CASES per seed (default 5000):
# the fixed API_RULES_SEED (default 1) and a new API_RULES_RANDOM_SEED each run, both printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=../versions.env
source conformance/versions.env
cargo build --quiet -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
module_dir() { go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'; }

binaries=$(./conformance/scripts/build-binaries.sh) || { echo "apirules: building the binaries failed (see above)" >&2; exit 1; }
eval "$binaries"
crds="$CAPI_ASSETS/crds,$CAPI_ASSETS/kcp-crds,$(module_dir "sigs.k8s.io/cluster-api/test@$CAPI_VERSION")/infrastructure/docker/config/crd/bases"
for provider in $API_RULES_PROVIDERS; do
  crds="$crds,$(module_dir "${provider%%:*}")/${provider#*:}"
done
# One CRD of our own, whose CEL rules fail at run time (division, modulus, overflow).
crds="$crds,$root/conformance/e2e/testdata/cel-runtime-errors.yaml"
failures=$(mktemp -d)
random_seed=${API_RULES_RANDOM_SEED:-$(( $(date +%s%N) % 1000000000 + 2 ))}
echo "======== API-server rules: render against kube-apiserver $KUBERNETES_VERSION (seeds ${API_RULES_SEED:-1} and $random_seed)" >&2
status=0
(
  cd conformance/e2e
  go run . -etcd "$ETCD" -kube-apiserver "$KUBE_APISERVER" -conformance "$target_dir/debug/capi-ext-conformance" \
    -api-rules-crds "$crds" -api-rules-cases "${API_RULES_CASES:-5000}" -api-rules-seed "${API_RULES_SEED:-1}" \
    -api-rules-random-seed "$random_seed" -api-rules-failures "$failures" "$@"
) || status=$?
if [ $status -ne 0 ]; then
  echo "the differing objects are in $failures" >&2
  exit $status
fi
rm -rf "$failures"
