#!/usr/bin/python3
"""layers.py - the server's folders are layers: a file includes headers of its own folder or of
the folders below it, in the order server/module.mk's SERVER_DIRS lists them.

usage: tests/docs/layers.py [SERVER_MODULE_MK]

One file may reach up: engine/engine_init.c, the composition root, builds the admin side
(the console and the admin endpoint) on top of the engine. Exit 0 and "layers hold" when every
include points down; otherwise one line per include that points up, naming file, line and header.
"""
import os
import re
import sys

# Files allowed to include from any layer, and why (printed with a violation elsewhere).
COMPOSITION_ROOTS = {"server/engine/engine_init.c"}


def server_dirs(module_mk):
    with open(module_mk) as f:
        for line in f:
            m = re.match(r"SERVER_DIRS\s*:=\s*(.*)", line)
            if m:
                return m.group(1).split()
    sys.exit("layers: %s has no SERVER_DIRS line" % module_mk)


def main():
    module_mk = sys.argv[1] if len(sys.argv) > 1 else "server/module.mk"
    dirs = server_dirs(module_mk)
    rank = {d: i for i, d in enumerate(dirs)}
    home = {}                                  # header name -> folder holding it
    for d in dirs:
        for name in os.listdir(d):
            if name.endswith(".h"):
                if name in home:
                    sys.exit("layers: %s is in both %s and %s" % (name, home[name], d))
                home[name] = d
    bad = []
    checked = 0
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            if path in COMPOSITION_ROOTS:
                continue
            with open(path) as f:
                for lineno, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m or m.group(1) not in home:
                        continue
                    checked += 1
                    target = home[m.group(1)]
                    if rank[target] > rank[d]:
                        bad.append("%s:%d includes %s from %s, a layer above %s"
                                   % (path, lineno, m.group(1), target, d))
    if bad:
        print("\n".join(bad))
        sys.exit(1)
    print("layers hold: %d includes in %d folders point down" % (checked, len(dirs)))


if __name__ == "__main__":
    main()
