#!/usr/bin/env bash
# A new user's first ten minutes, outside this repository, in a temporary HOME: install the CLI
# from this checkout as the README says, `capi-ext init` a project, build it, test it, run it,
# `capi-ext verify` it as CAPI would, run the steps of its scaffolded CI workflow, then commit it
# and `capi-ext diff` a change against that commit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -- "-$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=new-user.sh
source "$root/scripts/new-user.sh"

step() { echo "== $*" >&2; }

step "capi-ext init my-ext, outside the repository"
cd "$HOME"
capi-ext init my-ext --hooks BeforeClusterCreate,GeneratePatches 2> init.log || { cat init.log >&2; exit 1; }
grep -q "Using capi-ext crates from the checkout at $root " init.log || { echo "init did not say where the crates come from:" >&2; cat init.log >&2; exit 1; }
grep -q "cargo test" init.log
grep -q "make render" init.log
cd my-ext
grep -q "capi-ext = { path = \"$root/runtime\" }" Cargo.toml

step "cargo build, cargo test"
# The project resolves the newest versions of capi-ext's dependencies (it has no Cargo.lock yet):
# capi-ext's own code must build without a warning against them (rustls 0.23.48 deprecated the
# ring provider the runtime uses, and a new user's first build showed it).
cargo build --quiet 2> build.log || { cat build.log >&2; exit 1; }
if grep -q -- "--> $root/" build.log; then
  cat build.log >&2; echo "first-run: capi-ext's crates warn when a new project builds them (above)" >&2; exit 1
fi
cargo test --quiet 2>&1 | tail -3

step "make run, then capi-ext verify"
setsid make run > run.log 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  if capi-ext verify --url https://127.0.0.1:9443 --ca .certs/ca.crt > verify.log 2>&1; then
    break
  fi
  sleep 1
done
capi-ext verify --url https://127.0.0.1:9443 --ca .certs/ca.crt || { cat run.log >&2; exit 1; }
kill -- "-$pid"
wait "$pid" 2>/dev/null || true
pid=

step "make render (as init says), then the scaffolded CI workflow's steps"
make render
test -s render/rendered.yaml
grep -E '^\s+- run: ' .github/workflows/ci.yaml | sed -E 's/^\s+- run: //' | while read -r command; do
  echo "   \$ $command" >&2
  bash -c "$command" < /dev/null
done

step "capi-ext diff: nothing changed, then a new worker patch rolls out the MachineDeployment"
git init -q . && git add -A
git -c user.name=first-run -c user.email=first-run@example.com commit -qm "v1"
capi-ext diff > diff.log 2>&1 || { cat diff.log >&2; exit 1; }
grep -q "): unchanged" diff.log || { cat diff.log >&2; exit 1; }
capi-ext create patch worker-label --target machine-deployments
code=0
capi-ext diff > diff.log 2>&1 || code=$?
[ "$code" = 1 ] || { cat diff.log >&2; echo "capi-ext diff exited $code, not 1 (a rollout)" >&2; exit 1; }
grep -q "Machines roll out: MachineDeployment md-0" diff.log || { cat diff.log >&2; exit 1; }

step "a new version of the GeneratePatches handler leaves today's ClusterClasses untouched"
git add -A && git -c user.name=first-run -c user.email=first-run@example.com commit -qm "worker label"
capi-ext create hook GeneratePatches --next-version-of generate-patches
capi-ext diff > diff.log 2>&1 || { cat diff.log >&2; exit 1; }
# The Cluster that exists still calls generate-patches, which the head serves unchanged; the
# edited and the added case are the head's own, rendered with the head alone.
grep -q "render/cluster.yaml): unchanged" diff.log || { cat diff.log >&2; exit 1; }
grep -q "render/cluster.yaml): changed; renders with the head" diff.log || { cat diff.log >&2; exit 1; }
grep -q "render/generate-patches/cluster.yaml): added; renders with the head" diff.log || { cat diff.log >&2; exit 1; }
git add -A && git -c user.name=first-run -c user.email=first-run@example.com commit -qm "generate-patches-v2"
capi-ext create patch v2-region --handler generate-patches-v2 --target infrastructure-cluster
capi-ext diff > diff.log 2>&1 || { cat diff.log >&2; exit 1; }
grep -q "render/generate-patches/cluster.yaml): unchanged" diff.log || { cat diff.log >&2; exit 1; }
grep -q "render/cluster.yaml): 1 object changes; no Machine is replaced" diff.log || { cat diff.log >&2; exit 1; }
step "capi-ext diff between two revisions (both built in worktrees)"
capi-ext diff --base HEAD~1 --head HEAD > diff.log 2>&1 || { cat diff.log >&2; exit 1; }
grep -q "render/cluster.yaml): unchanged" diff.log || { cat diff.log >&2; exit 1; }
grep -q "render/generate-patches/cluster.yaml): added; renders with the head" diff.log || { cat diff.log >&2; exit 1; }

step "capi-ext diff: a renamed handler breaks the ClusterClasses that call it"
git add -A && git -c user.name=first-run -c user.email=first-run@example.com commit -qm "v2 region"
grep -rl '"generate-patches-v2"' src | xargs sed -i 's/"generate-patches-v2"/"generate-patches-v3"/g'
capi-ext generate manifests
grep -q "generatePatchesExtension: generate-patches-v3" render/clusterclass.yaml || { cat render/clusterclass.yaml >&2; exit 1; }
code=0
capi-ext diff > diff.log 2>&1 || code=$?
[ "$code" = 1 ] || { cat diff.log >&2; echo "capi-ext diff exited $code, not 1 (a handler the deployed ClusterClass calls is gone)" >&2; exit 1; }
grep -q "render/cluster.yaml): BREAKS" diff.log || { cat diff.log >&2; exit 1; }
grep -q "calls the GeneratePatches handler \`generate-patches-v2\`, which the head does not serve" diff.log || { cat diff.log >&2; exit 1; }
grep -q -- "--next-version-of generate-patches-v2" diff.log || { cat diff.log >&2; exit 1; }
git checkout -q -- . && git clean -qfd

step "capi-ext diff: a rollout is not hidden by a new variable the edited case sets"
capi-ext create patch worker-tier --handler generate-patches-v2 --target machine-deployments
python3 - <<'PY'
import re
path = "src/variables.rs"
text = open(path).read()
text = re.sub(r"(pub struct Variables \{.*?)\n\}", r"\1\n    /// The tier of the Cluster.\n    pub tier: Option<String>,\n}", text, count=1, flags=re.S)
open(path, "w").write(text)
PY
printf '    - name: tier\n      value: gold\n' >> render/cluster.yaml
code=0
capi-ext diff > diff.log 2>&1 || code=$?
[ "$code" = 1 ] || { cat diff.log >&2; echo "capi-ext diff exited $code, not 1 (a rollout)" >&2; exit 1; }
grep -q "render/cluster.yaml): .*Machines roll out: MachineDeployment md-0" diff.log || { cat diff.log >&2; exit 1; }
grep -q "render/cluster.yaml): changed; renders with the head" diff.log || { cat diff.log >&2; exit 1; }
grep -q "added \`tier\`" diff.log || { cat diff.log >&2; exit 1; }
git checkout -q -- . && git clean -qfd
step "first run: passed"
