#!/bin/sh
# Python frames in the viewer, from a real recording of a Python program
# (tests/fixtures/python/shop.py under Debian's python3.11): its own
# function, a site-packages library's and the standard library's are
# drawn orange, blue and violet (checked on a screenshot of a real X
# window, Xvfb); hovering each (xdotool) shows a tooltip naming its
# class, "Python" and its file:line; the legend names the three classes
# and gives Python's share of the time, the one the recording holds.
. tests/e2e/lib.sh
require_root
here=$(pwd)
tmp=$T
fail() { echo "FAIL: $*"; [ -f "$T/view.log" ] && sed 's/^/  view: /' "$T/view.log" | head -20; exit 1; }
for t in Xvfb xdotool import /usr/bin/convert; do
	command -v "$t" >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
	echo "skipped: $t is not installed"; exit 0
done
PY=/usr/bin/python3.11
[ -x "$PY" ] || fail "$PY is missing (make test installs python3.11)"

# ---- the recording ------------------------------------------------------
bg "$PY" tests/fixtures/python/shop.py > "$T/ready"
pid=$LAST_PID
i=0; until grep -q ready "$T/ready"; do i=$((i + 1)); [ $i -gt 100 ] && fail "the program did not start"; sleep 0.1; done
"$HEARTH" record -d 3 -F 999 -p "$pid" -o "$T/shop.pb.gz" 2> "$T/err" || { cat "$T/err"; fail "record failed"; }
kill "$pid"
"$HEARTH" export --folded -o "$T/shop.folded" "$T/shop.pb.gz" || fail "export --folded failed"
# Python's share: the stacks whose leaf is a Python frame (hearth's
# comment lines say each frame's language), of all.
want=$(awk '/^# hearth-frame\t/ { split($0, f, "\t"); if (f[5] == "python") py[f[2]] = 1; next }
	!/^#/ { n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, fr, ";"); t += n; if (fr[k] in py) p += n }
	END { printf "%.1f", t ? 100 * p / t : 0 }' "$T/shop.folded")
echo "Python frames: $want% of the samples, leaves"
between "$want" 30 100 || fail "too little of the recording in Python frames: $want%"

# ---- the viewer ---------------------------------------------------------
. "$here/tests/e2e/lib_x11.sh"
x11_start 121 1600x1000x24
BG_PIDS="$BG_PIDS $xpid"
dl=$T/layout.txt
ASAN_OPTIONS=detect_leaks=0 bg "$HEARTH" view --size 1400x800 --debug-layout "$dl" "$T/shop.pb.gz" > "$T/view.log" 2>&1
vpid=$LAST_PID
x11_window 'shop.pb.gz'
wait_for '[ -s "$dl" ]' "the viewer never drew"
# box NAME: "X Y W H COLOUR" of the first box of function NAME: its own,
# or a chain folded into one box that starts with it ("3 runtime frames:
# NAME … LAST")
box() { awk -v n="$1" '$1 == "box" { l = $0; for (i = 0; i < 8; i++) sub(/^[^ ]+ /, "", l)
	if (l == n || index(l, ": " n " ")) { print $2, $3, $4, $5, $8; exit } }' "$dl"; }

# The legend: the three classes, and Python's share as recorded.
for c in "your code" libraries runtime; do
	awk -v c="$c" '$1 == "zone" && $2 == 4 { $1=$2=$3=$4=$5=$6=$7=""; sub(/^ +/, ""); if ($0 == c) f = 1 } END { exit !f }' "$dl" ||
		fail "no legend entry for $c"
done
langs=$(field languages)
echo "legend: $langs"
got=$(echo "$langs" | sed -n 's/.*Python \([0-9.]*\)%.*/\1/p')
[ -n "$got" ] || fail "the legend names no Python share: $langs"
awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }' ||
	fail "the legend says Python $got%, the recording $want%"
echo "ok: legend: your code, libraries, runtime; Python $got% (recorded $want%)"

# Each class's Python function: drawn in its colour, its tooltip naming
# class, language and file:line.
check() { # NAME CLASS FILE
	name=$1
	# (a screenshot of this moment: the frame the display list describes)
	import -window "$wid" "$T/shot.png" || fail "no screenshot"
	set -- "$1" "$2" "$3" $(box "$1")
	[ -n "${4:-}" ] || { grep "^box" "$dl" | sed "s/^/  /"; fail "no box for $1"; }
	# inside the box, clear of its label: near its lower right corner,
	# or its middle when it is too narrow for that (a small share)
	if [ "$6" -gt 8 ]; then cx=$(($4 + $6 - 4)); else cx=$(($4 + $6 / 2)); fi
	c=$(px "$cx" $(($5 + $7 - 4)))
	[ "$c" = "$8" ] || fail "$1 drawn $c at $cx, layout says $8 for the box at $4,$5 of $6x$7"
	r=$(ch "$c" 1) g=$(ch "$c" 3) b=$(ch "$c" 5)
	case $2 in
	"your code") [ "$r" -gt 200 ] && [ "$b" -lt 120 ] || fail "$1 is not orange: $c" ;;
	libraries) [ "$b" -gt "$r" ] && [ "$g" -gt "$r" ] || fail "$1 is not blue: $c" ;;
	runtime) [ "$b" -gt "$g" ] && [ "$r" -gt "$g" ] || fail "$1 is not violet: $c" ;;
	esac
	xdotool mousemove --window "$wid" $(($4 + $6 / 2)) $(($5 + $7 / 2))
	wait_for 'grep "^tip " "$dl" | head -1 | grep -Fq "$name"' "no tooltip for $1"
	grep '^tip ' "$dl" | sed 's/^/  /'
	grep -qx "tip $2 · Python" "$dl" || fail "$1's tooltip does not say '$2 · Python'"
	grep -q "^tip .*$3:[0-9]" "$dl" || fail "$1's tooltip has no $3:LINE"
	echo "ok: $1: $2, $c; tooltip says $2 · Python, $3"
	xdotool mousemove --window "$wid" 5 5
	wait_for '[ "$(field tooltip | cut -d" " -f3)" = 0 ]' "the tooltip of $1 stayed"
}
check checkout "your code" shop.py
check quote libraries pricing.py
# (its chain of single callees may be folded into one box; the tooltip
# then speaks of the last, a runtime function too)
check SequenceMatcher.ratio runtime difflib.py
xdotool key --window "$wid" q
wait "$vpid"
echo "view_python: all checks passed"
