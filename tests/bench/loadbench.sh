#!/bin/sh
# loadbench.sh - the standard churn scenario benchmark (`make loadbench`).
#
# For each layout (uniform: the default world.Extent; crowded: world.Extent=10000, every pawn
# within one cull distance) and each bot count, a fresh reap-server on a free loopback port,
# collecting every 10 s (gc.TimeBetweenPurgingPendingKillObjects=10 instead of UE's 60, so that
# every run of 40-60 s sees several collections and reports their frame cost), and the churn
# client against it: each bot joins, spawns 10 props, moves at 10 Hz, holds for
# U(0.5, 1.5) x 10 s, asks for a replication check, leaves (half graceful, half abrupt) and is
# replaced. The bots run under SCHED_BATCH (chrt -b 0, when chrt is there; LOADBENCH_BATCH=0
# turns it off): on one machine with the server, a bot process woken by the server's datagrams
# would otherwise preempt the server mid-frame (the scheduler favours a task that just woke),
# which a server on a machine of its own never sees; batch tasks get their share of the CPU
# but do not preempt on waking. The client samples the server's /metrics (--admin); this
# script adds the server's CPU time from /proc/PID/stat. Prints a table, writes OUT/loadbench.json and OUT/loadbench.svg
# (tick p99 and server CPU per player per frame against players), and keeps each run's report
# under OUT/loadbench/LAYOUT-BOTS/.
#
# usage: tests/bench/loadbench.sh [BUILD_DIR [OUT_DIR]]       (defaults: build, BUILD_DIR/bench)
# environment: LOADBENCH_BOTS="50 100 200 500 1000"  LOADBENCH_DURATION=60 (seconds per run)
#              LOADBENCH_LAYOUTS="uniform crowded"    LOADBENCH_SPAWN=10   LOADBENCH_SEED=1
#              LOADBENCH_BATCH=1 (the bots under SCHED_BATCH; 0: the default policy)
#              LOADBENCH_PROFILE=shooter|mmo|deep|FILE: the server runs that world profile
#              (deploy/profiles/NAME.ini) and each visit spawns LOADBENCH_SPAWN_MIX instead of
#              props (default: the mix the profile's header names, "; ... Spawn mix: MIX")
# Figures a server does not export yet are printed as "-" and written as null.
set -u

BUILD=${1:-build}
OUT=${2:-$BUILD/bench}
BOTS=${LOADBENCH_BOTS:-"50 100 200 500 1000"}
DURATION=${LOADBENCH_DURATION:-60}
LAYOUTS=${LOADBENCH_LAYOUTS:-"uniform crowded"}
SPAWN=${LOADBENCH_SPAWN:-10}
SEED=${LOADBENCH_SEED:-1}
BATCH=${LOADBENCH_BATCH:-1}
PROFILE=${LOADBENCH_PROFILE:-}
SPAWN_MIX=${LOADBENCH_SPAWN_MIX:-}
GC_INTERVAL=10
SERVER=$BUILD/reap-server
CLIENT=$BUILD/reap-client
RUNS=$OUT/loadbench
TICK=$(getconf CLK_TCK 2>/dev/null || echo 100)

die() { echo "loadbench: $*" >&2; exit 1; }
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || die "build first: $SERVER and $CLIENT are missing"
for b in $BOTS; do
    case $b in ''|*[!0-9]*) die "bad LOADBENCH_BOTS value '$b': expected integers" ;; esac
    [ "$b" -ge 1 ] && [ "$b" -le 1000 ] || die "bad LOADBENCH_BOTS value '$b': 1..1000"
done
for l in $LAYOUTS; do
    case $l in uniform|crowded) ;; *) die "bad LOADBENCH_LAYOUTS value '$l': uniform or crowded" ;; esac
