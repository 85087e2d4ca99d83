#!/bin/sh
# Checks the architecture the tree promises (README, Layout):
#   1. every #include points down or sideways within a layer:
#        sim (0) < formats (1) < models (2) < jobs (3) < cli (4)
#   2. no cycle between modules (a module is X.c with its header X.h, public
#      in include/stall/ or private beside it), found with tsort.
# Prints each violation and exits 1; prints a one-line summary and exits 0.
set -eu
cd "$(dirname "$0")/.."
layers="sim formats models jobs cli"
rank() { i=0; for l in $layers; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
# module_of HEADER_NAME -> "layer/module" of the .c that implements it
module_of() {
    for l in $layers; do
        [ -f "$l/$1.c" ] && { echo "$l/$1"; return; }
    done
    echo ""
}
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
bad=0
nfiles=0
for l in $layers; do
    for f in "$l"/*.c "$l"/*.h; do
        [ -f "$f" ] || continue
        nfiles=$((nfiles + 1))
        from="$l/$(basename "$f" | sed 's/\.[ch]$//')"
        for inc in $(sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$f"); do
            name=$(basename "$inc")
            to=$(module_of "$name")
            [ -n "$to" ] || continue
            [ "$to" = "$from" ] && continue
            tl=$(rank "${to%%/*}")
            if [ "$tl" -gt "$(rank "$l")" ]; then
                echo "check-layers: $f includes $inc.h from $to: upward (${to%%/*} is above $l)"
                bad=1
            fi
            echo "$from $to" >>"$edges"
        done
    done
done
# Public headers include each other too: an edge from the header's module.
for h in include/stall/*.h; do
    from=$(module_of "$(basename "$h" .h)")
    [ -n "$from" ] || continue
    for inc in $(sed -n 's/^#include "stall\/\([^"]*\)\.h".*/\1/p' "$h"); do
        to=$(module_of "$inc")
        [ -n "$to" ] && [ "$to" != "$from" ] && echo "$from $to" >>"$edges"
    done
done
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.err"; then
    echo "check-layers: include cycle between modules:"
    sed 's/^tsort: /  /' "$edges.err"
    bad=1
fi
rm -f "$edges.err"
[ "$bad" -eq 0 ] || exit 1
echo "check-layers: $nfiles files, $(sort -u "$edges" | wc -l) module dependencies, all downward, no cycle"
