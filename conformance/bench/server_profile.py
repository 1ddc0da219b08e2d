#!/usr/bin/env python3
"""Where the server's CPU goes under the 50-client GeneratePatches load: `perf record` (the
cpu-clock software event, so it works where hardware counters do not) on the capi-ext bench
server while the load generator sends the ~215 KiB request over HTTP/2, then each sample
attributed to one part of the server by its call stack. Run with `make bench-profile`; needs
`perf` (Debian: linux-perf). Writes results/profile-<stamp>/profile.md.

A benchmark, not a test. PROFILE_DURATION (8s), PROFILE_CLIENTS (50) and PROFILE_PROTO (h2) set
the load.
"""
import collections, json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

DURATION = os.environ.get("PROFILE_DURATION", "8s")
CLIENTS = os.environ.get("PROFILE_CLIENTS", "50")
PROTO = os.environ.get("PROFILE_PROTO", "h2")
OUT = run.ROOT / "results" / f"profile-{run.STAMP}"

# The parts of a request, each named by the frames that mark it, looked for from the root of a
# stack to its leaf: the first part found owns the sample. Order matters only where one part
# runs inside another (the handler inside the dispatch, allocation everywhere). A mark ending in
# `$` must end the frame's name.
PARTS = [
    ("decode (serde_json, into the hook's request type)", ["ErasedHandler>::prepare$"]),
    ("handler, encode, drop of the request", ["as capi_ext::extension::ErasedHandler>::prepare::{{closure}}", "capi_ext::extension::encode"]),
    ("body collection (frames copied into one buffer)", ["capi_ext::server::collect_body"]),
    ("TLS (rustls: socket reads and writes, records, AES-GCM)", ["rustls::", "ring::", "ring_core_"]),
    ("HTTP/2 framing and flow control (h2)", ["h2::"]),
    ("HTTP/1.1 (hyper)", ["hyper::proto::h1"]),
    ("request span, log, metrics, budget", ["tracing::", "tracing_core::", "prometheus_client::", "capi_ext::server::metrics", "capi_ext::server::budget", "tokio::sync::"]),
    ("the rest of the request path (routing, tasks, hyper)", ["capi_ext::server::handle", "capi_ext::extension::Extension::dispatch", "hyper::"]),
    ("scheduler (tokio: wake-ups, parking, I/O readiness)", ["tokio::runtime::"]),
]


def attribute(stack):
    """`stack`: function names, leaf first."""
    for name, marks in PARTS:
        for frame in reversed(stack):
            if any(frame.endswith(m[:-1]) if m.endswith("$") else m in frame for m in marks):
                return name
    if stack and all(f.startswith("[k]") or f == "[unknown]" for f in stack):
        return "kernel (syscalls, network stack, page faults)"
    return "other"


def samples(data):
    """Parses `perf script` output into stacks of names, leaf first."""
    out = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,sym"], capture_output=True, text=True, check=True).stdout
    stack = []
    for line in out.splitlines() + [""]:
        line = line.strip()
        if not line:
            if stack:
                yield stack
            stack = []
            continue
        parts = line.split(None, 1)
        stack.append(parts[1] if len(parts) > 1 else "[unknown]")


# The parts that are the codec itself: what `make bench`'s codec_only does, as it runs in the server.
CODEC = PARTS[0][0], PARTS[1][0]


def overhead(counts):
    """The server's CPU above its codec: every other sample over the codec's samples."""
    codec = sum(counts.get(name, 0) for name in CODEC)
    return (sum(counts.values()) - codec) / codec if codec else float("nan")


def measure(bins, certs, out):
    """Profiles the bench server under the load; `perf.data` is written in `out` and removed.
    Returns the samples per part, the server's CPU per request and the load generator's result."""
    port = run.free_port()
    pid, base, _, _ = run.start_server("rust", bins, str(certs), port)
    url = f"{base}/generatepatches/generate-patches?timeout=10s"
    load = run.pinned([bins["loadgen"], "-url", url, "-ca", f"{certs}/ca.crt", "-proto", PROTO, "-c", CLIENTS, "-body", str(run.PAYLOAD)], run.LOAD_CPUS)
    data = out / "perf.data"
    try:
        run.sh(load + ["-d", "2s"])  # warm-up
        seconds = float(DURATION.rstrip("s"))
        perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "1999", "--call-graph", "dwarf,16384", "-p", str(pid), "-o", str(data),
                                 "--", "sleep", str(seconds + 1)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        cpu0 = run.cpu_seconds(pid)
        result = json.loads(run.sh(load + ["-d", DURATION]).stdout)
        cpu = run.cpu_seconds(pid) - cpu0
        perf.wait()
    finally:
        run.stop(pid)
    counts = collections.Counter(attribute(s) for s in samples(data))
    data.unlink()
    return {"counts": dict(counts), "per_request_us": 1e6 * cpu / result["requests"], "load": result}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    bins = run.build()
    certs = OUT / "certs"
    run.sh([bins["cli"], "certs", "--out", str(certs)])
    measured = measure(bins, certs, OUT)
    counts, per_request_us, result = collections.Counter(measured["counts"]), measured["per_request_us"], measured["load"]
    total = sum(counts.values())
    lines = [f"# Server profile {run.STAMP}", "",
             f"capi-ext's bench server under {CLIENTS} clients sending the ~215 KiB GeneratePatches request over {PROTO} for {DURATION} "
             f"({result['requests']} requests, {result['rps']:.0f} req/s, p99 {result['p99_ms']:.1f} ms), {total} samples of `perf record -e cpu-clock`. "
             f"Server CPU per request (with the profiler attached): {per_request_us:.0f} µs.", "",
             "| part | share of the server's CPU | µs per request |", "|---|---|---|"]
    for name, n in counts.most_common():
        lines.append(f"| {name} | {100 * n / total:.1f}% | {per_request_us * n / total:.0f} |")
    lines += ["", f"The server's CPU above its codec (decode, handler and encode): **{100 * overhead(counts):.0f}%**."]
    text = "\n".join(lines) + "\n"
    (OUT / "profile.md").write_text(text)
    run.shutil.rmtree(certs, ignore_errors=True)
    run.shutil.rmtree(run.OUT, ignore_errors=True)
    print(text)
    run.log(f"report: {OUT / 'profile.md'}")


if __name__ == "__main__":
    main()
