#!/bin/sh
# sweep.csv from `mpirun -n 2 stallsim sweep` must equal -j 1's and -j 2's byte
# for byte. Skipped (status 77) when mpirun is missing or stallsim was built
# without MPI; .ci/run installs OpenMPI, so CI runs it.
set -e
bin="$1"
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun not found"; exit 77; }
dir=$(mktemp -d /tmp/stall_sweep_mpi_XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/s.ini" <<'INI'
[scenario]
mode = model
[trace]
format = none
[fetch]
dist = lognormal
mean_s = 0.02
sigma = 0.3
[compute]
dist = lognormal
mean_s = 0.01
sigma = 0.2
[cluster]
gpus = 4
[run]
batches = 100
[sweep]
loader.workers = 1..4
loader.prefetch_factor = 1, 2
run.seed = 1..3
INI
"$bin" sweep "$dir/s.ini" -o "$dir/j1" -j 1 -q
"$bin" sweep "$dir/s.ini" -o "$dir/j2" -j 2 -q
cmp "$dir/j1/sweep.csv" "$dir/j2/sweep.csv"
# OpenMPI's runtime (and its dlopen'ed plugins, which LeakSanitizer cannot
# name for a suppression) leaves blocks behind at MPI_Finalize: leak checks
# are off for the MPI run alone in the sanitizer build; the -j runs above and
# test_sweep check our own code for leaks.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
mpirun --allow-run-as-root --oversubscribe -n 2 -x ASAN_OPTIONS "$bin" sweep "$dir/s.ini" -o "$dir/mpi" -j 1 -q \
    > "$dir/mpi.log" 2>&1 || { cat "$dir/mpi.log"; exit 1; }
cmp "$dir/j1/sweep.csv" "$dir/mpi/sweep.csv"
# A point that fails (workers = 0 with a prefetch factor, on rank 1's share of
# the points) is reported once, by rank 0, with the point named; exit 2.
st=0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
mpirun --allow-run-as-root --oversubscribe -n 2 -x ASAN_OPTIONS "$bin" sweep "$dir/s.ini" \
    --sweep loader.prefetch_factor=2 --sweep "loader.workers=1, 0" -o "$dir/bad" -q \
    > "$dir/bad.log" 2>&1 || st=$?
[ "$st" -ne 0 ] || { echo "sweep_mpi: a bad point was accepted"; exit 1; }
[ "$st" -eq 2 ] || { echo "sweep_mpi: exit $st, expected 2:"; cat "$dir/bad.log"; exit 1; }
# Under tools/valgrind-cli.sh a memcheck report of a rank lands in the log
# (its exit status 99 may not be the one mpirun passes on).
if grep -q '^==[0-9]*==' "$dir/bad.log"; then echo "sweep_mpi: memcheck:"; cat "$dir/bad.log"; exit 1; fi
n=$(grep -c '^stallsim: ' "$dir/bad.log" || true)
[ "$n" -eq 1 ] || { echo "sweep_mpi: $n error lines, expected 1:"; cat "$dir/bad.log"; exit 1; }
grep -q "loader.workers=0" "$dir/bad.log" || { echo "sweep_mpi: the point is not named:"; cat "$dir/bad.log"; exit 1; }
echo "sweep_mpi: $(($(wc -l < "$dir/j1/sweep.csv") - 1)) points identical on -j 1, -j 2 and mpirun -n 2"
