#!/usr/bin/env bash
# Regenerates every golden from what the code produces now; review the diff before committing.
#   - derive/tests/ui/**/fail/*.stderr     (compile errors of the macros)
#   - types/tests/ui/*.stderr              (compile errors of misspelled typed template fields)
#   - testdata/schema/variables.json       (the derived schema of the realistic variables type)
#   - testdata/projects/*                  (scripted capi-ext init / create hook runs, and
#                                            render/rendered.yaml, rendered through each project)
#   - cli/tests/cmd/*.toml                 (--help / --version transcripts)
#   - testdata/upgrade/*.expected          (what `capi-ext upgrade` makes of a 0.1.0 project)
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f derive/tests/ui/*/fail/*.stderr
TRYBUILD=overwrite cargo test -q -p capi-ext-derive --test ui
rm -f types/tests/ui/*.stderr
TRYBUILD=overwrite cargo test -q -p capi-ext-types --all-features --test ui
BLESS=1 cargo test -q -p capi-ext-derive --test schema
BLESS=1 cargo test -q -p capi-ext-cli --test projects
BLESS=1 cargo test -q -p capi-ext-cli --test render
BLESS=1 cargo test -q -p capi-ext-cli --test upgrade
TRYCMD=overwrite cargo test -q -p capi-ext-cli --test cli
BLESS=1 ./scripts/check-goldens.sh
git status --short -- derive/tests/ui testdata cli/tests/cmd
