# hearth record --off-cpu: blocked time weighted by nanoseconds, waits
# attributed to the function that waited.
. tests/e2e/lib.sh
require_root
W=$FIXTURES/record_work

# sleeper() blocks 200 ms, 10 times: 2.0 s of sleep.
"$W" sleep 10 >/dev/null &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
"$HEARTH" record --off-cpu -p "$wpid" -d 20 -o "$T/sleep.folded" 2>"$T/sleep.err" || { cat "$T/sleep.err"; fail "record exited non-zero"; }
ns=$(sum "$T/sleep.folded" ';sleeper(;|$)')
echo "sleeper blocked: $ns ns (expected 2e9: the workload settles 0.5 s before its first sleep)"
within "$ns" 2000000000 10 || { cat "$T/sleep.folded"; fail "sleeper blocked $ns ns, expected 2.0 s +-10%"; }
ok "sleeper blocked $ns ns"
grep ';sleeper;' "$T/sleep.folded" | grep -q 'nanosleep' || { cat "$T/sleep.folded"; fail "sleep stack has no nanosleep kernel frame"; }
grep ';sleeper' "$T/sleep.folded" | grep -q ';main;' || fail "sleep stack does not reach main"
ok "sleep stack reaches main and shows the kernel nanosleep"
grep -Eq 'bpf_prog_|bpf_trace_run|__bpf_trace|__traceiter_' "$T/sleep.folded" && fail "the sampler's own frames are in off-CPU stacks"
ok "no frames of the sampler itself"

# A thread blocked on a pthread mutex held by another.
"$W" mutex 3 >/dev/null &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
"$HEARTH" record --off-cpu -p "$wpid" -d 20 -o "$T/mutex.folded" 2>"$T/mutex.err" || fail "record exited non-zero"
# With frame pointers only, the frame of lock_and_wait() is lost: libc's
# lock path keeps no frame pointer, so the walk resumes in its caller,
# waiter(). The DWARF unwinder (--unwind dwarf|auto) restores it.
line=$(grep 'futex' "$T/mutex.folded" | grep -E ';waiter;' | sort -t' ' -k2 -n | tail -1)
echo "heaviest futex wait: $line"
[ -n "$line" ] || { cat "$T/mutex.folded"; fail "no futex wait under the waiting thread"; }
fns=$(sum "$T/mutex.folded" 'futex')
echo "futex waits: $fns ns"
between "$fns" 1500000000 10000000000 || fail "futex waits total $fns ns, expected well over 1.5 s of a 3 s lock contention"
ok "mutex wait shows the futex wait"

# Involuntary waits are told from voluntary ones: three spinners share one
# CPU, so each waits for it most of the time.
bg taskset -c 0 "$W" spin 30
s1=$LAST_PID
bg taskset -c 0 "$W" spin 30
s2=$LAST_PID
bg taskset -c 0 "$W" spin 30
s3=$LAST_PID
sleep 0.2
"$HEARTH" record --off-cpu -p "$s1" -p "$s2" -p "$s3" -d 3 -o "$T/preempt.folded" 2>/dev/null || fail "record exited non-zero"
pre=$(sum "$T/preempt.folded" 'waiting for a CPU')
echo "runqueue wait of 3 spinners on one CPU over 3 s: $pre ns"
# Each runs about a third of the time: together they wait about 2 x 3 s.
[ "$pre" -gt 3000000000 ] || { head "$T/preempt.folded"; fail "three spinners on one CPU show only $pre ns waiting for a CPU, expected about 6 s"; }
ok "involuntary waits recorded as waiting for a CPU"
