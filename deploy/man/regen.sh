#!/bin/sh
# Regenerates deploy/man/reap-server.1 and reap-client.1 from the built binaries' --help
# (gen-man.sh); with --check, changes nothing and fails (naming the page) when a committed page
# is not what its binary's --help makes of it. `make man` runs the first, `make test` the second.
#
# usage: deploy/man/regen.sh BUILD_DIR [--check]
set -eu
build=$1; check=${2:-}
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dir/gen-man.sh" "$build/reap-server" reap-server \
    "headless dedicated game server with a UE5-style garbage collector" > "$tmp/reap-server.1"
"$dir/gen-man.sh" "$build/reap-client" reap-client \
    "thin test client and churn load generator for reap-server" merge compare > "$tmp/reap-client.1"
rc=0
for page in reap-server.1 reap-client.1; do
    if [ "$check" = --check ]; then
        if ! cmp -s "$tmp/$page" "$dir/$page"; then
            echo "deploy/man/$page is not what --help says; run 'make man' and commit it:" >&2
            diff -u "$dir/$page" "$tmp/$page" >&2 || true
            rc=1
        fi
    else
        cp "$tmp/$page" "$dir/$page"
    fi
done
exit $rc
