#!/bin/sh
# Roll-ups through hearthd: a store of 200 windows of 10 s (33 min, with
# minute and 10-minute roll-ups) is filled from windows hearthd
# recorded of a real workload; then hearthd serves snapshots of it. For
# ranges with edges inside windows, minutes and 10-minute spans, on- and
# off-CPU, with --pid and --comm filters, `hearth snapshot` must print
# byte for byte the folded text of merging the windows one by one (the
# store tool's reference merge, which never reads a roll-up), with the
# same window count, while the store tool shows the snapshot reading far
# fewer blobs than windows. The store verifies clean, counting every
# roll-up by level; a damaged one is counted at its level, exit status 2.
# Then the newest windows, which hearthd merges in memory, on a fresh
# store: the same.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
TOOL="$BUILD/bench/daemon_store_tool"
HD= FX= SL=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	[ -n "$FX" ] && kill "$FX" 2>/dev/null
	[ -n "$SL" ] && kill "$SL" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
start() { # DIR [flags]
	dir=$1; shift
	hearthd_start --state-dir "$dir" $S "$@"
}
stop() { kill -TERM "$HD"; wait "$HD"; HD=; }

[ -x "$HEARTHD" ] && [ -x "$FIXTURES/daemon_shift" ] || fail "build hearthd and the fixtures first"
[ -x "$TOOL" ] || fail "build the store tool first (make fixtures builds it)"

# Source windows: a CPU workload and a shell that waits, 1 s windows.
"$FIXTURES/daemon_shift" &
FX=$!
sh -c 'while :; do sleep 0.05; done' &
SL=$!
start "$T/src" --window 1s --off-cpu-min-block 10us
i=0
while [ "$(hearthd_windows)" -lt 4 ]; do
	i=$((i + 1)); [ $i -gt 300 ] && fail "hearthd stored no 4 windows in 30 s"
	sleep 0.1
done
stop

# Minute and 10-minute roll-ups (hearthd's default is 10 minutes and an
# hour): more of them, and two levels, in 33 minutes.
set -- $(HEARTH_ROLLUP_SPANS=60,600 "$TOOL" fill "$T/src" "$T/hour" 200 10) ||
	fail "the store tool could not fill the store"
