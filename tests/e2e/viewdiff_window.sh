#!/bin/sh
# hearth view --diff in a real X window (Xvfb), driven with xdotool: two
# fixture profiles where hot_b doubled its share (10% -> 20%), cold and
# idle_loop shrank, and steady, load;parse, save;parse stayed the same.
#  - the answer names what grew; hot_b's box is full red on screen (the
#    change is +100%, significant), steady's is the neutral colour;
#  - the colour-blind palette redraws them in its red and grey;
#  - the sandwich of spin (called from cold and from hot_b) shows both
#    callers, coloured by change; Escape goes back to the graph;
#  - the call tree pane finds parse twice ("1 of 2", then "2 of 2");
#  - side by side draws before and after, and a click there zooms the diff;
#  - plain `hearth view`: `s` on parse (called from load and from save)
#    shows both callers;
#  - a change within sampling noise (12 -> 14 of 1,000) stays neutral, and
#    is coloured once the noise filter is off.
# Where to click comes from --debug-layout; what a person sees is checked
# on screenshots at known pixels.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
before=$here/tests/fixtures/profiles/diff_before.folded
after=$here/tests/fixtures/profiles/diff_after.folded
tmp=$(mktemp -d)
xpid= vpid=
cleanup() {
	[ -n "$vpid" ] && kill "$vpid" 2>/dev/null
	[ -n "$xpid" ] && kill "$xpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; [ -f "$tmp/view.log" ] && sed 's/^/  view: /' "$tmp/view.log" | head -20; exit 1; }
for t in Xvfb xdotool import /usr/bin/convert; do
	command -v "$t" >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
	echo "skipped: $t is not installed"; exit 0
done

. "$here/tests/e2e/lib_x11.sh"
x11_start 93 1600x1000x24

dl=$tmp/layout.txt
open_view() { # NAME-IN-TITLE ARGS...
	title=$1; shift
	rm -f "$dl"
	ASAN_OPTIONS=detect_leaks=0 "$HEARTH" view --size 1200x800 --debug-layout "$dl" "$@" >"$tmp/view.log" 2>&1 &
	vpid=$!
	# The window once it has drawn (SDL may replace its first X window
	# when the renderer starts) and still answers.
	wid= i=0
	while [ -z "$wid" ]; do
		if [ -s "$dl" ]; then
			for w in $(xdotool search --onlyvisible --name "$title" 2>/dev/null); do
				xdotool getwindowgeometry "$w" >/dev/null 2>&1 && wid=$w
			done
		fi
		i=$((i + 1)); [ $i -gt 150 ] && fail "no viewer window appeared for $title"
		kill -0 "$vpid" 2>/dev/null || fail "the viewer exited"
		[ -n "$wid" ] || sleep 0.1
	done
}
close_view() {
	key q
	i=0
	while kill -0 "$vpid" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 50 ] && fail "q did not close the viewer"; sleep 0.1
	done
	wait "$vpid" || fail "hearth view exited with $?"
	vpid=
}
wait_for() { # shell condition, what
	i=0
	until eval "$1"; do
		i=$((i + 1)); [ $i -gt 50 ] && fail "$2 (layout: $(grep -E '^(focus|view|sandwich|ctstatus)' "$dl" | tr '\n' ' '))"
		sleep 0.1
	done
}
# box NAME: "X Y W H COLOUR" of the first graph box whose label is NAME or
# a folded chain starting with NAME ("(2) NAME … last").
box() { awk -v n="$1" '$1 == "box" && ($9 == n || ($9 ~ /^\([0-9]+\)$/ && $10 == n)) { print $2, $3, $4, $5, $8; exit }' "$dl"; }
# sbox PART NAME: "X Y W H COLOUR" of the first sandwich box.
sbox() { awk -v p="$1" -v n="$2" '$1 == "sbox" && $2 == p && $8 == n { print $3, $4, $5, $6, $7; exit }' "$dl"; }
vzone() { awk -v a="$1" '$1 == "zone" && $2 == 100 && $7 == a { print $3 + int($5 / 2), $4 + int($6 / 2); exit }' "$dl"; }
wzone() { awk -v k="$1" -v a="$2" '$1 == "zone" && $2 == k && $7 == a { print $3 + 5, $4 + 5; exit }' "$dl"; }
field() { sed -n "s/^$1 //p" "$dl"; }
shot() { import -window "$wid" "$tmp/shot.png" || fail "no screenshot"; }
px() { /usr/bin/convert "$tmp/shot.png" -format "%[hex:p{$1,$2}]" info: | cut -c1-6; }
ch() { printf '%d' "0x$(echo "$1" | cut -c$2-$(($2 + 1)))"; }
near() { # HEX HEX: each channel within 6
	for o in 1 3 5; do
		d=$(( $(ch "$1" $o) - $(ch "$2" $o) )); [ $d -lt 0 ] && d=$((-d)); [ $d -le 6 ] || return 1
	done
}
red() { r=$(ch "$1" 1) g=$(ch "$1" 3) b=$(ch "$1" 5); [ $r -gt $((g + 80)) ] && [ $r -gt $((b + 80)) ]; }
neutral() { # channels within 12 of each other, and light
	r=$(ch "$1" 1) g=$(ch "$1" 3) b=$(ch "$1" 5)
	mx=$r; [ $g -gt $mx ] && mx=$g; [ $b -gt $mx ] && mx=$b
	mn=$r; [ $g -lt $mn ] && mn=$g; [ $b -lt $mn ] && mn=$b
	[ $((mx - mn)) -le 12 ] && [ $mn -gt 150 ]
}
pxbox() { px $(($1 + $3 - 3)) $(($2 + $4 - 2)); } # "X Y W H": last row, right end (no label there)
click() { xdotool mousemove --window "$wid" "$1" "$2" click 1; }
key() { xdotool key --window "$wid" "$@"; }

