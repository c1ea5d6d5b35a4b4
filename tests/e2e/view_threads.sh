#!/bin/sh
# hearth view on a profile with one row per thread (as hearth record writes
# them): three thread towers; "Merge threads" folds them into one per
# process, keeping the time; a second click brings the towers back.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/threads.pb.gz
tmp=$(mktemp -d)
xpid= vpid=
cleanup() {
	[ -n "$vpid" ] && kill "$vpid" 2>/dev/null
	[ -n "$xpid" ] && kill "$xpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; [ -f "$tmp/view.log" ] && sed 's/^/  view: /' "$tmp/view.log" | head -20; exit 1; }
for t in Xvfb xdotool; do
	command -v "$t" >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
	echo "skipped: $t is not installed"; exit 0
done
. "$here/tests/e2e/lib_x11.sh"
x11_start 131 1400x900x24
dl=$tmp/layout.txt
ASAN_OPTIONS=detect_leaks=0 "$HEARTH" view --size 1200x700 --debug-layout "$dl" "$fixture" >"$tmp/view.log" 2>&1 &
vpid=$!
wait_for() {
	i=0
	until eval "$1"; do
		i=$((i + 1)); [ $i -gt 80 ] && fail "$2"; sleep 0.1
	done
}
wait_for '[ -s "$dl" ]' "the viewer never drew"
wid=
i=0
while [ -z "$wid" ]; do
	wid=$(xdotool search --onlyvisible --name 'threads.pb.gz' 2>/dev/null | head -1)
	i=$((i + 1)); [ $i -gt 100 ] && fail "no viewer window appeared"
	[ -n "$wid" ] || sleep 0.1
done
field() { sed -n "s/^$1 //p" "$dl"; }
boxes() { awk -v n="$1" '$1 == "box" && $9 == n' "$dl" | wc -l; }
width() { awk -v n="$1" '$1 == "box" && $9 == n { print $4; exit }' "$dl"; }
click_button() {
	set -- $(awk -v a="$1" '$1 == "zone" && $2 == 2 && $7 == a { print $3 + 5, $4 + 5 }' "$dl")
	[ -n "${1:-}" ] || fail "no button $1"
	xdotool mousemove --window "$wid" "$1" "$2" click 1
}

for t in worker-1 worker-2 worker-3; do
	[ "$(boxes "$t")" -eq 1 ] || fail "no tower for $t"
done
[ "$(boxes worker_loop)" -eq 3 ] || fail "worker_loop is not drawn once per thread"
click_button 8
wait_for '[ "$(field filter)" = 2 ]' "Merge threads did not switch"
[ "$(boxes worker-1)" -eq 0 ] || fail "thread rows still drawn when merged"
[ "$(boxes worker_loop)" -eq 1 ] || fail "worker_loop is not one box when merged"
gw=$(field graph | cut -d' ' -f3)
[ "$(width worker_loop)" = "$gw" ] || fail "merged worker_loop is $(width worker_loop) wide, not $gw"
[ "$(width handle)" -gt $((gw * 77 / 100)) ] && [ "$(width handle)" -lt $((gw * 79 / 100)) ] ||
	fail "handle is $(width handle) of $gw, not 1050/1350 = 77.8%"
click_button 8
wait_for '[ "$(field filter)" = 0 ]' "Merge threads did not switch back"
[ "$(boxes worker_loop)" -eq 3 ] || fail "the towers did not come back"
xdotool key --window "$wid" q
wait "$vpid"; vpid=
echo "view_threads: all checks passed"
