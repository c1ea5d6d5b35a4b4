#!/bin/sh
# hearth view on a pprof profile with ownership classes (as hearth record
# writes them): the answer names your code, boxes are orange for your code
# and blue for libraries on screen, the unnamed-frames notice names the
# stripped binary, and the top table pane sorts by a clicked column.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/server.pb.gz
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
x11_start 111 1600x1000x24
dl=$tmp/layout.txt
ASAN_OPTIONS=detect_leaks=0 "$HEARTH" view --size 1400x800 --debug-layout "$dl" "$fixture" >"$tmp/view.log" 2>&1 &
vpid=$!
x11_window 'server.pb.gz'
wait_for '[ -s "$dl" ]' "the viewer never drew"
box() { awk -v n="$1" '$1 == "box" && $9 == n { print $2, $3, $4, $5, $8; exit }' "$dl"; }

[ "$(field answer)" = "Over 30 s, 73% of CPU time was in build_report, mostly inside json_dumps (28%)." ] ||
	fail "answer: $(field answer)"
[ "$(field notice)" = "Unnamed frames: report-api (2.1%) ran without symbols; install their -dbgsym packages or set DEBUGINFOD_URLS to name them." ] ||
	fail "notice: $(field notice)"
for c in "your code" libraries runtime system; do
	awk -v c="$c" '$1 == "zone" && $2 == 4 { $1=$2=$3=$4=$5=$6=$7=""; sub(/^ +/, ""); if ($0 == c) f = 1 } END { exit !f }' "$dl" ||
		fail "no legend entry for $c"
done
import -window "$wid" "$tmp/shot.png" || fail "no screenshot"
set -- $(box build_report); c=$(px $(($1 + $3 - 4)) $(($2 + $4 - 4)))
[ "$c" = "$5" ] || fail "build_report drawn $c, layout says $5"
# Orange: red high, blue low.
[ "$(ch "$c" 1)" -gt 200 ] && [ "$(ch "$c" 5)" -lt 120 ] || fail "your code is not orange: $c"
set -- $(box json_dumps); c=$(px $(($1 + $3 - 4)) $(($2 + $4 - 4)))
[ "$c" = "$5" ] || fail "json_dumps drawn $c, layout says $5"
[ "$(ch "$c" 5)" -gt "$(ch "$c" 1)" ] || fail "libraries are not blue: $c"
echo "ok: answer, notice, legend and class colours"

# The 40 helpers under 0.1% each share one box; a click opens it, they
# fill the width, Escape closes it.
set -- $(box "40")
[ -n "${1:-}" ] || fail "no '40 small functions' box"
xdotool mousemove --window "$wid" $(($1 + 3)) $(($2 + 5)) click 1
wait_for '[ "$(field bucket)" = 1 ]' "the small functions did not open"
n=$(awk '$1 == "box" && $9 ~ /^util_helper_/' "$dl" | wc -l)
[ "$n" -eq 40 ] || fail "$n helpers drawn, not 40"
set -- $(field graph); gx=$1 gw=$3
awk -v r=$((gx + gw)) '$1 == "box" && $9 ~ /^util_helper_/ && $2 + $4 > m { m = $2 + $4 } END { exit m != r }' "$dl" ||
	fail "the helpers do not fill the width"
xdotool key --window "$wid" Escape
wait_for '[ "$(field bucket)" = 0 ]' "Escape did not close the small functions"
set -- $(awk '$1 == "zone" && $2 == 2 && $7 == 5 { print $3 + 5, $4 + 5 }' "$dl")
xdotool mousemove --window "$wid" "$1" "$2" click 1
wait_for '[ "$(field focus)" = all ]' "Reset"
echo "ok: small functions open"

# The top table: one row per function; a click on "Self" sorts by self.
set -- $(awk '$1 == "zone" && $2 == 2 && $7 == 4 { print $3 + 5, $4 + 5 }' "$dl")
xdotool mousemove --window "$wid" "$1" "$2" click 1
wait_for 'grep -q "^zone 7 " "$dl"' "the top table did not open"
[ "$(awk '$1 == "zone" && $2 == 7 { print $8; exit }' "$dl")" = "Server::serve" ] ||
	fail "first row by total is $(awk '$1 == "zone" && $2 == 7 { print $8; exit }' "$dl")"
set -- $(awk '$1 == "zone" && $2 == 6 && $7 == 1 { print $3 + 5, $4 + 5 }' "$dl")
xdotool mousemove --window "$wid" "$1" "$2" click 1
wait_for '[ "$(awk '"'"'$1 == "zone" && $2 == 7 { print $8; exit }'"'"' "$dl")" = json_dumps ]' \
	"sorting by self did not put json_dumps (620) first"
# Clicking the row finds the function in the graph.
set -- $(awk '$1 == "zone" && $2 == 7 { print $3 + 5, $4 + 5; exit }' "$dl")
xdotool mousemove --window "$wid" "$1" "$2" click 1
wait_for '[ "$(field status)" = "1 match · 28% of the total" ]' "row click did not find json_dumps"
# The divider between graph and table drags: 150 px to the left widens the
# table rows and narrows the graph by as much.
set -- $(awk '$1 == "zone" && $2 == 8 { print $3 + 4, $4 + 40 }' "$dl")
rw0=$(awk '$1 == "zone" && $2 == 7 { print $5; exit }' "$dl")
gw0=$(field graph | cut -d' ' -f3)
xdotool mousemove --window "$wid" "$1" "$2" mousedown 1 mousemove --window "$wid" $(($1 - 150)) "$2" mouseup 1
wait_for '[ "$(field graph | cut -d" " -f3)" != "$gw0" ]' "dragging the divider did nothing"
rw1=$(awk '$1 == "zone" && $2 == 7 { print $5; exit }' "$dl")
gw1=$(field graph | cut -d' ' -f3)
[ $((rw1 - rw0)) -ge 140 ] && [ $((rw1 - rw0)) -le 160 ] || fail "table grew by $((rw1 - rw0)), not about 150"
[ $((gw0 - gw1)) -ge 140 ] && [ $((gw0 - gw1)) -le 160 ] || fail "graph shrank by $((gw0 - gw1)), not about 150"
echo "ok: top table"

# Only my code: library and system frames fold into their callers, whose
# boxes keep the time (same width) with a hatched marker.
set -- $(box build_report); w_before=$3
set -- $(awk '$1 == "zone" && $2 == 2 && $7 == 7 { print $3 + 5, $4 + 5 }' "$dl")
xdotool mousemove --window "$wid" "$1" "$2" click 1
wait_for '[ "$(field filter)" = 1 ]' "Only my code did not switch"
[ -z "$(box json_dumps)" ] || fail "json_dumps still drawn with only my code"
set -- $(box build_report)
[ "$3" = "$w_before" ] || fail "build_report is $3 wide, was $w_before"
xdotool mousemove --window "$wid" 5 5
sleep 0.3
import -window "$wid" "$tmp/shot.png" || fail "no screenshot"
# Somewhere along the box's right half a darker hatch line is drawn.
dark=0
x=$(($1 + $3 / 2))
while [ $x -lt $(($1 + $3 - 2)) ]; do
	c=$(px $x $(($2 + $4 - 4)))
	[ "$(ch "$c" 1)" -lt 200 ] && { dark=1; break; }
	x=$((x + 1))
done
[ $dark = 1 ] || fail "no hatched marker on build_report"
echo "ok: only my code"
xdotool key --window "$wid" q
wait "$vpid"; vpid=
echo "view_classes: all checks passed"
