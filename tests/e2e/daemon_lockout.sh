#!/bin/sh
# No client locks the others out of hearthd's control socket, against a
# running hearthd on the real sampler:
#  - a member of the access group floods the socket with 20 connections
#    that send half a request header and reconnect as soon as they are
#    closed; 16 `snapshot --next 10m` requests of root wait meanwhile;
#  - one uid holds at most half of the 16 slots: 8 of the waiting
#    snapshots are held, 8 are told hearthd is busy;
#  - `hearth status` of root answers 12 times of 12, each within a second,
#    and windows keep being stored throughout;
#  - a half-written request is dropped after the read deadline (2 s);
#  - `--next` is bounded: 11 minutes is refused with a clear error, by
#    hearth and, sent raw, by hearthd.
set -u
. "$(dirname "$0")/lib.sh"
chmod 755 "$T"
SOCK=$T/ctl.sock
S="--socket $SOCK"
RAW=$FIXTURES/daemon_rawclient
FLOOD=$FIXTURES/daemon_flood
HD= HOLDERS= FL=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	for p in $HOLDERS $FL; do kill "$p" 2>/dev/null; done
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	wait 2>/dev/null # the user's processes gone before the user
	drop_test_user
	rm -rf "$T"
}
trap cleanup EXIT
require_root
[ -x "$RAW" ] && [ -x "$FLOOD" ] || fail "build the fixtures first"
make_test_user
as_member() { setpriv --reuid="$uid" --regid="$gid" --groups="$ggid" "$@"; }
windows() { "$HEARTH" status $S 2>/dev/null | awk '/^windows stored:/ { print $3 }'; }

hearthd_start --state-dir "$T/state" $S --socket-group "$GRP" --window 1s --max-clients 16

# --next is bounded, in hearth and in hearthd.
out=$("$HEARTH" snapshot --next 11m $S 2>&1) && fail "--next 11m was accepted: $out"
echo "--next 11m: $out"
echo "$out" | grep -q -- "--next waits 10 minutes at most" || fail "no clear error for --next 11m"
# A raw request for the next hour: since, until, last 0, next 3600 s
# (0x34630b8a000, little-endian), flags, no pids, no comm.
out=$( (printf 'HRTH\001\000\002\000\051\000\000\000'; head -c 24 /dev/zero
	printf '\000\240\270\060\106\003\000\000'; head -c 9 /dev/zero) | "$RAW" "$SOCK")
echo "raw --next 1h: $out"
echo "$out" | grep -q "msg=a snapshot waits for the next 10 minutes at most" || fail "hearthd accepted a 1 h --next"

w0=$(windows)
# setpriv itself in the background (not a function's subshell), so that
# killing $FL ends the flood and the test user can be removed.
setpriv --reuid="$uid" --regid="$gid" --groups="$ggid" "$FLOOD" "$SOCK" 20 24 > "$T/flood.out" &
FL=$!
sleep 1
for k in $(seq 16); do
	"$HEARTH" snapshot --next 10m $S -o "$T/next.$k" 2> "$T/next.$k.err" &
	HOLDERS="$HOLDERS $!"
done
# Those told busy exit; on a loaded host hearthd answers them late.
i=0
while :; do
	busy=$(grep -l "busy" "$T"/next.*.err 2>/dev/null | wc -l)
	[ "$busy" -ge 8 ] || [ $i -ge 30 ] && break
	sleep 1
	i=$((i + 1))
done
sleep 1
busy=$(grep -l "busy" "$T"/next.*.err 2>/dev/null | wc -l)
held=0
for p in $HOLDERS; do kill -0 "$p" 2>/dev/null && held=$((held + 1)); done
echo "snapshot --next holders: $held held, $busy told busy"
[ "$held" -eq 8 ] || fail "$held waiting snapshots of one uid were held, expected 8 (half the slots)"
[ "$busy" -eq 8 ] || fail "$busy waiting snapshots were told busy, expected 8"

answered=0 slow=0 worst=0
for k in $(seq 12); do
	t0=$(date +%s%N)
	if "$HEARTH" status $S > "$T/status.$k" 2>&1; then
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		answered=$((answered + 1))
		[ "$ms" -gt "$worst" ] && worst=$ms
		[ "$ms" -ge 1000 ] && slow=$((slow + 1))
	else
		echo "status $k: $(cat "$T/status.$k")"
	fi
	sleep 1
done
w1=$(windows)
member=$(as_member "$HEARTH" status $S >/dev/null 2>&1 && echo answered || echo refused)
wait "$FL"; FL=
echo "status under the flood: $answered of 12 answered, $slow slower than 1 s, slowest $worst ms"
echo "the flooding member's own status: $member"
echo "windows stored: $w0 -> $w1"
echo "flood: $(cat "$T/flood.out")"
[ "$answered" -eq 12 ] || fail "status answered $answered of 12 times under the flood"
[ "$slow" -eq 0 ] || fail "$slow status calls took a second or more"
[ "$w1" -ge $((w0 + 8)) ] || fail "windows stalled under the flood ($w0 -> $w1 in 12 s)"
longest=$(awk '{ print $8 }' "$T/flood.out")
dropped=$(awk '{ print $6 }' "$T/flood.out")
[ "$dropped" -gt 0 ] || fail "no half-written request was dropped"
[ "$longest" -le 3500 ] || fail "a half-written request was held $longest ms (deadline 2 s)"
grep -q "sent no complete request in time" "$T/hearthd.log" || fail "the read deadline is not logged"
for p in $HOLDERS; do kill "$p" 2>/dev/null; done
HOLDERS=
"$HEARTH" status $S >/dev/null || fail "hearthd stopped answering after the flood"
kill -0 "$HD" || fail "hearthd died"
echo ok
