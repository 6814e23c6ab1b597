#!/bin/sh
# metrics_flood.sh - what a crowd of scrapers costs the game: a fresh reap-server with 20
# churning bots (build/reap-client), then 1000 GET /metrics from 32 parallel curl clients, once
# with the page rendered for every request (admin.MetricsCacheSeconds=0) and once cached (the
# default, or --cache SECONDS). Prints the frames per second the server achieved over the flood
# (its own frame counter, reap_frames_total, read fresh before and after), the flood's length
# and how many renders it cost (reap_admin_page_renders_total), and writes OUT/metrics_flood.json.
#
# The window is from just before the first request to the end of the flood plus the cache
# interval and a fifth of a second (so that the closing read is a fresh render, not the copy;
# the same settle in both runs), and at least --window seconds (default 0: no minimum). The 32 clients come from
# 127.0.0.1-127.0.0.4 (the admin endpoint takes at most 8 connections from one address) and
# keep their connection alive. A benchmark, not a test: it prints figures, asserts nothing. It
# holds /tmp/reap-bench.lock so that no other measurement runs beside it.
#
# usage: tests/bench/metrics_flood.sh [--requests N] [--parallel N] [--bots N] [--cache S]
#                                     [--window S] [--build DIR] [--out DIR]
set -eu

requests=1000
parallel=32
bots=20
cache=0.5
window=0
build=build
out=build/bench
while [ $# -gt 0 ]; do
    case "$1" in
        --requests) requests=$2; shift 2 ;;
        --parallel) parallel=$2; shift 2 ;;
        --bots) bots=$2; shift 2 ;;
        --cache) cache=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "metrics_flood: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
for n in "$requests" "$parallel" "$bots"; do
    case "$n" in
        ''|*[!0-9]*|0) echo "metrics_flood: '$n' is not a whole number above 0" >&2; exit 2 ;;
    esac
done
case "$window" in
    ''|*[!0-9]*) echo "metrics_flood: --window '$window' is not a whole number" >&2; exit 2 ;;
esac
case "$cache" in
    ''|*[!0-9.]*) echo "metrics_flood: --cache '$cache' is not a number of seconds" >&2; exit 2 ;;
esac
for bin in "$build/reap-server" "$build/reap-client"; do
    [ -x "$bin" ] || { echo "metrics_flood: $bin not built (run make)" >&2; exit 2; }
done
command -v curl >/dev/null 2>&1 || { echo "metrics_flood: needs curl" >&2; exit 2; }

if [ "${REAP_BENCH_LOCKED:-}" != 1 ]; then
    REAP_BENCH_LOCKED=1 exec flock /tmp/reap-bench.lock "$0" --requests "$requests" \
        --parallel "$parallel" --bots "$bots" --cache "$cache" --window "$window" \
        --build "$build" --out "$out"
fi

SERVER=$build/reap-server
CLIENT=$build/reap-client
TICK=$(getconf CLK_TCK 2>/dev/null || echo 100)
runs=$out/metrics_flood
mkdir -p "$runs"
die() { echo "metrics_flood: $*" >&2; exit 1; }
. "$(dirname "$0")/loadbench_lib.sh"

CLIENT_PID=
stop_bots() {
    if [ -n "$CLIENT_PID" ]; then
        kill "$CLIENT_PID" 2>/dev/null || true
        wait "$CLIENT_PID" 2>/dev/null || true
    fi
    CLIENT_PID=
}
trap 'stop_bots; cleanup; exit 130' INT TERM
trap 'stop_bots; cleanup' EXIT

now() { date +%s.%N; }
# metric FILE SERIES: its value in a scraped page ("" when absent).
metric() { awk -v s="$2" '$1 == s { print $2; exit }' "$1"; }

