#!/bin/sh
# hearth snapshot --threads, cut out of hearthd's store: one row per
# thread, each the snapshot's span wide; a thread asleep the whole span
# (it never switches, so no window holds it) is found as the request
# arrives and shows, between its user stack and the kernel function it
# waits in, "(blocked the whole snapshot)". One process starts before
# hearthd (its stuck thread went to sleep before the sampler began),
# one after (the sampler saw it go).
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
hearthd_traps
require_root

start_ready threads_work 120
before=$p
sleep 0.5
echo "# empty: defaults and flags" >"$T/hearthd.conf"
hearthd_start --config "$T/hearthd.conf" --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s
# (once hearthd's first window is cut: its first ones are slow, loading
# symbols and unwind tables; the snapshot's span must begin after this
# fixture's stuck thread went to sleep)
hearthd_wait_windows 1 30
start_ready threads_work 120
after=$p
hearthd_wait_windows 6 30

# check PID NAME: the snapshot of PID's threads, and what it must hold.
check() {
	pid=$1 name=$2 f="$T/$2.folded"
	"$HEARTH" snapshot $S --threads --last 5s --pid "$pid" -o "$f" 2>"$T/$name.err" ||
		{ cat "$T/$name.err"; fail "snapshot --threads of $name failed"; }
	cat "$T/$name.err"
	head -1 "$f" | grep -q ' question=threads ' || fail "$name: the snapshot is not one of threads"
	span=$(head -1 "$f" | sed -n 's/.* duration-ns=\([0-9]*\) .*/\1/p')
	[ "${span:-0}" -ge 1500000000 ] || fail "$name: the snapshot spans ${span:-no} ns, expected 2 to 5 s"
	rows_as_tasks "$f" "$pid" "$span" 0.02

	line=$(grep ';stuck-[0-9]*;' "$f")
	echo "$line"
	[ "$(echo "$line" | grep -c .)" -eq 1 ] || fail "$name: the stuck thread has not one stack"
	# user frames down to stuck_read, then the mark, then the kernel
	# frames down to the read
	echo "$line" | grep -Eq '^threads_work;stuck-[0-9]+;([^;]*;)*stuck_read;([^;]*;)*\(blocked the whole snapshot\);([^;]*_\[k\];)*[^;]*read[^;]*_\[k\] [0-9]+$' ||
		fail "$name: the stuck thread is not user stack, '(blocked the whole snapshot)', kernel frames down to the read"
	echo "$line" | sed 's/(blocked the whole snapshot).*//' | grep -q '_\[k\]' &&
		fail "$name: kernel frames above the mark"
	ok "$name: the thread blocked in read() all along: user stack, mark, kernel frames"

	# The spinner is all spin_all: running, or waiting for a CPU on a
	# busy machine; never asleep.
	spin=$(awk '$1 ~ /^spinner-/ { print $2 }' "$T/totals")
	inside=$(sum "$f" '^threads_work;spinner-[0-9]+;([^;]*;)*spin_all;')
	within "$inside" "$spin" 0.02 || { grep ';spinner-' "$f"; fail "$name: the spinner spends $inside of $spin ns in spin_all"; }
	grep ';spinner-' "$f" | grep -q 'blocked the whole' && fail "$name: the spinner is marked blocked"
	# main naps 300 ms of each second and spins the rest.
	m=$(awk '$1 ~ /^threads_work-/ { print $2 }' "$T/totals")
	nap=$(sum "$f" '^threads_work;threads_work-[0-9]+;([^;]*;)*nap_part;.*do_nanosleep_\[k\]')
	share=$(awk -v a="$nap" -v b="$m" 'BEGIN { print a / b }')
	echo "$name: main naps $share of its row"
	between "$share" 0.15 0.6 || fail "$name: main napped $share of the span, expected about 0.3"
	ok "$name: the spinner's row is spin_all, main's naps about 30%"
}
check "$before" before
check "$after" after

"$HEARTH" snapshot $S --threads --wall --last 5s -o "$T/x" 2>/dev/null && fail "--threads --wall together was accepted"
ok "one kind a snapshot"
