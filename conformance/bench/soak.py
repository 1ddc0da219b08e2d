#!/usr/bin/env python3
"""Soak benchmark: an extension server under 50 concurrent clients sending mixed hooks
(Discovery, BeforeClusterCreate, a ~200 KiB GeneratePatches) over HTTP/2 for 10 minutes, its
serving certificate rotated every minute. Run with `make soak`.

A benchmark, not a test: it reports, it does not fail CI. The report (results/soak-<stamp>/
report.md, with rss.svg and p99.svg) says whether the server met the goals: no failed request,
every rotated certificate served to new connections within 20 s (capi-ext polls the files every
10 s, `--cert-reload-interval`; CAPI's Go server watches them with fsnotify), RSS after warm-up flat
within 10 % (the median of the last third of the windows against the first third: growth, not the
allocator's window-to-window spread, which is reported beside it), p99 stable (the last third of the run within 20 % of the first third after warm-up, no
window above 3x the median window).

SOAK_REPORT=<results/soak-… folder> rewrites that run's report and plots from its raw.json.
SOAK_DURATION (10m), SOAK_CLIENTS (50), SOAK_ROTATE (1m), SOAK_WINDOW (10s), SOAK_WARMUP (60 s of
windows left out of the flatness checks) and SOAK_SERVERS (rust; `rust,go` adds CAPI's Go
server, one after the other) set it.
"""
import json, os, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plot  # noqa: E402
import run  # the side-by-side benchmark: builds, paths, helpers  # noqa: E402

DURATION = os.environ.get("SOAK_DURATION", "10m")
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "50"))
ROTATE = os.environ.get("SOAK_ROTATE", "1m")
WINDOW = os.environ.get("SOAK_WINDOW", "10s")
WARMUP_S = float(os.environ.get("SOAK_WARMUP", "60"))
SERVERS = os.environ.get("SOAK_SERVERS", "rust").split(",")
STAMP = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
OUT = run.ROOT / "results" / f"soak-{STAMP}"


def server_command(kind, bins, certs, port):
    # As the scaffolded Deployment runs it: connections closed (GOAWAY) after 5 minutes.
    return run.server_command(kind, bins, certs, port) + (["--max-connection-age", "5m"] if kind == "rust" else [])


def soak(kind, bins):
    port = run.free_port()
    certs = OUT / f"certs-{kind}"
    cmd = [str(bins["soak"]), "-dir", str(certs), "-port", str(port), "-c", str(CLIENTS), "-d", DURATION, "-rotate", ROTATE,
           "-window", WINDOW, "-small", str(run.SMALL), "-large", str(run.PAYLOAD), "--"] + server_command(kind, bins, str(certs), port)
    run.log(f"soak: {kind} for {DURATION}, {CLIENTS} clients, certificate rotated every {ROTATE}")
    lines = []
    env = dict(os.environ, RUST_LOG="warn")
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env) as p:
        for text in p.stdout:
            line = json.loads(text)
            lines.append(line)
            if not line.get("summary"):
                run.log(f"  {kind} t={line['t_s']:6.0f}s {line['requests'] / float(WINDOW.rstrip('s')):7.0f} req/s p99 {line['p99_ms']:7.2f} ms "
                        f"rss {line['rss_kib'] / 1024:6.1f} MiB errors {line['errors']}")
    if p.returncode != 0:
        raise RuntimeError(f"soak {kind} exited with {p.returncode}")
    return {"windows": [l for l in lines if not l.get("summary")], "summary": next(l for l in lines if l.get("summary"))}


