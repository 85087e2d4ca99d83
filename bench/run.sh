#!/bin/sh
# Runs every benchmark built in the given build folder (default build/).
set -e
B=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
for b in "$B"/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" "$SRC"
done
