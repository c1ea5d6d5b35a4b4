# hearth record --waker: above each wait, a frame "--" and the stack of the
# thread that woke it, leaf first. A mutex waiter's waker is the holder's
# unlock path; a pipe reader's is the writer's write.
. tests/e2e/lib.sh
require_root

# The holder keeps the mutex 400 ms of each second and lets it go in
# release_held(); the waiter blocks meanwhile. The main thread reads a
# pipe the pipe helper answers.
time_work_start
"$HEARTH" record --locks --waker -p "$p" -d 8 -o "$T/locks.folded" 2>"$T/locks.err" || { cat "$T/locks.err"; fail "record --locks --waker exited non-zero"; }

# Only the holder and the waiter take the mutex: every wait of the waiter
# ends at the holder's unlock, in its thread, in release_held().
woken_check "$T/locks.folded" ';lock_waiter;.*futex_wait_\[k\].*' \
	'.*;lock_holder;start_thread;([^;]*;)?time_work$' \
	'.*futex_wake_\[k\];.*;[^;]*pthread_mutex_unlock[^;]*;release_held;lock_holder;start_thread;([^;]*;)?time_work$' \
	1000000000
ok "the mutex waiter's waker stack is the holder's unlock path, leaf first, up to its process"
grep -q ';--;.*;--;' "$T/locks.folded" && fail "a stack has two waker separators"
# What the wait waited in is still told by the frames under "--": a
# waker's futex_wake does not make a wait a lock wait, nor hide one.
# (Only the waits still going at the end, one a waiting thread, have none:
# the mutex's 400 ms and the flock's 300 ms at most.)
unwoken=$(( $(total "$T/locks.folded") - $(sum "$T/locks.folded" ';--;') ))
[ "$unwoken" -le 800000000 ] || { cat "$T/locks.folded"; fail "$unwoken ns of lock waits have no waker: more than the waits still going at the end"; }
for w in sleep_part pipe_part stuck_reader; do
	grep -q "$w" "$T/locks.folded" && { grep "$w" "$T/locks.folded"; fail "$w is in the lock profile"; }
done
ok "waits are classified by their own frames, below the waker's"

# Off-CPU: the main thread's pipe read is woken by the helper's write.
"$HEARTH" record --off-cpu --waker -p "$p" -d 5 -o "$T/off.folded" 2>"$T/off.err" || { cat "$T/off.err"; fail "record --off-cpu --waker exited non-zero"; }
woken_check "$T/off.folded" ';pipe_part;.*pipe_read_\[k\].*' \
	'.*;start_thread;([^;]*;)?time_work$' \
	'.*pipe_write_\[k\];.*;pipe_helper;start_thread;([^;]*;)?time_work$' 300000000
ok "a pipe reader's waker is the writer's pipe_write"

# Without --waker no wait carries one; with on-CPU only it is refused.
"$HEARTH" record --off-cpu -p "$p" -d 1 -o "$T/plain.folded" 2>"$T/plain.err" || { cat "$T/plain.err"; fail "record --off-cpu exited non-zero"; }
grep -q ';--;' "$T/plain.folded" && fail "a wait recorded without --waker has a waker"
"$HEARTH" record --waker -p "$p" -d 1 -o "$T/on.folded" 2>"$T/on.err" && fail "record --waker (on-CPU) did not refuse"
grep -q -- '--waker names who woke each wait' "$T/on.err" || { cat "$T/on.err"; fail "record --waker on-CPU did not say why"; }
"$HEARTH" record --threads --waker -p "$p" -d 1 -o "$T/th.folded" 2>"$T/th.err" && fail "record --threads --waker did not refuse"
ok "without --waker no waker; --waker without waits is refused"
