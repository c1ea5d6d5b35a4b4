# hearth record: -p and --comm keep only what was asked; --both writes a pair.
. tests/e2e/lib.sh
require_root
W=$FIXTURES/record_work
cp "$W" "$T/other_work"

bg "$W" spin 30
a=$LAST_PID
bg "$T/other_work" spin 30
b=$LAST_PID
sleep 0.2

"$HEARTH" record -d 2 -p "$a" --per-thread -o "$T/p.folded" 2>/dev/null || fail "record -p exited non-zero"
[ -s "$T/p.folded" ] || fail "record -p wrote nothing"
others=$(stacks "$T/p.folded" | awk -F';' '{ print $1 ";" $2 }' | grep -v "^record_work;record_work-$a\$" | sort -u)
[ -z "$others" ] || fail "-p $a recorded other processes or threads: $others"
ok "-p keeps only pid $a"

kill "$b"
nice -n -20 "$T/other_work" spinrep 2 >"$T/c.out" &
cpid=$!
BG_PIDS="$BG_PIDS $cpid"
"$HEARTH" record -d 4 --comm other_work -o "$T/c.folded" 2>"$T/c.err" || fail "record --comm exited non-zero"
wait "$cpid"
[ -s "$T/c.folded" ] || fail "record --comm wrote nothing"
others=$(stacks "$T/c.folded" | cut -d';' -f1 | grep -vx other_work | sort -u)
[ -z "$others" ] || fail "--comm other_work recorded: $others"
n=$(sum "$T/c.folded" ';spin(;|$)')
want=$(awk -v ns="$(cat "$T/c.out")" 'BEGIN { printf "%.0f", ns / 1e9 * 99 }')
[ "$want" -gt 0 ] || fail "the second workload did not report its CPU time"
within "$n" "$want" 10 || fail "--comm other_work: $n samples in spin(), expected $want (99 Hz x its on-CPU seconds) +-10%"
ok "--comm keeps only other_work ($n samples)"

"$HEARTH" record -d 2 --both -p "$a" -o "$T/pair" 2>/dev/null || fail "record --both exited non-zero"
[ -s "$T/pair.oncpu.folded" ] || fail "--both did not write pair.oncpu.folded"
[ -f "$T/pair.offcpu.folded" ] || fail "--both did not write pair.offcpu.folded"
ok "--both writes pair.oncpu.folded and pair.offcpu.folded"

# Whole host, kernel frames off.
bg "$T/other_work" spin 30
sleep 0.2
"$HEARTH" record -d 1 --no-kernel -o "$T/host.folded" 2>"$T/host.err" || fail "whole-host record exited non-zero"
grep -q '_\[k\]' "$T/host.folded" && fail "--no-kernel output has kernel frames"
grep -q '^record_work;' "$T/host.folded" || fail "whole-host record misses the spinning record_work"
grep -q '^other_work;' "$T/host.folded" || fail "whole-host record misses the spinning other_work"
ok "whole host, --no-kernel"

# Whole host for several drains: every sample the kernel counted is in the
# profile once, none lost or counted twice across buffer flips, with
# frame pointers (kernel aggregation) and with stack copies (ring buffer).
for mode in fp auto; do
	"$HEARTH" record -d 4 --unwind $mode -o "$T/all.folded" 2>"$T/all.err" || fail "whole-host record exited non-zero"
	n=$(total "$T/all.folded")
	counted=$(sed -n 's/^hearth: \([0-9]*\) on-CPU samples.*/\1/p' "$T/all.err")
	[ "$n" = "$counted" ] || fail "--unwind $mode: the sampler counted $counted samples over 4 drains, the profile holds $n"
	ok "--unwind $mode, whole host over 4 drains: $n samples counted, $n written"
done
