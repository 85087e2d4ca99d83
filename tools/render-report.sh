#!/bin/sh
# Renders a stallsim report.html in headless Chromium and saves a screenshot,
# to check that it opens from disk without a server and to look at it.
#   tools/render-report.sh RESULT_DIR/report.html [OUT.png] [WIDTHxHEIGHT]
# Needs Debian's chromium (apt-get install -y chromium).
set -eu
html=${1:?usage: tools/render-report.sh REPORT.html [OUT.png] [WIDTHxHEIGHT]}
out=${2:-${html%.html}.png}
size=${3:-1200x4000}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "render-report: chromium not found (apt-get install -y chromium)" >&2
    exit 2
fi
[ -f "$html" ] || { echo "render-report: $html: no such file" >&2; exit 2; }
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
outabs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# No network: a self-contained page needs none.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile" --proxy-server=127.0.0.1:9 \
    --window-size="$(echo "$size" | tr x ,)" --screenshot="$outabs" "file://$abs" \
    >/dev/null 2>&1
[ -s "$outabs" ] || { echo "render-report: no screenshot written" >&2; exit 1; }
echo "$outabs"
