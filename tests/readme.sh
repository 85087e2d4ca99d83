#!/bin/sh
# The README's commands run as written. Every line `$ ./build/stallsim ...` inside a
# fenced code block of README.md (with its continuation lines, ending in `\`) is run,
# in order, from a scratch copy of the repository root: the top-level entries are
# symbolic links to the checkout, `build` points at the folder of the stallsim under
# test, and `results/` is a fresh empty folder, so whatever the commands write lands
# in the scratch folder, which is removed at the end. Fails naming the first command
# that exits non-zero. Also checks that docs/ini.md has every INI key and default that
# `stallsim --help` prints, with the same meaning.
#   sh tests/readme.sh BUILD/stallsim [README.md]
# Run from the repository root (ctest does).
set -u
bin="$1"
readme="${2:-README.md}"
root=$(pwd)
[ -x "$bin" ] || { echo "readme.sh: $bin: not an executable"; exit 2; }
[ -f "$readme" ] || { echo "readme.sh: $readme: not found"; exit 2; }
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
case "$readme" in /*) ;; *) readme="$root/$readme" ;; esac
bindir=$(cd "$(dirname "$bin")" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stall_readme_XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
work="$tmp/repo"
mkdir "$work" "$work/results"
for f in "$root"/* "$root"/.[!.]*; do
    [ -e "$f" ] || continue
    n=$(basename "$f")
    case "$n" in results|build|.git) continue ;; esac
    ln -s "$f" "$work/$n"
done
ln -s "$bindir" "$work/build"

# One command per line of $tmp/commands: `$ ./build/stallsim` lines inside ``` blocks,
# continuation lines joined (the backslash-newline removed, as the shell would).
awk '
    /^[ \t]*```/ { inblock = !inblock; cont = 0; next }
    !inblock { next }
    cont { line = line " " $0; sub(/[ \t]*\\$/, "", line); if ($0 !~ /\\$/) { print line; cont = 0 }; next }
    /^\$ \.\/build\/stallsim( |$)/ {
        line = substr($0, 3)
        if ($0 ~ /\\$/) { sub(/[ \t]*\\$/, "", line); cont = 1 } else print line
    }
' "$readme" > "$tmp/commands"
n=$(wc -l < "$tmp/commands")
if [ "$n" -eq 0 ]; then
    echo "readme.sh: no \`\$ ./build/stallsim ...\` command in $readme"
    exit 1
fi

fail=0
i=0
while IFS= read -r cmd; do
    i=$((i + 1))
    echo "readme.sh: [$i/$n] $cmd"
    (cd "$work" && sh -c "$cmd" > "$tmp/out" 2>&1 < /dev/null)
    rc=$?
    if [ "$rc" -ne 0 ]; then
        sed 's/^/    /' "$tmp/out" | tail -n 20
        echo "readme.sh: FAILED (exit $rc): $cmd"
        fail=1
    fi
done < "$tmp/commands"

# docs/ini.md against the key table of --help: the same (section, key, default and
# meaning) rows, compared as text with runs of blanks made one space.
if [ -f "$root/docs/ini.md" ]; then
    "$bin" --help | awk '
        /^INI keys/ { on = 1; next }
        on && /^$/ { exit }
        on && /^  \[/ { sec = $1; next }
        on && /^    / {
            rest = substr($0, index($0, " default ") + 9)
            gsub(/[ \t]+/, " ", rest)
            print sec " " $1 " " rest
        }
    ' | sort > "$tmp/help-keys"
    sed -n '/^## Keys/,/^## /p' "$root/docs/ini.md" | awk -F' [|] ' '
        /^[|] `\[/ {
            sec = $1; sub(/^[|] /, "", sec)
            m = $4; sub(/ [|]$/, "", m); gsub(/\\[|]/, "|", m)
            line = sec " " $2 " " $3 " " m
            gsub(/`/, "", line); gsub(/[ \t]+/, " ", line)
            print line
        }
    ' | sort > "$tmp/doc-keys"
    if ! diff "$tmp/help-keys" "$tmp/doc-keys" > "$tmp/keys.diff"; then
        echo "readme.sh: docs/ini.md's key table differs from stallsim --help (< --help, > docs/ini.md):"
        grep '^[<>]' "$tmp/keys.diff"
        fail=1
    fi
    [ -s "$tmp/help-keys" ] || { echo "readme.sh: no INI keys in stallsim --help"; fail=1; }
fi

[ "$fail" -eq 0 ] && echo "readme.sh: $n README commands ran; docs/ini.md has every key of --help"
exit "$fail"
