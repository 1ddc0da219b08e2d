#!/usr/bin/env bash
# Coverage-guided fuzzing with AFL++ through cargo-afl (stable Rust, crates.io only): builds the
# targets of fuzz/, seeds each from testdata/ and the examples, runs each for FUZZ_SECONDS
# (default 60), and reports seconds fuzzed (all runs so far with FUZZ_RESUME=1), executions, corpus
# size and crashes per target. Exit 1 when a target has crashes: the inputs are in
# fuzz/target/afl/<target>/default/crashes; replay one with
#   fuzz/target/release/<target> < that-file
# and turn it into a regression test next to the code it broke. The crashes counted are the ones
# this run found: when AFL++ resumes a target it moves the last run's crashes folder aside (to
# crashes.<date>), so a fixed crash is not reported again; inputs left in those folders are listed.
# FUZZ_TARGETS="go_template render_input" picks targets. FUZZ_RESUME=1 continues each target
# from the corpus its last run left in fuzz/target/afl/<target> (AFL++'s `-i -`), so campaigns
# add up; without it each run starts again from the seeds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-hook_request patch_template go_template variable_values render_input generate_source}
command -v cargo-afl >/dev/null || cargo install cargo-afl --locked
cargo afl config --build >/dev/null 2>&1 || true # the AFL++ runtime, once per toolchain
cargo afl build --release --quiet

work=target/afl
rm -rf "$work/seeds"
mkdir -p "$work/seeds"
python3 - "$root" "$work/seeds" <<'PY'
import json, os, re, sys, glob
root, out = sys.argv[1], sys.argv[2]
def write(target, name, data):
    os.makedirs(f"{out}/{target}", exist_ok=True)
    with open(f"{out}/{target}/{name}", "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
# hook_request: the first byte picks the path, in the order of fuzz_targets/hook_request.rs.
order = ["discovery", "beforeclustercreate", "aftercontrolplaneinitialized", "beforeclusterupgrade",
         "beforecontrolplaneupgrade", "aftercontrolplaneupgrade", "beforeworkersupgrade", "afterworkersupgrade",
         "afterclusterupgrade", "beforeclusterdelete", "generatepatches", "validatetopology", "discovervariables",
         "generateupgradeplan", "canupdatemachine", "canupdatemachineset", "updatemachine"]
for i, hook in enumerate(order):
    path = f"{root}/cli/fixtures/hooks/{hook}/request.json"
    if os.path.exists(path):
        write("hook_request", hook, bytes([i]) + open(path, "rb").read())
# patch_template: a pointer, then a template object.
request = json.load(open(f"{root}/cli/fixtures/hooks/generatepatches/request.json"))
for i, item in enumerate(request.get("items", [])):
    for j, pointer in enumerate(["/spec/template/spec/x", "/metadata/labels/a~1b", "/spec/template/spec/list/-", "/"]):
        write("patch_template", f"item{i}-{j}", pointer + "\n" + json.dumps(item.get("object", {})))
# go_template: the templates and enabledIf conditions of the ClusterClasses in the repository.
templates = set()
for path in glob.glob(f"{root}/**/clusterclass.yaml", recursive=True):
    text = open(path).read()
    templates.update(re.findall(r"enabledIf: '(.*)'", text))
    for block in re.findall(r"template: \|\n((?:\s{12,}.*\n)+)", text):
        templates.add("\n".join(line.strip() for line in block.splitlines()))
templates.update(['{{ if gt .cpu 2.0 }}big{{ else }}small{{ end }}', '{{ range .tags }}- {{ . }}\n{{ end }}',
                  '{{ printf "%s-%d" .size .cpu }}', '{{ with .net }}{{ .mtu }}{{ end }}', '{{ join "," .tags | upper | quote }}'])
for i, t in enumerate(sorted(templates)):
    write("go_template", f"t{i}", t)
# variable_values: each derived schema and its default.
for i, variable in enumerate(json.load(open(f"{root}/testdata/schema/variables.json"))):
    schema = variable.get("schema", {}).get("openAPIV3Schema", {})
    write("variable_values", f"v{i}", json.dumps(schema) + "\n" + json.dumps(schema.get("default")))
# render_input: the render inputs in the repository, each file alone and each project's
# Cluster, ClusterClass and templates together (a whole render).
for i, path in enumerate(sorted(glob.glob(f"{root}/examples/*/render/*.yaml") + glob.glob(f"{root}/testdata/projects/*/render/*.yaml"))):
    write("render_input", f"y{i}", open(path, "rb").read())
for i, project in enumerate(sorted(glob.glob(f"{root}/examples/*/render") + glob.glob(f"{root}/testdata/projects/*/render"))):
    parts = [f"{project}/{f}.yaml" for f in ("cluster", "clusterclass", "templates")]
    if all(os.path.exists(p) for p in parts):
        write("render_input", f"whole{i}", "\n---\n".join(open(p).read() for p in parts))
# generate_source: the Rust sources of the golden projects and the example.
for i, path in enumerate(sorted(glob.glob(f"{root}/testdata/projects/*/src/**/*.rs", recursive=True) + glob.glob(f"{root}/examples/quickstart/src/*.rs") + [f"{root}/testdata/schema/variables.rs"])):
    write("generate_source", f"s{i}", open(path, "rb").read())
PY

export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_QUIET=1
crashed=()
printf '%-16s %8s %12s %8s %8s\n' target seconds executions corpus crashes
for target in $targets; do
  out="$work/$target"
  input="$work/seeds/$target"
  if [ "${FUZZ_RESUME:-0}" = 1 ] && [ -d "$out/default/queue" ]; then
    input=-
  else
    rm -rf "$out"
  fi
  cargo afl fuzz -V "$seconds" -i "$input" -o "$out" "target/release/$target" >"$work/$target.log" 2>&1 || {
    echo "afl-fuzz failed for $target:" >&2; tail -20 "$work/$target.log" >&2; exit 2; }
  stats="$out/default/fuzzer_stats"
  stat() { sed -n "s/^$1 *: *//p" "$stats"; }
  crashes=$(find "$out/default/crashes" -type f ! -name README.txt 2>/dev/null | wc -l)
  printf '%-16s %8s %12s %8s %8s\n' "$target" "$(stat run_time)" "$(stat execs_done)" "$(stat corpus_count)" "$crashes"
  [ "${crashes:-0}" -eq 0 ] || crashed+=("$target: $out/default/crashes")
  earlier=$(find "$out/default" -path "$out/default/crashes.*" -type f ! -name README.txt 2>/dev/null | wc -l)
  [ "$earlier" -eq 0 ] || echo "  ($target: $earlier crashes of earlier runs are kept in $out/default/crashes.<date>; delete each once its regression test is in)" >&2
done
if [ ${#crashed[@]} -gt 0 ]; then
  echo "crashes found:" >&2
  printf '  %s\n' "${crashed[@]}" >&2
  exit 1
fi