def verdict(result):
    windows = result["windows"]
    settled = [w for w in windows if w["t_s"] > WARMUP_S] or windows
    rss = [w["rss_kib"] for w in settled]
    p99 = [w["p99_ms"] for w in settled]
    third = max(1, len(p99) // 3)
    rss_first, rss_last = statistics.median(rss[:third]), statistics.median(rss[-third:])
    first, last = statistics.median(p99[:third]), statistics.median(p99[-third:])
    median = statistics.median(p99)
    errors = sum(w["errors"] for w in windows)
    s = result["summary"]
    return {
        "requests": sum(w["requests"] for w in windows),
        "errors": errors,
        "first_error": next((w["first_error"] for w in windows if w["first_error"]), ""),
        "rotations": s["rotations"], "rotation_failures": s["rotation_failures"], "rotation_errors": s["rotation_errors"],
        "served_after_max_s": max(s.get("served_after_s", []), default=0),
        "served_after_mean_s": statistics.mean(s["served_after_s"]) if s.get("served_after_s") else 0,
        # Runs before -served-within existed checked 10 s.
        "served_within_s": s.get("served_within_s", 20 if "served_after_s" in s else 10),
        "serials_seen": len({w.get("serial") for w in windows if w.get("serial")}),
        "rss_drift": rss_last / rss_first, "rss_min_mib": min(rss) / 1024, "rss_max_mib": max(rss) / 1024, "rss_spread": (max(rss) - min(rss)) / min(rss),
        "p99_median_ms": median, "p99_first_third_ms": first, "p99_last_third_ms": last, "p99_max_ms": max(p99),
        "p99_drift": last / first if first else 0,
    }


def svg(series, key, title, unit, scale=1.0):
    """A line chart, one line per server, of `key` per window over time (in minutes)."""
    lines = [(k, plot.COLORS.get(k, "black"), False, [(x["t_s"] / 60, x[key] * scale) for x in r["windows"]]) for k, r in series.items()]
    return plot.line_chart(lines, title, "minutes", unit)


def report(results):
    rows = {k: verdict(r) for k, r in results.items()}
    ok = lambda b: "met" if b else "**not met**"  # noqa: E731
    lines = [f"# Soak {STAMP}", "",
             f"{DURATION} at {CLIENTS} concurrent clients over HTTP/2, each sending Discovery, BeforeClusterCreate and a ~200 KiB "
             f"GeneratePatches in turn; the serving certificate rotated every {ROTATE}; windows of {WINDOW}, the first "
             f"{WARMUP_S:.0f} s left out of the flatness checks. Machine: {os.cpu_count()} CPUs, load generator on the same machine.", "",
             "| | " + " | ".join(rows) + " |", "|---|" + "---|" * len(rows)]
    def row(label, f):
        lines.append(f"| {label} | " + " | ".join(f(v) for v in rows.values()) + " |")
    row("requests", lambda v: f"{v['requests']:,}")
    row("failed requests (goal 0)", lambda v: f"{v['errors']} ({ok(v['errors'] == 0)})")
    row("certificate rotations served to new connections in time", lambda v: f"{v['rotations'] - v['rotation_failures']}/{v['rotations']} within {v['served_within_s']:.0f} s ({ok(v['rotation_failures'] == 0)})")
    row("seconds from rotation to the new certificate: mean / max",
        lambda v: f"{v['served_after_mean_s']:.1f} / {v['served_after_max_s']:.1f}" if v["served_after_max_s"] else "not recorded")
    row("distinct certificates seen by the per-window probe", lambda v: str(v["serials_seen"]))
    row("RSS after warm-up, MiB (min – max)", lambda v: f"{v['rss_min_mib']:.1f} – {v['rss_max_mib']:.1f}")
    row("RSS last third vs first third (goal within ±10 %)", lambda v: f"{v['rss_drift']:.3f}× ({ok(abs(v['rss_drift'] - 1) <= 0.10)})")
    row("RSS spread between windows, (max − min) ÷ min", lambda v: f"{v['rss_spread'] * 100:.1f} %")
    row("p99 per window, ms: median / max", lambda v: f"{v['p99_median_ms']:.2f} / {v['p99_max_ms']:.2f}")
    row("p99 last third vs first third (goal ≤ 1.2×)", lambda v: f"{v['p99_drift']:.2f}× ({ok(v['p99_drift'] <= 1.2)})")
    row("p99 worst window vs median (goal ≤ 3×)", lambda v: f"{v['p99_max_ms'] / v['p99_median_ms']:.2f}× ({ok(v['p99_max_ms'] <= 3 * v['p99_median_ms'])})")
    for k, v in rows.items():
        if v["first_error"]:
            lines.append(f"\nFirst failed request ({k}): `{v['first_error']}`")
        for e in v["rotation_errors"]:
            lines.append(f"\nRotation ({k}): {e}")
    lines += ["", "![RSS over time](rss.svg)", "", "![p99 over time](p99.svg)", ""]
    return "\n".join(lines), rows


def write(out, results):
    text, rows = report(results)
    (out / "raw.json").write_text(json.dumps({"results": results, "verdict": rows}, indent=2) + "\n")
    (out / "rss.svg").write_text(svg(results, "rss_kib", "Resident memory of the server", "MiB", 1 / 1024))
    (out / "p99.svg").write_text(svg(results, "p99_ms", "p99 latency per window, all hooks", "ms"))
    text = text.replace(f"# Soak {STAMP}", f"# Soak {out.name.removeprefix('soak-')}")
    (out / "report.md").write_text(text)
    return text


def main():
    if os.environ.get("SOAK_REPORT"):
        out = Path(os.environ["SOAK_REPORT"]).resolve()
        print(write(out, json.loads((out / "raw.json").read_text())["results"]))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    bins = run.build()
    run.sh(["go", "build", "-trimpath", "-o", str(run.OUT / "bin" / "soak"), "./cmd/soak"], cwd=run.BENCH)
    bins["soak"] = run.OUT / "bin" / "soak"
    results = {k: soak(k, bins) for k in SERVERS}
    text = write(OUT, results)
    for k in SERVERS:
        run.shutil.rmtree(OUT / f"certs-{k}", ignore_errors=True)
    run.shutil.rmtree(run.OUT, ignore_errors=True)
    print(text)
    run.log(f"report: {OUT / 'report.md'}")


if __name__ == "__main__":
    main()
