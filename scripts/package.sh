#!/usr/bin/env bash
# The crates as crates.io would serve them. `cargo package` packs every publishable crate of the
# workspace (those without `publish = false`); every package must hold its README and LICENSE and
# name its dependencies by version only. Then a registry on 127.0.0.1 takes crates.io's place
# (scripts/local-registry.py, through cargo's source replacement of crates-io: a sparse index of
# the packed crates and of the crates.io packages Cargo.lock names), and a crates.io user's path
# is walked: `cargo install --locked capi-ext-cli` (the CLI built from its package, with the
# Cargo.lock packed in it), then a project made by that CLI with `capi-ext init
# --capi-ext-version V` (`capi-ext = "V"`) builds and passes its tests. Every capi-ext crate the
# project's Cargo.lock names must carry crates.io's source and the checksum of the packed file,
# and the registry must have served it. The builds use a CARGO_HOME and a target directory of
# their own, removed afterwards (a registry on a new port is a new source to cargo: its downloads
# and builds would pile up in shared ones).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
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
crates=()
for name in "${published[@]}"; do
  crate="$target_dir/package/$name-$version.crate"
  [ -f "$crate" ] || { echo "package: cargo package did not pack $name ($crate missing)" >&2; exit 1; }
  crates+=(--crate "$crate")
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
done

step "a registry on 127.0.0.1 in crates.io's place: the packed crates and Cargo.lock's crates.io packages"
python3 scripts/local-registry.py build "$work/registry" --lock Cargo.lock "${crates[@]}"
python3 scripts/local-registry.py serve "$work/registry" "$work/port" 2>"$work/registry.log" &
server=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "package: the registry did not start" >&2; cat "$work/registry.log" >&2; exit 1; }
port=$(cat "$work/port")

# A crates.io user's cargo, with crates.io replaced by the registry (rustup's proxies in PATH
# still find the toolchain).
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export CARGO_HOME="$work/cargo-home"
export CARGO_TARGET_DIR="$work/target"
mkdir -p "$CARGO_HOME"
printf '[source.crates-io]\nreplace-with = "capi-ext-local"\n[source.capi-ext-local]\nregistry = "sparse+http://127.0.0.1:%s/index/"\n' "$port" >"$CARGO_HOME/config.toml"

step "cargo install --locked capi-ext-cli --version $version, from the registry"
cargo install --quiet --debug --locked capi-ext-cli --version "$version" --root "$work/install"
grep -q "GET /crates/capi-ext-cli/capi-ext-cli-$version.crate " "$work/registry.log" || {
  echo "package: cargo install did not download capi-ext-cli from the registry:" >&2; cat "$work/registry.log" >&2; exit 1; }

step "capi-ext init --capi-ext-version $version with the installed CLI, built and tested from the registry"
cd "$work"
"$work/install/bin/capi-ext" init packed-ext --capi-ext-version "$version" --hooks BeforeClusterCreate,GeneratePatches 2>init.log || { cat init.log >&2; exit 1; }
cd packed-ext
grep -q "^capi-ext = \"$version\"" Cargo.toml || { echo "package: the scaffold does not take capi-ext from crates.io:" >&2; cat Cargo.toml >&2; exit 1; }
cargo test --quiet 2>&1 | tail -3
# Every capi-ext crate the project uses is a packed file: crates.io's source in Cargo.lock (what a
# crates.io user's lock says), the packed file's checksum, and a download the registry served.
python3 - "$version" "$target_dir/package" "$work/registry.log" <<'PY'
import hashlib, sys, tomllib
version, packed, log = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
lock = tomllib.load(open("Cargo.lock", "rb"))
ours = [p for p in lock["package"] if p["name"].startswith("capi-ext") and p["name"] != "packed-ext"]
if not any(p["name"] == "capi-ext" for p in ours):
    sys.exit("package: the project does not depend on capi-ext")
for p in ours:
    name = p["name"]
    if p["version"] != version or p.get("source") != "registry+https://github.com/rust-lang/crates.io-index":
        sys.exit(f"package: {name} {p['version']} came from {p.get('source')}, not from crates.io (the registry in its place)")
    file = f"{packed}/{name}-{version}.crate"
    if p.get("checksum") != hashlib.sha256(open(file, "rb").read()).hexdigest():
        sys.exit(f"package: {name} {version} in Cargo.lock is not the packed {file} (its checksum differs)")
    if f"GET /crates/{name}/{name}-{version}.crate " not in log:
        sys.exit(f"package: the registry never served {name} {version}")
print(f"   the project used {', '.join(sorted(p['name'] for p in ours))} {version}, as packed and served", file=sys.stderr)
PY
step "package: passed"
