#!/bin/sh
# travel_bench.sh - the match cycle's change of map: UE's blocking travel against reap's
# sliced travel (gc.FrameSlackPacing=1) on maps of about a million objects (make travel-bench).
#
# Starts one fresh reap-server per mode on loopback with a big Default map, lets it settle,
# then travels --travels times (servertravel Default, seamless unless --hard), each travel
# waited for on /metrics, and records per travel: its time, its frames, the longest frame,
# the frames over the 33 ms budget, the resident memory and objects after it, leaked worlds.
# Maps (--map):
#   props       world.PersistentProps=N (--props N, default 1000000: 1,001,019 objects), in the
#               world profile --profile FILE if given (e.g. deploy/profiles/mmo.ini, so that
#               bots with --spawn-mix House:1,Furniture:4 in BOT_TRAVEL_ARGS spawn its mix)
#   openworld   deploy/profiles/openworld.ini's cells, every one loaded (989,980 objects)
# Modes (--modes): blocking (UE's: each phase runs to its end in one frame), sliced (reap's:
# each phase in the frame's slack). Then the leaky profile's verdict (deploy/profiles/leaky.ini:
# a bot's Tracker holds its level; the travel's leak check names the chain).
#
# Bots (--bots N, default 0): the churn client's standard visit against the server during the
# travels. The client follows every travel (seamless: through ARRIVE; hard: it reconnects) and
# measures each bot's travel, DEPART to the new map's snapshot: its p50/p99 go into the JSON
# (bot_travel_p50_ms, bot_travel_p99_ms, bot_errors, from the client's report.json).
# BOT_TRAVEL_ARGS adds client flags (e.g. --threshold travel_p99<5s).
#
# Writes OUT/travel-MODE.json per mode, OUT/travel-leaky.json, and with travel_report.py the
# summary OUT/travel.json and the picture OUT/travel.svg, and prints the tables. A
# benchmark, not a test: it prints figures, asserts nothing. It holds /tmp/reap-bench.lock
# (exclusive) so that no other measurement runs beside it.
#
# usage: tests/bench/travel_bench.sh [--travels N] [--map props|openworld] [--modes M,M]
#                                    [--hard] [--bots N] [--props N] [--profile FILE]
#                                    [--build DIR] [--out DIR]
set -eu

travels=10
map=props
modes=blocking,sliced
travel_mode=seamless
bots=0
props=1000000
profile=
build=build
out=build/bench
# More churn client flags (the client follows travels by itself).
BOT_TRAVEL_ARGS=${BOT_TRAVEL_ARGS:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --travels) travels=$2; shift 2 ;;
        --map) map=$2; shift 2 ;;
        --modes) modes=$2; shift 2 ;;
        --hard) travel_mode=hard; shift ;;
        --bots) bots=$2; shift 2 ;;
        --props) props=$2; shift 2 ;;
        --profile) profile=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "travel_bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
for n in "$travels" "$bots" "$props"; do
    case "$n" in
        ''|*[!0-9]*) echo "travel_bench: '$n' is not a whole number" >&2; exit 2 ;;
    esac
done
case "$map" in
    props|openworld) ;;
    *) echo "travel_bench: unknown map '$map' (props, openworld)" >&2; exit 2 ;;
esac
for m in $(echo "$modes" | tr ',' ' '); do
    case "$m" in
        blocking|sliced) ;;
        *) echo "travel_bench: unknown mode '$m' (blocking, sliced)" >&2; exit 2 ;;
    esac
done
for bin in "$build/reap-server" "$build/reap-client"; do
    [ -x "$bin" ] || { echo "travel_bench: $bin not built (run make)" >&2; exit 2; }
done

if [ "${REAP_BENCH_LOCKED:-}" != 1 ]; then
    extra=
    [ "$travel_mode" = hard ] && extra=--hard
    REAP_BENCH_LOCKED=1 exec flock /tmp/reap-bench.lock "$0" --travels "$travels" \
        --map "$map" --modes "$modes" --bots "$bots" --props "$props" ${profile:+--profile "$profile"} --build "$build" --out "$out" $extra
