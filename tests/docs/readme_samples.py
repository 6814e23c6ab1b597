#!/usr/bin/python3
"""README samples from real runs.

Each sample in README.md follows a marker line `<!-- sample: NAME -->` and is the fenced block
right after it. This script starts the real reap-server (free loopback ports) and reap-client,
and either writes what they printed into those blocks (--write) or checks that the blocks say
what a real run says (--check, in `make test`): timestamps, durations and frame numbers may
differ, every other figure (object counts, players, collections) must be the same.

The smoke-run sample (a 20 s churn) is checked by shape: its figures vary from run to run, so
every number is compared as "N"; the lines, their labels and their order must be what the
binaries print. One line is optional: "reap-client: refused: ..." appears only in a run where
a bot found the server full (an abrupt leaver's slot is held until ENet times it out), which a
20 s churn may or may not meet.

usage: tests/docs/readme_samples.py BUILD_DIR --write|--check [README]
"""
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE = 20.0


def read_until(proc, pattern, lines, deadline):
    """Reads proc's stderr lines into `lines` until one (read now or before) matches; the
    match, or None at EOF or the deadline."""
    seen = 0
    while True:
        for text in lines[seen:]:
            m = re.search(pattern, text)
            if m:
                return m
        seen = len(lines)
        if time.monotonic() >= deadline:
            return None
        ready, _, _ = select.select([proc.stderr], [], [], 0.2)
        if not ready:
            continue
        chunk = os.read(proc.stderr.fileno(), 65536)
        if not chunk:
            return None
        proc.partial = getattr(proc, "partial", b"") + chunk
        while b"\n" in proc.partial:
            line, proc.partial = proc.partial.split(b"\n", 1)
            lines.append(line.decode())


SMOKE_COMMAND = ["$ build/reap-client --server 127.0.0.1:7777 --admin http://127.0.0.1:7780 \\",
                 "      --scenario deploy/scenarios/smoke.ini --seed 42 --quiet"]


def start_server(build, lines):
    """A reap-server on deploy/reap.ini with free ports; (process, port, admin port)."""
    server = subprocess.Popen([os.path.join(build, "reap-server"), "--config", "deploy/reap.ini",
                               "--port", "0", "--admin-port", "0"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, bufsize=0)
    deadline = time.monotonic() + DEADLINE
    m = read_until(server, r"listening on udp [0-9.]+:(\d+)", lines, deadline)
    a = m and read_until(server, r"admin on http://[0-9.]+:(\d+)", lines, deadline)
    if not m or not a:
        server.kill()
        server.wait()
        sys.exit("readme_samples: the server did not start:\n" + "\n".join(lines))
    return server, m.group(1), a.group(1)


def run_smoke(build):
    """The shipped smoke scenario against a fresh server, as the README's sample shows it."""
    lines = []
    server, port, admin = start_server(build, lines)
    try:
        with tempfile.TemporaryDirectory() as out:
            client = subprocess.run([os.path.join(build, "reap-client"), "--server",
                                     "127.0.0.1:" + port, "--admin", "http://127.0.0.1:" + admin,
                                     "--scenario", "deploy/scenarios/smoke.ini", "--seed", "42",
                                     "--quiet", "--out", out],
                                    capture_output=True, text=True, timeout=DEADLINE + 40)
            if client.returncode != 0:
                sys.exit("readme_samples: the smoke run failed:\n" + client.stdout + client.stderr)
            printed = (client.stdout + client.stderr).replace(out, "build/churn")
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    printed = printed.replace(":" + port, ":7777").replace(":" + admin, ":7780")
    return SMOKE_COMMAND + [l for l in printed.splitlines() if l.strip()]


def run(build):
    lines = []
    server, port, admin = start_server(build, lines)
    try:
        deadline = time.monotonic() + DEADLINE
        client = subprocess.run([os.path.join(build, "reap-client"), "--server",
                                 "127.0.0.1:" + port, "--spawn", "10"],
                                capture_output=True, text=True, timeout=DEADLINE)
        if client.returncode != 0:
            sys.exit("readme_samples: the client failed:\n" + client.stdout + client.stderr)
        read_until(server, r"left World0", lines, deadline)
        server.send_signal(signal.SIGINT)
        read_until(server, r"^.*\bstopped$", lines, deadline)
        server.wait(timeout=DEADLINE)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()

    def default_ports(text):
        return text.replace(":" + port, ":7777").replace(":" + admin, ":7780")

    start = [default_ports(l) for l in lines[:3]]
    purge = [default_ports(l) for l in lines if "final full purge" in l]
    return {
        "smoke-run": run_smoke(build),
        "server-start": start,
        "client-join": ["$ build/reap-client --server 127.0.0.1:7777 --spawn 10"] +
                       [default_ports(l) for l in client.stdout.splitlines()],
        "server-stop": purge,
    }


def normalise(line):
    line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", "TIME", line)
    line = re.sub(r"\d+\.\d+ s\b", "N s", line)
    line = re.sub(r"frame \d+", "frame N", line)
    return line.rstrip()


def shape(line):
    """A line with every number (and the run of spaces aligning it) made alike."""
    line = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return re.sub(r"\s+", " ", line).strip()


def optional(name, line):
    """A line a real run prints only sometimes (see the docstring)."""
    return name == "smoke-run" and line.startswith("reap-client: refused:")


def blocks(readme):
    """(name, first line index, end index) of each sample's fenced block."""
    out = []
    for i, line in enumerate(readme):
        m = re.match(r"<!-- sample: ([a-z-]+) -->", line)
        if not m:
            continue
        if i + 1 >= len(readme) or not readme[i + 1].startswith("```"):
            sys.exit(f"README.md:{i + 1}: a sample marker must be followed by a ``` block")
        end = i + 2
        while end < len(readme) and not readme[end].startswith("```"):
            end += 1
        out.append((m.group(1), i + 2, end))
    return out


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("--write", "--check"):
        sys.exit(__doc__)
    build, mode = sys.argv[1], sys.argv[2]
    path = sys.argv[3] if len(sys.argv) > 3 else "README.md"
    with open(path) as f:
        readme = f.read().split("\n")
    found = blocks(readme)
    if not found:
        sys.exit(f"{path}: no <!-- sample: NAME --> markers")
    samples = run(build)
    failed = 0
    for name, first, end in reversed(found):
        if name not in samples:
            sys.exit(f"{path}:{first - 1}: unknown sample '{name}' (known: {', '.join(samples)})")
        if mode == "--write":
            readme[first:end] = samples[name]
            continue
        norm = shape if name == "smoke-run" else normalise
        have = [norm(l) for l in readme[first:end] if not optional(name, l)]
        want = [norm(l) for l in samples[name] if not optional(name, l)]
        if have != want:
            failed += 1
            print(f"{path}:{first}: sample '{name}' is stale; a real run prints:", file=sys.stderr)
            print("\n".join(samples[name]), file=sys.stderr)
            print("(run tests/docs/readme_samples.py build --write)", file=sys.stderr)
    if mode == "--write":
        with open(path, "w") as f:
            f.write("\n".join(readme))
    elif failed == 0:
        print(f"readme_samples: {len(found)} samples match a real run")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
