#!/bin/sh
# hearth export --svg opened in a real browser (Chromium, headless): the
# screenshot shows every frame's box in the colour the SVG gives it; the
# embedded script, called in the browser, zooms (build_report fills the
# width, memcpy moves to where the zoom puts it) and searches (matches turn
# magenta, the rest keep their colour).
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/small.folded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for t in chromium xmllint /usr/bin/convert; do
	command -v "$t" >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
	echo "skipped: $t is not installed"; exit 0
done

"$HEARTH" export --svg -o "$tmp/out.svg" "$fixture" || fail "export failed"
xp() { xmllint --xpath "$1" "$tmp/out.svg" 2>/dev/null; }
W=$(xp "string(/*/@width)") H=$(xp "string(/*/@height)")
# rect NAME ATTR: an attribute of the frame's box
rect() { xp "string(//*[local-name()='g'][@data-n='$1']/*[local-name()='rect']/@$2)"; }

# shot PAGE PNG: Chromium's screenshot of PAGE at the SVG's size, after its
# load handlers ran (virtual time lets them finish before the capture).
shot() {
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--allow-file-access-from-files --user-data-dir="$tmp/profile" \
		--virtual-time-budget=3000 --window-size="$W,$H" \
		--screenshot="$2" "file://$1" >"$tmp/chromium.log" 2>&1 ||
		fail "chromium failed: $(tail -3 "$tmp/chromium.log")"
	[ -s "$2" ] || fail "chromium wrote no screenshot: $(tail -3 "$tmp/chromium.log")"
}
px() { /usr/bin/convert "$1" -format "%[hex:p{$2,$3}]" info: | cut -c1-6; }
# inside X Y W: a point just inside the box's right end, above the label
at_end() { awk -v x="$1" -v y="$2" -v w="$3" 'BEGIN { printf "%d %d", x + w - 5, y + 2 }'; }

shot "$tmp/out.svg" "$tmp/plain.png"
n=0
for f in all app main build_report dumps memcpy parse lex parse_expr; do
	x=$(rect "$f" x) y=$(rect "$f" y) w=$(rect "$f" width) fill=$(rect "$f" fill)
	[ -n "$fill" ] || fail "no box for $f in the SVG"
	c=$(px "$tmp/plain.png" $(at_end "$x" "$y" "$w"))
	[ "$c" = "$(echo "$fill" | tr -d '#')" ] || fail "$f: the browser drew $c, the SVG says $fill"
	n=$((n + 1))
done
echo "ok: $n boxes drawn by Chromium in their colours"

# The script, run by the browser: zoom into build_report from a page that
# embeds the SVG (the same calls a click makes).
page() {
	cat >"$tmp/$1.html" <<EOF
<!DOCTYPE html><html><body style="margin:0">
<object id="o" data="out.svg" type="image/svg+xml" width="$W" height="$H"></object>
<script>
document.getElementById('o').addEventListener('load', function () {
	var w = this.contentWindow, d = this.contentDocument;
	$2
});
</script></body></html>
EOF
}
page zoom "w.zoom(d.querySelector('g[data-n=\"build_report\"]'));"
shot "$tmp/zoom.html" "$tmp/zoom.png"
L=$(rect all x) AW=$(rect all width)
bx=$(rect build_report x) bw=$(rect build_report width) by=$(rect build_report y)
c=$(px "$tmp/zoom.png" $(at_end "$L" "$by" "$AW"))
[ "$c" = "$(rect build_report fill | tr -d '#')" ] || fail "zoomed: build_report does not reach the right edge ($c)"
mx=$(rect memcpy x) mw=$(rect memcpy width) my=$(rect memcpy y)
set -- $(awk -v L="$L" -v W="$AW" -v zx="$bx" -v zw="$bw" -v x="$mx" -v w="$mw" \
	'BEGIN { s = W / zw; printf "%.2f %.2f", L + (x - zx) * s, w * s }')
c=$(px "$tmp/zoom.png" $(at_end "$1" "$my" "$2"))
[ "$c" = "$(rect memcpy fill | tr -d '#')" ] || fail "zoomed: memcpy is not where the zoom puts it ($c at $1)"
px=$(awk -v x="$(rect parse x)" 'BEGIN { printf "%d", x + 5 }')
c=$(px "$tmp/zoom.png" "$px" $(($(rect parse y) + 2)))
[ "$c" != "$(rect parse fill | tr -d '#')" ] || fail "zoomed: parse, beside build_report, is still drawn"
echo "ok: zoom in the browser"

page search "w.search('parse');"
shot "$tmp/search.html" "$tmp/search.png"
for f in parse parse_expr; do
	c=$(px "$tmp/search.png" $(at_end "$(rect $f x)" "$(rect $f y)" "$(rect $f width)"))
	[ "$c" = E600E6 ] || fail "search: $f is $c, not magenta"
done
c=$(px "$tmp/search.png" $(at_end "$bx" "$by" "$bw"))
[ "$c" = "$(rect build_report fill | tr -d '#')" ] || fail "search: build_report changed colour ($c)"
echo "ok: search in the browser"
echo "export_svg_chromium: all checks passed"
