#!/usr/bin/env bash
# docs/tutorial.md run as written (scripts/tutorial.py says which blocks are steps): the CLI
# installed from this checkout in a temporary HOME, as a reader installs it, then every step in
# order in a folder outside the repository. Builds share target/first-run with first-run.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
export PATH="$CARGO_HOME/bin:$PATH"
export HOME="$work/home"
mkdir -p "$HOME"
export CARGO_INSTALL_ROOT="$HOME/.local"
export PATH="$CARGO_INSTALL_ROOT/bin:$PATH"
export CARGO_TARGET_DIR="$root/target/first-run"
git config --global user.name tutorial
git config --global user.email tutorial@example.com
echo "== install the CLI from the checkout: cargo install --locked --path cli" >&2
cargo install --quiet --locked --path "$root/cli"
cd "$HOME"
python3 "$root/scripts/tutorial.py" "$root/docs/tutorial.md"
