#!/bin/sh
# Crash safety of roll-ups: the store's writer (the store tool's fill, the
# same append path as hearthd's, with minute and 10-minute roll-ups, so a
# roll-up is written every 6 windows) is killed with SIGKILL at random
# moments, 12 times, appending to the same store each time (every start
# opens a new segment). After every kill the store verifies (checksums of
# windows and roll-ups; a torn tail is allowed, not corruption), and
# merging the whole store (off-CPU) and the round's part of it (on-CPU)
# through the roll-ups gives byte for byte what merging the windows one by
# one gives.
set -u
. "$(dirname "$0")/lib.sh"
TOOL="$BUILD/bench/daemon_store_tool"
HD= FX= FL=
ROUNDS=${ROUNDS:-12}
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -10
	exit 1
}
cleanup() {
	[ -n "$FX" ] && kill "$FX" 2>/dev/null
	[ -n "$FL" ] && kill -9 "$FL" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ -x "$HEARTHD" ] && [ -x "$FIXTURES/daemon_shift" ] || fail "build hearthd and the fixtures first"
[ -x "$TOOL" ] || fail "build the store tool first (make fixtures builds it)"

# Source windows of a real workload, 1 s each.
"$FIXTURES/daemon_shift" &
FX=$!
hearthd_start --state-dir "$T/src" --socket "$T/ctl.sock" --window 1s
hearthd_wait_windows 3
kill -TERM "$HD"; wait "$HD"; HD=
kill "$FX"; FX=

# compare SINCE UNTIL [off]: the merged and the one-by-one merge agree.
compare() {
	"$TOOL" merge "$T/store" "$@" > "$T/a" 2> "$T/a.err" || fail "round $r: the window merge failed"
	"$TOOL" merge "$T/store" "$@" merged > "$T/b" 2> "$T/b.err" || fail "round $r: the merged read failed"
	cmp -s "$T/a" "$T/b" || fail "round $r ($*): merging through roll-ups differs from the windows: $(diff "$T/a" "$T/b" | head -4)"
	cmp -s "$T/a.err" "$T/b.err" || fail "round $r ($*): $(cat "$T/a.err") one by one, $(cat "$T/b.err") through roll-ups"
}

base=1800000000000000000 # whole 10 minutes
# How long a whole fill takes here: kills land within 90% of it.
t0=$(date +%s%N)
HEARTH_ROLLUP_SPANS=60,600 "$TOOL" fill "$T/src" "$T/scratch" 150 10 "$base" > /dev/null ||
	fail "the store tool could not fill a store"
fill_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rm -rf "$T/scratch"
echo "a whole fill takes $fill_ms ms"
r=0 kills=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	start=$((base + (r - 1) * 200 * 10000000000))
	HEARTH_ROLLUP_SPANS=60,600 "$TOOL" fill "$T/src" "$T/store" 150 10 "$start" > /dev/null &
	FL=$!
	# Anywhere from the first windows to the last roll-ups.
	sleep "$(awk -v s="$r$$" -v ms="$fill_ms" 'BEGIN { srand(s); printf "%.3f", rand() * ms * 0.9 / 1000 }')"
	if kill -9 "$FL" 2>/dev/null; then kills=$((kills + 1)); fi
	wait "$FL" 2>/dev/null
	FL=
	# Killed before its first segment (in the tool's start-up): nothing
	# was written, so the kill proves nothing; the next round starts over.
	if [ ! -e "$T/store" ]; then
		kills=$((kills - 1))
		echo "round $r: killed before the store was made"
		continue
	fi
	"$HEARTHD" --verify-store "$T/store" > "$T/verify" ||
		fail "round $r: the store does not verify: $(tail -2 "$T/verify")"
	compare 1 0 off
	compare $((start - 1000000000000)) $((start + 777000000000))
	echo "round $r: $(tail -1 "$T/verify" | grep windows || tail -2 "$T/verify" | head -1); $(cat "$T/b.err") identical"
done
[ "$kills" -ge $((ROUNDS / 2)) ] || fail "only $kills of $ROUNDS fills were killed before they ended: the test proved little"
rolls=$("$TOOL" plan "$T/store" 1 0)
echo "ok: $kills kills in $ROUNDS rounds; whole store read as: $rolls"
case $rolls in *" rollups 0") fail "no roll-up survived: the test proved nothing" ;; esac
