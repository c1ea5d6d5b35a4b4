#!/bin/sh
# hearth view of the questions of time, each recorded from real threads
# (time_work) and opened in a real window (Xvfb): the answer sentence
# speaks the profile's question and names waits by what they waited in,
# threads are boxes of one width, the legend shows Waiting, and an empty
# lock profile opens with its own sentence.
set -u
. tests/e2e/lib.sh
require_root
for t in Xvfb xdotool; do
	command -v "$t" >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
	echo "skipped: $t is not installed"; exit 0
done

time_work_start
for q in wall threads locks; do
	"$HEARTH" record --$q -p "$p" -d 3 -o "$T/$q.pb.gz" 2>"$T/$q.err" || { cat "$T/$q.err"; fail "record --$q failed"; }
done
bg "$FIXTURES/record_work" sleep 100 >/dev/null
"$HEARTH" record --locks -p "$LAST_PID" -d 2 -o "$T/none.pb.gz" 2>"$T/none.err" || { cat "$T/none.err"; fail "record --locks of a sleeper failed"; }

tmp=$T
. tests/e2e/lib_x11.sh
x11_start 141 1400x900x24
BG_PIDS="$BG_PIDS $xpid"
dl=$T/layout.txt
vpid=
field() { sed -n "s/^$1 //p" "$dl"; }
# view FILE: opens FILE in the viewer and waits for its first drawing.
view() {
	[ -n "$vpid" ] && kill "$vpid" 2>/dev/null && wait "$vpid" 2>/dev/null
	rm -f "$dl"
	ASAN_OPTIONS=detect_leaks=0 "$HEARTH" view --size 1200x700 --debug-layout "$dl" "$1" >"$T/view.log" 2>&1 &
	vpid=$!
	BG_PIDS="$BG_PIDS $vpid"
	i=0
	until [ -s "$dl" ] && field answer | grep -q .; do
		i=$((i + 1)); [ $i -gt 100 ] && { cat "$T/view.log"; fail "the viewer never drew $1"; }
		kill -0 "$vpid" 2>/dev/null || { cat "$T/view.log"; fail "the viewer exited on $1"; }
		sleep 0.1
	done
	xdotool search --onlyvisible --name "$(basename "$1")" >/dev/null 2>&1 || fail "no window for $1"
}
# expect WHAT REGEX: the answer matches REGEX.
expect() {
	a=$(field answer)
	echo "$1: $a"
	echo "$a" | grep -Eq "$2" || fail "$1: the answer does not read /$2/"
	echo "$a" | grep -q 'schedule' && fail "$1: the answer names the scheduler"
	return 0
}

view "$T/wall.pb.gz"
expect wall "^Over 3 s, [0-9.]+% of the elapsed time of time_work's threads was in [a-z_]+(, .*)?\.$"
awk '$1 == "zone" && $2 == 4 && $8 == "waiting"' "$dl" | grep -q . || fail "the legend has no Waiting"
ok "wall: the elapsed time's sentence, Waiting in the legend"

view "$T/threads.pb.gz"
# Four threads wait mostly in nanosleep (the holders, and the waiters
# between their turns), three on pipes; the stuck reader all the time.
expect threads "^Of time_work's 7 threads, all were mostly waiting \(in do_nanosleep\); 1 was blocked the whole snapshot\.$"
w=$(awk '$1 == "box" && $9 ~ /^time_work-[0-9]+$/ { print $4 }' "$dl" | sort -nu)
[ "$(awk '$1 == "box" && $9 ~ /^time_work-[0-9]+$/' "$dl" | wc -l)" -eq 7 ] || fail "not 7 thread boxes"
# (boxes fall on whole pixels: one pixel apart at most)
[ "$(echo "$w" | tail -1)" -le "$(( $(echo "$w" | head -1) + 1 ))" ] || fail "thread boxes of different widths: $w"
ok "threads: the count sentence, 7 thread boxes of one width ($(echo $w) px)"

view "$T/locks.pb.gz"
expect locks "^Over 3 s, [0-9.]+% of the time waiting on locks was under (lock|flock)_waiter, mostly waiting in (futex_wait|locks_lock_inode_wait) \([0-9.]+%\)\.$"
ok "locks: the lock sentence names futex_wait"

view "$T/none.pb.gz"
expect "no locks" "^Nothing waited on a lock in these 2(\.[0-9])? seconds\.$"
ok "an empty lock profile opens and says nothing waited on a lock"
