#!/bin/sh
# hearth view in a real X window (Xvfb), driven with xdotool like a person:
# hover shows a tooltip, a click zooms (the box fills the width, a
# breadcrumb appears), Escape zooms out, a breadcrumb step zooms there, '/'
# and a query show the match count and fade the rest, the legend fades a
# class, arrows and Enter move and zoom, a resize lays the window out again.
# Where to click comes from `hearth view --debug-layout FILE` (a test aid
# that rewrites FILE with the layout after each redraw); what the person
# sees is checked on screenshots, pixel by pixel at known places.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/small.folded
tmp=$(mktemp -d)
xpid= vpid=
cleanup() {
	[ -n "$vpid" ] && kill "$vpid" 2>/dev/null
	[ -n "$xpid" ] && kill "$xpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; [ -f "$tmp/view.log" ] && sed 's/^/  view: /' "$tmp/view.log" | head -20; exit 1; }
need() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 && continue
		[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
		echo "skipped: $t is not installed"; exit 0
	done
}
need Xvfb xdotool import /usr/bin/convert

# A free display number.
. "$here/tests/e2e/lib_x11.sh"
x11_start 91 1600x1000x24

dl=$tmp/layout.txt
# Window-system libraries leak at exit; leaks of our code are checked by
# the unit tests.
ASAN_OPTIONS=detect_leaks=0 "$HEARTH" view --size 1200x800 --debug-layout "$dl" "$fixture" >"$tmp/view.log" 2>&1 &
vpid=$!
wid=
i=0
while [ -z "$wid" ]; do
	# (no --sync: it can trip over windows that come and go)
	wid=$(xdotool search --onlyvisible --name 'small.folded' 2>/dev/null | head -1)
	i=$((i + 1)); [ $i -gt 100 ] && fail "no viewer window appeared"
	[ -n "$wid" ] || sleep 0.1
done

wait_for() { # shell condition, what
	i=0
	until eval "$1"; do
		i=$((i + 1)); [ $i -gt 50 ] && fail "$2 (layout: $(grep -E '^(focus|status|window)' "$dl" | tr '\n' ' '))"
		sleep 0.1
	done
}
wait_for '[ -s "$dl" ]' "the viewer never drew"
# box X Y W H DEPTH FLAGS COLOUR NAME -> "X Y W H COLOUR" of the first box named $1
box() { awk -v n="$1" '$1 == "box" && $9 == n { print $2, $3, $4, $5, $8; exit }' "$dl"; }
zone() { awk -v k="$1" -v n="$2" '$1 == "zone" && $2 == k && $8 == n { print $3 + int($5 / 2), $4 + int($6 / 2); exit }' "$dl"; }
field() { sed -n "s/^$1 //p" "$dl"; }
shot() { import -window "$wid" "$tmp/shot.png" || fail "no screenshot"; }
px() { /usr/bin/convert "$tmp/shot.png" -format "%[hex:p{$1,$2}]" info: | cut -c1-6; }
# near HEX HEX: each channel within 6.
near() {
	a=$1 b=$2
	for o in 1 3 5; do
		x=$(printf '%d' "0x$(echo "$a" | cut -c$o-$((o + 1)))")
		y=$(printf '%d' "0x$(echo "$b" | cut -c$o-$((o + 1)))")
		d=$((x - y)); [ $d -lt 0 ] && d=$((-d)); [ $d -le 6 ] || return 1
	done
}
lum() { printf '%d\n' $(( $(printf '%d' "0x$(echo "$1" | cut -c1-2)") + $(printf '%d' "0x$(echo "$1" | cut -c3-4)") + $(printf '%d' "0x$(echo "$1" | cut -c5-6)") )); }
click() { xdotool mousemove --window "$wid" "$1" "$2" click 1; }
key() { xdotool key --window "$wid" "$@"; }

# 1. The answer is written, and boxes have their class colours on screen.
field answer | grep -q '^62% of CPU time was in build_report, mostly inside dumps (24%)\.$' ||
	fail "answer sentence: $(field answer)"
set -- $(box build_report); bx=$1 by=$2 bw=$3 bh=$4 bcol=$5
set -- $(field graph); gx=$1 gw=$3
set -- $(box memcpy); mx=$1 my=$2 mw=$3 mcol=$5
shot
near "$(px $((bx + bw - 4)) $((by + bh - 4)))" "$bcol" || fail "build_report is not drawn in $bcol"
near "$(px $((mx + mw - 4)) $((my + bh - 4)))" "$mcol" || fail "memcpy is not drawn in $mcol"
# memcpy_[k] is a kernel frame: the system class, grey (channels within 12).
r=$(printf '%d' "0x$(echo "$mcol" | cut -c1-2)"); b=$(printf '%d' "0x$(echo "$mcol" | cut -c5-6)")
[ $((b - r)) -lt 20 ] && [ $((r - b)) -lt 20 ] || fail "system frame colour $mcol is not grey"
# A label is present: dark text pixels at the left of build_report.
dark=$(/usr/bin/convert "$tmp/shot.png" -crop 70x$((bh - 4))+$((bx + 3))+$((by + 1)) -colorspace Gray \
	-threshold 35% -negate -format '%[fx:int(1000*mean)]' info:)
[ "$dark" -ge 40 ] || fail "no label text in build_report (dark share $dark/1000)"
echo "ok: answer, class colours, label"

# 2. Hover: a tooltip (pale yellow) appears beside the mouse.
xdotool mousemove --window "$wid" $((bx + 40)) $((by + 5))
wait_for '[ "$(field tooltip | cut -d" " -f3)" != 0 ]' "no tooltip in the layout"
set -- $(field tooltip)
shot
near "$(px $(($1 + 4)) $(($2 + $4 - 4)))" FFFFF0 || fail "no tooltip on screen at $*"
echo "ok: tooltip"

# 3. Click build_report: it fills the width, a breadcrumb leads back.
click $((bx + 40)) $((by + 5))
wait_for '[ "$(field focus)" = build_report ]' "a click did not zoom"
set -- $(box build_report)
[ "$1" = "$gx" ] && [ "$3" = "$gw" ] || fail "zoomed build_report is at $1 width $3, not $gx width $gw"
ncrumbs=$(awk '$1 == "zone" && $2 == 5' "$dl" | wc -l)
[ "$ncrumbs" -eq 4 ] || fail "breadcrumb has $ncrumbs steps, not 4 (all app main build_report)"
xdotool mousemove --window "$wid" 5 5
sleep 0.3
shot
set -- $(box build_report)
near "$(px $(($1 + $3 - 4)) $(($2 + $4 - 4)))" "$5" || fail "screen does not show build_report at the right edge"
# The breadcrumb is on screen: text pixels in each step's zone (the steps
# are links, blue).
for step in all app main; do
	set -- $(awk -v n="$step" '$1 == "zone" && $2 == 5 && $8 == n { print $3, $4, $5, $6; exit }' "$dl")
	blue=$(/usr/bin/convert "$tmp/shot.png" -crop "$3x$4+$1+$2" -fx 'b > 0.6 && r < 0.4 ? 1 : 0' \
		-format '%[fx:int(1000*mean)]' info:)
	[ "$blue" -ge 30 ] || fail "breadcrumb step $step is not drawn (blue share $blue/1000)"
done
echo "ok: zoom and breadcrumb"

# 4. Escape zooms out one level; a breadcrumb step zooms there.
key Escape
wait_for '[ "$(field focus)" = main ]' "Escape did not zoom out to main"
key Escape Escape
wait_for '[ "$(field focus)" = all ]' "Escape did not zoom out to all"
set -- $(box build_report); click $(($1 + 40)) $(($2 + 5))
wait_for '[ "$(field focus)" = build_report ]' "second zoom"
set -- $(zone 5 app); click "$1" "$2"
wait_for '[ "$(field focus)" = app ]' "clicking the breadcrumb step app"
echo "ok: Escape and breadcrumb"

# 5. Search: '/' + terms + Return shows the count and the share; the rest fades.
key slash
xdotool type --window "$wid" --delay 30 'lex,dumps'
key Return
wait_for '[ "$(field status)" = "2 matches · 44% of the total" ]' "search status"
set -- $(box main); mcol2=$5
set -- $(box dumps); dcol=$5 dx=$1 dy=$2 dw=$3 dh=$4
shot
near "$(px $((dx + dw - 4)) $((dy + dh - 4)))" "$dcol" || fail "a match is not drawn in its colour"
set -- $(box main)
near "$(px $(($1 + $3 - 4)) $(($2 + $4 - 4)))" "$mcol2" || fail "main not drawn as $mcol2"
[ "$(lum "$mcol2")" -gt "$(lum "$dcol")" ] || fail "main ($mcol2) is not faded next to the match ($dcol)"
# Regex that matches nothing: fuzzy; 'bldrpt' finds build_report.
key slash BackSpace BackSpace BackSpace BackSpace BackSpace BackSpace BackSpace BackSpace BackSpace
xdotool type --window "$wid" --delay 30 'bldrpt'
key Return
wait_for '[ "$(field status)" = "1 match · 62% of the total" ]' "fuzzy search status"
echo "ok: search"

# 6. Reset, then the legend fades a class.
rx=$(awk '$1 == "zone" && $2 == 2 && $7 == 5 { print $3 + 5, $4 + 5 }' "$dl")
click $rx
wait_for '[ -z "$(field status)" ] && [ "$(field focus)" = all ]' "Reset"
set -- $(box memcpy); before=$5
set -- $(zone 4 system); click "$1" "$2"
wait_for '[ "$(box memcpy | cut -d" " -f5)" != "$before" ]' "legend click did not fade system"
set -- $(box memcpy); after=$5
shot
near "$(px $(($1 + $3 - 4)) $(($2 + $4 - 4)))" "$after" || fail "faded memcpy not on screen"
[ "$(lum "$after")" -gt "$(lum "$before")" ] || fail "faded $after is not lighter than $before"
set -- $(zone 4 system); click "$1" "$2"
wait_for '[ "$(box memcpy | cut -d" " -f5)" = "$before" ]' "second legend click did not bring system back"
echo "ok: legend fades a class"

# 7. Keyboard: Up selects the widest child, Enter zooms into it.
key Up Up Up
key Return
wait_for '[ "$(field focus)" = build_report ]' "Up Up Up Enter did not zoom into build_report"
key Escape Escape Escape
wait_for '[ "$(field focus)" = all ]' "keyboard zoom out"
echo "ok: keyboard"

# 8. Resize: the layout follows the window.
xdotool windowsize "$wid" 900 600
wait_for '[ "$(field window)" = "900 600" ]' "resize was not laid out"
set -- $(box all)
[ "$3" -eq 884 ] || fail "after resize the root is $3 px wide, not 884"
shot
w=$(/usr/bin/convert "$tmp/shot.png" -format '%w' info:)
[ "$w" -eq 900 ] || fail "screenshot is $w wide"
near "$(px $(($1 + $3 - 4)) $(($2 + $4 - 4)))" "$5" || fail "root not drawn at its new place"
echo "ok: resize"

key q
i=0
while kill -0 "$vpid" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "q did not close the viewer"; sleep 0.1
done
wait "$vpid" || fail "hearth view exited with $?"
vpid=
echo "view_window: all checks passed"
