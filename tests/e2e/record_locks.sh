# hearth record --locks: only the waits on locks and conditions, told by
# their kernel path (a futex wait here), with the time they blocked; the
# same process's sleeps, pipe reads and a thread stuck in read() are not
# locks and stay out.
. tests/e2e/lib.sh
require_root

# A holder keeps a mutex 400 ms of each second (asleep meanwhile); a
# waiter takes it every 20 ms and blocks while the holder has it. Other
# threads sleep, read pipes, or sit blocked in read() from the start.
time_work_start
"$HEARTH" record --locks -p "$p" -d 8 -o "$T/locks.folded" 2>"$T/locks.err" || { cat "$T/locks.err"; fail "record --locks exited non-zero"; }
set -- $(capture_window "$T/locks.err")
[ $# -eq 2 ] || { cat "$T/locks.err"; fail "record --locks did not say when the capture ran"; }

# A wait still going at the end is logged when it ends.
sleep 1
want=$(overlap "$T/waits.log" lock "$1" "$2")
got=$(sum "$T/locks.folded" ';lock_waiter;')
echo "lock_waiter: $got ns blocked in the profile, $want ns measured by the thread"
[ "$want" -gt 2000000000 ] || fail "the waiter measured only $want ns of lock waits in 8 s"
within "$got" "$want" 5 || { cat "$T/locks.folded"; fail "the lock wait holds $got ns, the thread measured $want ns (+-5%)"; }
ok "the mutex wait holds its measured blocked time within 5%"

for w in sleep_part pipe_part pipe_helper stuck_reader nap 'waiting for a CPU'; do
	grep -q "$w" "$T/locks.folded" && { grep "$w" "$T/locks.folded"; fail "$w is in the lock profile"; }
done
ok "sleeps, pipe reads, the stuck read() and run-queue waits are not locks"
all=$(total "$T/locks.folded")
fx=$(sum "$T/locks.folded" 'futex_wait_\[k\]')
[ "$fx" = "$all" ] || fail "$fx of $all ns are futex waits: every wait here is one"
ok "every wait is a futex wait ($all ns)"

# Nothing waits on a lock in a process that only sleeps: an empty profile.
bg "$FIXTURES/record_work" sleep 20
q=$LAST_PID
"$HEARTH" record --locks -p "$q" -d 2 -o "$T/none.folded" 2>"$T/none.err" || { cat "$T/none.err"; fail "record --locks of a sleeper exited non-zero"; }
[ ! -s "$T/none.folded" ] || { cat "$T/none.folded"; fail "a sleeper's lock profile is not empty"; }
ok "a process that only sleeps waited on no lock"
