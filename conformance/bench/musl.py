#!/usr/bin/env python3
"""The shipped image's C library against the one every other benchmark runs on: the bench
server built twice by one compiler, for glibc and as the static musl binary a scaffolded
project's Dockerfile ships (`x86_64-unknown-linux-musl`), each under run.py's serving scenarios,
alternating which goes first each round. Writes results/musl-<stamp>/report.md and raw.json.
Run with `make bench-musl`.

rustup's musl target is not reachable from every machine, so both builds use Debian's packaged
compiler (rustc-web, cargo-web) and build the standard library for musl from its packaged
source (rust-web-src, `-Zbuild-std`), linked by musl-gcc (musl-tools) with LLVM's libunwind
(libunwind-22-dev); missing packages are installed with apt. The musl build is what
`rustup target add x86_64-unknown-linux-musl` would give: static, crt-static, musl's own
allocator (mallocng). A benchmark, not a test; BENCH_DURATION and BENCH_ROUNDS as in run.py.
"""
import json, os, shutil, statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

OUT = run.ROOT / "results" / f"musl-{run.STAMP}"
PACKAGES = {"rustc-web": "/usr/bin/rustc", "cargo-web": "/usr/bin/cargo", "musl-tools": "/usr/bin/musl-gcc",
            "libunwind-22-dev": "/usr/lib/llvm-22/lib/libunwind.a"}
MUSL = "x86_64-unknown-linux-musl"


def packages():
    """Debian's compiler and its library source, musl-gcc and LLVM's libunwind; returns the
    standard library's source folder of that compiler."""
    missing = [p for p, path in PACKAGES.items() if not Path(path).exists()]
    version = None
    if not missing:
        version = run.sh(["/usr/bin/rustc", "--version"]).stdout.split()[1]
        if not Path(f"/usr/src/rustc-{version}/library").is_dir():
            missing.append("rust-web-src")
    if missing:
        missing = sorted(set(missing) | {"rust-web-src"})
        run.log(f"installing {' '.join(missing)} (apt)")
        run.sh(["apt-get", "update", "-qq"])
        run.sh(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing)
        version = run.sh(["/usr/bin/rustc", "--version"]).stdout.split()[1]
    library = Path(f"/usr/src/rustc-{version}/library")
    if not library.is_dir():
        raise SystemExit(f"no standard library source for Debian's rustc {version} at {library}: install rust-web-src of the same version")
    return version, library


def unwinder(work):
    """LLVM's libunwind.a as Rust's musl target links it (-lunwind), with the one glibc-only
    symbol it calls (`__fprintf_chk`, on its error paths) given to musl's vfprintf."""
    shim = work / "fprintf_chk.c"
    shim.write_text("#include <stdarg.h>\n#include <stdio.h>\n"
                    "int __fprintf_chk(FILE *f, int flag, const char *fmt, ...) {\n"
                    "  va_list ap; va_start(ap, fmt); int r = vfprintf(f, fmt, ap); va_end(ap); (void)flag; return r;\n}\n")
    run.sh(["musl-gcc", "-O2", "-c", str(shim), "-o", str(work / "fprintf_chk.o")])
    shutil.copyfile(PACKAGES["libunwind-22-dev"], work / "libunwind.a")
    run.sh(["ar", "r", str(work / "libunwind.a"), str(work / "fprintf_chk.o")])
    return work


def build(library, work):
    """The bench server for glibc and for static musl, by Debian's compiler; returns both."""
    # A target folder each: the musl build's flags would otherwise rebuild the glibc build's
    # build scripts and proc macros, and the other way round.
    target = run.target_dir() / "bench-musl"
    env = dict(os.environ, PATH="/usr/bin:" + os.environ["PATH"], RUSTC="/usr/bin/rustc", CARGO_TARGET_DIR=str(target / "glibc"))
    env.pop("RUSTUP_TOOLCHAIN", None)
    cargo = ["/usr/bin/cargo", "build", "--release", "--locked", "-p", "capi-ext-conformance"]
    run.log("building the bench server for glibc (Debian's rustc)")
    run.sh(cargo, cwd=run.ROOT, env=env)
    run.log(f"building the bench server for {MUSL} (the standard library too, from its source)")
    musl_env = dict(env, CARGO_TARGET_DIR=str(target / "musl"), RUSTC_BOOTSTRAP="1", __CARGO_TESTS_ONLY_SRC_ROOT=str(library), CC_x86_64_unknown_linux_musl="musl-gcc",
                    CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_LINKER="musl-gcc",
                    CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS=f"-C link-self-contained=no -L {unwinder(work)}")
    # Debian's musl-gcc starts every program with Scrt1.o and names musl's loader as its
    # interpreter, which then only relocates the static-pie (no shared library is needed: checked
    # below). Rust's own musl linking starts it with rcrt1.o and no interpreter; the code that runs,
    # musl's allocator included, is the same.
    musl_build = ["/usr/bin/cargo", "rustc", "--release", "--locked", "-p", "capi-ext-conformance", "--bin", "capi-ext-conformance",
                  "--target", MUSL, "-Zbuild-std=std,panic_abort"]
    run.sh(musl_build, cwd=run.ROOT, env=musl_env)
    glibc, musl = target / "glibc/release/capi-ext-conformance", target / "musl" / MUSL / "release/capi-ext-conformance"
    headers = run.sh(["readelf", "--dynamic", str(musl)]).stdout
    if "(NEEDED)" in headers:
        raise SystemExit(f"the musl build needs a shared library:\n{headers}")
    return glibc, musl


