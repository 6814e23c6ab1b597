#!/bin/sh
# pacing_bench.sh - the "big world" benchmark: UE's collector modes against frame-slack pacing.
#
# Starts reap-server three times on loopback with a persistent world of --props collected
# objects (world.PersistentProps) and churns --bots bots for --duration seconds against each:
#   ue_default      UE's defaults: the whole mark in the frame the interval passes
#   ue_incremental  gc.AllowIncrementalReachability=1 (5 ms mark slices)
#   pacing          gc.FrameSlackPacing=1 (slices in each frame's slack)
# and writes build/bench/pacing.json (figures per mode) and build/bench/pacing.svg (the three
# per-second frame-time series). A benchmark, not a test: it prints figures, asserts nothing.
# It holds /tmp/reap-bench.lock so that no other measurement runs beside it.
#
# With a world profile (--profile shooter|mmo|deep|FILE, or PACING_PROFILE) the server runs it
# and each visit spawns its mix (--spawn-mix, PACING_SPAWN_MIX; default: the mix the profile's
# header names) instead of props; --props 0 then leaves the profile's own objects alone. With a
# profile the churn client also samples /metrics, so OUT/pacing-churn-MODE/ are full reports
# that `reap-client compare` can set side by side.
#
# usage: tests/bench/pacing_bench.sh [--props N] [--bots N] [--duration S] [--interval S]
#                                    [--profile P] [--spawn-mix MIX] [--build DIR] [--out DIR]
set -eu

props=1000000
bots=64
duration=60
interval=10
build=build
out=build/bench
profile=${PACING_PROFILE:-}
mix=${PACING_SPAWN_MIX:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --props) props=$2; shift 2 ;;
        --bots) bots=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --interval) interval=$2; shift 2 ;;
        --profile) profile=$2; shift 2 ;;
        --spawn-mix) mix=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "pacing_bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
for n in "$props" "$bots" "$duration" "$interval"; do
    case "$n" in
        ''|*[!0-9]*) echo "pacing_bench: '$n' is not a whole number" >&2; exit 2 ;;
    esac
done
for bin in "$build/reap-server" "$build/reap-client"; do
    [ -x "$bin" ] || { echo "pacing_bench: $bin not built (run make)" >&2; exit 2; }
done

profile_file=
if [ -n "$profile" ]; then
    case "$profile" in
        */*|*.ini) profile_file=$profile ;;
        *) profile_file=deploy/profiles/$profile.ini ;;
    esac
    [ -r "$profile_file" ] || { echo "pacing_bench: no world profile '$profile_file'" >&2; exit 2; }
    [ -n "$mix" ] || mix=$(sed -n 's/.*Spawn mix: \([A-Za-z0-9_:,]*\).*/\1/p' "$profile_file" | head -n 1)
    [ -n "$mix" ] || { echo "pacing_bench: $profile_file names no spawn mix: --spawn-mix" >&2; exit 2; }
fi

if [ "${REAP_BENCH_LOCKED:-}" != 1 ]; then
    REAP_BENCH_LOCKED=1 PACING_PROFILE="$profile" PACING_SPAWN_MIX="$mix" \
        exec flock /tmp/reap-bench.lock "$0" --props "$props" --bots "$bots" \
        --duration "$duration" --interval "$interval" --build "$build" --out "$out"
fi

mkdir -p "$out"
server_pid=

stop_server() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
trap stop_server EXIT INT TERM

# The port the server printed after prefix in its log, polled for at most 120 s (a million
# props take a few seconds to spawn).
wait_port() {
    i=0
    while [ $i -lt 1200 ]; do
        port=$(sed -n "s|.*$2\([0-9][0-9]*\).*|\1|p" "$1" | head -n 1)
        if [ -n "$port" ]; then
            echo "$port"
            return 0
        fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
        i=$((i + 1))
    done
    echo "pacing_bench: the server did not report its ports; its log:" >&2
    cat "$1" >&2
    return 1
}

http_get() {
    python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"
}

run_mode() {
    mode=$1
    shift
    log="$out/pacing-$mode.log"
    echo "pacing_bench: $mode: $props props, $bots bots for $duration s, interval $interval s${profile_file:+, profile $profile_file, spawn mix $mix}"
    [ -n "$profile_file" ] && set -- "$@" --world-profile "$profile_file"
    # More bots than the default 64 players need the room (abrupt leavers hold a slot until
    # they time out); at the default the server runs as it always did here.
    [ "$bots" -gt 64 ] && set -- "$@" --max-players $((bots * 2))
    "$build/reap-server" --port 0 --bind 127.0.0.1 --admin-port 0 \
        --cvar "world.PersistentProps=$props" \
        --cvar "gc.TimeBetweenPurgingPendingKillObjects=$interval" \
        --cvar engine.SlowFrameMs=33.3 "$@" > "$log" 2>&1 &
    server_pid=$!
    udp=$(wait_port "$log" "listening on udp 127.0.0.1:")
    admin=$(wait_port "$log" "admin on http://127.0.0.1:")
    visit=
    [ -n "$profile_file" ] && visit="--admin http://127.0.0.1:$admin --spawn-mix $mix"
    # shellcheck disable=SC2086 # visit is two words or none on purpose
    "$build/reap-client" --server "127.0.0.1:$udp" --bots "$bots" --duration "$duration" $visit \
        --quiet --seed 1 --out "$out/pacing-churn-$mode" > "$out/pacing-client-$mode.txt" 2>&1 ||
        echo "pacing_bench: $mode: the client exited with $? (see $out/pacing-client-$mode.txt)"
    http_get "http://127.0.0.1:$admin/metrics" > "$out/pacing-$mode.metrics"
    http_get "http://127.0.0.1:$admin/stats.json" > "$out/pacing-$mode.stats.json"
    stop_server
}

run_mode ue_default
run_mode ue_incremental --cvar gc.AllowIncrementalReachability=1
run_mode pacing --cvar gc.FrameSlackPacing=1

python3 "$(dirname "$0")/pacing_report.py" "$out" "$props" "$bots" "$duration" "$interval"