# flood: $URL requested $requests times, spread over the parallel clients; prints how many answered 200.
flood() {
    i=0
    while [ $i -lt "$parallel" ]; do
        n=$(( requests / parallel + (i < requests % parallel ? 1 : 0) ))
        from=127.0.0.$(( i % 4 + 1 ))
        (
            set --
            k=0
            while [ $k -lt $n ]; do set -- "$@" -o /dev/null "$URL"; k=$((k + 1)); done
            [ $# -gt 0 ] && curl -s -m 60 --interface "$from" -w '%{http_code}\n' "$@" || true
        ) &
        i=$((i + 1))
    done | grep -c '^200$' || true
    wait
}

rows=$runs/rows.tsv
: >"$rows"
for mode in off on; do
    seconds=0
    [ "$mode" = on ] && seconds=$cache
    dir=$runs/cache-$mode
    mkdir -p "$dir"
    start_server "$dir/server.log" --cvar admin.MetricsCacheSeconds="$seconds"
    # shellcheck disable=SC2086 # none or three words
    $(command -v chrt >/dev/null 2>&1 && chrt -b 0 true 2>/dev/null && echo chrt -b 0) \
        "$CLIENT" --server "127.0.0.1:$PORT" --bots "$bots" --duration 600 --spawn 10 \
        --hold 10 --move-rate 10 --disconnect mixed --seed 1 --out "$dir" --no-progress \
        --quiet >"$dir/client.log" 2>&1 &
    CLIENT_PID=$!
    # The bots join and settle (a benchmark's warm-up, not a wait for a condition).
    sleep 5
    sleep "$seconds"
    scrape "$dir/before.txt"
    t0=$(now)
    cpu0=$(cpu_of "$SERVER_PID")
    URL="http://127.0.0.1:$ADMIN/metrics"
    ok=$(flood)
    t_flood=$(now)
    # The closing read must be a render of its own: past the copy's age, and the window's length.
    rest=$(awk -v a="$t0" -v b="$t_flood" -v c="$cache" -v w="$window" 'BEGIN {
        r = c + 0.2; if (b + r < a + w) r = a + w - b; printf "%.3f", r }')
    sleep "$rest"
    scrape "$dir/after.txt"
    t1=$(now)
    cpu1=$(cpu_of "$SERVER_PID")
    stop_bots
    cleanup
    f0=$(metric "$dir/before.txt" reap_frames_total)
    f1=$(metric "$dir/after.txt" reap_frames_total)
    r0=$(metric "$dir/before.txt" 'reap_admin_page_renders_total{page="metrics"}')
    r1=$(metric "$dir/after.txt" 'reap_admin_page_renders_total{page="metrics"}')
    [ -n "$f0" ] && [ -n "$f1" ] || die "no reap_frames_total in the server's pages (see $dir)"
    awk -v m="$mode" -v c="$seconds" -v t0="$t0" -v tf="$t_flood" -v t1="$t1" -v f0="$f0" \
        -v f1="$f1" -v r0="${r0:-0}" -v r1="${r1:-0}" -v ok="$ok" -v c0="$cpu0" -v c1="$cpu1" \
        'BEGIN { OFS = "\t"; print m, c, (f1 - f0) / (t1 - t0), tf - t0, t1 - t0, ok,
                 r1 - r0 - 1, c1 - c0 }' >>"$rows"
done

awk -v out="$runs.json" -v req="$requests" -v par="$parallel" -v bots="$bots" '
BEGIN { FS = "\t"; n = 0 }
{ n++; for (i = 1; i <= NF; i++) F[n, i] = $i }
END {
    printf "%d GET /metrics from %d parallel clients, %d churning bots\n", req, par, bots
    printf "%-6s %7s %8s %9s %9s %7s %8s %7s\n", "cache", "seconds", "frames/s", "flood_s",
        "window_s", "ok", "renders", "cpu_s"
    for (r = 1; r <= n; r++)
        printf "%-6s %7s %8.1f %9.2f %9.2f %7d %8d %7.2f\n", F[r,1], F[r,2], F[r,3], F[r,4],
            F[r,5], F[r,6], F[r,7], F[r,8]
    printf "(frames/s: the server'"'"'s reap_frames_total over the window; renders: of /metrics " \
        "during the flood, the closing read not counted; cpu_s: the server'"'"'s CPU over the " \
        "window)\n"
    printf "{\n  \"benchmark\": \"metrics_flood\",\n  \"requests\": %d,\n  \"parallel\": %d,\n" \
        "  \"bots\": %d,\n  \"runs\": [\n", req, par, bots > out
    for (r = 1; r <= n; r++)
        printf "    {\"cache\": \"%s\", \"cache_seconds\": %s, \"frames_per_second\": %.2f, " \
            "\"flood_seconds\": %.3f, \"window_seconds\": %.3f, \"requests_ok\": %d, " \
            "\"renders\": %d, \"server_cpu_seconds\": %.2f}%s\n", F[r,1], F[r,2], F[r,3],
            F[r,4], F[r,5], F[r,6], F[r,7], F[r,8], r < n ? "," : "" > out
    printf "  ]\n}\n" > out
}' "$rows"
echo "metrics_flood: wrote $runs.json" >&2
