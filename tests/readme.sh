#!/bin/sh
# The README's commands run as written. Every line `$ ./build/stallsim ...` inside a
# fenced code block of README.md (with its continuation lines, ending in `\`), and every
# other `$ ` line of a block holding one (a helper: `$ cut ...`), is run, in order, from
# a scratch copy of the repository root: the top-level entries are
# symbolic links to the checkout, `build` points at the folder of the stallsim under
# test, and `results/` is a fresh empty folder, so whatever the commands write lands
# in the scratch folder, which is removed at the end. Fails naming the first command
# that exits non-zero or prints other lines than the README shows (a line "..." in the
# README stands for lines left out); a command that writes outside the scratch folder
# (`-o /...`, `/tmp`) is refused. For README.md, also checks that docs/ini.md has the INI
# key table of `stallsim --help` (key, default, meaning) and that README.md names every
# package of the Makefile's PKGS. Another page (docs/commands.md) gets the commands' check.
#   sh tests/readme.sh BUILD/stallsim [README.md | docs/PAGE.md]
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
# continuation lines joined (the backslash-newline removed, as the shell would). In a
# block that holds such a command, every other `$ ` line runs too, in order: a helper
# that makes the command's input or shows what it wrote (`$ cut ... results/x/sweep.csv`).
# The lines after a command, up to the next `$ ` line or the end of the block, are the
# output the README shows for it: $tmp/expect.N (empty when none is shown). A block
# indented under a list item (its fence indented) is read without that indentation.
awk -v dir="$tmp" '
    function flush_block(   i, l, cont, line, ef) {
        ef = ""
        for (i = 1; has && i <= nb; i++) {
            l = b[i]
            if (cont) {
                line = line " " l; sub(/[ \t]*\\$/, "", line)
                if (l !~ /\\$/) { print line > (dir "/commands"); cont = 0 }
                continue
            }
            if (l ~ /^\$ /) {
                if (ef != "") close(ef)
                n++; ef = dir "/expect." n; printf "" > ef
                line = substr(l, 3)
                if (l ~ /\\$/) { sub(/[ \t]*\\$/, "", line); cont = 1 }
                else print line > (dir "/commands")
                continue
            }
            if (ef != "") print l > ef
        }
        if (ef != "") close(ef)
        nb = 0; has = 0
    }
    /^[ \t]*```/ {
        if (inblock) flush_block(); else ind = index($0, "`") - 1
        inblock = !inblock; next
    }
    !inblock { next }
    {
        l = $0
        if (ind > 0 && substr(l, 1, ind) ~ /^[ \t]*$/) l = substr(l, ind + 1)
        b[++nb] = l
        if (l ~ /^\$ \.\/build\/stallsim( |$)/) has = 1
    }
' "$readme"
[ -f "$tmp/commands" ] || : > "$tmp/commands"
n=$(wc -l < "$tmp/commands")
if [ "$n" -eq 0 ]; then
    echo "readme.sh: no \`\$ ./build/stallsim ...\` command in $readme"
    exit 1
fi

# Is the README's output (expect file, $1) what the command printed ($2)? Lines compare
# exactly; a line "..." stands for any number of lines left out. Without a leading or
# trailing "...", the output must start or end as shown.
same_output() {
    awk '
        FNR == NR { e[++ne] = $0; next }
        { a[++na] = $0 }
        END {
            if (ne == 0) exit 0
            i = 1; j = 1; anchored = 1
            while (i <= ne) {
                if (e[i] == "...") { anchored = 0; i++; continue }
                # the chunk of expected lines up to the next "..."
                k = i; while (k <= ne && e[k] != "...") k++
                len = k - i; found = 0
                for (s = j; s + len - 1 <= na; s++) {
                    ok = 1
                    for (t = 0; t < len; t++) if (a[s + t] != e[i + t]) { ok = 0; break }
                    if (ok) { found = 1; break }
                    if (anchored) break
                }
                if (!found && anchored) {
                    for (t = 0; t < len && a[j + t] == e[i + t]; t++) ;
                    print "    README shows:   " e[i + t]
                    print "    the output has: " (j + t <= na ? a[j + t] : "(nothing more)")
                    exit 1
                }
                if (!found) { print "    README shows lines not in the output, from: " e[i]; exit 1 }
                if (k > ne && s + len - 1 != na) { print "    the output goes on after: " e[k - 1]; exit 1 }
                j = s + len; i = k; anchored = 1
            }
        }
    ' "$1" "$2"
}

fail=0
i=0
while IFS= read -r cmd; do
    i=$((i + 1))
    echo "readme.sh: [$i/$n] $cmd"
    case " $cmd" in
        *" -o /"*|*" -o~"*|*" --timeline /"*|*" /tmp"*|*" ~/"*)
            echo "readme.sh: FAILED: writes outside the repository (use a relative -o DIR, results/...): $cmd"
            fail=1
            continue ;;
    esac
    (cd "$work" && sh -c "$cmd" > "$tmp/out" 2>&1 < /dev/null)
    rc=$?
    if [ "$rc" -ne 0 ]; then
        sed 's/^/    /' "$tmp/out" | tail -n 20
        echo "readme.sh: FAILED (exit $rc): $cmd"
        fail=1
    elif ! same_output "$tmp/expect.$i" "$tmp/out"; then
        echo "readme.sh: FAILED: the README's output differs from what it printed: $cmd"
        sed 's/^/    | /' "$tmp/out" | head -n 40
        fail=1
    fi
done < "$tmp/commands"

# The checks of the README itself, not of another page given: the packages the README
# says `make run` installs are the Makefile's PKGS.
is_readme=0
[ "$(cd "$(dirname "$readme")" && pwd -P)/$(basename "$readme")" = \
  "$(cd "$root" && pwd -P)/README.md" ] && is_readme=1
[ "$is_readme" -eq 1 ] && for p in $(sed -n 's/^PKGS[ \t]*[:+]*=//p' "$root/Makefile"); do
    if ! grep -Eq -- "(^|[ \`])$p([ \`]|$)" "$readme"; then
        echo "readme.sh: the Makefile installs $p; README.md does not list it"
        fail=1
    fi
done

# docs/ini.md against the key table of --help: the same (section, key, default and
# meaning) rows, compared as text with runs of blanks made one space.
if [ "$is_readme" -eq 1 ] && [ -f "$root/docs/ini.md" ]; then
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
            gsub(/&lt;/, "<", m); gsub(/&gt;/, ">", m); gsub(/&amp;/, "\\&", m)
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

if [ "$fail" -eq 0 ]; then
    if [ "$is_readme" -eq 1 ]; then
        echo "readme.sh: $n README commands ran and printed what it shows; docs/ini.md has the keys of --help; README lists PKGS"
    else
        echo "readme.sh: $n commands of $readme ran and printed what it shows"
    fi
fi
exit "$fail"
