#!/usr/bin/env bash
# docs/tutorial.md run as written (scripts/tutorial.py says which blocks are steps): the CLI
# installed from this checkout in a temporary HOME, as a reader installs it, then every step in
# order in a folder outside the repository. Builds share target/first-run with first-run.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=new-user.sh
source "$root/scripts/new-user.sh"
git config --global user.name tutorial
git config --global user.email tutorial@example.com
cd "$HOME"
python3 "$root/scripts/tutorial.py" "$root/docs/tutorial.md"