done
case $DURATION in ''|*[!0-9]*) die "bad LOADBENCH_DURATION '$DURATION': whole seconds" ;; esac
case $BATCH in 0|1) ;; *) die "bad LOADBENCH_BATCH '$BATCH': 0 or 1" ;; esac
PROFILE_FILE=
VISIT="--spawn $SPAWN"
WHAT="$SPAWN props"
if [ -n "$PROFILE" ]; then
    case $PROFILE in
        */*|*.ini) PROFILE_FILE=$PROFILE ;;
        *) PROFILE_FILE=deploy/profiles/$PROFILE.ini ;;
    esac
    [ -r "$PROFILE_FILE" ] || die "no world profile '$PROFILE_FILE' (LOADBENCH_PROFILE)"
    [ -n "$SPAWN_MIX" ] || SPAWN_MIX=$(sed -n 's/.*Spawn mix: \([A-Za-z0-9_:,]*\).*/\1/p' "$PROFILE_FILE" | head -n 1)
    [ -n "$SPAWN_MIX" ] || die "$PROFILE_FILE names no spawn mix: set LOADBENCH_SPAWN_MIX"
    VISIT="--spawn-mix $SPAWN_MIX"
    WHAT="$SPAWN_MIX"
    SPAWN=0
    RUNS=$OUT/loadbench-$(basename "$PROFILE_FILE" .ini)
fi
mkdir -p "$RUNS" || die "cannot create $RUNS"
# The bots' scheduling (see above): chrt -b 0 when asked for and available.
BOTS_SCHED=
if [ "$BATCH" = 1 ]; then
    if command -v chrt >/dev/null 2>&1 && chrt -b 0 true 2>/dev/null; then
        BOTS_SCHED="chrt -b 0"
    else
        echo "loadbench: chrt -b is not available: the bots run under the default policy" >&2
    fi
fi

. "$(dirname "$0")/loadbench_lib.sh"

ROWS=$RUNS/rows.tsv
: >"$ROWS"
for layout in $LAYOUTS; do
    for bots in $BOTS; do
        dir=$RUNS/$layout-$bots
        mkdir -p "$dir"
        set -- --cvar gc.TimeBetweenPurgingPendingKillObjects=$GC_INTERVAL
        [ "$layout" = crowded ] && set -- "$@" --cvar world.Extent=10000
        [ -n "$PROFILE_FILE" ] && set -- "$@" --world-profile "$PROFILE_FILE"
        start_server "$dir/server.log" "$@"
        cpu0=$(cpu_of "$SERVER_PID")
        scrape "$dir/metrics0.txt"
        echo "loadbench: ${PROFILE_FILE:+$PROFILE_FILE, }$layout, $bots bots x $WHAT, $DURATION s, gc every $GC_INTERVAL s (server on 127.0.0.1:$PORT${BOTS_SCHED:+, bots under $BOTS_SCHED})" >&2
        # shellcheck disable=SC2086 # VISIT is two words on purpose, BOTS_SCHED none or three
        $BOTS_SCHED "$CLIENT" --server "127.0.0.1:$PORT" --admin "http://127.0.0.1:$ADMIN" \
            --bots "$bots" --duration "$DURATION" $VISIT --hold 10 --move-rate 10 \
            --disconnect mixed --seed "$SEED" --out "$dir" --no-progress --quiet \
            >"$dir/client.log" 2>&1
        rc=$?
        cpu1=$(cpu_of "$SERVER_PID")
        scrape "$dir/metrics1.txt"
        cleanup
        if [ ! -s "$dir/summary.tsv" ]; then
            echo "loadbench: the client failed (exit $rc), see $dir/client.log" >&2
            continue
        fi
        # layout, bots, then the client's summary row, then the server CPU over the run, then
        # the replication's figures from the server's counters over the run.
        repl=$(replication_figures "$dir/metrics0.txt" "$dir/metrics1.txt")
        # Hellos the server answered busy (admission control), as the client counted them.
        busy=$(sed -n 's/.*"refused_busy": \([0-9]*\).*/\1/p' "$dir/report.json" 2>/dev/null | head -n 1)
        # Frames the replication budget cut (net.ReplicationFrameBudget), of the run's frames.
        cut=$(frames_cut_share "$dir/metrics0.txt" "$dir/metrics1.txt")
        tail -n 1 "$dir/summary.tsv" | awk -v l="$layout" -v c0="${cpu0:-}" -v c1="${cpu1:-}" \
            -v repl="$repl" -v busy="${busy:--}" -v cut="$cut" 'BEGIN { FS = OFS = "\t" } { cpu = (c0 != "" && c1 != "") ? c1 - c0 : "-";
              print l, $0, cpu, repl, busy, cut }' >>"$ROWS"
    done
