# loadbench_lib.sh - what the load benchmark scripts share (sourced, POSIX sh): starting a
# fresh reap-server on a free loopback port pair, stopping it by its PID, and its CPU time.
# Expects SERVER, CLIENT and TICK to be set, and die() to be defined.

SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    SERVER_PID=
}
trap 'cleanup; exit 130' INT TERM
trap cleanup EXIT

# utime + stime of a process, in seconds.
cpu_of() {
    awk -v tick="$TICK" '{ sub(/.*\) /, ""); printf "%.3f\n", ($12 + $13) / tick }' "/proc/$1/stat" 2>/dev/null
}

# Starts a server on a free loopback port pair; sets SERVER_PID, PORT, ADMIN. Bounded retries.
start_server() {
    log=$1; shift
    try=0
    while [ $try -lt 20 ]; do
        try=$((try + 1))
        PORT=$(( 20000 + ( ($$ * 7 + try * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/') ) % 20000) ))
        ADMIN=$((PORT + 1))
        # Room for 1000 bots plus the slots abrupt leavers hold until net.ConnectionTimeout.
        "$SERVER" --bind 127.0.0.1 --port "$PORT" --admin-port "$ADMIN" --max-players 2000 \
            --log-level info "$@" >"$log" 2>&1 &
        SERVER_PID=$!
        # Ready when it says where its admin endpoint is (at most 5 s); gone: the port was taken.
        n=0
        while [ $n -lt 50 ] && kill -0 "$SERVER_PID" 2>/dev/null; do
            if grep -q "admin on http://127.0.0.1:$ADMIN" "$log" 2>/dev/null; then
                return 0
            fi
            sleep 0.1
            n=$((n + 1))
        done
        cleanup
    done
    die "could not start $SERVER on a free loopback port (see $log)"
}


# scrape FILE: the server's /metrics (empty when neither curl nor wget is there).
scrape() {
    if command -v curl >/dev/null 2>&1; then
        curl -s -m 5 "http://127.0.0.1:$ADMIN/metrics" >"$1" 2>/dev/null
    elif command -v wget >/dev/null 2>&1; then
        wget -q -T 5 -O "$1" "http://127.0.0.1:$ADMIN/metrics" 2>/dev/null
    else
        : >"$1"
    fi
}

# frames_cut_share BEFORE AFTER: frames cut by net.ReplicationFrameBudget over frames ("-").
frames_cut_share() {
    awk '/^reap_/ { v[FILENAME == ARGV[1] ? 1 : 2, $1] = $2 }
        END { c = "reap_net_replication_frames_cut_total"; f = "reap_frames_total"
              if (!((2, c) in v) || v[2, f] - v[1, f] <= 0) { print "-"; exit }
              printf "%.4f\n", (v[2, c] - v[1, c]) / (v[2, f] - v[1, f]) }' "$1" "$2" 2>/dev/null || echo -
}

# replication_figures BEFORE AFTER: pairs per frame, bytes per update, bytes per spawn and
# records encoded per frame over the run, tab-separated ("-" for what is missing).
replication_figures() {
    awk 'BEGIN { OFS = "\t" }
        FNR == 1 { file++ }
        /^reap_/ { v[file, $1] = $2 }
        function dl(name) { return v[2, name] - v[1, name] }
        function ratio(a, b) { return (b > 0 && ((2, a) in v)) ? a_over_b(dl(a), dl(b)) : "-" }
        function a_over_b(x, y) { return sprintf("%.4f", x / y) }
        END {
            print ratio("reap_net_replication_pair_frames_total", "reap_frames_total"),
                ratio("reap_net_update_bytes_sent_total", "reap_net_update_records_sent_total"),
                ratio("reap_net_spawn_bytes_sent_total", "reap_net_actor_spawns_sent_total"),
                ratio("reap_net_records_encoded_total", "reap_frames_total")
        }' "$1" "$2" 2>/dev/null || printf -- '-\t-\t-\t-'
}
