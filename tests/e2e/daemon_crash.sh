#!/bin/sh
# Crash safety: hearthd is killed with SIGKILL at random moments while it
# writes 100 ms windows (a busy workload makes them large), 24 times in a
# row on the same store. After every kill and restart, every window the
# daemon reported stored (HEARTHD_LOG_WINDOWS=1 logs a window after its
# record and index entry are synced) must be in the store with its
# checksums passing, and nothing may be corrupt: at most the window being
# written is lost (a torn tail, reported, not an error).
set -u
. "$(dirname "$0")/lib.sh"
HD= FX=
ROUNDS=${ROUNDS:-24}
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -15
	exit 1
}
cleanup() {
	[ -n "$FX" ] && kill "$FX" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ -x "$HEARTHD" ] && [ -x "$FIXTURES/daemon_shift" ] || fail "build hearthd and the fixtures first"
HEARTHD_LOG_WINDOWS=1 # a line per stored window
export HEARTHD_LOG_WINDOWS
"$FIXTURES/daemon_shift" &
FX=$!
: > "$T/stored"
torn_total=0
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" \
		--window 100ms --off-cpu-min-block 10us
	i=0
	until grep -q "stored window" "$T/hearthd.log"; do
		i=$((i + 1)); [ $i -gt 300 ] && fail "round $r: no window stored within 30 s"
		kill -0 "$HD" 2>/dev/null || fail "round $r: hearthd exited"
		sleep 0.1
	done
	# Then 1-4 more windows and a random 0-99 ms: the kill lands anywhere
	# in the cycle of draining, encoding and writing a window.
	want=$(( $(grep -c "stored window" "$T/hearthd.log") + r % 4 + 1 ))
	i=0
	while [ "$(grep -c "stored window" "$T/hearthd.log")" -lt "$want" ]; do
		i=$((i + 1)); [ $i -gt 1000 ] && fail "round $r: windows stopped"
		sleep 0.01
	done
	sleep "0.0$(awk -v s="$r$$" 'BEGIN { srand(s); printf "%02d", int(rand() * 100) }')"
	kill -9 "$HD"
	wait "$HD" 2>/dev/null
	HD=
	awk '/stored window/ { print $4, $5 }' "$T/hearthd.log" >> "$T/stored"
	"$HEARTHD" --verify-store "$T/state" > "$T/verify" ||
		fail "round $r: the store does not verify: $(tail -2 "$T/verify")"
	awk '/^window / { print $2, $3 }' "$T/verify" | sort > "$T/present"
	sort "$T/stored" > "$T/want"
	missing=$(comm -23 "$T/want" "$T/present" | wc -l)
	[ "$missing" -eq 0 ] || fail "round $r: $missing stored window(s) missing after the kill"
	torn=$(tail -2 "$T/verify" | awk '/windows,/ { print $(NF - 8) }')
	torn_total=$torn
	echo "round $r: $(wc -l < "$T/want") windows reported stored, all present; $(tail -2 "$T/verify" | grep 'windows,')"
done
[ "$(wc -l < "$T/want")" -ge "$ROUNDS" ] || fail "too few windows were written to test anything"
echo "ok: $ROUNDS kills, torn tails seen: $torn_total"
