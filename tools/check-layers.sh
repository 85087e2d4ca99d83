#!/bin/sh
# Checks the architecture the tree promises (docs/development.md, Layout):
#   1. every #include points down or sideways within a layer, from sources,
#      private headers and public headers alike:
#        util (0) < sim (1) < formats (2) < models (3) < config (4)
#          < outputs (5) < jobs (6) < cli (7)
#      A public header include/stall/X.h belongs to the layer of the X.c that
#      implements it; every public header has one, or is listed in
#      header_only below with its layer.
#   2. a private header (X.h beside its sources) is included only from its
#      own layer (tests and benchmarks aside);
#   3. no cycle between modules (a module is X.c with its header X.h, public
#      in include/stall/ or private beside it), found with tsort.
# Prints each violation and exits 1; prints a one-line summary and exits 0.
set -eu
cd "$(dirname "$0")/.."
layers="util sim formats models config outputs jobs cli"
rank() { i=0; for l in $layers; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
# Public headers with no .c (types only), and the layer each belongs to.
header_only="event:sim"
# module_of HEADER_NAME -> "layer/module" of the .c that implements it
module_of() {
    for p in $header_only; do
        [ "${p%%:*}" = "$1" ] && { echo "${p#*:}/$1"; return; }
    done
    for l in $layers; do
        [ -f "$l/$1.c" ] && { echo "$l/$1"; return; }
    done
    echo ""
}
edges=$(mktemp)
trap 'rm -f "$edges" "$edges.err"' EXIT
bad=0
nfiles=0
# check_edge FILE FROM_MODULE FROM_LAYER INCLUDED_NAME
check_edge() {
    to=$(module_of "$(basename "$4")")
    [ -n "$to" ] || return 0
    [ "$to" = "$2" ] && return 0
    tl=$(rank "${to%%/*}")
    if [ "$tl" -gt "$(rank "$3")" ]; then
        echo "check-layers: $1 includes $4.h from $to: upward (${to%%/*} is above $3)"
        bad=1
    fi
    echo "$2 $to" >>"$edges"
}
for l in $layers; do
    for f in "$l"/*.c "$l"/*.h; do
        [ -f "$f" ] || continue
        nfiles=$((nfiles + 1))
        from="$l/$(basename "$f" | sed 's/\.[ch]$//')"
        for inc in $(sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$f"); do
            case "$inc" in
            stall/*) ;;
            */*)
                echo "check-layers: $f includes $inc.h by a layer path: private headers are included from their own folder only"
                bad=1
                ;;
            *)
                if [ ! -f "$l/$inc.h" ]; then
                    echo "check-layers: $f includes $inc.h, which is not a private header of $l/"
                    bad=1
                fi
                ;;
            esac
            check_edge "$f" "$from" "$l" "$inc"
        done
    done
done
# Public headers include each other too: each belongs to its module's layer.
for h in include/stall/*.h; do
    nfiles=$((nfiles + 1))
    from=$(module_of "$(basename "$h" .h)")
    if [ -z "$from" ]; then
        echo "check-layers: $h has no X.c in any layer: its layer is unknown"
        bad=1
        continue
    fi
    for inc in $(sed -n 's/^#include "stall\/\([^"]*\)\.h".*/\1/p' "$h"); do
        check_edge "$h" "$from" "${from%%/*}" "$inc"
    done
done
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.err"; then
    echo "check-layers: include cycle between modules:"
    sed 's/^tsort: /  /' "$edges.err"
    bad=1
fi
[ "$bad" -eq 0 ] || exit 1
echo "check-layers: $nfiles files, $(sort -u "$edges" | wc -l) module dependencies, all downward, no cycle"
