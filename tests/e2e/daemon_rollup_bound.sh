#!/bin/sh
# rollup_memory bounds the open 10 minutes' merge, which lives as long as
# hearthd: with a stack storm beside it (a new call path at every wait)
# and 1 s windows (some 3,000 paths a window, each a different line in
# every frame), hearthd at --rollup-memory 4M writes roll-ups long
# before 10 minutes, each standing for a few windows; the journal says
# so once, naming the setting; the store verifies clean; and a snapshot
# of the whole run equals, byte for byte, its windows merged one by one
# (the store tool's reference merge, which reads no roll-up): nothing is
# lost. Without a bound (0), the same run writes none.
set -u
. "$(dirname "$0")/lib.sh"
require_root
hearthd_traps
S="--socket $T/ctl.sock"
TOOL=${TOOL:-$PWD/$BUILD/bench/daemon_store_tool}
[ -x "$FIXTURES/stack_storm" ] && [ -x "$TOOL" ] || fail "build the fixtures first"

# rollups DIR: the 10-minute roll-ups --verify-store checked in DIR.
rollups() {
	"$HEARTHD" --verify-store "$1" > "$T/verify" || fail "the store does not verify: $(tail -2 "$T/verify")"
	sed -n 's/^roll-ups checked: \([0-9]*\) 10-minute, .*/\1/p' "$T/verify"
}

bg "$FIXTURES/stack_storm" sleep 4 60
t0=$(date +%s)
hearthd_start --state-dir "$T/bound" $S --window 1s --rollup-memory 4M --off-cpu-min-block 10us
hearthd_wait_windows 12 60
kill -TERM "$HD"; wait "$HD"; HD=
t1=$(date +%s)
n=$(rollups "$T/bound")
[ -n "$n" ] && [ "$n" -ge 3 ] || fail "at rollup_memory 4M, ${n:-no} 10-minute roll-ups were written in 12 windows of a stack storm"
[ "$(grep -c 'roll-ups reached rollup_memory (4.0 MiB)' "$T/hearthd.log")" -eq 1 ] ||
	fail "the journal did not say once that the roll-ups reached rollup_memory"

# The whole run through the roll-ups, as the windows one by one.
hearthd_start --state-dir "$T/bound" $S --window 1s
for q in "" off; do
	snapshot_vs_windows "$T/bound" $((t0 - 5)) "$t1" $q ||
		fail "the snapshot ($q) has ${got_w:-no} windows, the windows merged one by one $want_w"
	[ "$got_w" -ge 12 ] || fail "the snapshot ($q) has $got_w windows, not the 12 stored"
	# (its paths differ by call line, which the tree keeps and folded
	# text does not: they print as one)
	[ -z "$q" ] || [ "$(sum "$T/got.folded" '^stack_storm;.*;leaf;.*nanosleep')" -ge 10000000000 ] ||
		fail "the off-CPU snapshot holds under 10 s of the storm's sleeps"
done
kill -TERM "$HD"; wait "$HD"; HD=

hearthd_start --state-dir "$T/free" $S --window 1s --rollup-memory 0 --off-cpu-min-block 10us
hearthd_wait_windows 6 60
kill -TERM "$HD"; wait "$HD"; HD=
n0=$(rollups "$T/free")
[ "${n0:-1}" -eq 0 ] || fail "without a bound, ${n0:-an unknown number of} roll-ups were written in 6 windows"
! grep -q rollup_memory "$T/hearthd.log" || fail "without a bound the journal spoke of rollup_memory"
ok "rollup_memory 4M: $n roll-ups in 12 windows of a stack storm, snapshots byte-identical to the windows; none without a bound"
