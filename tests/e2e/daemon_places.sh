#!/bin/sh
# pprof from hearthd that other tools can use: a snapshot's Mappings and
# Locations are where the code was, as `hearth record` writes them. A
# workload (record_work: spin burns CPU, sleep blocks in sleeper()) runs
# under hearthd with 1 s windows; then, read by `go tool pprof -raw`:
#  - `hearth snapshot --pid P -o x.pb.gz` has the fixture's mapping with
#    its build ID (as readelf -n prints it) and libc's, and burn's
#    location lies inside the fixture's mapping; its file offset, turned
#    into the ELF's address through its program headers, is named burn
#    again by eu-addr2line;
#  - `--off-cpu` the same for sleeper();
#  - a store filled from those windows with minute roll-ups (the store
#    tool): a snapshot of 7 minutes, read mostly from roll-ups, keeps
#    them too.
. "$(dirname "$0")/lib.sh"
require_root
hearthd_traps
S="--socket $T/ctl.sock"
TOOL="$BUILD/bench/daemon_store_tool"
W=$FIXTURES/record_work
export HOME="$T" PPROF_TMPDIR="$T"
command -v go >/dev/null || fail "go is missing (package golang-go)"
command -v readelf >/dev/null || fail "readelf is missing (package binutils)"
command -v eu-addr2line >/dev/null || fail "eu-addr2line is missing (package elfutils)"
[ -x "$HEARTHD" ] && [ -x "$W" ] || fail "build hearthd and the fixtures first"
[ -x "$TOOL" ] || fail "build the store tool first (make fixtures builds it)"
id=$(readelf -n "$W" | awk '/Build ID:/ { print $3 }')
[ -n "$id" ] || fail "the fixture has no build ID"
stop() { kill -TERM "$HD"; wait "$HD"; HD=; }

# elf_addr FILE OFFSET: the address the ELF file gives the byte at file
# offset OFFSET (its LOAD segment's p_vaddr + OFFSET - p_offset), in hex.
elf_addr() {
	readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5 }' | while read -r off va sz; do
		if [ "$2" -ge $((off)) ] && [ "$2" -lt $((off + sz)) ]; then
			printf '0x%x\n' $((va + $2 - off))
			break
		fi
	done
}

# check FILE FUNC WHAT: in pprof FILE, the fixture's mapping has its build
# ID and a range, FUNC's location is inside it and eu-addr2line names the
# address FUNC again; libc's mapping has a build ID.
check() {
	go tool pprof -raw "$1" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "$3: go tool pprof -raw cannot read it"; }
	sed -n '/^Mappings/,$p' "$T/raw" > "$T/maps"
	line=$(grep " $W $id " "$T/maps" | head -1)
	[ -n "$line" ] || { cat "$T/maps"; fail "$3: no mapping of $W with build ID $id"; }
	m=${line%%:*}; m=$(echo $m)
	set -- "$1" "$2" "$3" $(echo "$line" | awk '{ split($2, r, "/"); print r[1], r[2], r[3] }')
	start=$4 limit=$5 moff=$6
	[ $((start)) -gt 0 ] && [ $((limit)) -gt $((start)) ] || fail "$3: mapping $m has no range: $line"
	libc=$(grep -E " /[^ ]*/libc\.so\.6 [0-9a-f]{40} " "$T/maps" | head -1)
	[ -n "$libc" ] || { cat "$T/maps"; fail "$3: no mapping of libc with its build ID"; }
	lpath=$(echo "$libc" | awk '{ print $3 }') lid=$(echo "$libc" | awk '{ print $4 }')
	[ -e "$lpath" ] && [ "$(readelf -n "$lpath" | awk '/Build ID:/ { print $3 }')" = "$lid" ] ||
		fail "$3: libc's mapping names build ID $lid, readelf -n of $lpath another"
	a=$(sed -n '/^Locations/,/^Mappings/p' "$T/raw" | awk -v m="M=$m" -v f="$2" '$3 == m && $4 == f { print $2; exit }')
	[ -n "$a" ] || { sed -n '/^Locations/,/^Mappings/p' "$T/raw" | head -30; fail "$3: no location of $2 in mapping $m"; }
	[ $((a)) -ge $((start)) ] && [ $((a)) -lt $((limit)) ] || fail "$3: $2 at $a is outside $start/$limit"
	fo=$((a - start + moff))
	ea=$(elf_addr "$W" "$fo")
	[ -n "$ea" ] || fail "$3: file offset $fo of $2 is in no LOAD segment of $W"
	name=$(eu-addr2line -f -e "$W" "$ea" | head -1)
	[ "$name" = "$2" ] || fail "$3: $2 at $a (file offset $fo, $ea) is $name to eu-addr2line"
	ok "$(date +%T) $3: $W mapping $start/$limit/$moff, build ID $id; $2 at $a names $name; libc's build ID $lid"
}

"$W" spin 60 & SPIN=$!
"$W" sleep 300 & SLEEP=$!
BG_PIDS="$SPIN $SLEEP"
hearthd_start --state-dir "$T/src" $S --window 1s
hearthd_wait_windows 2 30
echo "$(date +%T) windows stored"
"$HEARTH" snapshot $S --last 30s --pid "$SPIN" -o "$T/on.pb.gz" 2> "$T/err" ||
	fail "snapshot --pid failed: $(cat "$T/err")"
check "$T/on.pb.gz" burn "snapshot --pid"
"$HEARTH" snapshot $S --last 30s --off-cpu --pid "$SLEEP" -o "$T/off.pb.gz" 2> "$T/err" ||
	fail "snapshot --off-cpu failed: $(cat "$T/err")"
check "$T/off.pb.gz" sleeper "snapshot --off-cpu"
stop

# 7 minutes of those windows, with minute and 10-minute roll-ups.
set -- $(HEARTH_ROLLUP_SPANS=60,600 "$TOOL" fill "$T/src" "$T/hour" 42 10) ||
	fail "the store tool could not fill the store"
[ "$1" = span ] && [ "$5" -ge 5 ] || fail "unexpected output of the store tool: $*"
since=$(($2 / 1000000000 + 1)) until=$(($3 / 1000000000))
set -- $("$TOOL" plan "$T/hour" "${since}000000000" "${until}000000000")
[ "$6" -ge 2 ] || fail "the snapshot would read $6 roll-ups: $*"
hearthd_start --state-dir "$T/hour" $S --window 10s
"$HEARTH" snapshot $S --since "@$since" --until "@$until" -o "$T/hour.pb.gz" 2> "$T/err" ||
	fail "snapshot of the filled store failed: $(cat "$T/err")"
check "$T/hour.pb.gz" burn "7 min, $2 windows read as $4 blobs ($6 roll-ups)"
"$HEARTH" snapshot $S --since "@$since" --until "@$until" --off-cpu --pid "$SLEEP" -o "$T/hoff.pb.gz" 2> "$T/err" ||
	fail "off-CPU snapshot of the filled store failed: $(cat "$T/err")"
check "$T/hoff.pb.gz" sleeper "7 min off-CPU, --pid"
stop
