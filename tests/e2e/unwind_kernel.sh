#!/bin/sh
# In-kernel unwinding through hearthd with the shipped hearthd.conf
# (unwind = auto): code built -O2 -fomit-frame-pointer, walked in BPF with
# its compiled CFI.
#  - on-CPU: >= 99% of the samples in leaf() have the exact chain to main,
#    and most of them were walked in the kernel (not copied);
#  - a process's first samples come before its tables: they fall back to a
#    copy, are counted, and are whole too (part of the 99%);
#  - off-CPU: usleep's blocked time sits under the whole chain, within 5%
#    of what the fixture slept; repeated waits reuse their stack ids;
#  - C++ through a shared library without frame pointers: >= 99% whole;
#  - 1,000 short-lived processes leave the walker's maps (process
#    mappings, wait sites, asks) at their size before them.
set -u
. "$(dirname "$0")/lib.sh"
require_root
S="--socket $T/ctl.sock"
hearthd_traps
N=$FIXTURES/unwind_nofp
chain='main;level1;level2;level3;level4;level5;leaf'
# cpu_wait PID SECONDS: waits until process PID ran SECONDS on a CPU (a
# loaded host gives it less than wall time), 60 s at most.
cpu_wait() {
	cw_i=0
	while [ "$(oncpu_ns "$1" 2>/dev/null || echo 0)" -lt "$2"000000000 ]; do
		cw_i=$((cw_i + 1)); [ $cw_i -gt 600 ] && fail "process $1 ran less than $2 s in 60 s"
		sleep 0.1
	done
	sleep 1.5 # a window's drain
}

grep -q '^unwind = auto$' "$PWD/etc/hearthd.conf" || fail "the shipped hearthd.conf does not say unwind = auto"
hearthd_start --config "$PWD/etc/hearthd.conf" --state-dir "$T/state" $S --window 1s
# At start every process on the host asks for its tables at once and
# their compiling takes a while (seconds for a busy host's compilers):
# the fixtures are measured once that has settled, as hearthd runs.
modules() { "$HEARTH" status $S | sed -n 's/.* processes and \([0-9]*\) modules.*/\1/p'; }
m0=$(modules) i=0
while sleep 2; m1=$(modules); [ "$m1" != "$m0" ]; do
	m0=$m1 i=$((i + 1))
	[ $i -gt 20 ] && break
done

# On-CPU: the first samples precede the tables.
bg "$N" spin 90
wpid=$LAST_PID
cpu_wait "$wpid" 3
"$HEARTH" snapshot $S --last 60s --pid "$wpid" -o "$T/spin.folded" || fail "snapshot failed"
kill "$wpid"
all=$(sum "$T/spin.folded" ';leaf(;|$)')
whole=$(sum "$T/spin.folded" ";$chain(;|\$)")
pct=$(ratio "$whole" "$((all - whole))")
echo "on-CPU: $whole of $all samples in leaf() reach main through the exact chain ($pct%)"
[ "$all" -gt 100 ] || fail "only $all samples in leaf()"
between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/spin.folded" | head; fail "$pct% of leaf() samples whole, expected >= 99%"; }
"$HEARTH" status $S > "$T/status1"
cat "$T/status1"
walks=$(sed -n 's/.* \([0-9]*\) stacks walked in the kernel.*/\1/p' "$T/status1")
before=$(sed -n 's/.*(\([0-9]*\) before their tables).*/\1/p' "$T/status1")
[ -n "$walks" ] && [ "$walks" -ge $((all * 9 / 10)) ] || fail "only ${walks:-no} stacks walked in the kernel for $all samples"
[ -n "$before" ] && [ "$before" -ge 1 ] || fail "no sample counted as falling back before its tables"
ok "on-CPU through hearthd's shipped config: $pct% whole (its first samples included); host-wide $walks walked in the kernel, $before fell back before their tables"

# Off-CPU: 5 waits of 200 ms in usleep under leaf().
bg "$N" sleep 5
wpid=$LAST_PID
wait "$wpid" 2>/dev/null
sleep 2.5
# A wait whose walk fell back is a stack copy, and a loaded host's
# copies can wait in their ring for seconds (they go to a later window):
# read again until they are in, 20 s at most. A copy unwound after its
# exited process was forgotten would stay short of the chain.
i=0
while "$HEARTH" snapshot $S --last 60s --pid "$wpid" --off-cpu -o "$T/sleep.folded" || fail "snapshot failed"
	ns=$(sum "$T/sleep.folded" ";$chain;usleep;.*clock_nanosleep")
	! within "$ns" 1000000000 5 && [ $i -lt 20 ]; do
	i=$((i + 1))
	sleep 1
