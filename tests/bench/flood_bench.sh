#!/bin/sh
# flood_bench.sh - one flooder beside a churn of honest bots (issue 18). For each kind of
# flood: a fresh server at 30 Hz, FLOOD_BENCH_BOTS (20) churning bots, a window of
# FLOOD_BENCH_WINDOW (8) seconds without the flooder, then a window as long with it (it
# rejoins each time it is kicked). Figures per flood: the server's frames per second and CPU
# (% of a core) in each window, the CPU the flood added, how soon each flooder connection
# was kicked and why, what the datagram filter dropped, and the bots' errors. Prints a
# table; writes OUTDIR/flood.json. Figures, never assertions: the machine is shared, so
# compare the two windows of one run.
#
# usage: tests/bench/flood_bench.sh BUILD OUTDIR     (make flood-bench runs it under flock)
#        FLOOD_BENCH_MODES="move spawn destroy stats garbage" FLOOD_BENCH_WINDOW=8
#        (each mode also as MODE-rotate: rejoining from a new port after each kick, which the
#        server's 10 s refusal of a kicked address and port does not stop)
#        FLOOD_BENCH_BOTS=20
set -u
BUILD=${1:-build}
OUT=${2:-$BUILD/bench}
SERVER=$BUILD/reap-server
CLIENT=$BUILD/reap-client
FLOODER=$BUILD/tests/bench/flood_client
TICK=$(getconf CLK_TCK)
WINDOW=${FLOOD_BENCH_WINDOW:-8}
BOTS=${FLOOD_BENCH_BOTS:-20}
MODES=${FLOOD_BENCH_MODES:-move move-rotate spawn spawn-rotate destroy destroy-rotate stats \
stats-rotate garbage garbage-rotate}

die() { echo "flood_bench: $*" >&2; exit 1; }
. "$(dirname "$0")/loadbench_lib.sh"

for f in "$SERVER" "$CLIENT" "$FLOODER"; do
    [ -x "$f" ] || die "$f is missing: run make all $FLOODER first"
done
mkdir -p "$OUT"

# The sum of a metric family's series (a plain counter is a family of one).
metric() {
    curl -s --max-time 5 "http://127.0.0.1:$ADMIN/metrics" |
        awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%.0f\n", s }'
}
now() { date +%s.%N; }
# rate A B T0 T1: (B - A) / (T1 - T0)
rate() { awk -v a="$1" -v b="$2" -v t0="$3" -v t1="$4" 'BEGIN { printf "%.2f", (b - a) / (t1 - t0) }'; }
pct() { awk -v a="$1" -v b="$2" -v t0="$3" -v t1="$4" 'BEGIN { printf "%.1f", 100 * (b - a) / (t1 - t0) }'; }

json=$OUT/flood.json
printf '{\n  "bots": %s, "window_s": %s, "tick_hz": 30,\n  "floods": [\n' "$BOTS" "$WINDOW" >"$json"
sep=
printf '%-8s %9s %9s %9s %9s %9s %6s %9s %9s %-22s %10s %7s\n' flood fps_before fps_flood \
    cpu_before cpu_flood cpu_added kicks kick_p50 kick_max kicked_by dropped bot_err
for mode in $MODES; do
    log=$OUT/flood-$mode-server.log
    start_server "$log" --tick-hz 30
    churn_dir=$OUT/flood-churn-$mode
    "$CLIENT" --server "127.0.0.1:$PORT" --bots "$BOTS" --duration $((2 * WINDOW + 6)) \
        --admin "http://127.0.0.1:$ADMIN" --no-progress --quiet --seed 18 \
        --threshold 'errors==0' --out "$churn_dir" >"$churn_dir.txt" 2>&1 &
    churn_pid=$!
    sleep 3 # the bots join

    c0=$(cpu_of "$SERVER_PID"); f0=$(metric reap_frames_total); t0=$(now)
    sleep "$WINDOW"
    c1=$(cpu_of "$SERVER_PID"); f1=$(metric reap_frames_total); t1=$(now)
    d1=$(metric reap_net_datagrams_received_total)
    case $mode in
    *-rotate) set -- --mode "${mode%-rotate}" --rotate-ports ;;
    *) set -- --mode "$mode" ;;
    esac
    "$FLOODER" "127.0.0.1:$PORT" "$@" --duration "$WINDOW" >"$OUT/flood-$mode.txt" 2>&1
    c2=$(cpu_of "$SERVER_PID"); f2=$(metric reap_frames_total); t2=$(now)
    d2=$(metric reap_net_datagrams_received_total)

    wait "$churn_pid"
    churn_rc=$?
    kicked=""
    for reason in bad_messages hello_timeout flood; do
        n=$(metric "reap_net_kicked_by_reason_total{reason=\"$reason\"}")
        [ "$n" != 0 ] && kicked="$kicked$reason=$n,"
    done
    kicked=${kicked%,}
    dropped=$(metric reap_net_dropped_messages_total)
    decoded_bad=$(metric reap_net_bad_messages_total)
    refused_inputs=$(metric reap_net_refused_inputs_total)
    cleanup

    summary=$(grep '^summary:' "$OUT/flood-$mode.txt")
    field() { echo "$summary" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    errors=$(sed -n 's/.*errors[: =]*\([0-9][0-9]*\).*/\1/p' "$churn_dir.txt" | head -n 1)
    [ "$churn_rc" = 0 ] && bot_verdict=ok || bot_verdict="rc=$churn_rc"
    fps_a=$(rate "$f0" "$f1" "$t0" "$t1"); fps_b=$(rate "$f1" "$f2" "$t1" "$t2")
    cpu_a=$(pct "$c0" "$c1" "$t0" "$t1"); cpu_b=$(pct "$c1" "$c2" "$t1" "$t2")
    added=$(awk -v a="$cpu_a" -v b="$cpu_b" 'BEGIN { printf "%.1f", b - a }')
    dgrams=$(rate "$d1" "$d2" "$t1" "$t2")
    printf '%-8s %9s %9s %8s%% %8s%% %8s%% %6s %8ss %8ss %-22s %10s %7s\n' "$mode" "$fps_a" \
        "$fps_b" "$cpu_a" "$cpu_b" "$added" "$(field kicks)" "$(field kick_p50_s)" \
        "$(field kick_max_s)" "${kicked:-none}" "$dropped" "${errors:-?}($bot_verdict)"
    printf '%s    {"flood": "%s", "fps_before": %s, "fps_flood": %s, "cpu_before_pct": %s, '\
'"cpu_flood_pct": %s, "cpu_added_pct": %s, "connections": %s, "kicks": %s, "kick_p50_s": %s, '\
'"kick_max_s": %s, "sent": %s, "sent_per_s": %s, "kicked_by": "%s", "dropped": %s, '\
'"bad_messages": %s, "refused_inputs": %s, "datagrams_per_s_flood": %s, "bot_errors": "%s", '\
'"bot_threshold": "%s"}' \
        "$sep" "$mode" "$fps_a" "$fps_b" "$cpu_a" "$cpu_b" "$added" "$(field connections)" \
        "$(field kicks)" "$(field kick_p50_s)" "$(field kick_max_s)" "$(field sent)" \
        "$(field sent_per_s)" "$kicked" "$dropped" "$decoded_bad" "$refused_inputs" \
        "$dgrams" "${errors:-?}" "$bot_verdict" >>"$json"
    sep=',
'
done
printf '\n  ]\n}\n' >>"$json"
echo "wrote $json"