fi

mkdir -p "$out"
server_pid=
bots_pid=

stop_all() {
    if [ -n "$bots_pid" ]; then
        kill -TERM "$bots_pid" 2>/dev/null || true
        wait "$bots_pid" 2>/dev/null || true
        bots_pid=
    fi
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
trap stop_all EXIT INT TERM

# The port the server printed after prefix in its log, polled for at most 120 s (a big map
# loads before the server listens).
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
    echo "travel_bench: the server did not report its ports; its log:" >&2
    cat "$1" >&2
    return 1
}

http() {
    python3 -c 'import sys, urllib.request
data = sys.argv[2].encode() if len(sys.argv) > 2 else None
sys.stdout.write(urllib.request.urlopen(sys.argv[1], data=data, timeout=30).read().decode())' "$@"
}

# The value of one metric series (name with its labels) on a /metrics page.
metric() {
    http "http://127.0.0.1:$admin/metrics" | awk -v s="$1" '$1 == s { print $2; exit }'
}

# Waits (at most 300 s) until the series is at least want.
wait_metric() {
    i=0
    while [ $i -lt 3000 ]; do
        v=$(metric "$1")
        if [ -n "$v" ] && python3 -c "import sys; sys.exit(0 if float('$v') >= $2 else 1)"; then
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    echo "travel_bench: $1 stayed at ${v:-?} (wanted >= $2)" >&2
    return 1
}

start_server() {
    log=$1
    shift
    "$build/reap-server" --port 0 --bind 127.0.0.1 --admin-port 0 --max-players 1000 \
        --cvar engine.SlowFrameMs=1000 "$@" > "$log" 2>&1 &
    server_pid=$!
    udp=$(wait_port "$log" "listening on udp 127.0.0.1:")
    admin=$(wait_port "$log" "admin on http://127.0.0.1:")
}

start_bots() {
    [ "$bots" -gt 0 ] || return 0
    # The standard churn visit; the bots follow the travels the console asks for.
    "$build/reap-client" --server "127.0.0.1:$udp" --admin "http://127.0.0.1:$admin" \
        --bots "$bots" --duration 86400 --quiet --seed 1 $BOT_TRAVEL_ARGS \
        --out "$out/travel-churn-$1" > "$out/travel-client-$1.txt" 2>&1 &
    bots_pid=$!
}

run_mode() {
    mode=$1
    shift
    log="$out/travel-$mode.log"
    rows="$out/travel-$mode.rows"
    : > "$rows"
    echo "travel_bench: $mode: $travels $travel_mode travel(s) of map Default ($map), $bots bot(s)"
    case "$map" in
        props) start_server "$log" --cvar world.PersistentProps="$props" \
                   ${profile:+--world-profile "$profile"} "$@" ;;
        openworld) start_server "$log" --world-profile deploy/profiles/openworld.ini "$@" ;;
    esac
    start_bots "$mode"
    sleep 3
    series="reap_travels_total{mode=\"$travel_mode\"}"
    k=1
    while [ "$k" -le "$travels" ]; do
        http "http://127.0.0.1:$admin/console" "servertravel Default $travel_mode" > /dev/null
        wait_metric "$series" "$k"
        rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$server_pid/status")
        echo "$k $(metric reap_travel_last_seconds) $(metric reap_travel_last_frames)" \
            "$(metric reap_travel_last_longest_frame_seconds)" \
            "$(metric reap_travel_last_frames_over_budget) $rss $(metric reap_gc_objects)" \
            "$(metric reap_world_leaked_worlds)" >> "$rows"
        k=$((k + 1))
        sleep 1
    done
    stop_all
    python3 - "$rows" "$out/travel-$mode.json" "$mode" "$map" "$travel_mode" "$bots" \
        "$out/travel-churn-$mode/report.json" <<'EOF'
