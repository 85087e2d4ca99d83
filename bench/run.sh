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
