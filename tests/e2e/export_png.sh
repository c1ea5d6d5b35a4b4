#!/bin/sh
# hearth export --png: a PNG of the requested size, drawn off-screen (no
# display needed), showing the answer and the graph.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/small.folded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if [ ! -x /usr/bin/convert ]; then
	[ "${CI:-}" = true ] && fail "imagemagick is missing"
	echo "skipped: imagemagick is not installed"; exit 0
fi

env -u DISPLAY "$HEARTH" export --png -o "$tmp/out.png" --width 1000 --height 600 "$fixture" ||
	fail "export failed"
[ "$(/usr/bin/convert "$tmp/out.png" -format '%w %h' info:)" = "1000 600" ] || fail "wrong size"
px() { /usr/bin/convert "$tmp/out.png" -format "%[hex:p{$1,$2}]" info: | cut -c1-6; }
# Background at the corner, the root row "all" at the bottom of the graph
# (8 px margin, 20 px rows), dark text in the answer line.
[ "$(px 2 2)" = FAFAF7 ] || fail "background is $(px 2 2)"
[ "$(px 990 580)" = E4E1DA ] || fail "root row colour is $(px 990 580)"
dark=$(/usr/bin/convert "$tmp/out.png" -crop 400x20+8+8 -threshold 40% -format '%[fx:100*(1-mean)]' info:)
[ "${dark%%.*}" -ge 3 ] || fail "no answer text at the top ($dark% dark)"

# Default height: tall enough for every row.
"$HEARTH" export --png -o "$tmp/auto.png" --width 800 "$fixture" || fail "auto height"
[ "$(/usr/bin/convert "$tmp/auto.png" -format '%w' info:)" = 800 ] || fail "auto width"
"$HEARTH" export --png -o - "$fixture" 2>/dev/null && fail "--png to stdout accepted"
echo "export_png: all checks passed"
