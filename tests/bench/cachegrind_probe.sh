#!/bin/sh
# cachegrind_probe.sh PROBE - the cache lines one mark of the standard graph touches, per
# marked object and per reference, reap (1 worker) against the floor. Valgrind's cache
# simulator (callgrind's, which unlike this valgrind's cachegrind can count one function:
# --toggle-collect) simulates a
# first-level data cache and one last level; it runs twice, once with the last level as big as
# this machine's L2 and once as its L3 (sizes from sysfs), so the two miss counts are the
# lines fetched from beyond L2 and from memory. It counts lines touched: it models neither
# prefetch instructions nor the hardware prefetchers, so it says what traffic there is, not
# how well it is hidden.
set -eu
probe=$1
out=${TMPDIR:-/tmp}/reap-cachegrind.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

cache() { # level -> "size assoc line" in bytes
    for d in /sys/devices/system/cpu/cpu0/cache/index*; do
        [ "$(cat "$d/level")" = "$1" ] || continue
        [ "$(cat "$d/type")" = Instruction ] && continue
        size=$(cat "$d/size")
        case $size in
        *K) size=$((${size%K} * 1024)) ;;
        *M) size=$((${size%M} * 1024 * 1024)) ;;
        esac
        echo "$size $(cat "$d/ways_of_associativity") $(cat "$d/coherency_line_size")"
        return
    done
    echo "cachegrind_probe: no level $1 cache in sysfs" >&2
    exit 1
}
# What is counted: the floor's mark; reap's gc_mark_run (the drain: the mark of the roots
# before it is one object here, and the gather after it is not marking).
counted() { [ "$1" = reap ] && echo gc_mark_run || echo probe_counted_mark; }
set -- $(cache 1); d1="$1,$2,$3"
set -- $(cache 2); l2="$1,$2,$3"; l2k=$(($1 / 1024))
set -- $(cache 3); l3="$1,$2,$3"; l3k=$(($1 / 1024))
echo "caches (sysfs): L1d $d1, L2 $l2, L3 $l3 (size,ways,line)"
printf '%-8s %-12s %9s %11s %12s %12s %12s %12s\n' marker shape marked references \
    "L1 lines/obj" "L2 lines/obj" "mem lines/obj" "mem/ref"
for shape in root_array single_root; do
    for who in floor reap; do
        for ll in "$l2" "$l3"; do
            f="$out/$who.$shape.$ll"
            valgrind --tool=callgrind --simulate-cache=yes --D1="$d1" --LL="$ll" \
                --toggle-collect="$(counted "$who")" --callgrind-out-file="$f.cg" \
                "$probe" "$who" "$shape" >"$f.txt" 2>"$f.err" || { cat "$f.err"; exit 1; }
        done
        set -- $(cat "$out/$who.$shape.$l2.txt")
        marks=$8 marked=$(($2 * $8)) refs=$(($4 * $8)) # over all the marks counted
        # summary: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
        set -- $(sed -n 's/^summary: //p' "$out/$who.$shape.$l2.cg")
        l1=$(($5 + $6)) beyond_l2=$(($8 + $9))
        set -- $(sed -n 's/^summary: //p' "$out/$who.$shape.$l3.cg")
        mem=$(($8 + $9))
        awk -v w="$who" -v s="$shape" -v m="$marked" -v r="$refs" -v a="$l1" -v b="$beyond_l2" \
            -v c="$mem" -v k="$marks" 'BEGIN {
                printf "%-8s %-12s %9d %11d %12.2f %12.2f %12.2f %12.3f\n",
                       w, s, m / k, r / k, a / m, b / m, c / m, c / r }'
    done
done
echo "(L2 lines: misses of a simulated last level of L2's size; mem lines: of L3's size)"
