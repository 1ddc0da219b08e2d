#!/usr/bin/env bash
# CAPI's Go types judge capi-ext's hook types: random CAPI objects through the Rust types and
# back (ROUNDTRIP_CASES per hook and part, ROUNDTRIP_SEED), the fixtures through CAPI's types,
# and the example's Discovery/DiscoverVariables through CAPI's rules.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --quiet -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
dump=$(mktemp -d)
cd conformance/roundtrip
go run . -rust "$target_dir/debug/capi-ext-conformance" -fixtures "$root/testdata/hooks" \
  -n "${ROUNDTRIP_CASES:-1000}" -seed "${ROUNDTRIP_SEED:-$(date +%s)}" -dump "$dump"
rm -rf "$dump"
