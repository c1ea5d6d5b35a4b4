# DWARF unwinding of copied stacks, on-CPU: code built -O2
# -fomit-frame-pointer gives whole stacks; --unwind fp still works.
. tests/e2e/lib.sh
require_root
N=$FIXTURES/unwind_nofp
chain='main;level1;level2;level3;level4;level5;leaf'

for mode in dwarf auto; do
	bg "$N" spin 30
	wpid=$LAST_PID
	"$HEARTH" record --unwind $mode -d 4 -p "$wpid" -o "$T/$mode.folded" 2>"$T/$mode.err" || { cat "$T/$mode.err"; fail "record --unwind $mode exited non-zero"; }
	kill "$wpid"
	all=$(sum "$T/$mode.folded" ';leaf(;|$)')
	whole=$(sum "$T/$mode.folded" ";$chain(;|\$)")
	pct=$(ratio "$whole" "$((all - whole))")
	echo "--unwind $mode: $whole of $all samples in leaf() reach main through the exact chain ($pct%)"
	[ "$all" -gt 100 ] || fail "--unwind $mode: only $all samples in leaf()"
	between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/$mode.folded" | head; fail "--unwind $mode: $pct% of leaf() samples have the whole chain, expected >= 99%"; }
	ok "--unwind $mode: $pct% of samples reach main through $chain"
done

# Frame pointers only: the same binary loses its callers, as it should.
bg "$N" spin 30
wpid=$LAST_PID
"$HEARTH" record --unwind fp -d 2 -p "$wpid" -o "$T/fp.folded" 2>/dev/null || fail "record --unwind fp exited non-zero"
kill "$wpid"
whole=$(sum "$T/fp.folded" ";$chain(;|\$)")
all=$(total "$T/fp.folded")
[ "$all" -gt 50 ] || fail "--unwind fp: only $all samples"
[ "$whole" -lt $((all / 10)) ] || fail "--unwind fp: $whole of $all samples have the whole chain: is fp really frame pointers only?"
ok "--unwind fp: $whole of $all samples whole (frame pointers cannot walk -fomit-frame-pointer code)"

# C++ with exception tables, through a shared library without frame pointers.
C=$FIXTURES/unwind_cxx
bg "$C" 30
wpid=$LAST_PID
"$HEARTH" record -d 4 -p "$wpid" -o "$T/cxx.folded" 2>/dev/null || fail "record of the C++ fixture exited non-zero"
kill "$wpid"
all=$(sum "$T/cxx.folded" ';burn(;|$)')
whole=$(sum "$T/cxx.folded" ';main;_ZN6Worker3runEd;nofp_lib_outer;_ZN4nofp6middleEPFmmEm;_ZN4nofp5innerEPFmmEm;burn(;|$)|;main;Worker::run\(double\);nofp_lib_outer;nofp::middle\([^;]*\);nofp::inner\([^;]*\);burn(;|$)')
pct=$(ratio "$whole" "$((all - whole))")
echo "C++: $whole of $all samples in burn() reach main through the library ($pct%)"
between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/cxx.folded" | head -5; fail "C++ through a no-FP library: $pct% whole, expected >= 99%"; }
ok "C++ through a shared library without frame pointers: $pct% whole"
grep -q 'hearth: .* stacks unwound with DWARF' "$T/auto.err" || fail "no unwinding summary line"

# The vDSO: no file holds it, yet its own table walks it in the kernel;
# only the first samples, before the process's tables, fall back.
bg "$N" clock 30
wpid=$LAST_PID
"$HEARTH" record --unwind auto -d 4 -p "$wpid" -o "$T/vdso.folded" 2>"$T/vdso.err" || fail "record of the clock loop exited non-zero"
kill "$wpid"
all=$(sum "$T/vdso.folded" ';__vdso_clock_gettime(;|$)')
whole=$(sum "$T/vdso.folded" ";$chain;[^;]*clock_gettime;__vdso_clock_gettime(;|\$)")
pct=$(ratio "$whole" "$((all - whole))")
walked=$(sed -n 's/^hearth: \([0-9]*\) user stacks walked in the kernel, \([0-9]*\) fell back.*/\1/p' "$T/vdso.err")
fell=$(sed -n 's/^hearth: \([0-9]*\) user stacks walked in the kernel, \([0-9]*\) fell back.*/\2/p' "$T/vdso.err")
echo "vDSO: $whole of $all samples in __vdso_clock_gettime whole ($pct%); $walked walked in the kernel, $fell fell back"
[ "$all" -gt 50 ] || fail "vDSO: only $all samples in __vdso_clock_gettime"
between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/vdso.folded" | head -5; fail "vDSO: $pct% whole, expected >= 99%"; }
between "$(ratio "$walked" "$fell")" 85 100 || fail "vDSO: $fell of $((walked + fell)) stacks fell back: is the vDSO walked in the kernel?"
ok "vDSO: $pct% whole, $walked of $((walked + fell)) walked in the kernel"
