#!/usr/bin/env bash
# The golden projects (testdata/projects/*) are real projects: each must build against the
# workspace crates, pass its own tests, be rustfmt-clean, have up-to-date generated files, and
# render its scaffolded render/ inputs through its own handlers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --quiet -p capi-ext-cli
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cli="$target_dir/debug/capi-ext"
# BLESS=1 writes each golden's render/rendered.yaml instead of checking it.
check=--check
if [ -n "${BLESS:-}" ]; then check=; fi
for project in testdata/projects/*/; do
  name=$(basename "$project")
  echo "== golden project $name" >&2
  (
    cd "$project"
    CARGO_TARGET_DIR="$target_dir/golden" cargo test --quiet
    cargo fmt --check
    "$cli" generate manifests --check
    if [ -f render/cluster.yaml ]; then
      # The scaffolded render inputs work, and render/rendered.yaml is what they render to
      # through the project's handlers (as `make check` checks it; bless.sh writes it).
      CARGO_TARGET_DIR="$target_dir/golden" "$cli" render --project . --cluster render/cluster.yaml \
        --clusterclass render/clusterclass.yaml --templates render/templates.yaml \
        --output render/rendered.yaml $check
    fi
  )
done
