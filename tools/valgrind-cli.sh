#!/bin/sh
# Valgrind memcheck over every test that runs the stallsim binary: the ctest
# label `binary` (CMakeLists.txt gives it to each suite that reaches the
# binary through STALL_BINARY_DIR, and to sweep_mpi): test_cli, test_malformed
# (the whole malformed-input corpus, the 100 MB line included), test_plot and
# sweep_mpi (mpirun -n 2). BUILD/stallsim is swapped for a wrapper that runs
# it under valgrind for the duration, so every stallsim process those tests
# start is checked. A memcheck error or a definite/indirect leak makes
# stallsim exit 99, which fails the test that ran it (each test checks the
# exit status it expects; the failing MPI run of sweep_mpi, whose status
# cannot carry the 99, checks that stderr holds no memcheck report, and the
# interrupted runs of test_cli that it holds no memcheck error). Nothing is
# skipped under valgrind. Only the leak kinds that are errors are shown. A
# run killed by a signal on purpose is not leak-checked: valgrind kills every
# thread but the one that took the signal and scans only that one's stack,
# so blocks held in the others' frames read as lost ("possibly lost" for the
# model threads' stacks, models/model_par.c; "definitely lost" for a block
# held in a register of the main thread while a helper thread took the
# signal), which is no leak of a run that ended (test_cli.c says more).
#
# Usage: tools/valgrind-cli.sh BUILD_DIR
#   VALGRIND_JOBS=N           tests run in parallel (default: nproc)
#   STALL_VALGRIND_TESTS=RE   only the tests of the label matching RE
#   STALL_VALGRIND_TIMEOUT=S  seconds each test may run (default 1800)
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
# A wrapper left by a killed earlier run: put the real binary back first.
if [ -e "$build/stallsim.real" ]; then
    mv -f "$build/stallsim.real" "$build/stallsim"
fi
[ -x "$build/stallsim" ] || { echo "valgrind-cli: $build/stallsim not built"; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind-cli: valgrind not installed"; exit 2; }
mv "$build/stallsim" "$build/stallsim.real"
restore() {
    [ ! -e "$build/stallsim.real" ] || mv -f "$build/stallsim.real" "$build/stallsim"
    cmake -S "$src" -B "$build" -DSTALL_TEST_TIMEOUT=600 >/dev/null 2>&1 || true
}
trap restore EXIT
trap 'exit 130' INT TERM
# --num-callers=50: allocation stacks deep enough to reach OpenMPI's init in
# the suppressions of tools/valgrind-openmpi.supp (OpenMPI's own blocks and
# writes under mpirun; they match no stack that is not inside OpenMPI's init,
# finalize or progress thread).
cat >"$build/stallsim" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \\
    --show-leak-kinds=definite,indirect \\
    --read-inline-info=no --num-callers=50 --suppressions="$src/tools/valgrind-openmpi.supp" \\
    "$build/stallsim.real" "\$@"
WRAP
chmod +x "$build/stallsim"
# Each stallsim process runs 20-50x slower under memcheck: a suite gets
# STALL_VALGRIND_TIMEOUT seconds (default 1800) instead of its usual 600
# (test_cli took over 600 s on a 2-core machine under load).
cmake -S "$src" -B "$build" -DSTALL_TEST_TIMEOUT="${STALL_VALGRIND_TIMEOUT:-1800}" >/dev/null
jobs=${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 2)}
if [ -n "${STALL_VALGRIND_TESTS:-}" ]; then
    ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$jobs" -L binary -R "$STALL_VALGRIND_TESTS"
else
    ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$jobs" -L binary
fi
