# Short-lived processes of a program whose modules' tables are loaded
# walk their waits in the kernel from the start: the kernel builds a new
# image's table at exec from the mappings it made (program, loader), and
# a walk that found a library through its file (libc, mapped by the
# loader later) finds it there again for the frames above the program's
# (libc's start code under main). Before, most such waits were copied.
# The stacks stay whole: _start down to usleep (`sleep 0`: main sleeps).
. tests/e2e/lib.sh
require_root
P=$T/newproc_nofp # a name of its own: the comm filter sees no one else's
cp "$FIXTURES/unwind_nofp" "$P"
chain='_start;[^;]*;[^;]*;main;usleep'
walked() { sed -n 's/^hearth: \([0-9]*\) user stacks walked in the kernel.*/\1/p' "$1"; }
fell() { sed -n 's/.* \([0-9]*\) fell back to a copy.*/\1/p' "$1"; }
reused() { sed -n 's/.* \([0-9]*\) waits reused their last user stack.*/\1/p' "$1"; }

"$HEARTH" record --unwind auto --off-cpu --comm newproc_nofp -d 9 -o "$T/np.folded" 2>"$T/np.err" &
rec=$!
sleep 1
"$P" sleep 0 >/dev/null # its modules' tables are compiled meanwhile
sleep 1
for i in $(seq 30); do "$P" sleep 0 >/dev/null & sleep 0.1; done
wait "$rec" || { cat "$T/np.err"; fail "record exited non-zero"; }
grep 'walked in the kernel' "$T/np.err"
w=$(walked "$T/np.err") f=$(fell "$T/np.err") r=$(reused "$T/np.err")
n=$((w + f + r))
whole=$(sum "$T/np.folded" ";$chain;")
all=$(sum "$T/np.folded" ';usleep;')
pct=$(ratio "$whole" "$((all - whole))")
echo "31 processes: $w walked, $r reused, $f copied of $n user stacks; usleep under $chain: $pct%"
[ "$n" -ge 31 ] || fail "only $n user stacks for 31 processes"
[ $((f * 100)) -le $((n * 35)) ] || fail "$f of $n stacks fell back to a copy, expected <= 35%"
between "$pct" 95 100 || { sort -t' ' -k2 -nr "$T/np.folded" | head -5; fail "only $pct% of usleep waits under $chain"; }
ok "short-lived processes walk in the kernel: $f of $n copied, $pct% whole"