done
[ -s "$ROWS" ] || die "no run completed"
head -n 1 "$(ls "$RUNS"/*/summary.tsv | head -n 1)" >"$RUNS/header.tsv"

# Columns of rows.tsv: 1 layout, then summary.tsv's (2 bots, 3 joins, 4 errors, 5 join_p50,
# 6 join_p99, 7 seconds, 8 fps, 9 tick_p50, 10 tick_p99, 11 tick_max, 12 net_p99, 13 world_p99,
# 14 repl_p99, 15 gc_p99, 16 collections, 17 gc_work_ms, 18 gc_work_max_ms, 19 bytes/conn/s,
# 20 players_mean, 21 client-side cpu (unused), 22 frames, 23 checks, 24 mismatches), 25 cpu,
# 26 actor-connection pairs per frame, 27 bytes per update, 28 bytes per spawn, 29 records
# encoded per frame (26-29 from the server's /metrics at the start and the end of the run),
# 30 busy refusals (admission control; from the client's report.json), 31 the share of frames
# the replication budget cut (from /metrics).
awk -v out="$OUT" -v duration="$DURATION" -v spawn="$SPAWN" -v gci="$GC_INTERVAL" \
    -v profile="$PROFILE_FILE" -v mix="$SPAWN_MIX" -v tag="${PROFILE_FILE:+-$(basename "$PROFILE_FILE" .ini)}" '
function v(x) { return x == "-" ? "null" : x }
function d(x, f) { return x == "-" ? "-" : sprintf(f, x) }
function nice(x,   m) { m = 1; while (m * 10 <= x) m *= 10; while (m > x) m /= 10;
    return x <= m ? m : x <= 2 * m ? 2 * m : x <= 5 * m ? 5 * m : 10 * m }
function ylog(x) { if (x < tmin) x = tmin
    return bot - (bot - top) * (log(x) - log(tmin)) / (log(y1) - log(tmin)) }
function cost(r,   f, p, c) { f = F[r,22]; p = F[r,20]; c = F[r,25];
    if (f == "-" || p == "-" || c == "-" || f <= 0 || p <= 0) return "-";
    return sprintf("%.2f", c / f / p * 1e6) }
