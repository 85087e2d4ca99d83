#!/bin/sh
# Runs every benchmark built in the given build folder (default build/).
# bench_replay needs the source folder (for the shipped configs).
set -e
B=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
for b in "$B"/bench_*; do
    [ -x "$b" ] || continue
    [ "$(basename "$b")" = bench_json ] && continue # below, with its files
    echo "== $(basename "$b")"
    case "$(basename "$b")" in
    bench_replay) "$b" "$SRC" ;;
    *) "$b" ;;
    esac
done
# The JSON trace readers (Kineto, dftracer): MB/s per core on synthetic traces
# of STALL_BENCH_JSON_MB megabytes each (default 50) written by gen_json.py,
# against Python's json module on the same files (json.load of the Kineto
# file; json.loads per line of the .pfw). Skipped without python3.
PY=$(command -v python3 || true)
if [ -x "$B/bench_json" ] && [ -n "$PY" ]; then
    echo "== bench_json"
    MB=${STALL_BENCH_JSON_MB:-50}
    d=$(mktemp -d /tmp/stall_bench_json_XXXXXX)
    if "$PY" "$SRC/bench/gen_json.py" kineto "$d/k.json" "$MB" &&
        "$PY" "$SRC/bench/gen_json.py" dftracer "$d/d.pfw" "$MB"; then
        "$B/bench_json" "$d/k.json" "$d/d.pfw" || true
        "$PY" - "$d/k.json" "$d/d.pfw" <<'PYEOF' || echo "reference (Python json) failed: skipped"
import json, os, resource, sys, time
def best(f):
    b = 1e30
    for _ in range(3):
        t0 = time.perf_counter(); f(); b = min(b, time.perf_counter() - t0)
    return b
def pfw(p):
    with open(p) as fh:
        for line in fh:
            line = line.strip().rstrip(',')
            if line.startswith('{'):
                json.loads(line)
k, d = sys.argv[1], sys.argv[2]
for name, p, f in (('kineto', k, lambda: json.load(open(k))), ('dftracer', d, lambda: pfw(d))):
    mb = os.path.getsize(p) / 1e6
    t = best(f)
    print('%-8s %8.1f MB  best of 3 %8.3f s  %7.1f MB/s per core  (reference: Python %s json)'
          % (name, mb, t, mb / t, sys.version.split()[0]))
print('peak RSS of the reference: %.1f MB' % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
PYEOF
    fi
    rm -rf "$d"
fi
# The sweep benchmark's case under `mpirun -n 2` (when MPI is there).
if command -v mpirun >/dev/null 2>&1 && [ -x "$B/stallsim" ]; then
    d=$(mktemp -d /tmp/stall_bench_mpi_XXXXXX)
    sed -n '/^; bench-sweep-ini$/,$p' "$SRC/bench/sweep.ini" > "$d/s.ini"
    t0=$(date +%s.%N)
    if mpirun --allow-run-as-root --oversubscribe -n 2 "$B/stallsim" sweep "$d/s.ini" -o "$d/out" -q; then
        t1=$(date +%s.%N)
        echo "== mpirun -n 2 stallsim sweep (same 1000 points, process start included)"
        echo "$t0 $t1" | awk '{printf "sweep, mpirun -n 2: %.2f s, %.0f points/s\n", $2-$1, 1000/($2-$1)}'
    fi
    rm -rf "$d"
fi
# End to end, whole process, files written (issue 10 aims: seed case < 15 ms,
# model 8 ranks x 8 workers x 5000 iterations < 10 ms); best of 7, with the
# disk flush before the rename (the default) and without it (--no-sync).
if [ -x "$B/stallsim" ]; then
    d=$(mktemp -d /tmp/stall_bench_e2e_XXXXXX)
    for c in "$SRC/configs/seed-case1.ini" "$SRC/bench/model_8x8x5000.ini"; do
        for sync in "" --no-sync; do
            best=""
            for i in 1 2 3 4 5 6 7; do
                t0=$(date +%s%N)
                "$B/stallsim" run "$c" -q $sync -o "$d/o$i" >/dev/null
                t1=$(date +%s%N)
                us=$(( (t1 - t0) / 1000 ))
                if [ -z "$best" ] || [ "$us" -lt "$best" ]; then best=$us; fi
            done
            echo "== end to end: $(basename "$c") ${sync:-(synced)}: best of 7 $(echo "$best" | awk '{printf "%.1f", $1 / 1000}') ms (wall, process start and files included)"
        done
    done
    rm -rf "$d"
fi
# Trace reading against DuckDB, and the scaling table (issue 21).
sh "$SRC/bench/scale.sh" "$B" "$SRC"
