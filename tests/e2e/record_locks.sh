# hearth record --locks: only the waits on locks and conditions, told by
# their kernel path (a futex wait, a file lock), with the time they blocked; the
# same process's sleeps, pipe reads and a thread stuck in read() are not
# locks and stay out.
. tests/e2e/lib.sh
require_root

# A holder keeps a mutex 400 ms of each second (asleep meanwhile); a
# waiter takes it every 20 ms and blocks while the holder has it; the
# same with an flock(2) lock held 300 ms a second. Other threads sleep,
# read pipes, or sit blocked in read() from the start.
time_work_start
"$HEARTH" record --locks -p "$p" -d 8 -o "$T/locks.folded" 2>"$T/locks.err" || { cat "$T/locks.err"; fail "record --locks exited non-zero"; }
set -- $(capture_window "$T/locks.err")
[ $# -eq 2 ] || { cat "$T/locks.err"; fail "record --locks did not say when the capture ran"; }

# A wait still going at the end is logged when it ends.
sleep 1
# lock_check WHAT FUNCTION KERNEL: the waits WHAT logged by FUNCTION hold
# in the profile, under the kernel frame KERNEL, what it measured (5%).
lock_check() {
	want=$(overlap "$T/waits.log" "$1" "$from" "$to")
	got=$(sum "$T/locks.folded" ";$2;.*($3)_\\[k\\]")
	echo "$2: $got ns blocked in the profile, $want ns measured by the thread"
	[ "$want" -gt 1500000000 ] || fail "$2 measured only $want ns of waits in 8 s"
	within "$got" "$want" 5 || { cat "$T/locks.folded"; fail "$2 holds $got ns under $3, the thread measured $want ns (+-5%)"; }
}
from=$1 to=$2
lock_check lock lock_waiter futex_wait
ok "the mutex wait holds its measured blocked time within 5%, under futex_wait"
lock_check flock flock_waiter 'locks_lock_inode_wait|flock_lock_inode_wait|locks_lock_file_wait'
ok "the flock wait holds its measured blocked time within 5%, under the file-lock path"

for w in sleep_part pipe_part pipe_helper stuck_reader nap 'waiting for a CPU'; do
	grep -q "$w" "$T/locks.folded" && { grep "$w" "$T/locks.folded"; fail "$w is in the lock profile"; }
done
ok "sleeps, pipe reads, the stuck read() and run-queue waits are not locks"
# (The threads' log lines can meet on the log file's position lock, a
# kernel mutex: a lock wait too.)
all=$(total "$T/locks.folded")
locks=$(sum "$T/locks.folded" '(futex_wait|locks_lock_inode_wait|flock_lock_inode_wait|locks_lock_file_wait|mutex_lock[^;]*)_\[k\]')
[ "$locks" = "$all" ] || fail "$locks of $all ns are futex, file-lock or kernel mutex waits: every wait here is one"
ok "every wait is a futex, a file-lock or a kernel mutex wait ($all ns)"

# Nothing waits on a lock in a process that only sleeps: an empty profile.
bg "$FIXTURES/record_work" sleep 20
q=$LAST_PID
"$HEARTH" record --locks -p "$q" -d 2 -o "$T/none.folded" 2>"$T/none.err" || { cat "$T/none.err"; fail "record --locks of a sleeper exited non-zero"; }
[ "$(stacks "$T/none.folded" | grep -c .)" -eq 0 ] || { cat "$T/none.folded"; fail "a sleeper's lock profile is not empty"; }
grep -q '^# hearth-profile 1 .* question=locks #$' "$T/none.folded" || { cat "$T/none.folded"; fail "the folded file does not say it answers the question of locks"; }
ok "a process that only sleeps waited on no lock"
