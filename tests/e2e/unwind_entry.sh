# A program whose entry point has no CFI (musl's _start has none): its
# waits are walked in the kernel to the entry, not copied at every wait
# for a rule that "needs more" at the outermost frame. The entry is the
# outermost frame: nothing called it, so the stack is whole there, and
# the chain under it is exact.
. tests/e2e/lib.sh
require_root
N=$FIXTURES/start_nocfi
chain='_start;start_c;nocfi_outer;nocfi_inner;[^;]*nanosleep'
needs_more() { sed -n 's/.*, \([0-9]*\) on a rule that needs more.*/\1/p' "$1"; }
walked() { sed -n 's/^hearth: \([0-9]*\) user stacks walked in the kernel.*/\1/p' "$1"; }
reused() { sed -n 's/.* \([0-9]*\) waits reused their last user stack.*/\1/p' "$1"; }

bg "$N" 30
wpid=$LAST_PID
sleep 0.3
"$HEARTH" record --unwind auto --off-cpu -d 3 -p "$wpid" -o "$T/entry.folded" 2>"$T/entry.err" ||
	{ cat "$T/entry.err"; fail "record exited non-zero"; }
kill "$wpid"
grep 'walked in the kernel' "$T/entry.err"
ns=$(sum "$T/entry.folded" ";$chain;")
all=$(sum "$T/entry.folded" 'nanosleep')
m=$(needs_more "$T/entry.err") w=$(walked "$T/entry.err") r=$(reused "$T/entry.err")
echo "nanosleep under $chain: $ns of $all ns; $w walked, $r reused, ${m:-?} on a rule that needs more"
within "$all" 3000000000 10 || fail "nanosleep waits: $all ns, expected 3.0 s +-10%"
# The first waits, before the tables are loaded, are copied and unwound
# in user space (counted): those may stop short; the walked ones not.
pct=$(ratio "$ns" "$((all - ns))")
between "$pct" 85 100 || { sort -t' ' -k2 -nr "$T/entry.folded" | head -5; fail "only $pct% of nanosleep under the whole chain"; }
[ "$m" = 0 ] || fail "${m:-no count}: waits fell back on a rule that needs more, expected 0"
[ $((w + r)) -ge 20 ] || fail "only $w walked and $r reused of ~30 waits"
ok "waits walk to an entry point without CFI: $((w + r)) in the kernel, none need more"
