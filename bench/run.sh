#!/bin/sh
# Runs every benchmark built in the given build folder (default build/).
# bench_replay needs the source folder (for the shipped configs).
set -e
B=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
for b in "$B"/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    case "$(basename "$b")" in
    bench_replay) "$b" "$SRC" ;;
    *) "$b" ;;
    esac
done
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
