#!/usr/bin/python3
"""layers.py - a program's folders are layers: a file includes headers of its own folder or of
the folders below it, in the order its module.mk lists them (server/module.mk's SERVER_DIRS,
client/module.mk's CLIENT_DIRS).

usage: tests/docs/layers.py [MODULE_MK...]      (default: server/module.mk client/module.mk)

One file may reach up: server/engine/engine_init.c, the composition root, builds the admin side
(the console and the admin endpoint) on top of the engine. For each module.mk, "layers hold"
and a count when every include points down; otherwise one line per include that points up,
naming file, line and header, and exit 1.
"""
import os
import re
import sys

# Files allowed to include from any layer, and why (printed with a violation elsewhere).
COMPOSITION_ROOTS = {"server/engine/engine_init.c"}


def layer_dirs(module_mk):
    with open(module_mk) as f:
        for line in f:
            m = re.match(r"[A-Z]+_DIRS\s*:=\s*(.*)", line)
            if m:
                return m.group(1).split()
    sys.exit("layers: %s has no *_DIRS line (SERVER_DIRS, CLIENT_DIRS)" % module_mk)


def check(module_mk):
    """The includes of module_mk's folders that point up, and how many point down."""
    dirs = layer_dirs(module_mk)
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
    return bad, checked, len(dirs)


def main():
    modules = sys.argv[1:] or ["server/module.mk", "client/module.mk"]
    failed = False
    for module_mk in modules:
        bad, checked, n_dirs = check(module_mk)
        if bad:
            print("\n".join(bad))
            failed = True
        else:
            print("layers hold: %d includes in %d folders point down" % (checked, n_dirs))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
