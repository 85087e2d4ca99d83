#!/bin/sh
# bench/scale.sh BUILD SRC: what a job costs before running it (issue 21).
#   1. Trace reading against a reference reader: `stallsim validate` and a
#      what-if `run` of a 1 M-row tidy trace (bench/gen_tidy.py) beside
#      DuckDB's read_csv on one thread (node and the npm package
#      @duckdb/node-api in STALL_DUCKDB_DIR; skipped, and said so, without).
#   2. A scaling table: wall time and peak memory against trace rows (tidy
#      and notebook traces), ranks and sweep points. STALL_BENCH_BIG=1 adds
#      10 M rows (1.4 GB of tidy CSV, 2.4 GB of notebook CSVs in $TMPDIR)
#      and 10,000 sweep points.
# STALL_BENCH_PARTS picks parts (default all): duckdb tidy notebook ranks
# sweep, e.g. STALL_BENCH_PARTS="tidy notebook". STALL_BENCH_TRACES=DIR
# keeps the generated traces in DIR and reuses them (generating the 10 M
# rows takes minutes of Python; the timings do not include it).
# Every figure: whole process, best of 3 (1 for the largest cases), files
# written with --no-sync. Peak memory needs GNU time (/usr/bin/time).
B=$1
SRC=$2
S=$B/stallsim
[ -x "$S" ] || { echo "scale: no $S"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "scale: python3 missing, skipped"; exit 0; }
d=$(mktemp -d "${TMPDIR:-/tmp}/stall_bench_scale_XXXXXX")
trap 'rm -rf "$d"' EXIT INT TERM
T=${STALL_BENCH_TRACES:-$d}
mkdir -p "$T" || exit 1
PARTS=${STALL_BENCH_PARTS:-duckdb tidy notebook ranks sweep}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
# drop FILE...: removes generated traces unless STALL_BENCH_TRACES keeps them.
drop() { [ -n "${STALL_BENCH_TRACES:-}" ] || rm -f "$@"; }
GT=""
[ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1 && GT=/usr/bin/time

# best N CMD...: runs CMD N times; sets W (best wall s) and M (its peak MiB)
# (its own variables start with _: sh has no locals).
best() {
    _n=$1
    shift
    W=""
    M="-"
    _i=0
    while [ "$_i" -lt "$_n" ]; do
        _i=$((_i + 1))
        rm -rf "$d/out"
        _t0=$(date +%s%N)
        if [ -n "$GT" ]; then
            $GT -f %M -o "$d/mem" "$@" >/dev/null 2>&1 || { W=fail; return; }
        else
            "$@" >/dev/null 2>&1 || { W=fail; return; }
        fi
        _t1=$(date +%s%N)
        _w=$(echo "$_t0 $_t1" | awk '{printf "%.3f", ($2 - $1) / 1e9}')
        if [ -z "$W" ] || [ "$(echo "$_w $W" | awk '{print ($1 < $2)}')" = 1 ]; then
            W=$_w
            [ -n "$GT" ] && M=$(awk '{printf "%.1f", $1 / 1024}' "$d/mem")
        fi
    done
}

# trace ROWS: $T/tROWS.csv and its validate and what-if configs.
trace() {
    [ -f "$T/t$1.csv" ] || python3 "$SRC/bench/gen_tidy.py" "$1" >"$T/t$1.csv"
    printf '[scenario]\nname=v%s\nmode=model\n[trace]\nformat=tidy\npath=%s\n' "$1" "$T/t$1.csv" >"$d/v$1.ini"
    printf '[loader]\nworkers=8\n' | cat "$d/v$1.ini" - >"$d/w$1.ini"
}

# nbtrace ROWS: a notebook (dsanalyzer) trace of ROWS fetch rows, 2 GPUs
# (bench/gen_dsanalyzer.py: ROWS batches per GPU, one epoch; the perf file
# has 2 x ROWS rows), and its validate and what-if configs.
nbtrace() {
    p="$T/ds$1"
    [ -f "${p}.csv" ] || python3 "$SRC/bench/gen_dsanalyzer.py" "$p" "$1" 2 >/dev/null
    printf '[scenario]\nname=n%s\nmode=model\n[trace]\nformat=dsanalyzer\nfetch=%s\nstart=%s\nperf=%s\nepoch=1\n' \
        "$1" "${p}_simp_fetchdifftime.csv" "${p}_simp_fetchstartdifftime.csv" "${p}.csv" >"$d/nv$1.ini"
    printf '[loader]\nworkers=8\n' | cat "$d/nv$1.ini" - >"$d/nw$1.ini"
}

if part duckdb; then
    echo "== trace reading: 1 M-row tidy trace (bench/gen_tidy.py 1000000) against DuckDB read_csv, one thread"
    trace 1000000
    mb=$(du -mL "$T/t1000000.csv" | cut -f1)
    best 3 "$S" validate "$d/v1000000.ini" -o "$d/out" -q --no-sync
    vw=$W
    echo "stallsim validate: best of 3 $W s, peak $M MiB ($mb MB of CSV)"
    best 3 "$S" run "$d/w1000000.ini" -o "$d/out" -q --no-sync
    rw=$W
    echo "stallsim run (what-if, workers = 8): best of 3 $W s, peak $M MiB"
    DUCK=${STALL_DUCKDB_DIR:-$PWD}
    if ! command -v node >/dev/null 2>&1; then
        echo "DuckDB reference skipped: node not found"
    elif ! (cd "$d" && STALL_DUCKDB_DIR=$DUCK node -e "require(require.resolve('@duckdb/node-api', {paths: [process.env.STALL_DUCKDB_DIR]}))") >/dev/null 2>&1; then
        echo "DuckDB reference skipped: @duckdb/node-api not found under STALL_DUCKDB_DIR=$DUCK (npm install @duckdb/node-api there)"
    else
        best 3 env STALL_DUCKDB_DIR="$DUCK" node "$SRC/bench/duckdb_ref.cjs" "$T/t1000000.csv"
        echo "DuckDB read_csv, threads = 1, count and sum of a column (node, process start included): best of 3 $W s, peak $M MiB"
        echo "$vw $rw $W" | awk '{printf "ratio to DuckDB: validate %.2f, run %.2f (the aim: 1.2 or less)\n", $1 / $3, $2 / $3}'
        echo "== the same for a 1 M-batch notebook trace (bench/gen_dsanalyzer.py 1000000 2: perf 2 M rows)"
        nbtrace 1000000
        p="$T/ds1000000"
        best 3 "$S" validate "$d/nv1000000.ini" -o "$d/out" -q --no-sync
        vw=$W
        echo "stallsim validate: best of 3 $W s, peak $M MiB"
        best 3 "$S" run "$d/nw1000000.ini" -o "$d/out" -q --no-sync
        rw=$W
        echo "stallsim run (what-if, workers = 8): best of 3 $W s, peak $M MiB"
        best 3 env STALL_DUCKDB_DIR="$DUCK" node "$SRC/bench/duckdb_ref.cjs" "$p.csv" '"Iteration time (sec)"'
        pw=$W
        best 3 env STALL_DUCKDB_DIR="$DUCK" node "$SRC/bench/duckdb_ref.cjs" "$p.csv" '"Iteration time (sec)"' \
            "${p}_simp_fetchdifftime.csv" '"Fetch time (sec)_gpu0"' \
            "${p}_simp_fetchstartdifftime.csv" 'epoch(CAST("Start time_gpu0" AS TIMESTAMP))'
        echo "DuckDB read_csv, threads = 1: perf file $pw s, all three files $W s"
        echo "$vw $rw $pw $W" | awk '{printf "ratio to DuckDB (perf file / all three): validate %.2f / %.2f, run %.2f / %.2f\n", $1 / $3, $1 / $4, $2 / $3, $2 / $4}'
    fi
fi

echo "== scaling: wall s and peak MiB, whole process, files written (--no-sync)"
printf '%-62s %9s %9s\n' "job" "wall_s" "peak_MiB"
rows="1000 10000 100000 1000000"
[ "${STALL_BENCH_BIG:-0}" = 1 ] && rows="$rows 10000000"
if part tidy; then
    for n in $rows; do
        trace "$n"
        k=3
        [ "$n" -ge 10000000 ] && k=1
        best $k "$S" validate "$d/v$n.ini" -o "$d/out" -q --no-sync
        printf '%-62s %9s %9s\n' "validate, tidy trace of $n rows (64 ranks)" "$W" "$M"
        best $k "$S" run "$d/w$n.ini" -o "$d/out" -q --no-sync
        printf '%-62s %9s %9s\n' "run what-if (workers = 8), the same trace" "$W" "$M"
        drop "$T/t$n.csv"
    done
fi
if part notebook; then
    for n in $rows; do
        nbtrace "$n"
        k=3
        [ "$n" -ge 10000000 ] && k=1
        best $k "$S" validate "$d/nv$n.ini" -o "$d/out" -q --no-sync
        printf '%-62s %9s %9s\n' "validate, notebook trace of $n fetch rows (2 GPUs)" "$W" "$M"
        best $k "$S" run "$d/nw$n.ini" -o "$d/out" -q --no-sync
        printf '%-62s %9s %9s\n' "run what-if (workers = 8), the same trace" "$W" "$M"
        drop "$T/ds$n"*
    done
fi
if part ranks; then
    for g in 1 64 1024 4096 16384 65536; do
        k=3
        [ "$g" -ge 16384 ] && k=1
        best $k "$S" run "$SRC/bench/model_8x8x5000.ini" --set cluster.gpus=$g --set run.batches=100 -o "$d/out" -q --no-sync
        printf '%-62s %9s %9s\n' "run model, $g ranks x 8 workers x 100 iterations" "$W" "$M"
    done
fi
if part sweep; then
    sed -n '/^; bench-sweep-ini$/,$p' "$SRC/bench/sweep.ini" >"$d/s.ini"
    pts="10 100 1000"
    [ "${STALL_BENCH_BIG:-0}" = 1 ] && pts="$pts 10000"
    for p in $pts; do
        sed "s/^run.seed = .*/run.seed = 1..$p/" "$d/s.ini" >"$d/s$p.ini"
        k=3
        [ "$p" -ge 1000 ] && k=1
        best $k "$S" sweep "$d/s$p.ini" -o "$d/out" -q --no-sync
        printf '%-62s %9s %9s\n' "sweep, $p points of 8 GPUs x 4 workers x 1000 it., all cores" "$W" "$M"
    done
fi
