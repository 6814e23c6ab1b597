#!/usr/bin/python3
"""The README's "Wire examples" from a real server run.

Starts the real reap-server on free loopback ports with a small world (so that two players see
each other), plays the examples' session with BUILD/tests/wire/wire_capture (which saves every
packet its clients receive), and then either writes the examples into the README's
`<!-- wire: NAME -->` regions (--write) or checks them (--check, in `make test`): every
example's hex must decode to its table by the independent decoder (tests/wire/decode_reap.py,
written from the docs), and must be what the server sent, byte for byte except frame numbers,
the coordinates of what moves and the lengths around them.

usage: tests/docs/wire_examples.py BUILD_DIR --write|--check [README]
       (make BUILD_DIR/tests/wire/wire_capture first; `make check` builds it)
"""
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wire"))
import decode_reap  # noqa: E402

DEADLINE = 20.0
# The server of the examples: the defaults, in a world small enough that every pawn is within
# an eighth of the cull distance of every other (README, "Wire examples").
SERVER_ARGS = ["--port", "0", "--bind", "127.0.0.1", "--admin-port", "0",
               "--cvar", "world.Extent=1000"]


def start_server(build):
    """(process, UDP port, admin port) of a fresh server."""
    server = subprocess.Popen([os.path.join(build, "reap-server")] + SERVER_ARGS,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, bufsize=0)
    text, deadline = b"", time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        m = re.search(rb"listening on udp [0-9.]+:(\d+)", text)
        a = re.search(rb"admin on http://[0-9.]+:(\d+)", text)
        if m and a:
            return server, int(m.group(1)), int(a.group(1))
        ready, _, _ = select.select([server.stderr], [], [], 0.2)
        if ready:
            chunk = os.read(server.stderr.fileno(), 65536)
            if not chunk:
                break
            text += chunk
    server.kill()
    server.wait()
    sys.exit("wire_examples: the server did not start:\n" + text.decode(errors="replace"))


def capture(build, folder):
    server, port, admin = start_server(build)
    try:
        tool = os.path.join(build, "tests", "wire", "wire_capture")
        if not os.path.exists(tool):
            sys.exit("wire_examples: %s is not built (make %s)" % (tool, tool))
        run = subprocess.run([tool, str(port), folder, str(admin)], capture_output=True,
                             text=True,
                             timeout=DEADLINE * 3)
        if run.returncode != 0:
            sys.exit("wire_examples: the capture failed:\n" + run.stdout + run.stderr)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("--write", "--check"):
        sys.exit(__doc__)
    build, mode = sys.argv[1], sys.argv[2]
    path = sys.argv[3] if len(sys.argv) > 3 else "README.md"
    envelope = decode_reap.load_pool(os.path.join(build, "gen", "reap.desc")) \
        .FindMessageTypeByName("reap.Envelope")
    with open(path) as f:
        readme = f.read().split("\n")
    with tempfile.TemporaryDirectory() as folder:
        capture(build, folder)
        if mode == "--write":
            readme = decode_reap.write_examples(envelope, readme, folder)
            with open(path, "w") as f:
                f.write("\n".join(readme))
            print("wire_examples: wrote %d examples into %s" %
                  (len(decode_reap.regions(readme)), path))
            return 0
        bad = decode_reap.check_examples(envelope, readme, folder, sys.stdout)
    if bad:
        print("(%d differences; tests/docs/wire_examples.py %s --write rewrites them)" %
              (bad, build))
        return 1
    print("wire examples match a real server (%d examples)" % len(decode_reap.regions(readme)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
