#!/usr/bin/env bash
# CAPI's Go types judge capi-ext's hook types: random CAPI objects through the Rust types and
# back (ROUNDTRIP_CASES per hook, part and seed: the fixed ROUNDTRIP_SEED, default 1, and a
# new ROUNDTRIP_RANDOM_SEED each run, both printed), the fixtures through CAPI's types,
# and the example's Discovery/DiscoverVariables through CAPI's rules.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --quiet -p capi-ext-conformance
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
dump=$(mktemp -d)
cd conformance/roundtrip
go run . -rust "$target_dir/debug/capi-ext-conformance" -fixtures "$root/testdata/hooks" \
  -n "${ROUNDTRIP_CASES:-1000}" -seed "${ROUNDTRIP_SEED:-1}" -random-seed "${ROUNDTRIP_RANDOM_SEED:-0}" -dump "$dump"
rm -rf "$dump"
