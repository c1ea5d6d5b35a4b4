# Symbolization through hearth record of JIT code: a program generates
# machine code into an anonymous executable buffer and describes it in
# /tmp/perf-PID.map; its samples carry the name it wrote.
. tests/e2e/lib.sh
require_root
[ "$(uname -m)" = x86_64 ] || fail "the JIT fixture writes x86-64 code"
bg "$FIXTURES/sym_jit" spin 4
p=$LAST_PID
sleep 0.3
[ -f "/tmp/perf-$p.map" ] || fail "the fixture wrote no /tmp/perf-$p.map"
"$HEARTH" record -d 2 -p "$p" --no-kernel -o "$T/jit.folded" 2>"$T/jit.err" || { cat "$T/jit.err"; fail "record failed"; }
all=$(total "$T/jit.folded")
n=$(sum "$T/jit.folded" ';jit_hot_loop$')
echo "samples $all, leaf jit_hot_loop: $n"
[ "$all" -gt 20 ] || fail "too few samples: $all"
pct=$(ratio "$n" $((all - n)))
between "$pct" 90 100 || { head "$T/jit.folded"; fail "only $pct% of samples named from the perf map"; }
grep -q '\[anon\]+0x' "$T/jit.folded" && fail "JIT frames left as [anon]+0x..."
ok "JIT code named from /tmp/perf-PID.map ($pct%)"