open_view diff_after.folded --diff "$before" "$after"

# 1. The answer, and the colours of change on screen.
[ "$(field answer)" = "hot_b grew from 10% to 20% of CPU time." ] || fail "answer: $(field answer)"
set -- $(box hot_b); [ $# -eq 5 ] || fail "no hot_b box"
[ "$5" = E0301E ] || fail "hot_b (+100%) is laid out in $5, not full red E0301E"
shot
hc=$(pxbox "$@"); red "$hc" || fail "hot_b's pixel $hc is not in the red family"
near "$hc" E0301E || fail "hot_b's pixel $hc is not E0301E"
set -- $(box steady); [ "$5" = E6E2DA ] || fail "steady (unchanged) is laid out in $5, not neutral"
c=$(pxbox "$@"); neutral "$c" || fail "steady's pixel $c is not neutral"
set -- $(box cold); b=$(ch "$5" 5); r=$(ch "$5" 1); [ $b -gt $((r + 20)) ] || fail "cold (shrank) is $5, not blue"
echo "ok: diff colours (hot_b $hc red, steady $c neutral, cold blue)"

# 2. Hover: the tooltip appears over hot_b.
set -- $(box hot_b)
xdotool mousemove --window "$wid" $(($1 + 20)) $(($2 + 5))
wait_for '[ "$(field tooltip | cut -d" " -f3)" != 0 ]' "no tooltip over hot_b"
echo "ok: tooltip"

# 3. Colour-blind palette: red and grey.
set -- $(vzone 3); click "$1" "$2"
wait_for '[ "$(box hot_b | cut -d" " -f5)" = CA0020 ]' "colour-blind palette did not recolour hot_b"
xdotool mousemove --window "$wid" 5 5
sleep 0.3
shot
set -- $(box hot_b); c=$(pxbox "$@"); near "$c" CA0020 || fail "hot_b's pixel $c is not the colour-blind red"
set -- $(box steady); c=$(pxbox "$@"); near "$c" BEBEBE || fail "steady's pixel $c is not the colour-blind grey"
set -- $(vzone 3); click "$1" "$2"
wait_for '[ "$(box hot_b | cut -d" " -f5)" = E0301E ]' "palette back"
echo "ok: colour-blind palette"

# 4. Sandwich of spin, which both cold and hot_b call.
set -- $(wzone 2 2); click "$1" "$2"   # Show every frame
wait_for '[ -n "$(awk '"'"'$1 == "box" && $9 == "spin"'"'"' "$dl")" ]' "spin has no box of its own"
set -- $(box spin); click $(($1 + 5)) $(($2 + 5))
wait_for '[ "$(field focus)" = spin ]' "click on spin"
key s
wait_for '[ "$(field view)" = sandwich ] && [ "$(field sandwich)" = spin ]' "s did not open the sandwich of spin"
set -- $(sbox callers hot_b); [ $# -eq 5 ] || fail "the sandwich does not show hot_b as a caller"
hb="$*"
set -- $(sbox callers cold); [ $# -eq 5 ] || fail "the sandwich does not show cold as a caller"
cb="$*"
set -- $(sbox callees spin); [ $# -eq 5 ] || fail "the sandwich has no callee row for spin"
xdotool mousemove --window "$wid" 5 5
sleep 0.3
shot
set -- $hb; c=$(pxbox "$@"); red "$c" || fail "hot_b in the sandwich is $c, not red"
near "$c" "$5" || fail "hot_b in the sandwich is $c, not $5"
set -- $cb; c=$(pxbox "$@"); near "$c" "$5" || fail "cold in the sandwich is $c, not $5"
key Escape
wait_for '[ "$(field view)" = graph ] && [ "$(field focus)" = spin ]' "Escape did not go back to the graph at spin"
echo "ok: sandwich of spin shows both callers (hot_b, cold)"

# 5. Call tree pane with a stepping search.
set -- $(vzone 1); click "$1" "$2"
wait_for '[ "$(field view)" = calltree ]' "Call tree button"
key slash
xdotool type --window "$wid" --delay 30 '^parse$'
key Return
wait_for '[ "$(field ctstatus)" = "1 of 2" ]' "call tree search did not say 1 of 2"
awk '$1 == "ctrow" && $5 == 1 { print $6, $3 }' "$dl" | grep -q '^parse 3$' || fail "the first match is not a listed parse row at depth 3"
set -- $(vzone 8); click "$1" "$2"
wait_for '[ "$(field ctstatus)" = "2 of 2" ]' "the next-match button"
awk '$1 == "ctrow" && $5 == 1 { print $6 }' "$dl" | grep -q '^parse$' || fail "the second match is not listed"
set -- $(vzone 1); click "$1" "$2"
wait_for '[ "$(field view)" = graph ]' "closing the call tree"
set -- $(wzone 2 5); click "$1" "$2"   # Reset
wait_for '[ "$(field focus)" = all ] && [ -z "$(field query)" ]' "Reset"
echo "ok: call tree finds parse (1 of 2, 2 of 2)"

# 6. Side by side: before and after beside the diff; a click there zooms.
set -- $(vzone 2); click "$1" "$2"
wait_for '[ "$(field view)" = side ]' "Side by side button"
grep -q '^sidebox before .* hot_b$' "$dl" || fail "no before graph"
grep -q '^sidebox after .* hot_b$' "$dl" || fail "no after graph"
set -- $(awk '$1 == "sidebox" && $2 == "after" && $7 == "hot_b" { print $3 + 3, $4 + 5; exit }' "$dl")
click "$1" "$2"
wait_for '[ "$(field focus)" = hot_b ]' "a click on after's hot_b did not zoom the diff"
echo "ok: side by side"
close_view

# 7. Plain view: s on parse (called from load and from save).
open_view diff_after.folded "$after"
set -- $(wzone 2 2); click "$1" "$2"
wait_for '[ -n "$(awk '"'"'$1 == "box" && $9 == "parse"'"'"' "$dl")" ]' "parse has no box of its own"
set -- $(box parse); click $(($1 + 5)) $(($2 + 5))
wait_for '[ "$(field focus)" = parse ]' "click on parse"
key s
wait_for '[ "$(field sandwich)" = parse ]' "s did not open the sandwich of parse"
set -- $(sbox callers load); [ $# -eq 5 ] || fail "the sandwich of parse does not show load"
lb="$*"
set -- $(sbox callers save); [ $# -eq 5 ] || fail "the sandwich of parse does not show save"
sb="$*"
xdotool mousemove --window "$wid" 5 5
sleep 0.3
shot
set -- $lb; c=$(pxbox "$@"); near "$c" "$5" || fail "load in the sandwich is $c, not $5"
set -- $sb; c=$(pxbox "$@"); near "$c" "$5" || fail "save in the sandwich is $c, not $5"
close_view
echo "ok: sandwich of parse shows both callers (load, save)"
# 8. Noise: noisy went from 12 to 14 of 1,000 samples (1.2% -> 1.4%,
#    +16.67%, z = 0.40): neutral with the noise filter, coloured without.
open_view diff_noise_after.folded --diff "$here/tests/fixtures/profiles/diff_noise_before.folded" \
	"$here/tests/fixtures/profiles/diff_noise_after.folded"
set -- $(box noisy); [ $# -eq 5 ] || fail "no noisy box"
[ "$5" = E6E2DA ] || fail "noisy (within noise) is $5, not neutral"
xdotool mousemove --window "$wid" 5 5
sleep 0.3
shot
c=$(pxbox "$@"); neutral "$c" || fail "noisy's pixel $c is not neutral with the filter on"
set -- $(vzone 5); click "$1" "$2"
wait_for '[ "$(field diff)" = "palette 0 absolute 0 noise 0" ]' "the noise filter did not turn off"
set -- $(box noisy)
[ "$5" = E5C4BB ] || fail "noisy without the filter is $5, not E5C4BB (+16.67% towards red)"
xdotool mousemove --window "$wid" 5 5
sleep 0.3
shot
c=$(pxbox "$@"); near "$c" E5C4BB || fail "noisy's pixel $c is not E5C4BB without the filter"
close_view
echo "ok: a change within noise stays neutral; without the filter it is coloured ($c)"
echo "viewdiff_window: all checks passed"