done
echo "off-CPU: $ns ns under $chain;usleep (slept 1.0 s), read $((i + 1)) times"
within "$ns" 1000000000 5 || { sort -t' ' -k2 -nr "$T/sleep.folded" | head -5; fail "usleep waits under the chain: $ns ns, expected 1.0 s +-5%"; }
ok "off-CPU blocked time under usleep with the whole chain"

# C++ through a library without frame pointers.
C=$FIXTURES/unwind_cxx
bg "$C" 90
wpid=$LAST_PID
cpu_wait "$wpid" 3
"$HEARTH" snapshot $S --last 60s --pid "$wpid" -o "$T/cxx.folded" || fail "snapshot failed"
kill "$wpid"
all=$(sum "$T/cxx.folded" ';burn(;|$)')
whole=$(sum "$T/cxx.folded" ';main;Worker::run\(double\);nofp_lib_outer;nofp::middle\([^;]*\);nofp::inner\([^;]*\);burn(;|$)')
pct=$(ratio "$whole" "$((all - whole))")
echo "C++: $whole of $all samples in burn() reach main through the library ($pct%)"
[ "$all" -gt 100 ] || fail "only $all samples in burn()"
between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/cxx.folded" | head -5; fail "C++ through a no-FP library: $pct% whole, expected >= 99%"; }
ok "C++ through a shared library without frame pointers: $pct% whole"

# Churn: 1,000 short-lived processes that each wait (so the walker asks
# for their tables, and remembers their walks) and exit. None of
# them may stay in a map, and the maps may not grow by them (the host's
# other processes come and go meanwhile: a few).
sleep 2
for m in cfi_procs walk_memos cfi_asked; do map_keys $m > "$T/before.$m"; done
i=0 batch=
: > "$T/churn.pids"
while [ $i -lt 1000 ]; do
	"$N" sleep 1 >/dev/null &
	batch="$batch $!"
	echo $! >> "$T/churn.pids"
	i=$((i + 1))
	if [ $((i % 50)) -eq 0 ]; then
		wait $batch
		batch=
	fi
done
sleep 3
"$HEARTH" status $S > "$T/status2"
grep '^unwinder:' "$T/status2"
# dead_in FILE: the ids of the churn's processes that FILE lists and no
# living thread holds now.
dead_in() {
	sort -u "$T/churn.pids" > "$T/churn.sorted"
	sort -u "$1" | sort - "$T/churn.sorted" | uniq -d |
		while read -r p; do kill -0 "$p" 2>/dev/null || echo "$p"; done
}
# The host hands out ids again: a churn id in a map may be a new
# process's, alive when the map was read and gone since (the python and
# bpftool reading a map are in it: walked, and asked tables for). A leftover stays: in the map, with no thread holding
# its id, at two looks a second apart (an id is handed out again only
# after the rest of the id space, not twice so soon).
for m in cfi_procs walk_memos cfi_asked; do
	map_keys $m > "$T/after.$m"
	grep -q FAIL "$T/after.$m" && fail "$(cat "$T/after.$m")"
	dead_in "$T/after.$m" > "$T/dead.$m"
done
sleep 1
for m in cfi_procs walk_memos cfi_asked; do
	map_keys $m > "$T/again.$m"
	grep -q FAIL "$T/again.$m" && fail "$(cat "$T/again.$m")"
	left=$(dead_in "$T/again.$m" | sort - "$T/dead.$m" | uniq -d | wc -l)
	b=$(wc -l < "$T/before.$m") a=$(wc -l < "$T/after.$m")
	echo "$m: $b entries before, $a after, $left of them the 1,000 exited processes"
	[ "$left" -eq 0 ] || fail "$m keeps $left of the 1,000 exited processes"
	[ "$a" -le $((b + 50)) ] || fail "$m grew from $b to $a entries over 1,000 exited processes"
done
ok "1,000 short-lived processes left nothing in the walker's maps"
kill -TERM "$HD"; wait "$HD"; HD=
