#!/bin/sh
# One bad byte loses little, and `hearthd --verify-store` tells the truth,
# on a real store written by hearthd (two segments of 100 ms windows, three
# marks), each kind of damage on a fresh copy:
#  - every one of the 32 bytes of a segment's header flipped in turn:
#    --verify-store lists every window and exits 2 (a bad segment), and
#    the snapshot reader (the store tool's merge through roll-ups) finds
#    every window; hearthd serving a store with both segment headers and
#    a mark damaged answers a snapshot with every window, lists the good
#    marks and says one is damaged;
#  - a record header in the middle of a segment that claims 60 MiB, with a
#    valid checksum: damage (exit 2, 1 corrupt, no torn tail), every other
#    window still listed;
#  - a flipped byte in an index entry, in an index header: reported as
#    index damage, exit 2, no window lost; an index cut short: a torn tail;
#  - a flipped byte in a mark, in the marks header: reported, exit 2.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
TOOL="$BUILD/bench/daemon_store_tool"
HD= FX=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	[ -n "$FX" ] && kill "$FX" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
stop() { kill -TERM "$HD"; wait "$HD"; HD=; }
require_root
[ -x "$HEARTHD" ] && [ -x "$FIXTURES/daemon_shift" ] || fail "build hearthd and the fixtures first"
[ -x "$TOOL" ] || fail "build the store tool first (make fixtures builds it)"

# flip FILE OFF: xors the byte at OFF with 0x5a.
flip() {
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ 90)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# u32le FILE OFF: the little-endian 32-bit number at OFF.
u32le() { od -An -tu4 --endian=little -j "$2" -N 4 "$1" | tr -d ' '; }
# verify DIR NAME: --verify-store's output in $T/NAME.v, its exit status
# in $T/NAME.rc, the windows it lists in $T/NAME.w.
verify() {
	"$HEARTHD" --verify-store "$1" > "$T/$2.v"; echo $? > "$T/$2.rc"
	awk '/^window / { print $2, $3 }' "$T/$2.v" > "$T/$2.w"
	echo "$2: exit $(cat "$T/$2.rc"); $(grep -c . "$T/$2.w") windows listed; $(grep 'windows,' "$T/$2.v")"
}
summary() { grep 'windows,' "$T/$1.v"; }
copy() { rm -rf "$T/$1"; cp -a "$T/store" "$T/$1"; }

# A real store: two runs of hearthd (each writer start opens a segment).
"$FIXTURES/daemon_shift" &
FX=$!
for run in 1 2; do
	hearthd_start --state-dir "$T/store" $S --window 100ms
	hearthd_wait_windows 120 60
	[ $run = 1 ] && for m in before-deploy deploy-42 after-deploy; do
		"$HEARTH" mark "$m" $S >/dev/null || fail "hearth mark failed"
	done
	stop
