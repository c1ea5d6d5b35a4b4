#!/bin/sh
# Full disk: the state directory lives on a 2 MiB tmpfs. After a few
# windows are stored, a filler file takes every free page. hearthd must log
# the problem once (not once per window), keep sampling, hold the windows it
# cannot write in memory and say so, keep answering snapshots from what it
# has, corrupt nothing, and write again (logged once) once the filler is
# gone: the held windows first, so that no window of the full disk is lost.
set -u
. "$(dirname "$0")/lib.sh"
M=$T/mnt
S="--socket $T/ctl.sock"
HD= FX= MOUNTED=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && grep -v "stored window" "$T/hearthd.log" | sed 's/^/  log| /' | tail -15
	exit 1
}
cleanup() {
	[ -n "$FX" ] && kill "$FX" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null && wait "$HD" 2>/dev/null
	[ -n "$MOUNTED" ] && umount "$M"
	rm -rf "$T"
}
trap cleanup EXIT
stored() { grep -c "stored window" "$T/hearthd.log"; }
wait_stored() { # N more windows within 20 s
	n0=$(stored); i=0
	while [ "$(stored)" -lt $((n0 + $1)) ]; do
		i=$((i + 1)); [ $i -gt 200 ] && fail "no new windows stored in 20 s ($2)"
		sleep 0.1
	done
}

mkdir -p "$M"
mount -t tmpfs -o size=2m,mode=0755 tmpfs "$M" || fail "cannot mount a tmpfs (run as root)"
MOUNTED=1
"$FIXTURES/daemon_shift" &
FX=$!
HEARTHD_LOG_WINDOWS=1 # a line per stored window
export HEARTHD_LOG_WINDOWS
# As shipped (unwind = auto): its CFI cache under the state directory
# writes nothing on a disk this small, so the store has the room.
hearthd_start --state-dir "$M/state" $S --window 300ms
wait_stored 3 "before filling the disk"

dd if=/dev/zero of="$M/filler" bs=4k 2>/dev/null
df -k "$M" | tail -1
samples1=$("$HEARTH" status $S | awk '/^samples:/ { print $2 }')
sleep 3
samples2=$("$HEARTH" status $S | awk '/^samples:/ { print $2 }')
kill -0 "$HD" || fail "hearthd died on a full disk"
n=$(grep -c "cannot store windows" "$T/hearthd.log")
[ "$n" -eq 1 ] || fail "the full disk was logged $n times, expected once"
grep "cannot store windows" "$T/hearthd.log" | grep -q "No space left on device" || fail "the log does not name ENOSPC"
[ "$samples2" -gt "$samples1" ] || fail "sampling stopped on a full disk ($samples1 -> $samples2)"
"$HEARTH" status $S | grep "^store:" | tee "$T/st"
# (A nearly full tmpfs can still take a small window into the slack of a
# file's last page, so the store may write now and then: every window it
# reports stored is checked below.)
grep -Eq "NOT WRITING: No space left on device \([1-9][0-9]* windows held in memory, 0 lost\)" "$T/st" ||
	fail "status does not say windows are held in memory"
"$HEARTH" snapshot $S --last 1m -o "$T/old.folded" || fail "no snapshot from the stored windows on a full disk"
grep -q ';main;shifting' "$T/old.folded" || fail "the snapshot lacks the workload"
"$HEARTHD" --verify-store "$M/state" > "$T/verify" || fail "corrupt store on a full disk: $(tail -2 "$T/verify")"
awk '/stored window/ { print $4, $5 }' "$T/hearthd.log" | sort > "$T/want"
awk '/^window / { print $2, $3 }' "$T/verify" | sort > "$T/present"
[ "$(comm -23 "$T/want" "$T/present" | wc -l)" -eq 0 ] || fail "a window stored before the disk filled is gone"

rm "$M/filler"
i=0
until grep -q "writing windows again" "$T/hearthd.log"; do
	i=$((i + 1)); [ $i -gt 100 ] && { du -a "$M/state"; df -k "$M"; fail "hearthd did not resume writing within 10 s of space returning"; }
	sleep 0.1
done
wait_stored 3 "after space returned"
"$HEARTH" status $S | grep -q "^store: *writing" || fail "status still says not writing"
"$HEARTHD" --verify-store "$M/state" > "$T/verify" || fail "corrupt store after resuming: $(tail -2 "$T/verify")"
tail -1 "$T/verify"
grep -q "wrote [1-9][0-9]* window(s) held in memory" "$T/hearthd.log" || fail "the held windows were not written"
# No window of the full disk is lost: each window starts where the one
# before it ended, from the first to the last.
awk '/^window / { print $2, $3 }' "$T/verify" | sort -n > "$T/all"
gaps=$(awk 'NR > 1 && $1 != end { n++ } { end = $2 } END { print n + 0 }' "$T/all")
[ "$gaps" -eq 0 ] || fail "$gaps gap(s) between stored windows: windows of the full disk were lost"
"$HEARTH" status $S | grep -q "^store: *writing$" || fail "status reports lost windows"

# Past full_disk_hold the oldest held windows are dropped and counted.
kill "$HD"; wait "$HD"; HD=
rm -rf "$M/state"
hearthd_start --state-dir "$M/state" $S --window 300ms --full-disk-hold 900ms
wait_stored 2 "before filling the disk again"
dd if=/dev/zero of="$M/filler" bs=4k 2>/dev/null
# 4 windows past the fill at the least (1.2 s); more on a slow machine
i=0
until "$HEARTH" status $S | grep "^store:" > "$T/st" &&
	grep -Eq "NOT WRITING: No space left on device \(3 windows held in memory, [1-9][0-9]* lost\)" "$T/st"; do
	i=$((i + 1)); [ $i -gt 100 ] && { cat "$T/st"; fail "status does not show a full hold of 3 windows and the lost ones within 20 s"; }
	sleep 0.2
done
cat "$T/st"
grep -q "reached full_disk_hold; dropping the oldest" "$T/hearthd.log" || fail "the full hold was not logged"
rm "$M/filler"
wait_stored 5 "after space returned again"
"$HEARTH" status $S | grep -Eq "^store: *writing \([1-9][0-9]* windows were lost earlier\)" ||
	fail "status does not count the windows lost past the hold"
echo ok
