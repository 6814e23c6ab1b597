#!/bin/sh
# streaming_bench.sh - streaming levels under roaming players: UE's collector settings against
# reap's sliced and paced collections, on the same open world (make streaming-bench).
#
# Starts reap-server once per mode on loopback with deploy/profiles/openworld.ini, server
# streaming in and out (wp.Runtime.EnableServerStreaming=1, ...StreamingOut=1), and runs the
# openworld scenario against it (deploy/scenarios/openworld.ini: a 20 s ramp to --bots roaming
# bots, --duration seconds of roaming, 5 s for all to leave):
#   ue_default          UE's defaults: a full, blocking purge on the frame a level streams out
#   ue_incremental      gc.AllowIncrementalReachability=1, but that purge still blocks, as UE's
#                       forced full purges never mark incrementally (s.SlicedGCAfterLevelStreamedOut=0)
#   sliced              gc.AllowIncrementalReachability=1, the forced collection in 5 ms slices
#                       (reap's s.SlicedGCAfterLevelStreamedOut=1)
#   pacing              gc.FrameSlackPacing=1: the forced collection in each frame's slack
# and writes OUT/streaming.json (figures per mode) and OUT/streaming.svg (frame time and loaded
# levels over time, one line a mode). A benchmark, not a test: it prints figures, asserts
# nothing. It holds /tmp/reap-bench.lock so that no other measurement runs beside it.
#
# usage: tests/bench/streaming_bench.sh [--bots N] [--duration S] [--modes M,M,...]
#                                       [--build DIR] [--out DIR]
set -eu

bots=200
duration=60
modes=ue_default,ue_incremental,sliced,pacing
build=build
out=build/bench
while [ $# -gt 0 ]; do
    case "$1" in
        --bots) bots=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --modes) modes=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "streaming_bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
for n in "$bots" "$duration"; do
    case "$n" in
        ''|*[!0-9]*) echo "streaming_bench: '$n' is not a whole number" >&2; exit 2 ;;
    esac
done
for m in $(echo "$modes" | tr ',' ' '); do
    case "$m" in
        ue_default|ue_incremental|sliced|pacing) ;;
        *) echo "streaming_bench: unknown mode '$m' (ue_default, ue_incremental, sliced, pacing)" >&2
           exit 2 ;;
    esac
done
for bin in "$build/reap-server" "$build/reap-client"; do
    [ -x "$bin" ] || { echo "streaming_bench: $bin not built (run make)" >&2; exit 2; }
done

if [ "${REAP_BENCH_LOCKED:-}" != 1 ]; then
    REAP_BENCH_LOCKED=1 exec flock /tmp/reap-bench.lock "$0" --bots "$bots" \
        --duration "$duration" --modes "$modes" --build "$build" --out "$out"
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

# The port the server printed after prefix in its log, polled for at most 60 s.
wait_port() {
    i=0
    while [ $i -lt 600 ]; do
        port=$(sed -n "s|.*$2\([0-9][0-9]*\).*|\1|p" "$1" | head -n 1)
        if [ -n "$port" ]; then
            echo "$port"
            return 0
        fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
        i=$((i + 1))
    done
    echo "streaming_bench: the server did not report its ports; its log:" >&2
    cat "$1" >&2
    return 1
}

http() {
    python3 -c 'import sys, urllib.request
data = sys.argv[2].encode() if len(sys.argv) > 2 else None
sys.stdout.write(urllib.request.urlopen(sys.argv[1], data=data, timeout=10).read().decode())' "$@"
}

run_mode() {
    mode=$1
    shift
    log="$out/streaming-$mode.log"
    echo "streaming_bench: $mode: $bots roaming bots for $duration s on deploy/profiles/openworld.ini"
    "$build/reap-server" --port 0 --bind 127.0.0.1 --admin-port 0 --max-players $((bots * 2)) \
        --world-profile deploy/profiles/openworld.ini \
        --cvar wp.Runtime.EnableServerStreaming=1 --cvar wp.Runtime.EnableServerStreamingOut=1 \
        --cvar engine.SlowFrameMs=33.3 "$@" > "$log" 2>&1 &
    server_pid=$!
    udp=$(wait_port "$log" "listening on udp 127.0.0.1:")
    admin=$(wait_port "$log" "admin on http://127.0.0.1:")
    "$build/reap-client" --server "127.0.0.1:$udp" --admin "http://127.0.0.1:$admin" \
        --scenario "$scenario" --quiet --seed 1 --out "$out/streaming-churn-$mode" \
        > "$out/streaming-client-$mode.txt" 2>&1 ||
        echo "streaming_bench: $mode: the client exited with $? (see $out/streaming-client-$mode.txt)"
    http "http://127.0.0.1:$admin/metrics" > "$out/streaming-$mode.metrics"
    http "http://127.0.0.1:$admin/stats.json" > "$out/streaming-$mode.stats.json"
    http "http://127.0.0.1:$admin/console" "stat levels" > "$out/streaming-$mode.levels.txt"
    grep VmHWM "/proc/$server_pid/status" > "$out/streaming-$mode.rss" || true
    stop_server
}

# deploy/scenarios/openworld.ini's visit at --bots: a 20 s ramp, --duration s of roaming,
# everyone gone in 5 s (the stream-out of every cell at the end is part of what is measured).
scenario="$out/streaming-scenario.ini"
sed -e "s/^bots = 200$/bots = $bots/" -e "/^\[stage roam\]/,/^$/s/^duration = .*/duration = $duration/" \
    deploy/scenarios/openworld.ini > "$scenario"

for m in $(echo "$modes" | tr ',' ' '); do
    case "$m" in
        ue_default) run_mode ue_default ;;
        ue_incremental) run_mode ue_incremental --cvar gc.AllowIncrementalReachability=1 \
                            --cvar s.SlicedGCAfterLevelStreamedOut=0 ;;
        sliced) run_mode sliced --cvar gc.AllowIncrementalReachability=1 ;;
        pacing) run_mode pacing --cvar gc.FrameSlackPacing=1 ;;
    esac
done

python3 "$(dirname "$0")/streaming_report.py" "$out" "$bots" "$duration" "$modes"
