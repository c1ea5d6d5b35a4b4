#!/bin/sh
# hearth view --live in a real X window (Xvfb): hearthd (1 s windows, a
# temporary store and socket) profiles a workload; the viewer opens on its
# latest data and redraws as windows are stored.
#  - without hearthd: one sentence saying how to start it;
#  - the window shows the workload (record_work spin); the user zooms into
#    its process row;
#  - the workload changes (a second record_work runs hot_a/hot_b): hot_a
#    appears in a later layout and on screen, in the same window, with the
#    zoom kept on record_work;
#  - Pause freezes the view: no update while paused, updates again after
#    Resume; the time range is shown.
set -u
: "${HEARTH:?}" "${HEARTHD:?}" "${FIXTURES:?}"
tmp=$(mktemp -d /tmp/hearth-viewlive.XXXXXX)
xpid= vpid= hd= w1= w2=
cleanup() {
	for p in $vpid $w1 $w2 $xpid; do kill "$p" 2>/dev/null; done
	[ -n "$hd" ] && kill "$hd" 2>/dev/null && wait "$hd" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() {
	echo "FAIL: $*"
	[ -f "$tmp/layout.txt" ] && grep '^box' "$tmp/layout.txt" | head -30 | sed 's/^/  layout: /'
	[ -f "$tmp/view.log" ] && sed 's/^/  view: /' "$tmp/view.log" | head -20
	[ -f "$tmp/hearthd.log" ] && sed 's/^/  hearthd: /' "$tmp/hearthd.log" | tail -10
	exit 1
}
[ "$(id -u)" = 0 ] || fail "hearthd loads BPF programs: run as root"
for t in Xvfb xdotool import /usr/bin/convert; do
	command -v "$t" >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
	echo "skipped: $t is not installed"; exit 0
done
[ -x "$FIXTURES/record_work" ] || fail "build the fixtures first"
sock=$tmp/ctl.sock

# 1. No daemon: one sentence on how to start it (even without a display).
out=$(DISPLAY= "$HEARTH" view --live --socket "$sock" 2>&1) && fail "view --live without hearthd succeeded"
[ "$out" = "hearth: hearthd is not running: start it with sudo systemctl start hearthd." ] ||
	fail "without hearthd it said: $out"
echo "ok: no daemon: $out"

echo "# test" > "$tmp/hearthd.conf"
"$HEARTHD" --config "$tmp/hearthd.conf" --state-dir "$tmp/state" --socket "$sock" --window 1s 2>"$tmp/hearthd.log" &
hd=$!
i=0
until "$HEARTH" status --socket "$sock" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 300 ] && fail "hearthd did not answer within 30 s"
	kill -0 "$hd" 2>/dev/null || fail "hearthd exited at start"
	sleep 0.1
done
"$FIXTURES/record_work" spin 120 &
w1=$!
sleep 2.5

. "$(dirname "$0")/lib_x11.sh"
x11_start 95 1600x1000x24

dl=$tmp/layout.txt
ASAN_OPTIONS=detect_leaks=0 "$HEARTH" view --live --socket "$sock" --last 3s --comm record_work \
	--size 1200x800 --debug-layout "$dl" >"$tmp/view.log" 2>&1 &
vpid=$!
# find_wid TITLE: the viewer's window, once it has drawn (SDL may replace
# its first X window when the renderer starts) and still answers.
find_wid() {
	wid= i=0
	while :; do
		if [ -s "$dl" ]; then
			for w in $(xdotool search --onlyvisible --name "$1" 2>/dev/null); do
				xdotool getwindowgeometry "$w" >/dev/null 2>&1 && wid=$w
			done
		fi
		[ -n "$wid" ] && break
		i=$((i + 1)); [ $i -gt 200 ] && fail "no window named $1 appeared"
		kill -0 "$vpid" 2>/dev/null || fail "the viewer exited"
		sleep 0.1
	done
}
find_wid 'live'
wait_for() { # shell condition, what, [tenths of a second]
	i=0
	until eval "$1"; do
		i=$((i + 1)); [ $i -gt "${3:-100}" ] && fail "$2 (layout: $(grep -E '^(focus|live|vnotice)' "$dl" | tr '\n' ' '))"
		sleep 0.1
	done
}
# box NAME: "X Y W H COLOUR" of the first box whose label names NAME (alone,
# or as either end of a folded chain).
box() { awk -v n="$1" '$1 == "box" { for (i = 9; i <= NF; i++) if ($i == n) { print $2, $3, $4, $5, $8; exit } }' "$dl"; }
field() { sed -n "s/^$1 //p" "$dl"; }
updates() { field live | cut -d' ' -f2; }
click() { xdotool mousemove --window "$wid" "$1" "$2" click 1; }
shot() { import -window "$wid" "$tmp/shot.png" || fail "no screenshot"; }
px() { /usr/bin/convert "$tmp/shot.png" -format "%[hex:p{$1,$2}]" info: | cut -c1-6; }
ch() { printf '%d' "0x$(echo "$1" | cut -c$2-$(($2 + 1)))"; }
near() {
	for o in 1 3 5; do
		d=$(( $(ch "$1" $o) - $(ch "$2" $o) )); [ $d -lt 0 ] && d=$((-d)); [ $d -le 6 ] || return 1
	done
}

