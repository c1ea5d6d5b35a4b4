# hearth record, on-CPU: shares, whole stacks to main, exact sample rate.
. tests/e2e/lib.sh
require_root
W=$FIXTURES/record_work

# Two functions burning CPU 3:1 on one thread.
bg "$W" split 30
wpid=$LAST_PID
"$HEARTH" record -d 8 -p "$wpid" -o "$T/split.folded" 2>"$T/split.err" || { cat "$T/split.err"; fail "record exited non-zero"; }
a=$(sum "$T/split.folded" ';hot_a(;|$)')
b=$(sum "$T/split.folded" ';hot_b(;|$)')
pa=$(ratio "$a" "$b")
echo "hot_a=$a hot_b=$b share_a=$pa%"
between "$pa" 70 80 || fail "hot_a holds $pa% of hot_a+hot_b, expected 75 +-5"
ok "hot_a:hot_b split $pa% (expected 75 +-5)"
bad=$(awk '/;hot_[ab](;| )/ && !/;main;/' "$T/split.folded" | wc -l)
[ "$bad" -eq 0 ] || { grep -v ';main;' "$T/split.folded" | head; fail "$bad stacks through hot_a/hot_b do not reach main"; }
ok "every hot_a/hot_b stack reaches main"
grep -Eq 'bpf_prog_|bpf_trace_run|__bpf_trace' "$T/split.folded" && fail "BPF program frames in stacks"
grep -q 'samples' "$T/split.err" || fail "no summary line on stderr: $(cat "$T/split.err")"
kill "$wpid"

# One thread spinning: hz x the CPU time it spent spinning, +-5%. The
# workload measures its own CPU time from the moment it starts spinning
# (after the recorder has attached) to the moment it stops, and recording
# ends when it exits, so the window is exact. It runs at the highest
# priority so that other load on the machine barely interrupts it.
spin_check() { # HZ SECONDS
	nice -n -20 "$W" spinrep "$2" >"$T/spin.out" &
	wpid=$!
	BG_PIDS="$BG_PIDS $wpid"
	"$HEARTH" record -F "$1" -p "$wpid" -o "$T/spin.folded" 2>"$T/spin.err" || fail "record exited non-zero"
	wait "$wpid"
	n=$(sum "$T/spin.folded" ';spin(;|$)')
	want=$(awk -v ns="$(cat "$T/spin.out")" -v hz="$1" 'BEGIN { printf "%.0f", ns / 1e9 * hz }')
	echo "spin at $1 Hz for $2 s: $n samples, expected $want (hz x its $(cat "$T/spin.out") ns on a CPU; $(($1 * $2)) if it had a CPU to itself)"
	# The expectation must rest on real running time, not a starved thread.
	[ "$want" -gt $(($1 * $2 / 2)) ] || fail "the spinning thread ran less than half of the $2 s (other load on the machine?): cannot check the rate"
	within "$n" "$want" 5 || fail "spinning thread got $n samples, expected $want +-5%"
	ok "sample count $n within 5% of $want at $1 Hz"
}
spin_check 99 5
# Another frequency, to see the period really is 1e9/hz.
spin_check 250 4