def report(version, results):
    load = [r for r in results if "rps" in r]
    procs = [r for r in results if "ready_ms" in r]
    lines = [f"# glibc and musl builds of the capi-ext server {run.STAMP}", "",
             f"One machine ({os.cpu_count()} CPUs), {run.ROUNDS} alternating rounds of {run.DURATION} per scenario, the same bench server built by Debian's rustc {version} "
             f"for the machine's glibc and for static musl (`{MUSL}`, as the scaffolded Dockerfile ships it). Ratios are musl ÷ glibc: above 1 is better for requests "
             "per CPU-second, below 1 is better for latency and memory.", "",
             "| Hook | Proto | Clients | req/CPU-s glibc | req/CPU-s musl | ratio | p99 ms glibc / musl | p99 ratio | peak RSS glibc / musl | RSS ratio | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for hook in ["beforeclustercreate", "generatepatches"]:
        for proto in ["h2", "h1"]:
            for c in [1, 50]:
                def agg(kind):
                    rs = [r for r in load if r["server"] == kind and r["hook"] == hook and r["proto"] == proto and r["clients"] == c]
                    req, cpu = sum(r["requests"] for r in rs), sum(r["cpu_s"] for r in rs)
                    return {"per_cpu": req / cpu if cpu else float("nan"), "p99": statistics.median(r["p99_ms"] for r in rs),
                            "rss": max(r["peak_rss_kib"] for r in rs) / 1024, "errors": sum(r["errors"] for r in rs)}
                g, m = agg("glibc"), agg("musl")
                lines.append(f"| {hook} | {proto} | {c} | {g['per_cpu']:.0f} | {m['per_cpu']:.0f} | **{run.ratio(m['per_cpu'], g['per_cpu']):.2f}×** | "
                             f"{g['p99']:.2f} / {m['p99']:.2f} | {run.ratio(m['p99'], g['p99']):.2f} | {g['rss']:.1f} / {m['rss']:.1f} MiB | "
                             f"{run.ratio(m['rss'], g['rss']):.2f} | {g['errors']} / {m['errors']} |")
    idle = {k: statistics.median(r["idle_rss_kib"] for r in procs if r["server"] == k) / 1024 for k in ["glibc", "musl"]}
    ready = {k: statistics.median(r["ready_ms"] for r in procs if r["server"] == k) for k in ["glibc", "musl"]}
    lines += ["", "| | glibc | musl | ratio |", "|---|---|---|---|",
              f"| idle RSS (started, one Discovery answered) | {idle['glibc']:.1f} MiB | {idle['musl']:.1f} MiB | {run.ratio(idle['musl'], idle['glibc']):.2f} |",
              f"| exec to first successful Discovery | {ready['glibc']:.1f} ms | {ready['musl']:.1f} ms | {run.ratio(ready['musl'], ready['glibc']):.2f} |"]
    return "\n".join(lines) + "\n"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    version, library = packages()
    bins = run.build()  # the CLI (certificates) and the load generator, as run.py builds them
    work = OUT / "unwind"
    work.mkdir(exist_ok=True)
    bins["glibc"], bins["musl"] = build(library, work)
    certs = OUT / "certs"
    run.sh([bins["cli"], "certs", "--out", str(certs)])
    results = run.serving(bins, str(certs), kinds=("glibc", "musl"))
    (OUT / "raw.json").write_text(json.dumps({"stamp": run.STAMP, "rustc": version, "duration": run.DURATION, "rounds": run.ROUNDS, "serving": results}, indent=2) + "\n")
    text = report(version, results)
    (OUT / "report.md").write_text(text)
    for path in [certs, work, run.OUT]:
        shutil.rmtree(path, ignore_errors=True)
    print(text)
    run.log(f"report: {OUT / 'report.md'}")


if __name__ == "__main__":
    main()
