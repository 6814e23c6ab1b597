#!/bin/sh
# workers_beside_hog.sh PROBE [RUNS] - 1 marker against 2, beside a CPU-bound process.
#
# Starts `stress-ng --cpu 1` (one busy thread, as another program on the machine would be),
# then RUNS times (default 10) marks each standard shape: the median of 7 marks with 1
# worker, then with 2, then with 1 again. Prints each run's figures and their ratio (1 worker
# / 2 workers: at least 1.0 means two workers did not lose to one), the ratio of the two
# 1-worker figures (the same program against itself: how often that "loses" is what this
# machine's noise alone makes of the count), and in how many of the 2-worker marks the helper
# took part. By default the three sit in one process, on one heap, alternating mark by mark
# (mark_probe reap1v2): marks in separate processes differed by up to 1.8x with one worker
# (where the graph landed, the CPU the process got), more than anything two workers change.
# HOG_TWO=reap2 (or reap2n: the second worker at the caller's priority) runs each figure in
# its own process instead, as before. The hog is stopped by its PID at the end. Run it under
# flock /tmp/reap-bench.lock like any benchmark.
set -eu
probe=$1
runs=${2:-10}
two_mode=${HOG_TWO:-}
command -v stress-ng >/dev/null || { echo "workers_beside_hog: stress-ng is not installed" >&2; exit 1; }
stress-ng --cpu 1 --timeout 600s >/dev/null 2>&1 &
hog=$!
trap 'kill $hog 2>/dev/null; wait $hog 2>/dev/null || true' EXIT
sleep 1
# The median of 7 marks in ms, and in how many of them a second worker took part.
marks() { "$probe" "$1" "$2" 7 | sed -n 's/.*median-mark-ms \([0-9.]*\) helped \([0-9]*\).*/\1 \2/p'; }
# The three medians and the helper's count, from one process.
alternating() {
    "$probe" reap1v2 "$1" 7 |
        sed -n 's/.*1w \([0-9.]*\) 2w \([0-9.]*\) 1w-again \([0-9.]*\) helped \([0-9]*\).*/\1 \2 \3 \4/p'
}
lost=0
noise=0
i=1
while [ "$i" -le "$runs" ]; do
    for shape in root_array single_root; do
        if [ -z "$two_mode" ]; then
            set -- $(alternating "$shape"); one=$1 two=$2 again=$3 helped=$4
        else
            set -- $(marks reap "$shape"); one=$1
            set -- $(marks "$two_mode" "$shape"); two=$1 helped=$2
            set -- $(marks reap "$shape"); again=$1
        fi
        ratio=$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", a / b }')
        self=$(awk -v a="$one" -v b="$again" 'BEGIN { printf "%.2f", a / b }')
        awk -v r="$ratio" 'BEGIN { exit !(r < 1.0) }' && lost=$((lost + 1))
        awk -v r="$self" 'BEGIN { exit !(r < 1.0) }' && noise=$((noise + 1))
        echo "run $i $shape: 1 worker $one ms, 2 workers $two ms (helper in $helped of 7), 1 worker again $again ms, 1w/2w $ratio, 1w/1w $self"
    done
    i=$((i + 1))
done
echo "runs where 2 workers lost to 1: $lost of $((runs * 2)); where 1 worker lost to itself: $noise of $((runs * 2)) (load: $(cut -d' ' -f1-3 /proc/loadavg))"
