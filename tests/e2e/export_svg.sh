#!/bin/sh
# hearth export --svg: valid XML, one <g> per frame, each with a <title>
# naming the frame with its total and share, the script for zoom and
# search embedded; --folded writes the stacks back.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/small.folded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
if ! command -v xmllint >/dev/null 2>&1; then
	[ "${CI:-}" = true ] && fail "xmllint is missing (libxml2-utils)"
	echo "skipped: xmllint is not installed"; exit 0
fi

"$HEARTH" export --svg -o "$tmp/out.svg" --title 'small profile' "$fixture" || fail "export failed"
xmllint --noout "$tmp/out.svg" || fail "not well-formed XML"
g() { xmllint --xpath "$1" "$tmp/out.svg" 2>/dev/null; }
n=$(g "count(//*[local-name()='g'][@class='f'])")
# all, app, main, build_report, dumps, memcpy, parse, lex, parse_expr
[ "$n" = 9 ] || fail "$n frame groups, not 9"
t=$(g "count(//*[local-name()='g'][@class='f']/*[local-name()='title'])")
[ "$t" = 9 ] || fail "$t titles, not 9"
g "//*[local-name()='g'][@class='f']/*[local-name()='title']/text()" >"$tmp/titles"
for want in 'all (total 100, 100%; self 0, 0%)' \
	'build_report (total 62, 62%; self 30, 30%; unclassified)' \
	'memcpy (total 8, 8.0%; self 8, 8.0%; system)' \
	'parse_expr (total 13, 13%; self 13, 13%; unclassified)'; do
	grep -qF "$want" "$tmp/titles" || fail "no title '$want' in: $(cat "$tmp/titles")"
done
# The root spans the drawing width (1200 - 2 x 10), build_report 62% of it.
w=$(g "string(//*[local-name()='g'][@data-n='build_report']/*[local-name()='rect']/@width)")
[ "$w" = "731.60" ] || fail "build_report is $w wide, not 731.60"
grep -q 'function zoom(' "$tmp/out.svg" && grep -q 'function search(' "$tmp/out.svg" ||
	fail "the zoom/search script is missing"
grep -q 'small profile' "$tmp/out.svg" || fail "title missing"

# Every frame of at least 0.1 px is kept (as flamegraph.pl does), however
# its rounded width: 50 frames of 0.118 px are, 50 of 0.0118 px are not.
{
	echo "app;big 100000"
	i=0; while [ $i -lt 50 ]; do echo "app;small_$i 10"; echo "app;tiny_$i 1"; i=$((i + 1)); done
} >"$tmp/thin.folded"
"$HEARTH" export --svg -o "$tmp/thin.svg" "$tmp/thin.folded" || fail "export of thin frames"
n=$(xmllint --xpath "count(//*[local-name()='g'][@class='f'])" "$tmp/thin.svg")
[ "$n" = 53 ] || fail "$n frames in the SVG, not 53 (all, app, big, 50 small)"
grep -qF '<title>small_7 (total 10, &lt;0.1%; self 10, &lt;0.1%; unclassified)</title>' "$tmp/thin.svg" ||
	fail "the title of a frame under 0.1% is not escaped"
xmllint --noout "$tmp/thin.svg" || fail "thin frames broke the XML"

# Names with XML metacharacters are escaped.
printf 'app;operator<<(a&b, "c") 5\napp;f 5\n' >"$tmp/x.folded"
"$HEARTH" export --svg -o "$tmp/x.svg" "$tmp/x.folded" || fail "export of escaped names"
xmllint --noout "$tmp/x.svg" || fail "escaping broke the XML"
g() { xmllint --xpath "$1" "$tmp/x.svg" 2>/dev/null; }
[ "$(g "count(//*[local-name()='g'][@data-n='operator<<(a&b, \"c\")'])")" = 1 ] ||
	fail "escaped name not found"

# Bytes that are not UTF-8, and control characters, do not break the XML.
printf 'app;\377\376name;ctl\001x 3\napp;caf\303\251 2\n' >"$tmp/bytes.folded"
"$HEARTH" export --svg -o "$tmp/bytes.svg" "$tmp/bytes.folded" || fail "export of raw bytes"
xmllint --noout "$tmp/bytes.svg" || fail "raw bytes broke the XML"
grep -q 'data-n="café"' "$tmp/bytes.svg" || fail "valid UTF-8 was not kept"

# --folded to stdout gives the same stacks back.
"$HEARTH" export --folded -o - "$fixture" | sort >"$tmp/back"
sort "$fixture" >"$tmp/want"
cmp -s "$tmp/back" "$tmp/want" || fail "folded round trip differs: $(diff "$tmp/want" "$tmp/back")"
# '-' reads the profile from stdin.
"$HEARTH" export --svg -o "$tmp/stdin.svg" - <"$fixture" || fail "export from stdin"
cmp -s "$tmp/stdin.svg" "$tmp/out.svg" && fail "title should name stdin, not the file"
[ "$(xmllint --xpath "count(//*[local-name()='g'][@class='f'])" "$tmp/stdin.svg")" = 9 ] ||
	fail "export from stdin lost frames"

"$HEARTH" export --svg "$fixture" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q '^hearth: .*-o OUT' "$tmp/err" || fail "missing -o not reported"
echo "export_svg: all checks passed"
