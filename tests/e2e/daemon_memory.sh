#!/bin/sh
# hearthd and memory. Where memory grows is recorded always, into every
# window: `hearth snapshot --growth` cuts a process's requests for more
# memory out of the store, counted exactly under the function that made
# them, bytes beside, and says when there were none. Where memory is
# allocated and what holds it are probed only on demand, for the next
# seconds of the chosen processes (`snapshot --next 3s --alloc|--held
# --pid`): the shares of the fixture's functions, only that process
# probed, and no probe left after the snapshot, nor when hearthd is
# killed while probing.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
hearthd_traps
require_root
command -v go >/dev/null || fail "go is needed to read the snapshots' sample types (golang-go)"

# probed PID: waits until PID's malloc holds a probe (hearthd loads the
# probes first: on a busy host, in a second).
probed() {
	i=0
	until [ "$(malloc_byte "$1")" = cc ]; do
		i=$((i + 1)); [ $i -gt 30 ] && fail "the chosen process's malloc holds no probe while hearthd probes it"
		sleep 0.1
	done
}

echo "# empty: defaults and flags" >"$T/hearthd.conf"
hearthd_start --config "$T/hearthd.conf" --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s

# One fixture asks for more memory at SIGUSR1 (40 mmaps of 1 MiB and a
# page of malloc's header from grow_big, then brk from grow_heap: within
# the 64 stack copies a second each settled process keeps); the other
# never does. Two neighbours ask about a thousand times a second each,
# spending every CPU's shared budget of copies: the fixture's requests
# must keep their callers all the same.
for n in 1 2; do
	bg /usr/bin/python3 -c 'import mmap, time
while True:
    m = mmap.mmap(-1, 1 << 16); m[0] = 1; m.close(); time.sleep(0.001)'
done
bg "$FIXTURES/alloc_work" grow 40 >"$T/grow.out"
g=$LAST_PID
bg "$FIXTURES/alloc_work" grow 1 >"$T/quiet.out"
q=$LAST_PID
fixture_says "$T/grow.out" ready
fixture_says "$T/quiet.out" ready
# (the first windows name every process of the host: slow on a busy one)
hearthd_wait_windows 3 30
kill -USR1 "$g"
fixture_says "$T/grow.out" done
hearthd_wait_windows 2 20

"$HEARTH" snapshot $S --last 6s --pid "$g" --growth -o "$T/growth.pb.gz" 2>"$T/growth.err" || { cat "$T/growth.err"; fail "snapshot --growth failed"; }
cat "$T/growth.err"
go tool pprof -raw "$T/growth.pb.gz" >"$T/raw" 2>&1 || { cat "$T/raw"; fail "go tool pprof cannot read the growth snapshot"; }
grep -qx 'growth_space/bytes growth_requests/count' "$T/raw" || { head -8 "$T/raw"; fail "the sample types are not growth_space/bytes growth_requests/count"; }
"$HEARTH" export --folded -o "$T/growth.folded" "$T/growth.pb.gz" || fail "cannot read the growth snapshot back"
"$HEARTH" export --folded --sample-type growth_space -o "$T/bytes.folded" "$T/growth.pb.gz" || fail "cannot read the growth snapshot's bytes"
grep -q '^# hearth-profile 1 unit=samples .* question=growth #$' "$T/growth.folded" || { head -3 "$T/growth.folded"; fail "the snapshot does not say it answers where memory grows"; }
big=$(sum "$T/growth.folded" '^alloc_work;.*;main;grow;grow_big;[^;]*malloc;.*mmap[^;]*$')
[ "$big" = 40 ] || { cat "$T/growth.folded"; fail "grow_big made 40 mmap requests, the snapshot counts $big under it"; }
[ "$(sum "$T/growth.folded" ';grow_big;')" = 40 ] || fail "requests under grow_big that are not its mmaps"
bytes=$(sum "$T/bytes.folded" ';grow_big;')
[ "$bytes" = $((40 * 1052672)) ] || fail "grow_big's mmaps asked for $((40 * 1052672)) bytes, the snapshot says $bytes"
[ "$(sum "$T/growth.folded" ';grow_heap;[^;]*malloc;.*brk$')" -ge 1 ] || { cat "$T/growth.folded"; fail "grow_heap's brk is not in the snapshot"; }
stacks "$T/growth.folded" | grep -v '^alloc_work;' | grep -q . && fail "--pid let other processes' requests through"
grep -q '^hearth: .*requests for more memory .*grow_big' "$T/growth.err" || fail "the snapshot's answer does not name grow_big"
ok "hearthd kept grow_big's 40 mmap requests exactly, their bytes beside, and the answer names it"

