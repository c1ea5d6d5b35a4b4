# In-kernel unwinding replays a thread's last walk, on-CPU and for its
# waits, when every word of user memory that walk read still holds: a
# steady loop is mostly replayed, and two call paths of equal depth whose
# leaf registers and innermost stack words are the same (only return
# addresses deeper down differ; the signature once used for waits could
# not tell them apart) each keep their exact stack.
#
# A record shorter than the sampler's drain (1 s) has one memo period: a
# replay that skipped its check would then give all of a run to the path
# walked first, where the exact shares are far from 0 or 100%.
. tests/e2e/lib.sh
require_root
N=$FIXTURES/unwind_replay
A='main;run;rec_a;rec_b;rec_b;rec_b;rec_b;rec_b;act'
B='main;run;rec_b;rec_b;rec_b;rec_b;rec_b;rec_b;act'
replayed() { sed -n "s/.* \([0-9]*\) samples replayed their thread's last walk.*/\1/p" "$1"; }
reused() { sed -n 's/.* \([0-9]*\) waits reused their last user stack.*/\1/p' "$1"; }
walked() { sed -n 's/^hearth: \([0-9]*\) user stacks walked in the kernel.*/\1/p' "$1"; }

# record_fixture MODE DURATION ARGS...: hearth record of the fixture in MODE.
record_fixture() {
	mode=$1 d=$2; shift 2
	bg "$N" "$mode" 30
	wpid=$LAST_PID
	"$HEARTH" record --unwind auto -F 1999 -d "$d" -p "$wpid" "$@" -o "$T/$mode.folded" 2>"$T/$mode.err" ||
		{ cat "$T/$mode.err"; fail "record of $mode exited non-zero"; }
	kill "$wpid"
	grep 'walked in the kernel' "$T/$mode.err"
}

# 1. A steady loop: the same callers sample after sample.
record_fixture steady 2
all=$(sum "$T/steady.folded" ';act(;|$)')
whole=$(sum "$T/steady.folded" ";$A(;|\$)")
w=$(walked "$T/steady.err") r=$(replayed "$T/steady.err")
pct=$(ratio "$whole" "$((all - whole))")
echo "steady: $whole of $all samples in act() exact ($pct%); $r of $w in-kernel stacks replayed"
[ "$all" -gt 100 ] || fail "steady: only $all samples in act()"
between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/steady.folded" | head -5; fail "steady: $pct% exact, expected >= 99%"; }
[ -n "$r" ] && [ "$r" -ge $((w * 8 / 10)) ] || fail "steady: ${r:-no} of $w stacks replayed, expected >= 80%"
ok "steady loop: $pct% exact, $r of $w stacks replayed"

# 2. Equal CPU on two paths in turn (5 ms each): an unchecked replay
# would keep one path's stack for the other (same sp, same leaf row).
record_fixture paths 900ms
all=$(sum "$T/paths.folded" ';act(;|$)')
a=$(sum "$T/paths.folded" ";$A(;|\$)")
b=$(sum "$T/paths.folded" ";$B(;|\$)")
w=$(walked "$T/paths.err") r=$(replayed "$T/paths.err")
pct=$(ratio "$((a + b))" "$((all - a - b))")
share=$(ratio "$a" "$b")
echo "paths: A $a, B $b of $all samples in act() ($pct% exact, A $share%); $r of $w replayed"
[ "$all" -gt 100 ] || fail "paths: only $all samples in act()"
between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/paths.folded" | head -5; fail "paths: $pct% on an exact path"; }
between "$share" 30 70 || fail "paths: path A has $share% of equal CPU, expected 30-70%"
[ -n "$r" ] && [ "$r" -ge $((w / 4)) ] || fail "paths: ${r:-no} of $w stacks replayed, expected >= 25%"
ok "two paths of equal depth: $share% / $(awk -v s="$share" 'BEGIN { print 100 - s }')% of equal CPU, $pct% exact, $r of $w replayed"

# 3. Waits: ten 1 ms sleeps on A, then ten 3 ms on B: B has ~3/4 of the
# blocked time; a wait that blocks again where it did reuses its stack.
record_fixture waits 900ms --off-cpu
# (act() calls usleep() last: a tail call, so usleep() is under rec_*)
a=$(sum "$T/waits.folded" ";${A%;act};usleep;")
b=$(sum "$T/waits.folded" ";${B%;act};usleep;")
all=$(sum "$T/waits.folded" ';usleep;')
w=$(walked "$T/waits.err") r=$(reused "$T/waits.err")
share=$(ratio "$b" "$a")
echo "waits: A $a ns, B $b ns of $all under usleep() (B $share%); $r waits reused, $w walked"
[ "$all" -gt 400000000 ] || fail "waits: only $all ns blocked under usleep()"
between "$(ratio "$((a + b))" "$((all - a - b))")" 99 100 || { sort -t' ' -k2 -nr "$T/waits.folded" | head -5; fail "waits: blocked time off the exact paths"; }
between "$share" 62 85 || fail "waits: path B has $share% of the blocked time, expected ~75%"
[ -n "$r" ] && [ "$r" -ge "$w" ] || fail "waits: ${r:-no} waits reused against $w walked, expected most reused"
ok "waits on two paths: B $share% of blocked time (3 ms against 1 ms sleeps), $r reused, $w walked"
