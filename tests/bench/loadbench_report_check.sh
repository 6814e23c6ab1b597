#!/bin/sh
# loadbench_report_check.sh - the report page, checked the way a person sees it: runs a scenario
# (default: the standard churn scenario, deploy/scenarios/churn.ini) with --admin against a
# fresh server on loopback, opens OUT/report.html in headless Chromium, takes a screenshot
# (OUT/report.png), and checks that the page ran without script errors and drew its charts.
#
# usage: tests/bench/loadbench_report_check.sh [BUILD_DIR [OUT_DIR]]
#        (defaults: build, BUILD_DIR/bench/report-check); needs Debian's `chromium`.
# environment: LOADBENCH_SCENARIO=FILE to run another scenario (e.g. deploy/scenarios/smoke.ini)
# Exit 0 when the page is sound (whatever the run's thresholds said), 1 otherwise.
set -u

BUILD=${1:-build}
OUT=${2:-$BUILD/bench/report-check}
SCENARIO=${LOADBENCH_SCENARIO:-deploy/scenarios/churn.ini}
SERVER=$BUILD/reap-server
CLIENT=$BUILD/reap-client
TICK=$(getconf CLK_TCK 2>/dev/null || echo 100)
CHROMIUM=${CHROMIUM:-chromium}

die() { echo "report-check: $*" >&2; exit 1; }
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || die "build first: $SERVER and $CLIENT are missing"
command -v "$CHROMIUM" >/dev/null 2>&1 || die "no $CHROMIUM (apt-get install chromium)"
[ -r "$SCENARIO" ] || die "cannot read $SCENARIO"
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

. "$(dirname "$0")/loadbench_lib.sh"

start_server "$OUT/server.log"
echo "report-check: $SCENARIO against 127.0.0.1:$PORT (admin $ADMIN)" >&2
"$CLIENT" --server "127.0.0.1:$PORT" --admin "http://127.0.0.1:$ADMIN" --scenario "$SCENARIO" \
    --out "$OUT" --no-progress --quiet >"$OUT/client.log" 2>&1
rc=$?
cleanup
echo "report-check: the run exited $rc (99: a threshold failed; see $OUT/client.log)" >&2
[ -s "$OUT/report.html" ] || die "no report.html (see $OUT/client.log)"

PROFILE=$(mktemp -d) || die "mktemp failed"
FLAGS="--headless --no-sandbox --disable-gpu --disable-background-networking \
--disable-component-update --disable-sync --no-first-run --user-data-dir=$PROFILE"
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $FLAGS --enable-logging=stderr --v=0 --window-size=1000,4200 \
    --screenshot="$OUT/report.png" "file://$OUT/report.html" >"$OUT/chromium.log" 2>&1
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $FLAGS --enable-logging=stderr --v=0 --dump-dom \
    "file://$OUT/report.html" >"$OUT/report.dom.html" 2>>"$OUT/chromium.log"
rm -rf "$PROFILE"

fail=0
[ -s "$OUT/report.png" ] || { echo "report-check: no screenshot" >&2; fail=1; }
if grep -E 'Uncaught|ERROR:CONSOLE' "$OUT/chromium.log" >/dev/null; then
    echo "report-check: script errors:" >&2
    grep -E 'Uncaught|:CONSOLE' "$OUT/chromium.log" >&2
    fail=1
fi
drawn=$(sed -n 's/.*data-charts-drawn="\([0-9]*\)".*/\1/p' "$OUT/report.dom.html" | head -n 1)
charts=$(grep -o '<svg class="chart"' "$OUT/report.dom.html" | wc -l)
if [ -z "$drawn" ]; then
    echo "report-check: the page's script did not run (no data-charts-drawn)" >&2
    fail=1
elif [ "$drawn" -lt 1 ]; then
    echo "report-check: every chart is empty" >&2
    fail=1
fi
echo "report-check: $drawn of $charts charts have data; screenshot $OUT/report.png" >&2
exit $fail
