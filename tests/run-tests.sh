#!/bin/sh
# Runs test executables one by one, shows their output, and ends with one summary line
# counting cmocka test cases: "summary: N passed, N failed".
# usage: tests/run-tests.sh BUILD_DIR BIN...
build=$1; shift
[ -n "$REAP_TEST_TIMEOUT" ] || REAP_TEST_TIMEOUT=300
log=$(mktemp)
passed=0; failed=0; broken=""
for bin in "$@"; do
    echo "== $bin"
    REAP_BUILD_DIR=$build timeout --kill-after=10 "$REAP_TEST_TIMEOUT" "$bin" >"$log" 2>&1
    rc=$?
    cat "$log"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [ $rc -ne 0 ]; then
        [ $rc -eq 124 ] && echo "!! $bin timed out after ${REAP_TEST_TIMEOUT}s"
        [ -z "$f" ] && failed=$((failed + 1))
        broken="$broken $bin"
    fi
done
rm -f "$log"
[ -n "$broken" ] && echo "failing:$broken"
echo "summary: $passed passed, $failed failed"
[ -z "$broken" ]