"$HEARTH" snapshot $S --last 3s --pid "$q" --growth -o "$T/none.folded" 2>"$T/none.err" || { cat "$T/none.err"; fail "snapshot --growth of a quiet process failed"; }
[ "$(stacks "$T/none.folded" | grep -c .)" -eq 0 ] || { cat "$T/none.folded"; fail "a quiet process's growth snapshot is not empty"; }
grep -Eq '^hearth: The service did not ask for more memory in these [0-9.]+ seconds: its memory was steady\.$' "$T/none.err" ||
	{ cat "$T/none.err"; fail "the empty growth snapshot does not say the memory was steady"; }
ok "a quiet process's growth snapshot is empty and says its memory was steady"

# Allocations: the fixture allocates 50/25/25% of its bytes from three
# functions and frees half of alloc_big's blocks (a third each held).
bg "$FIXTURES/alloc_work" shares 20
p=$LAST_PID
bg "$FIXTURES/alloc_work" shares 20
other=$LAST_PID
sleep 0.5
before=$(malloc_byte "$p")
[ "$before" != cc ] || fail "malloc starts with an int3 before any probe"
"$HEARTH" snapshot $S --last 3s --alloc --pid "$p" -o "$T/x" 2>"$T/last.err" && fail "snapshot --last --alloc succeeded"
grep -q 'take --next DUR' "$T/last.err" || { cat "$T/last.err"; fail "--last --alloc does not say to use --next"; }
"$HEARTH" snapshot $S --next 3s --alloc -o "$T/x" 2>"$T/nopid.err" && fail "snapshot --alloc without --pid succeeded"
grep -q 'only the processes chosen with --pid' "$T/nopid.err" || { cat "$T/nopid.err"; fail "--alloc without --pid does not say to choose processes"; }
"$HEARTH" snapshot $S --next 3s --alloc --sample-bytes 64K --pid "$p" -o "$T/alloc.folded" 2>"$T/alloc.err" &
ra=$!
"$HEARTH" snapshot $S --next 3s --held --sample-bytes 64K --pid "$p" -o "$T/held.pb.gz" 2>"$T/held.err" &
rh=$!
probed "$p"
[ "$(malloc_byte "$other")" = "$before" ] || fail "a process not chosen has a probe in its malloc"
wait $ra || { cat "$T/alloc.err"; fail "snapshot --alloc failed"; }
wait $rh || { cat "$T/held.err"; fail "snapshot --held failed"; }
cat "$T/alloc.err" "$T/held.err"
[ "$(malloc_byte "$p")" = "$before" ] || fail "malloc still holds a probe after the snapshots"
ok "only the chosen process is probed, and only for the snapshot's seconds"

grep -q '^# hearth-profile 1 unit=bytes .* question=alloc #$' "$T/alloc.folded" || { head -3 "$T/alloc.folded"; fail "the alloc snapshot does not say it holds bytes allocated"; }
alloc_shares "$T/alloc.folded"
grep -q '^hearth: .*of the memory allocated' "$T/alloc.err" || fail "the alloc snapshot says no answer"
go tool pprof -raw "$T/held.pb.gz" >"$T/held.raw" 2>&1 || { cat "$T/held.raw"; fail "go tool pprof cannot read the held snapshot"; }
grep -qx 'inuse_objects/count inuse_space/bytes' "$T/held.raw" || { head -8 "$T/held.raw"; fail "the held snapshot's sample types are not inuse_objects/count inuse_space/bytes"; }
"$HEARTH" export --folded -o "$T/held.folded" "$T/held.pb.gz" || fail "cannot read the held snapshot back"
held_shares "$T/held.folded"
ok "--alloc and --held give each function its share within 5 points"

# A client that leaves takes the probes with it, long before its --next.
"$HEARTH" snapshot $S --next 60s --alloc --pid "$p" -o "$T/left.folded" 2>/dev/null &
rl=$!
probed "$p"
kill "$rl"
i=0
until [ "$(malloc_byte "$p")" = "$before" ]; do
	i=$((i + 1)); [ $i -gt 30 ] && fail "malloc keeps its probe 3 s after the snapshot's client left"
	sleep 0.1
done
grep -q 'the client of an allocation snapshot left' "$T/hearthd.log" || fail "hearthd does not say the client left"
ok "a snapshot's client that leaves takes its probes with it"

# Killed while probing, hearthd leaves no probe: the links close with it.
"$HEARTH" snapshot $S --next 20s --alloc --pid "$p" -o "$T/killed.folded" 2>"$T/killed.err" &
rk=$!
probed "$p"
kill -KILL "$HD"
wait "$HD" 2>/dev/null
HD=
sleep 0.5
[ "$(malloc_byte "$p")" = "$before" ] || fail "malloc keeps a probe after hearthd was killed"
wait $rk && fail "the snapshot of a killed hearthd succeeded"
ok "a killed hearthd leaves no probe"
