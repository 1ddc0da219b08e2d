#!/usr/bin/env bash
# The main job, end to end on this machine: build the example extension and the capi-ext CLI,
# generate development certificates, start the extension on 127.0.0.1 over TLS, call its
# Discovery and its BeforeClusterCreate handler the way Cluster API does (POST, no
# Content-Type, ?timeout=, HTTP/2), print the answers, and stop it.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet -p capi-ext-example-quickstart -p capi-ext-cli
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port); probes=$(free_port)

"$target_dir/debug/capi-ext" certs --out "$work/certs"
"$target_dir/debug/quickstart" --webhook-host 127.0.0.1 --webhook-port "$port" --webhook-cert-dir "$work/certs" \
  --metrics-bind-address 0 --health-probe-bind-address "127.0.0.1:$probes" 2>"$work/extension.log" &
pid=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$probes/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$probes/readyz" >/dev/null || { cat "$work/extension.log"; exit 1; }

base="https://127.0.0.1:$port/hooks.runtime.cluster.x-k8s.io/v1alpha1"
call() { # path body-file-or-json
  curl -sS --fail-with-body --http2 --cacert "$work/certs/ca.crt" -X POST -H 'Content-Type:' "$base/$1" --data-binary "$2"
}
echo "== Discovery" >&2
call discovery '{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}' | python3 -m json.tool
echo "== BeforeClusterCreate (hold-until-approved), Cluster team-a/prod-1 without approval" >&2
call 'beforeclustercreate/hold-until-approved?timeout=5s' @testdata/hooks/beforeclustercreate/request.json | python3 -m json.tool
echo "== Extension log" >&2
cat "$work/extension.log" >&2
