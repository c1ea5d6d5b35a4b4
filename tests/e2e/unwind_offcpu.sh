# DWARF unwinding for off-CPU stacks: waits inside libc (no frame
# pointers) show their whole path to main.
. tests/e2e/lib.sh
require_root
N=$FIXTURES/unwind_nofp
chain='main;level1;level2;level3;level4;level5;leaf'

"$N" sleep 5 >/dev/null &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
"$HEARTH" record --off-cpu -p "$wpid" -d 20 -o "$T/sleep.folded" 2>/dev/null || fail "record exited non-zero"
ns=$(sum "$T/sleep.folded" ";$chain;usleep;")
echo "sleep through usleep with the whole chain: $ns ns (expected 1.0 s)"
within "$ns" 1000000000 10 || { sort -t' ' -k2 -nr "$T/sleep.folded" | head -5; fail "usleep waits under $chain: $ns ns, expected 1.0 s +-10%"; }
ok "usleep waits reach main through $chain"

"$N" mutex 3 >/dev/null &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
"$HEARTH" record --off-cpu -p "$wpid" -d 20 -o "$T/mutex.folded" 2>/dev/null || fail "record exited non-zero"
whole=$(sum "$T/mutex.folded" ";$chain;___pthread_mutex_lock;.*futex")
all=$(sum "$T/mutex.folded" '__lll_lock_wait')
pct=$(ratio "$whole" "$((all - whole))")
echo "mutex waits through pthread_mutex_lock with the whole chain: $whole of $all ns ($pct%)"
between "$pct" 75 100 || { sort -t' ' -k2 -nr "$T/mutex.folded" | head -5; fail "only $pct% of the lock wait reaches main through pthread_mutex_lock"; }
ok "mutex waits reach main through pthread_mutex_lock ($pct%)"

# The frame-pointer fixture's lock: the function that locked is there too.
W=$FIXTURES/record_work
"$W" mutex 3 >/dev/null &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
"$HEARTH" record --off-cpu -p "$wpid" -d 20 -o "$T/fpmutex.folded" 2>/dev/null || fail "record exited non-zero"
n=$(sum "$T/fpmutex.folded" ';waiter;lock_and_wait;___pthread_mutex_lock;.*futex_wait')
echo "futex wait under lock_and_wait: $n ns"
between "$n" 1000000000 10000000000 || fail "futex wait under lock_and_wait: $n ns, expected most of 3 s"
ok "the futex wait shows under the function that locked"