import json, os, sys
rows, path, mode, world, how, bots, client = sys.argv[1:8]
travels = []
for line in open(rows):
    k, secs, frames, longest, over, rss_kb, objects, leaked = line.split()
    travels.append({"travel": int(k), "seconds": float(secs), "frames": int(float(frames)),
                    "longest_frame_ms": float(longest) * 1e3,
                    "frames_over_budget": int(float(over)), "rss_mb": int(rss_kb) / 1024.0,
                    "objects": int(float(objects)), "leaked_worlds": int(float(leaked))})
report = {"mode": mode, "map": world, "travel": how, "bots": int(bots), "travels": travels,
          "travel_seconds_max": max(t["seconds"] for t in travels),
          "longest_frame_ms": max(t["longest_frame_ms"] for t in travels),
          "frames_over_budget": sum(t["frames_over_budget"] for t in travels),
          "leaked_worlds": travels[-1]["leaked_worlds"]}
if int(bots) > 0 and os.path.exists(client):
    c = json.load(open(client))
    lat = c["latency"].get("travel", {})
    report.update({"bot_travels": c["counts"].get("travels"), "bot_errors": c["counts"]["errors"],
                   "bot_travel_p50_ms": lat.get("p50_ms"), "bot_travel_p99_ms": lat.get("p99_ms")})
    print("bots: %s travels followed, p50 %s ms, p99 %s ms, %s errors" % (
        report["bot_travels"], report["bot_travel_p50_ms"], report["bot_travel_p99_ms"],
        report["bot_errors"]))
json.dump(report, open(path, "w"), indent=2)
print("%-9s %-6s %8s %7s %12s %10s %9s %9s" % ("mode", "travel", "seconds", "frames",
      "longest ms", "over 33ms", "RSS MiB", "leaked"))
for t in travels:
    print("%-9s %-6d %8.3f %7d %12.1f %10d %9.1f %9d" % (mode, t["travel"], t["seconds"],
          t["frames"], t["longest_frame_ms"], t["frames_over_budget"], t["rss_mb"],
          t["leaked_worlds"]))
EOF
}

for m in $(echo "$modes" | tr ',' ' '); do
    case "$m" in
        blocking) run_mode blocking ;;
        sliced) run_mode sliced --cvar gc.FrameSlackPacing=1 ;;
    esac
done

# The leaky profile: a bot's Tracker (lifetime = instance) holds Arena's level; a travel.
log="$out/travel-leaky.log"
echo "travel_bench: leaky: deploy/profiles/leaky.ini, a Tracker, servertravel Docks"
start_server "$log" --world-profile deploy/profiles/leaky.ini --map Arena
"$build/reap-client" --server "127.0.0.1:$udp" --bots 1 --duration 2 --hold 0.5 \
    --spawn-mix Tracker:1 --quiet --seed 1 --out "$out/travel-churn-leaky" \
    > "$out/travel-client-leaky.txt" 2>&1 || true
http "http://127.0.0.1:$admin/console" "servertravel Docks $travel_mode" > /dev/null
wait_metric "reap_travels_total{mode=\"$travel_mode\"}" 1
leaked=$(metric reap_world_leaks_total)
stop_all
python3 - "$log" "$out/travel-leaky.json" "$leaked" <<'EOF'
import json, re, sys
log, path, leaked = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [l.rstrip("\n") for l in open(log)]
verdict = [re.sub(r"^\S+ \S+\s+", "", l) for l in lines
           if "not cleaned up by garbage collection" in l or "travel:   " in l or
           "World Memory Leaks" in l]
json.dump({"leaked_worlds": int(float(leaked)), "verdict": verdict,
           "chain_through_game_instance": any("GameInstance.Tracker_" in l for l in verdict)},
          open(path, "w"), indent=2)
print("leaky.ini: %s leaked world(s); the verdict:" % leaked)
for l in verdict:
    print("  " + l)
EOF
python3 "$(dirname "$0")/travel_report.py" "$out" "$modes"
