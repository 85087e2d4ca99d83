#!/bin/sh
# Runs every libFuzzer target in fuzz/ for a bounded time, one after the
# other on one core (issue 10). Usage: tools/fuzz.sh BUILD_DIR SECONDS [TARGET...]
#   SECONDS = 0: run each target once over its regression corpus (CI smoke).
# New inputs go to BUILD_DIR/corpus/<target> (fuzz/corpus/<target> is only
# read); crashes to BUILD_DIR/artifacts/. Prints executions and findings per
# target; exits 1 when a target found something.
set -u
build=$1
secs=$2
shift 2
targets=${*:-"ini set dsanalyzer tidy numbers pipeline kineto dftracer"}
cd "$(dirname "$0")/.."
status=0
for t in $targets; do
    bin=$build/fuzz_$t
    [ -x "$bin" ] || { echo "fuzz: $bin not built"; exit 2; }
    mkdir -p "$build/corpus/$t" "$build/artifacts"
    log=$build/fuzz_$t.log
    [ "$secs" = 0 ] && log=$build/fuzz_$t.smoke.log
    if [ "$secs" = 0 ]; then
        "$bin" -runs=0 "fuzz/corpus/$t" >"$log" 2>&1
    else
        "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
            -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
            "$build/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1
    fi
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
    echo "fuzz_$t: rc $rc, ${execs:-?} executions, log $log"
    if [ $rc -ne 0 ]; then
        status=1
        grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log"
    fi
done
exit $status
