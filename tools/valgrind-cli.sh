#!/bin/sh
# Runs the CLI tests (test_cli; STALL_VALGRIND_TESTS=regex for others) with every stallsim process
# under valgrind memcheck: BUILD/stallsim is swapped for a wrapper for the
# duration. A memcheck error or leak makes stallsim exit 99, which fails the
# test that ran it. Usage: tools/valgrind-cli.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)
[ -x "$build/stallsim" ] || { echo "valgrind-cli: $build/stallsim not built"; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind-cli: valgrind not installed"; exit 2; }
mv "$build/stallsim" "$build/stallsim.real"
restore() { mv -f "$build/stallsim.real" "$build/stallsim"; }
trap restore EXIT INT TERM
cat >"$build/stallsim" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \\
    "$build/stallsim.real" "\$@"
WRAP
chmod +x "$build/stallsim"
# Tests that depend on timing (a signal sent once a run is under way) skip
# themselves when STALL_UNDER_VALGRIND is set.
STALL_UNDER_VALGRIND=1 ctest --test-dir "$build" --output-on-failure \
    -R "${STALL_VALGRIND_TESTS:-test_cli}"