# 2. The workload is there; zoom into its process row. spin() calls
# burn() alone, so with burn one box (not one a source line) spin is
# folded into the chain that ends in burn: either names the workload.
wait_for '[ -s "$dl" ] && [ -n "$(box spin)$(box burn)" ]' "the live view does not show record_work's spin" 150
field livestatus | grep -q '^Live · [0-9:]*–[0-9:]* (last 3 s) · new data every 1 s' ||
	fail "time range not shown: $(field livestatus)"
set -- $(box record_work); click $(($1 + 10)) $(($2 + 5))
wait_for '[ "$(field focus)" = record_work ]' "click did not zoom into record_work"
u0=$(updates)
echo "ok: live view of record_work, zoomed ($(field livestatus))"

# 3. The workload changes: a second record_work runs hot_a and hot_b.
"$HEARTH" mark --socket "$sock" live-change >/dev/null || fail "hearth mark failed"
"$FIXTURES/record_work" split 60 &
w2=$!
wait_for '[ -n "$(box hot_a)" ]' "hot_a never appeared in the live view" 150
u1=$(updates)
[ "$u1" -gt "$u0" ] || fail "no update counted ($u0 -> $u1)"
[ "$(field focus)" = record_work ] || fail "the zoom was lost: focus $(field focus)"
kill -0 "$vpid" 2>/dev/null || fail "the viewer exited"
echo "ok: hot_a appeared after $((u1 - u0)) updates, zoom kept on record_work"

# 4. Pause freezes the view (so the screen can be checked against the
#    layout); Resume brings updates back.
set -- $(awk '$1 == "zone" && $2 == 100 && $7 == 6 { print $3 + 5, $4 + 5; exit }' "$dl"); click "$1" "$2"
wait_for '[ "$(field live | cut -d" " -f6)" = 1 ]' "Pause did not pause"
sleep 1.5
xdotool mousemove --window "$wid" 5 5
sleep 0.5
p0=$(updates)
shot
set -- $(box hot_a); [ $# -eq 5 ] || fail "hot_a went away again"
# The box's last row of pixels, right end: below and after its label.
near "$(px $(($1 + $3 - 3)) $(($2 + $4 - 2)))" "$5" || fail "hot_a is not on screen at $1,$2 in $5"
[ "$(field focus)" = record_work ] || fail "the zoom was lost while paused"
echo "ok: hot_a on screen in $5 at $1,$2"
sleep 2.5
xdotool mousemove --window "$wid" 7 7
sleep 0.3
[ "$(updates)" = "$p0" ] || fail "the view changed while paused ($p0 -> $(updates))"
field livestatus | grep -q 'paused' || fail "the status does not say paused"
set -- $(awk '$1 == "zone" && $2 == 100 && $7 == 6 { print $3 + 5, $4 + 5; exit }' "$dl"); click "$1" "$2"
wait_for '[ "$(updates)" -gt "$p0" ]' "no update after Resume" 80
lat=$(field live | awk '{ print $4 }')
echo "ok: pause and resume (last update drawn ${lat} ms after it arrived, screenshots included)"

xdotool key --window "$wid" q
i=0
while kill -0 "$vpid" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "q did not close the viewer"; sleep 0.1
done
wait "$vpid" || fail "hearth view --live exited with $?"
vpid=
# 5. hearth diff --at MARK --view: the change around the mark, in the
#    viewer: hot_a exists only after, so it is full red.
sleep 1
rm -f "$dl"
ASAN_OPTIONS=detect_leaks=0 "$HEARTH" diff --at live-change --window 2s --comm record_work \
	--socket "$sock" --view --debug-layout "$dl" >"$tmp/view.log" 2>&1 &
vpid=$!
find_wid 'diff around live-change'
wait_for '[ -s "$dl" ]' "the diff window never drew"
set -- $(awk '$1 == "zone" && $2 == 2 && $7 == 2 { print $3 + 5, $4 + 5; exit }' "$dl"); click "$1" "$2"
wait_for '[ -n "$(box hot_a)" ]' "the diff window has no hot_a (every frame shown)"
# What grew most: the new split workload's functions.
field answer | grep -Eq '^(run_split|hot_a|hot_b) grew from .* of CPU time\.$' ||
	fail "diff answer: $(field answer)"
set -- $(box hot_a); [ "$5" = E0301E ] || fail "hot_a (only after) is $5, not full red"
xdotool mousemove --window "$wid" 5 5
# The layout is written before the frame is shown: on a loaded host the
# screen can lag it, so look again for up to 5 s.
i=0
until { sleep 0.25; shot; set -- $(box hot_a); c=$(px $(($1 + $3 - 3)) $(($2 + $4 - 2))); near "$c" E0301E; }; do
	i=$((i + 1)); [ $i -gt 20 ] && fail "hot_a is $c on screen at $1,$2, not red"
done
xdotool key --window "$wid" q
i=0
while kill -0 "$vpid" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "q did not close the diff window"; sleep 0.1
done
wait "$vpid" || fail "hearth diff --view exited with $?"
vpid=
echo "ok: diff --at live-change --view: $(field answer)"
echo "viewlive_window: all checks passed"
