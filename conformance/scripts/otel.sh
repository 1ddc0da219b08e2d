#!/usr/bin/env bash
# The extension's OpenTelemetry traces, decoded by an OTLP/HTTP receiver built from the official
# protobuf definitions (conformance/otel): both protocols, W3C trace context, sampling,
# Failure and unknown-path spans, the flush at shutdown. No collector binary needed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --quiet -p capi-ext-cli -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
certs=$(mktemp -d)
trap 'rm -rf "$certs"' EXIT
"$target_dir/debug/capi-ext" certs --out "$certs" >/dev/null 2>&1
echo "======== OpenTelemetry traces through an OTLP receiver of the official definitions" >&2
(cd conformance/otel && GOFLAGS=-mod=mod go run . -extension "$target_dir/debug/capi-ext-conformance" -cert-dir "$certs")
