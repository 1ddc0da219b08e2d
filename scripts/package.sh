#!/usr/bin/env bash
# The crates as crates.io would serve them. `cargo package` packs every publishable crate of the
# workspace (those without `publish = false`); every package must hold its README and LICENSE and
# name its dependencies by version only. Then each is built from its packed files alone, the
# crates that depend on each other taken from the packed ones in place of crates.io's (a
# `[patch.crates-io]` of the unpacked .crate files): `capi-ext-cli` is checked (`cargo check`:
# every file it includes is in its package), and a project scaffolded as a crates.io user gets
# it (`capi-ext init --capi-ext-version V`: `capi-ext = "V"`) builds and passes its tests. The
# builds share target/first-run with the first run, which builds the same project's
# dependencies.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { echo "== $*" >&2; }

metadata=$(cargo metadata --format-version 1 --no-deps)
target_dir=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' <<<"$metadata")
version=$(python3 -c 'import json,sys; print({p["name"]: p["version"] for p in json.load(sys.stdin)["packages"]}["capi-ext"])' <<<"$metadata")
# publish = false reads as an empty list of registries.
mapfile -t unpublished < <(python3 -c 'import json,sys; [print(p["name"]) for p in json.load(sys.stdin)["packages"] if p["publish"] == []]' <<<"$metadata")
mapfile -t published < <(python3 -c 'import json,sys; [print(p["name"]) for p in json.load(sys.stdin)["packages"] if p["publish"] != []]' <<<"$metadata")
excludes=()
for name in "${unpublished[@]}"; do excludes+=(--exclude "$name"); done

step "cargo package: ${published[*]} (not published: ${unpublished[*]})"
rm -f "$target_dir"/package/*.crate
cargo package --quiet --no-verify --allow-dirty --workspace "${excludes[@]}"
patch="$work/patch.toml"
echo "[patch.crates-io]" >"$patch"
for name in "${published[@]}"; do
  crate="$target_dir/package/$name-$version.crate"
  [ -f "$crate" ] || { echo "package: cargo package did not pack $name ($crate missing)" >&2; exit 1; }
  tar -xzf "$crate" -C "$work"
  dir="$work/$name-$version"
  for file in README.md LICENSE Cargo.toml; do
    [ -s "$dir/$file" ] || { echo "package: $name's package has no $file" >&2; exit 1; }
  done
  # cargo rewrites the manifest it packs; a path left in it would not resolve on crates.io.
  python3 - "$dir/Cargo.toml" "$name" <<'PY'
import sys, tomllib
manifest = tomllib.load(open(sys.argv[1], "rb"))
tables = [manifest] + list(manifest.get("target", {}).values())
for table in tables:
    for kind in ("dependencies", "dev-dependencies", "build-dependencies"):
        for dep, spec in table.get(kind, {}).items():
            if isinstance(spec, dict) and "path" in spec:
                sys.exit(f"package: {sys.argv[2]}'s packed Cargo.toml takes {dep} by path ({kind})")
            if isinstance(spec, dict) and "version" not in spec:
                sys.exit(f"package: {sys.argv[2]}'s packed Cargo.toml takes {dep} without a version ({kind})")
PY
  echo "$name = { path = \"$dir\" }" >>"$patch"
done

export CARGO_TARGET_DIR="$target_dir/first-run"
step "capi-ext-cli checked from its package"
(cd "$work/capi-ext-cli-$version" && cargo check --quiet --config "$patch")

step "capi-ext init --capi-ext-version $version, built and tested against the packed crates"
cargo build --quiet -p capi-ext-cli --target-dir "$target_dir"
cd "$work"
"$target_dir/debug/capi-ext" init packed-ext --capi-ext-version "$version" --hooks BeforeClusterCreate,GeneratePatches 2>init.log || { cat init.log >&2; exit 1; }
cd packed-ext
grep -q "^capi-ext = \"$version\"" Cargo.toml || { echo "package: the scaffold does not take capi-ext from crates.io:" >&2; cat Cargo.toml >&2; exit 1; }
cargo test --quiet --config "$patch" 2>&1 | tail -3
# Every capi-ext crate the project uses came from the packed files (a patched crate has no
# registry source in the lock file).
python3 - "$version" <<'PY'
import sys, tomllib
version = sys.argv[1]
lock = tomllib.load(open("Cargo.lock", "rb"))
ours = [p for p in lock["package"] if p["name"].startswith("capi-ext") and p["name"] != "packed-ext"]
if not any(p["name"] == "capi-ext" for p in ours):
    sys.exit("package: the project does not depend on capi-ext")
for p in ours:
    if "source" in p or p["version"] != version:
        sys.exit(f"package: {p['name']} {p['version']} came from {p.get('source')}, not from the packed crates")
print(f"   the project used {', '.join(sorted(p['name'] for p in ours))} {version}, as packed", file=sys.stderr)
PY
step "package: passed"
