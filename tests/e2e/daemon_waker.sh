#!/bin/sh
# hearth snapshot --waker: who woke each wait, from hearthd. Its
# always-on sampler leaves the sched_waking program out (it would run at
# every wake-up on the host): a waker snapshot attaches one for the next
# seconds only. The mutex waiter's waker is the holder's unlock path, two
# sessions run at once, and no sched_waking link is left after them,
# after a client that leaves, nor after hearthd stops.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
hearthd_traps
require_root

# linked N: waits until hearthd holds N sched_waking links (it opens a
# session's sampler first: on a busy host, in seconds); their ids in ids.
linked() {
	i=0
	until [ "$(waking_links "$HD" | grep -c .)" -ge "$1" ]; do
		i=$((i + 1)); [ $i -gt 150 ] && fail "hearthd holds no $1 sched_waking link(s) while waker snapshots run"
		sleep 0.1
	done
	ids=$(waking_links "$HD")
}

# gone IDS...: none of these links is left in the kernel (bpftool, which
# must list the links that are).
gone() {
	bpftool link show >/dev/null || fail "bpftool cannot list the kernel's links (package bpftool)"
	for l in "$@"; do
		bpftool link show id "$l" >/dev/null 2>&1 && { bpftool link show id "$l"; fail "sched_waking link $l is still attached"; }
	done
	return 0
}

echo "# empty: defaults and flags" >"$T/hearthd.conf"
hearthd_start --config "$T/hearthd.conf" --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s
time_work_start 50
[ -z "$(waking_links "$HD")" ] || fail "hearthd's always-on sampler holds a sched_waking link"

"$HEARTH" snapshot $S --last 5s --locks --waker --pid "$p" -o "$T/x" 2>"$T/last.err" && fail "snapshot --last --waker succeeded"
grep -q 'only from now on, so --waker takes --next DUR' "$T/last.err" || { cat "$T/last.err"; fail "--last --waker does not say wakers are noted from now on"; }
"$HEARTH" snapshot $S --next 2s --waker --pid "$p" -o "$T/x" 2>"$T/on.err" && fail "snapshot --waker of on-CPU samples succeeded"
grep -q 'use it with --off-cpu, --wall or --locks' "$T/on.err" || { cat "$T/on.err"; fail "--waker alone does not say it takes waits"; }
ok "--waker takes --next and waits, and says so"

# Two sessions at once: the lock waits, and every wait (the main
# thread's pipe read, woken by the helper's write).
"$HEARTH" snapshot $S --next 7s --locks --waker --pid "$p" -o "$T/locks.folded" 2>"$T/locks.err" &
rl=$!
"$HEARTH" snapshot $S --next 7s --off-cpu --waker --pid "$p" -o "$T/off.folded" 2>"$T/off.err" &
ro=$!
linked 2
both=$ids
wait $rl || { cat "$T/locks.err"; fail "snapshot --locks --waker failed"; }
wait $ro || { cat "$T/off.err"; fail "snapshot --off-cpu --waker failed"; }
cat "$T/locks.err" "$T/off.err"
[ -z "$(waking_links "$HD")" ] || fail "hearthd keeps a sched_waking link after the snapshots"
gone $both
ok "two waker sessions at once each attached sched_waking, and both links are gone after"

grep -q '^# hearth-profile 1 unit=nanoseconds .* question=locks #$' "$T/locks.folded" || { head -3 "$T/locks.folded"; fail "the waker snapshot of locks does not say it answers the lock question"; }
stacks "$T/locks.folded" | grep -v '^time_work;' | grep -q . && fail "--pid let other processes' waits through"
# Only the holder and the waiter take the mutex: the waiter's waits end
# at the holder's unlock, in release_held() (400 ms of each second).
woken_check "$T/locks.folded" ';lock_waiter;.*futex_wait_\[k\].*' \
	'.*;lock_holder;start_thread;([^;]*;)?time_work$' \
	'.*futex_wake_\[k\];.*;[^;]*pthread_mutex_unlock[^;]*;release_held;lock_holder;start_thread;([^;]*;)?time_work$' \
	1000000000
grep -q ';--;.*;--;' "$T/locks.folded" && fail "a stack has two waker separators"
for w in sleep_part pipe_part stuck_reader; do
	grep -q "$w" "$T/locks.folded" && { grep "$w" "$T/locks.folded"; fail "$w is in the lock profile"; }
done
ok "the mutex waiter's waker stack is the holder's unlock path, and only lock waits are there"
woken_check "$T/off.folded" ';pipe_part;.*pipe_read_\[k\].*' \
	'.*;start_thread;([^;]*;)?time_work$' \
	'.*pipe_write_\[k\];.*;pipe_helper;start_thread;([^;]*;)?time_work$' 300000000
ok "a pipe reader's waker is the writer's pipe_write"

# The store holds no wakers: the windows of those seconds are as always.
"$HEARTH" snapshot $S --last 5s --off-cpu --pid "$p" -o "$T/store.folded" 2>"$T/store.err" || { cat "$T/store.err"; fail "snapshot --off-cpu from the store failed"; }
[ "$(sum "$T/store.folded" ';pipe_part;.*pipe_read_\[k\]')" -gt 0 ] || { cat "$T/store.folded"; fail "the store's off-CPU snapshot has no pipe read"; }
grep -q ';--;' "$T/store.folded" && fail "a wait cut from the store has a waker"
ok "the store's windows hold no wakers"

# A client that leaves takes its session with it, long before its --next.
"$HEARTH" snapshot $S --next 60s --off-cpu --waker --pid "$p" -o "$T/left.folded" 2>/dev/null &
rc=$!
linked 1
left=$ids
kill "$rc"
i=0
until [ -z "$(waking_links "$HD")" ]; do
	i=$((i + 1)); [ $i -gt 30 ] && fail "hearthd keeps sched_waking attached 3 s after the snapshot's client left"
	sleep 0.1
done
gone $left
grep -q 'the client of a waker snapshot left; its programs are detached' "$T/hearthd.log" || fail "hearthd does not say the client left"
ok "a snapshot's client that leaves takes its sched_waking link with it"

# Stopped mid-session, hearthd answers with what it has and detaches.
"$HEARTH" snapshot $S --next 50s --wall --waker --pid "$p" -o "$T/stop.folded" 2>"$T/stop.err" &
rs=$!
linked 1
stop=$ids
sleep 3
kill -TERM "$HD"
wait "$HD" || fail "hearthd exited non-zero on SIGTERM"
HD=
wait $rs || { cat "$T/stop.err"; fail "the waker snapshot of a stopping hearthd failed"; }
gone $stop
grep -q '^# hearth-profile 1 unit=nanoseconds .* question=wall #$' "$T/stop.folded" || { head -3 "$T/stop.folded"; fail "the wall waker snapshot does not say it answers the wall question"; }
[ "$(sum "$T/stop.folded" ';lock_waiter;.*futex_wait_\[k\].*;--;.*;lock_holder;start_thread;([^;]*;)?time_work$')" -gt 500000000 ] ||
	{ cat "$T/stop.folded"; fail "the wall snapshot answered at shutdown has not the mutex waits woken by the holder"; }
ok "a stopping hearthd answers the waker snapshot it runs and leaves no sched_waking link"
