#!/usr/bin/env bash
# The whole journey on this machine: scaffold an extension with `capi-ext init` into a temporary
# folder, build it against this checkout, generate development certificates, start it on
# 127.0.0.1 over TLS, call its Discovery, BeforeClusterCreate and GeneratePatches handlers the
# way Cluster API does (POST, no Content-Type, ?timeout=, HTTP/2), print the answers, stop it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

cargo build --quiet -p capi-ext-cli
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cli="$target_dir/debug/capi-ext"
work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== capi-ext init" >&2
"$cli" init "$work/demo-ext" --name demo-ext --hooks BeforeClusterCreate,GeneratePatches,ValidateTopology \
  --capi-ext-path "$root/runtime"
echo "== cargo build (the scaffolded project)" >&2
(cd "$work/demo-ext" && CARGO_TARGET_DIR="$target_dir/golden" cargo build --quiet)
echo "== capi-ext certs" >&2
"$cli" certs --out "$work/certs"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port); probes=$(free_port)
"$target_dir/golden/debug/demo-ext" --webhook-host 127.0.0.1 --webhook-port "$port" --webhook-cert-dir "$work/certs" \
  --metrics-bind-address 0 --health-probe-bind-address "127.0.0.1:$probes" 2>"$work/extension.log" &
pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$probes/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$probes/readyz" >/dev/null || { cat "$work/extension.log"; exit 1; }

base="https://127.0.0.1:$port/hooks.runtime.cluster.x-k8s.io/v1alpha1"
call() { # path body
  curl -sS --fail-with-body --http2 --cacert "$work/certs/ca.crt" -X POST -H 'Content-Type:' "$base/$1" --data-binary "$2"
}
echo "== Discovery" >&2
call discovery '{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}' | python3 -m json.tool
echo "== BeforeClusterCreate (before-cluster-create)" >&2
call 'beforeclustercreate/before-cluster-create?timeout=10s' @cli/fixtures/hooks/beforeclustercreate/request.json | python3 -m json.tool
echo "== GeneratePatches (generate-patches): the patch is base64 on the wire" >&2
call 'generatepatches/generate-patches?timeout=10s' @cli/fixtures/hooks/generatepatches/request.json | python3 -m json.tool
echo "== Extension log" >&2
cat "$work/extension.log" >&2