done
kill "$FX"; FX=
set -- "$T"/store/seg-*.hst
[ $# -eq 2 ] || fail "expected 2 segments, found $#"
SEG1=$(basename "$1" .hst)
verify "$T/store" base
[ "$(cat "$T/base.rc")" -eq 0 ] || fail "the fresh store does not verify: $(tail -3 "$T/base.v")"
N=$(grep -c . "$T/base.w")
grep -q "^marks: 3 good, 0 damaged, header good" "$T/base.v" || fail "marks: $(grep marks: "$T/base.v")"
grep -q "^indexes: 0 damaged" "$T/base.v" || fail "indexes: $(grep indexes: "$T/base.v")"
first=$(head -1 "$T/base.w" | cut -d' ' -f1)
last=$(tail -1 "$T/base.w" | cut -d' ' -f2)
merged() { "$TOOL" merge "$1" "$first" "$last" merged 2>&1 >/dev/null | awk '/^windows/ { print $2 }'; }
[ "$(merged "$T/store")" -eq "$N" ] || fail "the store tool reads $(merged "$T/store") of $N windows"

# Each byte of a segment header: nothing lost.
worst_v=$N worst_m=$N
for b in $(seq 0 31); do
	copy h
	flip "$T/h/$SEG1.hst" "$b"
	verify "$T/h" h > /dev/null
	v=$(grep -c . "$T/h.w") m=$(merged "$T/h")
	[ "$(cat "$T/h.rc")" -eq 2 ] || fail "header byte $b flipped: exit $(cat "$T/h.rc")"
	summary h | grep -q ' 1 bad segments in 2 segments$' || fail "header byte $b: $(summary h)"
	[ "$v" -lt "$worst_v" ] && worst_v=$v
	[ "$m" -lt "$worst_m" ] && worst_m=$m
done
echo "segment header, each of 32 bytes flipped: at least $worst_v of $N windows listed by --verify-store, $worst_m of $N read by snapshots"
[ "$worst_v" -eq "$N" ] && [ "$worst_m" -eq "$N" ] || fail "a header flip lost windows"

# hearthd serving a damaged store: both segment headers, and a mark.
copy served
set -- "$T"/served/seg-*.hst
flip "$1" 9
flip "$2" 20
flip "$T/served/marks" $((32 + 80 + 12))
hearthd_start --state-dir "$T/served" $S --window 100ms
"$HEARTH" snapshot $S --since "@$(echo "$first" | sed 's/.\{9\}$/.&/')" \
	--until "@$(echo "$last" | sed 's/.\{9\}$/.&/')" -o "$T/snap.folded" 2> "$T/snap.err" ||
	fail "snapshot of the damaged store failed: $(cat "$T/snap.err")"
got=$(sed -n 's/^hearth: \([0-9]*\) windows,.*/\1/p' "$T/snap.err")
echo "snapshot of a store with both segment headers damaged: $got of $N windows"
[ "$got" -eq "$N" ] || fail "the snapshot found $got of $N windows"
"$HEARTH" marks $S > "$T/marks.out" 2> "$T/marks.err" || fail "hearth marks failed: $(cat "$T/marks.err")"
echo "marks: $(wc -l < "$T/marks.out") listed; $(cat "$T/marks.err")"
[ "$(wc -l < "$T/marks.out")" -eq 2 ] || fail "hearth marks listed $(wc -l < "$T/marks.out") of the 2 good marks"
grep -q "1 damaged mark(s) could not be read" "$T/marks.err" || fail "the damaged mark went unreported"
out=$("$HEARTH" diff $S --at deploy-42 --window 1s 2>&1) && fail "diff --at a damaged mark: $out"
echo "diff --at the damaged mark: $out"
echo "$out" | grep -q "(1 damaged)" || fail "diff --at does not say a mark is damaged"
grep -q "the marks file is damaged: 1 mark(s) could not be read" "$T/hearthd.log" || fail "hearthd did not log the damaged mark"
stop

# A record header in the middle of a segment that claims 60 MiB, with a
# valid checksum (CRC-32 as gzip's trailer has it).
copy huge
seg=$T/huge/$SEG1.hst
size=$(wc -c < "$seg") off=32 k=0
while [ $k -lt 60 ]; do off=$((off + 40 + $(u32le "$seg" $((off + 4))))); k=$((k + 1)); done
[ $((off + 40)) -lt "$size" ] || fail "segment 1 holds fewer than 61 records"
dd if="$seg" of="$T/rh" bs=1 skip="$off" count=36 status=none
printf '\000\000\300\003' | dd of="$T/rh" bs=1 seek=4 conv=notrunc status=none
gzip -c < "$T/rh" | tail -c 8 | head -c 4 >> "$T/rh"
dd if="$T/rh" of="$seg" bs=1 seek="$off" conv=notrunc status=none
[ "$(u32le "$seg" $((off + 4)))" -eq $((60 << 20)) ] || fail "the crafted header did not land"
verify "$T/huge" huge
[ "$(cat "$T/huge.rc")" -eq 2 ] || fail "a record claiming 60 MiB: exit $(cat "$T/huge.rc")"
summary huge | grep -q "^$((N - 1)) windows, 1 corrupt, 0 undecodable, 0 torn tails" || fail "60 MiB record: $(summary huge)"
grep -q "^first problem: $SEG1.hst at offset $off$" "$T/huge.v" || fail "60 MiB record: $(grep first "$T/huge.v")"
lost=$(comm -23 "$T/base.w" "$T/huge.w" | wc -l)
[ "$lost" -eq 1 ] || fail "a record claiming 60 MiB lost $lost windows"
echo "record header claiming 60 MiB at offset $off: $((N - 1)) of $N windows listed, damage reported"

# Index damage: an entry, the header; then a torn index.
IDX_ENTRY=64
copy ie
flip "$T/ie/$SEG1.idx" $((32 + 40 * IDX_ENTRY + 7))
verify "$T/ie" ie
[ "$(cat "$T/ie.rc")" -eq 2 ] || fail "a damaged index entry: exit $(cat "$T/ie.rc")"
grep -q "^indexes: 1 damaged entries or headers" "$T/ie.v" || fail "index entry: $(grep indexes: "$T/ie.v")"
grep -q "^first damaged index: $SEG1.idx$" "$T/ie.v" || fail "the damaged index is not named"
cmp -s "$T/base.w" "$T/ie.w" || fail "a damaged index entry lost windows"
copy ih
flip "$T/ih/$SEG1.idx" 3
verify "$T/ih" ih
[ "$(cat "$T/ih.rc")" -eq 2 ] || fail "a damaged index header: exit $(cat "$T/ih.rc")"
grep -q "^indexes: 1 damaged entries or headers" "$T/ih.v" || fail "index header: $(grep indexes: "$T/ih.v")"
cmp -s "$T/base.w" "$T/ih.w" || fail "a damaged index header lost windows"
copy it
truncate -s -20 "$T/it/$SEG1.idx"
verify "$T/it" it
[ "$(cat "$T/it.rc")" -eq 0 ] || fail "an index cut short (a crash) was called damage: $(grep indexes: "$T/it.v")"
grep -q "^indexes: 0 damaged entries or headers, 1 torn tails" "$T/it.v" || fail "index cut short: $(grep indexes: "$T/it.v")"
cmp -s "$T/base.w" "$T/it.w" || fail "an index cut short lost windows"

# Marks: a flipped mark, then a flipped header.
copy mk
flip "$T/mk/marks" $((32 + 2 * 80 + 30))
verify "$T/mk" mk
[ "$(cat "$T/mk.rc")" -eq 2 ] || fail "a damaged mark: exit $(cat "$T/mk.rc")"
grep -q "^marks: 2 good, 1 damaged, header good" "$T/mk.v" || fail "damaged mark: $(grep marks: "$T/mk.v")"
copy mh
flip "$T/mh/marks" 5
verify "$T/mh" mh
[ "$(cat "$T/mh.rc")" -eq 2 ] || fail "a damaged marks header: exit $(cat "$T/mh.rc")"
grep -q "^marks: 3 good, 0 damaged, header damaged" "$T/mh.v" || fail "marks header: $(grep marks: "$T/mh.v")"
echo ok
