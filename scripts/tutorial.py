#!/usr/bin/env python3
"""docs/tutorial.md, run as written: the steps a reader follows, so the tutorial and what the
commands write cannot drift apart.

Fenced blocks are steps when their info string says so (after the language, which renderers
read alone):
  ```sh run            run with bash in the project (the first one where the project is made)
  ```sh background     started in the background (`make run`); stopped at the end
  ```rust,ignore file=PATH      the project's PATH must contain the block, line for line
  ```rust,ignore replace=PATH   the item of PATH whose first line is the block's first line
                                (up to the line closing it at the same indentation) becomes
                                the block: the edit the tutorial asks the reader to make
Other blocks are prose (deployment to a real cluster cannot run here).

Usage: tutorial.py [TUTORIAL] ; the CLI must be on PATH (scripts/tutorial.sh installs it)."""

import os
import re
import signal
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)(.*)$")


def blocks(path):
    """(line number, language, attributes, text) of every fenced block."""
    out, current = [], None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            match = FENCE.match(line)
            if current is None and match:
                current = (number, match.group(1), match.group(2).split(), [])
            elif current is not None and line == "```":
                out.append((current[0], current[1], current[2], "\n".join(current[3]) + "\n"))
                current = None
            elif current is not None:
                current[3].append(line)
    return out


def fail(where, message):
    sys.exit(f"{where}: {message}")


DECLARATION = re.compile(r"^\s*(?:pub(?:\([\w:]+\))? )?(?:async )?(fn|struct|enum|const|static) (\w+)")


def replace_item(text, block, where):
    """`text` with the item declared like the block's first declaration (its doc comments and
    attributes included) replaced by the block."""
    lines, new = text.split("\n"), block.rstrip("\n").split("\n")
    declared = next((m.groups() for m in map(DECLARATION.match, new) if m), None)
    if declared is None:
        fail(where, "the block declares no item (fn, struct, enum, const, static) to replace")
    found = [i for i, line in enumerate(lines) if (m := DECLARATION.match(line)) and m.groups() == declared]
    if len(found) != 1:
        fail(where, f"`{declared[0]} {declared[1]}` is declared {len(found)} times in the file, not once: the tutorial's edit no longer fits the scaffold")
    start = end = found[0]
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    while start > 0 and lines[start - 1].strip().startswith(("///", "#[")):
        start -= 1
    if lines[end].rstrip().endswith(";"):
        pass
    else:
        end = next((i for i in range(end + 1, len(lines)) if lines[i] == indent + "}"), None)
        if end is None:
            fail(where, f"no line closes `{declared[1]}` at its indentation")
    return "\n".join(lines[:start] + new + lines[end + 1:])


def main():
    tutorial = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "docs", "tutorial.md")
    tutorial = os.path.abspath(tutorial)
    shown = os.path.relpath(tutorial, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    work = tempfile.mkdtemp(prefix="capi-ext-tutorial-")
    cwd, background, steps = work, [], 0
    try:
        for number, language, attributes, text in blocks(tutorial):
            where = f"{shown}:{number}"
            attrs = dict(a.split("=", 1) if "=" in a else (a, "") for a in attributes)
            if "run" in attrs or "background" in attrs:
                print(f"== {where}: {text.strip().splitlines()[0]}", file=sys.stderr, flush=True)
                script = f"set -euo pipefail\n{text}\npwd > {work}/.cwd\n"
                if "background" in attrs:
                    log = f"{work}/background-{number}.log"
                    process = subprocess.Popen(["bash", "-c", text], cwd=cwd, start_new_session=True,
                                               stdout=open(log, "w"), stderr=subprocess.STDOUT)
                    background.append((process, log))
                else:
                    result = subprocess.run(["bash", "-c", script], cwd=cwd, stdin=subprocess.DEVNULL)
                    if result.returncode != 0:
                        for _, log in background:
                            print(f"-- {log}:\n{open(log).read()}", file=sys.stderr)
                        fail(where, f"the step exited {result.returncode}")
                    cwd = open(f"{work}/.cwd").read().strip()
                steps += 1
            elif "file" in attrs or "replace" in attrs:
                relative = attrs.get("file") or attrs.get("replace")
                path = os.path.join(cwd, relative)
                if not os.path.isfile(path):
                    fail(where, f"{relative}: the commands before did not write it")
                content = open(path).read()
                if "file" in attrs:
                    if text not in content:
                        fail(where, f"{relative} does not hold the tutorial's code; it holds:\n{content}")
                else:
                    with open(path, "w") as f:
                        f.write(replace_item(content, text, where))
                steps += 1
        print(f"== {steps} steps of {shown} ran as written", file=sys.stderr)
    finally:
        for process, _ in background:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            process.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
