#!/bin/sh
# Retention with tiny limits on the real sampler:
#  - size: --retention-size 96K with 100 ms windows of a busy host; polled
#    160 times over ~8 s with hearthd frozen for each look, the state directory's segments never exceed 96 KiB
#    while old segments are deleted whole (the oldest start moves on) and
#    the newest windows stay readable;
#  - age: --retention-age 2s; after 6 s no stored window is older than the
#    age limit plus one segment's span (segments roll at 1/8 of the age) and
#    a window.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
HD= FX=
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
start() { hearthd_start --state-dir "$T/state" $S --window 100ms "$@"; }
stop() { kill -TERM "$HD"; wait "$HD"; HD=; }
seg_bytes() { cat "$T"/state/seg-* 2>/dev/null | wc -c; }
oldest() { ls "$T/state" | grep '^seg-.*\.hst$' | head -1; }

"$FIXTURES/daemon_shift" &
FX=$!
LIMIT=98304
start --retention-size 96K
i=0
until [ -n "$(oldest)" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no segment after 10 s"
	sleep 0.1
done
first=$(oldest)
max=0 k=0
while [ $k -lt 160 ]; do
	# Freeze hearthd to measure a consistent directory (it deletes old
	# segments before it writes, so every frozen moment must be in bounds).
	kill -STOP "$HD"
	b=$(seg_bytes)
	kill -CONT "$HD"
	[ "$b" -gt "$max" ] && max=$b
	[ "$b" -le "$LIMIT" ] || { ls -l "$T/state"; fail "the store holds $b bytes, over the $LIMIT limit"; }
	k=$((k + 1))
	sleep 0.05
done
stop
echo "size: largest seen $max of $LIMIT bytes; oldest segment $first -> $(oldest)"
[ "$max" -gt $((LIMIT / 2)) ] || fail "the store never came near its limit ($max): the test proved nothing"
[ "$(oldest)" != "$first" ] || fail "no segment was deleted"
"$HEARTHD" --verify-store "$T/state" > "$T/verify" || fail "the store does not verify"
tail -1 "$T/verify"
last_end=$(awk '/^window / { e = $3 } END { print e }' "$T/verify")
now=$(date +%s%N)
[ $((now - last_end)) -lt 3000000000 ] || fail "the newest window is not among the kept ones"

rm -rf "$T/state"
start --retention-age 2s --retention-size 1M
sleep 6
# The ages are taken at the stop (its last window applies the limit once
# more), not after the verification, whose own time under a sanitizer on
# a loaded host says nothing about retention.
now=$(date +%s%N)
stop
"$HEARTHD" --verify-store "$T/state" > "$T/verify" || fail "the store does not verify"
oldest_start=$(awk '/^window / { print $2; exit }' "$T/verify")
age_ms=$(( (now - oldest_start) / 1000000 ))
echo "age: oldest window starts $age_ms ms ago (limit 2000 ms + one segment)"
# A segment is deleted once the next one began more than 2 s ago; segments
# roll every 250 ms (2 s / 8); a window is 100 ms; allow 500 ms of slack.
[ "$age_ms" -lt 2850 ] || fail "windows older than the age limit remain ($age_ms ms)"
[ "$(grep -c '^window ' "$T/verify")" -gt 5 ] || fail "too few windows kept"
echo ok