[ "$1" = span ] || fail "unexpected output of the store tool: $*"
first=$2 last=$3 rollups=$5
echo "filled: 200 windows of 10 s, $first to $last, $rollups roll-ups"
[ "$rollups" -ge 20 ] || fail "only $rollups roll-ups were written for 200 windows of 10 s"
"$HEARTHD" --verify-store "$T/hour" > "$T/verify" || fail "the filled store does not verify: $(tail -2 "$T/verify")"
# It counts the roll-ups it checked, by level (here minute and 10-minute
# spans, in the places of hearthd's 10-minute and hour): all the tool wrote.
set -- $(sed -n 's/^roll-ups checked: \([0-9]*\) 10-minute, \([0-9]*\) hour; damaged: \([0-9]*\) 10-minute, \([0-9]*\) hour$/\1 \2 \3 \4/p' "$T/verify")
[ $# -eq 4 ] || fail "no roll-up line in --verify-store's output: $(tail -3 "$T/verify")"
l1=$1 l2=$2
[ $((l1 + l2)) -eq "$rollups" ] && [ "$l2" -ge 3 ] && [ "$l1" -gt "$l2" ] && [ "$3" -eq 0 ] && [ "$4" -eq 0 ] ||
	fail "--verify-store counted roll-ups $*, the tool wrote $rollups"
echo "verify: $l1 + $l2 roll-ups checked, none damaged"

# A damaged level-2 roll-up: counted as damaged at its level (and as
# corrupt), exit status 2; the rest still checked.
cp -r "$T/hour" "$T/damaged"
# u32le FILE OFF: the little-endian 32-bit number at OFF.
u32le() { od -An -tu4 --endian=little -j "$2" -N 4 "$1" | tr -d ' '; }
found=
for seg in "$T"/damaged/seg-*.hst; do
	size=$(wc -c < "$seg") off=32
	# records: a 40-byte header (payload length at 4, kind at 28), payload
	while [ $((off + 40)) -le "$size" ]; do
		if [ "$(od -An -tu1 -j $((off + 28)) -N 1 "$seg" | tr -d ' ')" = 2 ]; then
			found=$seg; break 2
		fi
		off=$((off + 40 + $(u32le "$seg" $((off + 4)))))
	done
done
[ -n "$found" ] || fail "no level-2 roll-up found in the filled store"
b=$(od -An -tu1 -j $((off + 100)) -N 1 "$found" | tr -d ' ')
printf "$(printf '\\%03o' $(( (b + 1) % 256 )))" | dd of="$found" bs=1 seek=$((off + 100)) conv=notrunc 2>/dev/null
"$HEARTHD" --verify-store "$T/damaged" > "$T/verify2"; rc=$?
[ $rc -eq 2 ] || fail "--verify-store of a damaged roll-up: exit $rc"
grep -qx "roll-ups checked: $l1 10-minute, $l2 hour; damaged: 0 10-minute, 1 hour" "$T/verify2" ||
	fail "damaged roll-up: $(grep '^roll-ups' "$T/verify2")"
grep -q '^[0-9]* windows, 1 corrupt, 0 undecodable' "$T/verify2" || fail "damaged roll-up: $(grep 'windows,' "$T/verify2")"
[ "$(grep -c '^window ' "$T/verify2")" -eq "$(grep -c '^window ' "$T/verify")" ] || fail "a damaged roll-up lost windows"
echo "verify: a damaged hour-level roll-up is counted at its level, exit 2"

start "$T/hour" --window 10s
fs=$((first / 1000000000)) ls=$((last / 1000000000))
n=0
# Ranges in whole seconds (what --since @EPOCH carries exactly), ending
# before hearthd's own new windows.
for range in "$fs $ls" "$((fs + 123)) $((ls - 45))" "$((fs + 601)) $((fs + 1302))" \
	     "$((fs + 61)) $((fs + 75))" "$((ls - 3600)) $((ls - 3))"; do
	set -- $range
	since=$1 until=$2
	for q in "" "off" "pid $FX" "off comm daemon_shift" "comm sh" "off pid $FX comm daemon_shift"; do
		flags=
		set -- $q
		while [ $# -gt 0 ]; do
			case $1 in
			off) flags="$flags --off-cpu" ;;
			pid) flags="$flags --pid $2"; shift ;;
			comm) flags="$flags --comm $2"; shift ;;
			esac
			shift
		done
		n=$((n + 1))
		"$TOOL" merge "$T/hour" "${since}000000000" "${until}000000000" $q \
			> "$T/want.folded" 2> "$T/want.err" || fail "the reference merge failed ($q)"
		want_w=$(awk '/^windows/ { print $2 }' "$T/want.err")
		"$HEARTH" snapshot $S --plain --since "@$since" --until "@$until" $flags -o "$T/got.folded" \
			2> "$T/got.err" || fail "snapshot $since..$until ($q) failed: $(cat "$T/got.err")"
		got_w=$(sed -n 's/^hearth: \([0-9]*\) windows,.*/\1/p' "$T/got.err")
		[ "$got_w" = "$want_w" ] || fail "snapshot $since..$until ($q): $got_w windows, the windows merged one by one: $want_w"
		cmp -s "$T/want.folded" "$T/got.folded" ||
			fail "snapshot $since..$until ($q) differs from merging its windows: $(diff "$T/want.folded" "$T/got.folded" | head -5)"
		case $q in
		""|off) [ -s "$T/got.folded" ] || fail "snapshot $since..$until ($q) is empty" ;;
		esac
	done
	set -- $("$TOOL" plan "$T/hour" "${since}000000000" "${until}000000000")
	echo "range $since..$until: $2 windows read as $4 blobs ($6 roll-ups); 6 queries identical"
	[ "$2" -eq 0 ] || [ "$2" -lt 20 ] || [ "$4" -lt $(($2 / 3)) ] || fail "range $since..$until: $2 windows read as $4 blobs: roll-ups unused"
done
stop
"$HEARTHD" --verify-store "$T/hour" > "$T/verify" || fail "the store does not verify after serving: $(tail -2 "$T/verify")"

# The newest windows, merged in hearthd's memory as they are stored: on a
# fresh store with 1 s windows, a snapshot of everything takes them from
# there; it must equal the windows merged one by one. Retried while a new
# window lands between the snapshot and the reference merge.
t0=$(date +%s)
start "$T/live" --window 1s --off-cpu-min-block 10us
i=0
while [ "$(hearthd_windows)" -lt 5 ]; do
	i=$((i + 1)); [ $i -gt 300 ] && fail "hearthd stored no 5 windows in 30 s"
	sleep 0.1
done
ok=0 k=0
while [ $ok -lt 2 ] && [ $k -lt 20 ]; do
	k=$((k + 1))
	q=; [ $((k % 2)) -eq 0 ] && q=off
	snapshot_vs_windows "$T/live" $((t0 - 5)) $((t0 + 3600)) $q || continue # a window landed in between
	echo "live: $got_w windows ($q), identical"
	ok=$((ok + 1))
done
[ $ok -ge 2 ] || fail "no quiet moment between windows to compare in 20 tries"
stop
echo "ok: $n snapshots of a filled store and $ok of the newest windows byte-identical to their windows merged one by one"
