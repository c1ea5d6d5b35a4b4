#!/bin/sh
# hearth snapshot --wall and --locks, cut out of hearthd's store: the
# elapsed time of a process's threads (its on-CPU samples as 1e9/HZ ns
# each, and its waits) and only its lock waits, told by their kernel path.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
hearthd_traps
require_root
command -v go >/dev/null || fail "go is needed to read the snapshot's duration (golang-go)"

echo "# empty: defaults and flags" >"$T/hearthd.conf"
# (DWARF unwinding: the frame-pointer walk loses libc's lock path.)
hearthd_start --config "$T/hearthd.conf" --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s --unwind auto
time_work_start 180
bg "$FIXTURES/record_work" sleep 100 >/dev/null
sl=$LAST_PID
hearthd_wait_windows 8 30

# span FILE.pb.gz: the seconds the snapshot's windows cover (the
# profile's duration, as pprof keeps it).
span() { go tool pprof -raw "$1" 2>/dev/null | sed -n 's/^Duration: *//p'; }

"$HEARTH" snapshot $S --last 6s --pid "$p" --locks -o "$T/locks.pb.gz" 2>"$T/locks.err" || { cat "$T/locks.err"; fail "snapshot --locks failed"; }
cat "$T/locks.err"
n=$(span "$T/locks.pb.gz")
"$HEARTH" export --folded -o "$T/locks.folded" "$T/locks.pb.gz" || fail "cannot read the lock snapshot back"
go tool pprof -raw "$T/locks.pb.gz" 2>/dev/null | grep -qx 'lock_wait/nanoseconds' || fail "the pprof sample type is not lock_wait/nanoseconds"
all=$(total "$T/locks.folded")
fx=$(sum "$T/locks.folded" '(futex_wait|locks_lock_inode_wait|flock_lock_inode_wait|locks_lock_file_wait|mutex_lock[^;]*)_\[k\]')
echo "locks over $n s: $all ns, $fx ns of them futex or file-lock waits"
# (hearthd's stacks may lose the user frames between the thread's start
# and libc's lock path: the kernel path is what tells a lock.)
[ "$all" -gt 0 ] && [ "$fx" = "$all" ] || { cat "$T/locks.folded"; fail "the lock snapshot holds more than futex and file-lock waits"; }
for w in sleep_part pipe_part nap do_nanosleep pipe_read 'waiting for a CPU'; do
	grep -q "$w" "$T/locks.folded" && { grep "$w" "$T/locks.folded"; fail "$w is in the lock snapshot"; }
done
# The holders keep the mutex 400 ms a second, the file lock 300 ms; a
# wait is stored in the window it ends in, so a span's share varies by a
# wait either way.
between "$(awk -v a="$all" -v n="$n" 'BEGIN { print a / (n * 1e9) }')" 0.4 1.0 ||
	fail "the waiters waited on locks $all ns in $n s: expected about 70%"
ok "snapshot --locks: only the mutex and file-lock waits, $all ns in $n s"

"$HEARTH" snapshot $S --last 6s --pid "$p" --wall -o "$T/wall.pb.gz" 2>"$T/wall.err" || { cat "$T/wall.err"; fail "snapshot --wall failed"; }
cat "$T/wall.err"
n=$(span "$T/wall.pb.gz")
"$HEARTH" export --folded -o "$T/wall.folded" "$T/wall.pb.gz" || fail "cannot read the wall snapshot back"
go tool pprof -raw "$T/wall.pb.gz" 2>/dev/null | grep -qx 'wall/nanoseconds' || fail "the pprof sample type is not wall/nanoseconds"
all=$(total "$T/wall.folded")
# Six threads come and go between waits all the time; the seventh waits
# in read() for good, and a wait is stored when it ends: about 6 x the
# span.
per=$(awk -v a="$all" -v n="$n" 'BEGIN { print a / (n * 1e9) }')
echo "wall over $n s: $all ns ($per x the span)"
between "$per" 4.8 7.2 || fail "the threads' elapsed time is $per x the span, expected about 6"
grep ';main;burn_part' "$T/wall.folded" | grep -v 'waiting for a CPU' | awk '$NF % 10101010 { exit 1 }' ||
	fail "an on-CPU stack of burn_part is not a whole number of 1e9/99 ns samples"
grep -q ';main;sleep_part;.*do_nanosleep_\[k\]' "$T/wall.folded" || fail "no sleep in the wall snapshot"
grep -q ';main;burn_part' "$T/wall.folded" || fail "no running in the wall snapshot"
ok "snapshot --wall: running and waiting in one profile of ns"

"$HEARTH" snapshot $S --last 6s --pid "$sl" --locks -o "$T/none.folded" 2>"$T/none.err" || { cat "$T/none.err"; fail "snapshot --locks of a sleeper failed"; }
[ "$(stacks "$T/none.folded" | grep -c .)" -eq 0 ] || { cat "$T/none.folded"; fail "a sleeper's lock snapshot is not empty"; }
"$HEARTH" snapshot $S --last 6s --locks --wall -o "$T/x" 2>/dev/null && fail "--locks --wall together was accepted"
ok "a sleeper's lock snapshot is empty; one kind a snapshot"