BEGIN { FS = "\t" }
{ n++; for (i = 1; i <= NF; i++) F[n,i] = $i }
END {
    if (profile != "")
        printf "world profile %s, spawn mix %s\n", profile, mix
    printf "gc interval %s s (gc.TimeBetweenPurgingPendingKillObjects), %s s per run\n", gci,
        duration
    fmt = "%-8s %5s %5s %6s %6s %7s %6s %6s %6s %6s %5s %6s %8s %6s %6s %5s %7s %7s %6s %6s %8s %8s %5s %5s %6s\n"
    printf fmt, "layout", "bots", "fps", "tick50", "tick99", "tickmax", "net99", "wld99",
        "repl99", "gc99", "colls", "gcms", "B/s/con", "errors", "busy", "cut%", "join50", "join99", "cpu_s",
        "checks", "us/pl/fr", "pairs/fr", "B/upd", "B/spn", "enc/fr"
    for (r = 1; r <= n; r++)
        printf fmt, F[r,1], F[r,2], d(F[r,8], "%.1f"), d(F[r,9], "%.2f"), d(F[r,10], "%.2f"),
            d(F[r,11], "%.1f"), d(F[r,12], "%.2f"), d(F[r,13], "%.2f"), d(F[r,14], "%.2f"),
            d(F[r,15], "%.2f"), F[r,16], d(F[r,17], "%.1f"), d(F[r,19], "%.0f"), F[r,4],
            F[r,30] == "" ? "-" : F[r,30], d(F[r,31] == "" ? "-" : F[r,31] * 100, "%.1f"),
            d(F[r,5], "%.1f"), d(F[r,6], "%.1f"),
            d(F[r,25], "%.2f"), F[r,23], cost(r),
            d(F[r,26], "%.0f"), d(F[r,27], "%.2f"), d(F[r,28], "%.2f"), d(F[r,29], "%.1f")
    printf "(times in ms; tickmax is exact when the run set the server'"'"'s maximum, else a " \
        "bucket bound; percentiles are interpolated in the server'"'"'s buckets; us/pl/fr = " \
        "server CPU microseconds per player per frame; pairs/fr = actor-connection pairs a " \
        "frame handles; B/upd, B/spn = bytes on the wire per position update and per spawn, " \
        "ENet'"'"'s command header included; enc/fr = records encoded per frame; busy = " \
        "Hellos answered busy (admission control), counted by the client; cut%% = frames " \
        "whose replication budget made connections wait; \"-\" = " \
        "not exported)\n"

    json = out "/loadbench" tag ".json"
    printf "{\n  \"benchmark\": \"loadbench\",\n  \"duration_seconds\": %s,\n" \
        "  \"gc_interval_seconds\": %s,\n  \"props_per_visit\": %s,\n" \
        "  \"world_profile\": %s,\n  \"spawn_mix\": %s,\n  \"runs\": [\n",
        duration, gci, spawn, profile == "" ? "null" : "\"" profile "\"",
        mix == "" ? "null" : "\"" mix "\"" > json
    for (r = 1; r <= n; r++) {
        printf "    {\"layout\": \"%s\", \"bots\": %s, \"joins\": %s, \"client_errors\": %s, " \
            "\"join_p50_ms\": %s, \"join_p99_ms\": %s, \"seconds\": %s, " \
            "\"frames_per_second\": %s, \"tick_p50_ms\": %s, \"tick_p99_ms\": %s, " \
            "\"tick_max_ms\": %s, \"phase_p99_ms\": {\"net\": %s, \"world\": %s, " \
            "\"repl\": %s, \"gc\": %s}, \"collections\": %s, \"gc_frame_work_ms\": %s, " \
            "\"gc_frame_work_max_ms\": %s, \"bytes_per_second_per_connection\": %s, " \
            "\"players_mean\": %s, \"frames\": %s, \"replication_checks\": %s, " \
            "\"replication_mismatches\": %s, \"server_cpu_seconds\": %s, " \
            "\"server_cpu_us_per_player_frame\": %s, \"pairs_per_frame\": %s, " \
            "\"bytes_per_update\": %s, \"bytes_per_spawn\": %s, " \
            "\"records_encoded_per_frame\": %s, \"busy_refusals\": %s, " \
            "\"frames_cut_share\": %s}%s\n", F[r,1], F[r,2],
            v(F[r,3]),
            v(F[r,4]), v(F[r,5]), v(F[r,6]), v(F[r,7]), v(F[r,8]), v(F[r,9]), v(F[r,10]),
            v(F[r,11]), v(F[r,12]), v(F[r,13]), v(F[r,14]), v(F[r,15]), v(F[r,16]), v(F[r,17]),
            v(F[r,18]), v(F[r,19]), v(F[r,20]), v(F[r,22]), v(F[r,23]), v(F[r,24]), v(F[r,25]),
            v(cost(r)), v(F[r,26]), v(F[r,27]), v(F[r,28]), v(F[r,29]),
            v(F[r,30] == "" ? "-" : F[r,30]), v(F[r,31] == "" ? "-" : F[r,31]),
            r < n ? "," : "" > json
    }
    printf "  ]\n}\n" > json

    # The picture: two panels against players (log scale), one line per layout.
    svg = out "/loadbench" tag ".svg"
    W = 960; H = 420; pw = 370; top = 60; bot = 340
    xmin = 1e9; xmax = 0; y1 = 0; y2 = 0
    for (r = 1; r <= n; r++) {
        b = F[r,2] + 0; if (b < xmin) xmin = b; if (b > xmax) xmax = b
        if (F[r,10] != "-" && F[r,10] + 0 > y1) y1 = F[r,10] + 0
        c = cost(r); if (c != "-" && c + 0 > y2) y2 = c + 0
    }
    if (xmax <= xmin) xmax = xmin * 2
    if (y1 <= 0) y1 = 1; if (y2 <= 0) y2 = 1
    y1 = nice(y1 * 1.05); y2 = nice(y2 * 1.05)
    if (y1 < 1000 / 30 * 1.2) y1 = nice(1000 / 30 * 1.2) # room for the line of the frame period
    # The tick panel: a log scale that starts at the power of ten below its smallest p99.
    tmin = 1e9
    for (r = 1; r <= n; r++) if (F[r,10] != "-" && F[r,10] + 0 > 0 && F[r,10] + 0 < tmin) tmin = F[r,10] + 0
    if (tmin == 1e9) tmin = 1
    tmin = exp(log(10) * int(log(tmin) / log(10) - (tmin < 1 ? 1 : 0)))
    lx0 = log(xmin) / log(10); lx1 = log(xmax) / log(10)
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " \
        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"%d\" height=\"%d\" " \
        "fill=\"white\"/>\n<text x=\"480\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" " \
        "font-weight=\"bold\">reap loadbench: churn, %s per visit, %s s per run</text>\n",
        W, H, W, H, profile == "" ? spawn " props" : mix, duration > svg
    for (p = 0; p < 2; p++) {
        x0 = 70 + p * (pw + 110); ymax = p ? y2 : y1
        printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" " \
            "stroke=\"#888\"/>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
            x0, top, pw, bot - top, x0 + pw / 2, top - 10,
            p ? "server CPU per player per frame (us)" : "server tick p99 (ms, log scale)" > svg
        if (p) {
            for (k = 0; k <= 4; k++) {
                yv = ymax * k / 4; yy = bot - (bot - top) * k / 4
                printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>" \
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                    x0 - 6, yy + 4, yv, x0, yy, x0 + pw, yy > svg
            }
        } else {
            # Ticks take a log scale from a decade below the smallest p99: 1, 2, 5, 10, ...
            for (m = tmin; m <= ymax * 1.0001; m *= 10)
                for (k = 1; k <= 5; k += (k == 1 ? 1 : 3))
                    if (m * k <= ymax * 1.0001) {
                        yy = ylog(m * k)
                        printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>" \
                            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" " \
                            "stroke=\"#eee\"/>\n", x0 - 6, yy + 4, m * k, x0, yy, x0 + pw, yy > svg
                    }
            # The frame period at 30 Hz: a p99 above it is a frame late.
            if (1000 / 30 <= ymax) {
                yy = ylog(1000 / 30)
                printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#555\" " \
                    "stroke-dasharray=\"5,4\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" " \
                    "fill=\"#555\">frame period 33.3 ms</text>\n", x0, yy, x0 + pw, yy,
                    x0 + pw - 4, yy - 5 > svg
            }
        }
        for (r = 1; r <= n; r++) if (F[r,1] == F[1,1] || 1) {
            b = F[r,2] + 0; xx = x0 + (lx1 > lx0 ? (log(b) / log(10) - lx0) / (lx1 - lx0) : 0.5) * pw
            tick[b] = xx
        }
        for (b in tick) printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
            tick[b], bot + 16, b > svg
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">players (bots, log scale)" \
            "</text>\n", x0 + pw / 2, bot + 36 > svg
        split("", seen)
        for (r = 1; r <= n; r++) {
            l = F[r,1]; if (l in seen) continue; seen[l] = 1
            color = l == "crowded" ? "#d62728" : "#1f5fa8"
            pts = ""
            for (q = 1; q <= n; q++) {
                if (F[q,1] != l) continue
                yvv = p ? cost(q) : F[q,10]
                if (yvv == "-") continue
                b = F[q,2] + 0
                xx = x0 + (lx1 > lx0 ? (log(b) / log(10) - lx0) / (lx1 - lx0) : 0.5) * pw
                yy = p ? bot - (bot - top) * (yvv / ymax) : ylog(yvv)
                pts = pts sprintf("%.1f,%.1f ", xx, yy)
                printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", xx, yy,
                    color > svg
            }
            if (pts != "")
                printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" " \
                    "points=\"%s\"/>\n", color, pts > svg
        }
    }
    printf "<rect x=\"70\" y=\"392\" width=\"14\" height=\"4\" fill=\"#1f5fa8\"/><text x=\"90\" " \
        "y=\"398\">uniform</text><rect x=\"170\" y=\"392\" width=\"14\" height=\"4\" " \
        "fill=\"#d62728\"/><text x=\"190\" y=\"398\">crowded (world.Extent=10000)</text>\n" \
        "</svg>\n" > svg
    printf "loadbench: wrote %s and %s\n", json, svg
}' "$ROWS"
