#!/usr/bin/env python3
"""A crates.io stand-in on 127.0.0.1, for `make package` (scripts/package.sh).

`build DIR --lock Cargo.lock --crate X.crate...` writes a sparse registry into DIR: the index
lines and .crate files of every crates.io package the lock file names (lines from crates.io's
sparse index, files from cargo's download cache; a file cargo never downloaded, such as another
platform's, is left out and a build that needs it fails on a 404), and the packed crates, their
index lines written from their packed manifests as crates.io writes them on publish.

`serve DIR PORT_FILE` serves DIR over HTTP on a free port of 127.0.0.1 (written to PORT_FILE),
with the `config.json` that points cargo's downloads at it, and logs every request on stderr.
"""

import argparse
import concurrent.futures
import hashlib
import http.server
import json
import os
import pathlib
import sys
import tarfile
import tomllib
import urllib.request

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"


def index_path(name):
    """The file of a crate in a registry index, as crates.io lays it out."""
    name = name.lower()
    if len(name) <= 2:
        return f"{len(name)}/{name}"
    if len(name) == 3:
        return f"3/{name[0]}/{name}"
    return f"{name[:2]}/{name[2:4]}/{name}"


def cargo_cache():
    home = pathlib.Path(os.environ.get("CARGO_HOME", pathlib.Path.home() / ".cargo"))
    return sorted((home / "registry" / "cache").glob("index.crates.io-*"))


def crates_io_lines(name, versions):
    """crates.io's index lines for these versions of a crate (an error if one is missing)."""
    with urllib.request.urlopen(f"https://index.crates.io/{index_path(name)}", timeout=60) as r:
        lines = r.read().decode().splitlines()
    found = {json.loads(line)["vers"]: line for line in lines if line}
    missing = sorted(set(versions) - set(found))
    if missing:
        sys.exit(f"local-registry: crates.io's index has no {name} {', '.join(missing)}")
    return [found[v] for v in sorted(versions)]


def packed_line(crate):
    """The index line crates.io would write for a packed crate, from its packed manifest."""
    data = crate.read_bytes()
    with tarfile.open(crate) as tar:
        member = next(m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Cargo.toml"))
        manifest = tomllib.load(tar.extractfile(member))
    package = manifest["package"]
    deps = []
    tables = [(manifest, None)] + [(t, cfg) for cfg, t in manifest.get("target", {}).items()]
    for table, target in tables:
        for kind, key in (("normal", "dependencies"), ("dev", "dev-dependencies"), ("build", "build-dependencies")):
            for dep, spec in table.get(key, {}).items():
                spec = {"version": spec} if isinstance(spec, str) else spec
                if "version" not in spec:
                    sys.exit(f"local-registry: {package['name']} takes {dep} without a version ({key})")
                deps.append({
                    "name": dep,
                    "req": spec["version"],
                    "features": spec.get("features", []),
                    "optional": spec.get("optional", False),
                    "default_features": spec.get("default-features", True),
                    "target": target,
                    "kind": kind,
                    "registry": None,
                    "package": spec.get("package"),
                })
    # crates.io keeps features that use `dep:` or `?/` apart, in `features2` (index format 2).
    features = manifest.get("features", {})
    new_syntax = {k: v for k, v in features.items() if any("dep:" in f or "?/" in f for f in v)}
    line = {
        "name": package["name"],
        "vers": package["version"],
        "deps": deps,
        "cksum": hashlib.sha256(data).hexdigest(),
        "features": {k: v for k, v in features.items() if k not in new_syntax},
        "yanked": False,
        "links": package.get("links"),
    }
    if new_syntax:
        line["features2"] = new_syntax
        line["v"] = 2
    if "rust-version" in package:
        line["rust_version"] = package["rust-version"]
    return package["name"], package["version"], json.dumps(line, separators=(",", ":"))


def build(args):
    out = pathlib.Path(args.dir)
    (out / "crates").mkdir(parents=True, exist_ok=True)
    index = {}
    packed = {}
    for crate in map(pathlib.Path, args.crate):
        name, version, line = packed_line(crate)
        packed[name] = version
        index.setdefault(name, []).append(line)
        target = out / "crates" / name
        target.mkdir(exist_ok=True)
        (target / f"{name}-{version}.crate").write_bytes(crate.read_bytes())

    wanted = {}
    for lock in args.lock:
        for p in tomllib.load(open(lock, "rb")).get("package", []):
            if p.get("source") == CRATES_IO and p["name"] not in packed:
                wanted.setdefault(p["name"], set()).add(p["version"])
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        for name, lines in zip(wanted, pool.map(lambda n: crates_io_lines(n, wanted[n]), wanted)):
            index[name] = lines

    caches = cargo_cache()
    files = absent = 0
    for name, versions in wanted.items():
        for version in versions:
            source = next((c / f"{name}-{version}.crate" for c in caches if (c / f"{name}-{version}.crate").is_file()), None)
            if source is None:
                absent += 1
                continue
            target = out / "crates" / name
            target.mkdir(exist_ok=True)
            (target / f"{name}-{version}.crate").write_bytes(source.read_bytes())
            files += 1
    for name, lines in index.items():
        path = out / "index" / index_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines))
    print(f"   registry: {len(packed)} packed crates and {sum(map(len, wanted.values()))} crates.io packages "
          f"({files} files from cargo's cache, {absent} never downloaded here)", file=sys.stderr)


def serve(args):
    root = pathlib.Path(args.dir)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def do_GET(self):
            if self.path == "/index/config.json":
                port = self.server.server_address[1]
                body = json.dumps({"dl": f"http://127.0.0.1:{port}/crates/{{crate}}/{{crate}}-{{version}}.crate"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, fmt, *a):
            print(fmt % a, file=sys.stderr, flush=True)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = pathlib.Path(args.port_file + ".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.rename(args.port_file)
    server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(required=True)
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--lock", action="append", default=[])
    b.add_argument("--crate", action="append", default=[])
    b.set_defaults(run=build)
    s = sub.add_parser("serve")
    s.add_argument("dir")
    s.add_argument("port_file")
    s.set_defaults(run=serve)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
