#!/bin/sh
# The control socket's defences, against a running hearthd on the real
# sampler:
#  - the socket file is mode 0660; a user neither root nor in the access
#    group cannot connect, and even with the file opened up (0666) the
#    SO_PEERCRED check refuses them with an error reply;
#  - a member of the access group (supplementary) is served;
#  - garbage, a wrong version, an oversized header, a truncated request, a
#    bad field and a silent client each get an error reply or are dropped,
#    each kind is logged once, and the daemon keeps serving and sampling;
#  - silent clients of root beyond its share (half of max_clients): a
#    newer one takes the status slot over from the older one, a mark is
#    told to retry, a status is still answered, windows keep being stored
#    while they hang on, and the read deadline (2 s) drops them.
set -u
. "$(dirname "$0")/lib.sh"
chmod 755 "$T"
SOCK=$T/ctl.sock
S="--socket $SOCK"
RAW=$FIXTURES/daemon_rawclient
HD= HOLDERS=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	for p in $HOLDERS; do kill "$p" 2>/dev/null; done
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	wait 2>/dev/null # the user's processes gone before the user
	drop_test_user
	rm -rf "$T"
}
trap cleanup EXIT
windows() { "$HEARTH" status $S 2>/dev/null | awk '/^windows stored:/ { print $3 }'; }
hdr() { # TYPE LEN as the 12 header bytes, little-endian
	printf 'HRTH\001\000'
	printf "\\$(printf %03o $(($1 & 255)))\\$(printf %03o $(($1 >> 8)))"
	printf "\\$(printf %03o $(($2 & 255)))\\$(printf %03o $((($2 >> 8) & 255)))\\$(printf %03o $((($2 >> 16) & 255)))\\$(printf %03o $(($2 >> 24)))"
}

[ -x "$RAW" ] || fail "build the fixtures first"
make_test_user

hearthd_start --state-dir "$T/state" $S --socket-group "$GRP" --window 500ms --max-clients 4

mode=$(stat -c '%a %G' "$SOCK")
[ "$mode" = "660 $GRP" ] || fail "socket is '$mode', expected '660 $GRP'"

as_user() { setpriv --reuid="$uid" --regid="$gid" --clear-groups "$@"; }
as_member() { setpriv --reuid="$uid" --regid="$gid" --groups="$ggid" "$@"; }

out=$(as_user "$HEARTH" status $S 2>&1) && fail "a stranger got a status: $out"
echo "stranger: $out"
echo "$out" | grep -q "permission denied" || fail "the stranger's error does not say permission denied"
chmod 666 "$SOCK"
out=$(as_user "$HEARTH" status $S 2>&1) && fail "SO_PEERCRED let a stranger in: $out"
echo "stranger, socket opened up: $out"
echo "$out" | grep -q "refused the request: permission denied" || fail "no refusal from SO_PEERCRED"
grep -q "refused a control connection from uid $uid" "$T/hearthd.log" || fail "the refusal is not logged"
chmod 660 "$SOCK"
as_member "$HEARTH" status $S >/dev/null || fail "a member of $GRP was refused"

check() { # NAME EXPECTED-SUBSTRING OUTPUT
	echo "$1: $3"
	echo "$3" | grep -q -- "$2" || fail "$1: expected '$2'"
	"$HEARTH" status $S >/dev/null || fail "hearthd stopped serving after: $1"
}
check garbage "errno=71 msg=not a hearth control request" "$(printf 'GET / HTTP/1.0\r\n\r\n' | "$RAW" "$SOCK")"
for k in 1 2 3 4; do printf 'GET / HTTP/1.0\r\n\r\n' | "$RAW" "$SOCK" >/dev/null; done
check version "errno=93 msg=unsupported protocol version" "$(printf 'HRTH\002\000\001\000\000\000\000\000' | "$RAW" "$SOCK")"
check oversized "errno=90 msg=request too large" "$( (hdr 2 1048576; head -c 5000 /dev/zero) | "$RAW" "$SOCK")"
check huge-length "errno=90 msg=request too large" "$(hdr 2 4294967295 | "$RAW" "$SOCK")"
check truncated "closed" "$( (hdr 2 41; head -c 20 /dev/zero) | "$RAW" "$SOCK")"
check bad-name "msg=a mark name is 1-63 characters" "$( (hdr 3 12; head -c 8 /dev/zero; printf '\003a b') | "$RAW" "$SOCK")"
check bad-type "msg=unknown request type" "$(hdr 77 0 | "$RAW" "$SOCK")"
check trailing "msg=this request takes no payload" "$( (hdr 1 3; printf xyz) | "$RAW" "$SOCK")"
check good-raw "reply type=0x8001" "$(hdr 1 0 | "$RAW" "$SOCK")"
n=$(grep -c "not the hearth protocol" "$T/hearthd.log")
[ "$n" -eq 1 ] || fail "5 garbage requests were logged $n times, expected once"

# Silent clients of root: 2 hold root's share of the 4 slots, the 3rd is
# in the status slot until the 4th takes it over (told busy).
w0=$(windows)
for k in 1 2 3 4; do
	printf 'HR' | "$RAW" "$SOCK" --hold 4 > "$T/hold.$k" &
	HOLDERS="$HOLDERS $!"
	sleep 0.1
done
sleep 0.5
out=$("$HEARTH" mark too-many $S 2>&1) && fail "a mark was served beyond root's share of the slots"
echo "a mark beyond root's share: $out"
echo "$out" | grep -q "busy" || fail "the mark was not told hearthd is busy"
"$HEARTH" status $S >/dev/null || fail "status was refused while silent clients held the slots"
sleep 2
w1=$("$HEARTHD" --verify-store "$T/state" | grep -c '^window ')
[ "$w1" -ge $((w0 + 4)) ] || fail "windows stalled while clients hung on ($w0 -> $w1)"
for p in $HOLDERS; do wait "$p"; done
HOLDERS=
"$HEARTH" status $S >/dev/null || fail "hearthd still busy after the silent clients' deadline"
for k in 1 2 3 4; do echo "silent client $k: $(cat "$T/hold.$k")"; done
grep -q "closed" "$T/hold.1" || fail "a silent client was not dropped"
grep -q "closed" "$T/hold.2" || fail "a silent client was not dropped"
grep -q "msg=hearthd is busy" "$T/hold.3" || fail "the silent client in the status slot was not told busy when taken over"
grep -q "sent no complete request in time" "$T/hearthd.log" || fail "the timeout is not logged"
kill -0 "$HD" || fail "hearthd died"
echo ok
