#!/bin/sh
# Installs the Debian packages reap needs to build and test, when any is missing.
# Idempotent: prints nothing but one line when everything is already there.
#
# usage: deploy/install-deps.sh [--bench] [--check]
#   --bench   also the benchmark peers (Boehm GC, Lua 5.4)
#   --check   only report what is missing; exit 1 if anything is
set -eu

BUILD_PKGS="gcc make pkg-config libuv1-dev libenet-dev libprotobuf-c-dev protobuf-c-compiler \
libinih-dev libmicrohttpd-dev libcurl4-openssl-dev libsystemd-dev libjansson-dev"
# prometheus: promtool lints /metrics; yamllint, python3-yaml, python3-jsonschema: the Agones
# manifests are checked offline; systemd: systemd-analyze verifies the installed unit;
# chromium: the admin dashboard is loaded in headless Chromium. python3-protobuf: the wire
# test decodes captured packets with an independent decoder written in Python.
TEST_PKGS="libcmocka-dev prometheus yamllint python3 python3-yaml python3-jsonschema systemd \
chromium python3-protobuf"
BENCH_PKGS="libgc-dev liblua5.4-dev"

pkgs="$BUILD_PKGS $TEST_PKGS"
check_only=0
for arg in "$@"; do
    case "$arg" in
        --bench) pkgs="$pkgs $BENCH_PKGS" ;;
        --check) check_only=1 ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

missing=""
for p in $pkgs; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi
echo "install-deps: missing:$missing"
[ "$check_only" -eq 1 ] && exit 1

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "install-deps: need root to install:$missing" >&2
        echo "install-deps: run as root: apt-get update && apt-get install -y$missing" >&2
        exit 1
    fi
else
    SUDO=
fi

echo "install-deps: apt-get update"
$SUDO apt-get update -qq
echo "install-deps: apt-get install$missing"
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
echo "install-deps: done"
