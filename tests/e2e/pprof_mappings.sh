#!/bin/sh
# pprof that other tools can use: a recording's Mappings are the real
# ones (the file's path, its address range and offset, its build ID), its
# Locations real addresses in them, so `go tool pprof` finds the binaries
# again: -symbolize=force names every address of the workload as hearth
# did. hearth's own export of the file keeps them.
. tests/e2e/lib.sh
require_root
command -v go >/dev/null || fail "go is missing (package golang-go)"
command -v readelf >/dev/null || fail "readelf is missing (package binutils)"
export HOME="$T" PPROF_TMPDIR="$T"
W=$FIXTURES/record_work
bg "$W" spin 4
sleep 0.3
"$HEARTH" record -d 1 -p "$LAST_PID" -o "$T/p.pb.gz" 2> "$T/err" || { cat "$T/err"; fail "record -p failed"; }
go tool pprof -raw "$T/p.pb.gz" > "$T/raw" 2>&1 || { cat "$T/raw"; fail "go tool pprof -raw cannot read the recording"; }

# The workload's mapping: its path, its build ID, a range that holds it.
id=$(readelf -n "$W" | awk '/Build ID:/ { print $3 }')
[ -n "$id" ] || fail "the fixture has no build ID"
sed -n '/^Mappings/,$p' "$T/raw" > "$T/maps"
cat "$T/maps"
line=$(grep " $W $id " "$T/maps") || fail "no mapping of $W with build ID $id"
m=${line%%:*}
range=$(echo "$line" | awk '{ print $2 }')
start=$(echo "$range" | cut -d/ -f1); limit=$(echo "$range" | cut -d/ -f2)
[ $((start)) -gt 0 ] && [ $((limit)) -gt $((start)) ] || fail "mapping $m has no range: $range"
ok "mapping $m: $W, build ID $id, $range"
grep -Eq " /.*/libc\.so\.6 [0-9a-f]{40} " "$T/maps" || fail "no mapping of libc with its build ID"
ok "libc's mapping has its build ID"

# The workload's locations: addresses inside the mapping, named burn,
# spin and main, as hearth named them.
sed -n '/^Locations/,/^Mappings/p' "$T/raw" | awk -v m="M=$m" '$3 == m { print $2, $4 }' > "$T/locs"
cat "$T/locs"
n=$(wc -l < "$T/locs")
[ "$n" -ge 3 ] || fail "only $n locations in $W"
while read -r a name; do
	[ $((a)) -ge $((start)) ] && [ $((a)) -lt $((limit)) ] || fail "$name at $a is outside $range"
done < "$T/locs"
for f in burn spin main; do grep -q " $f$" "$T/locs" || fail "no location named $f"; done
ok "$n locations of the workload at addresses in its mapping"

# Named again from the binary by pprof itself (addr2line), by address.
go tool pprof -symbolize=force -raw "$T/p.pb.gz" > "$T/raw2" 2> "$T/sym.err" ||
	{ cat "$T/sym.err"; fail "go tool pprof -symbolize=force failed"; }
sed -n '/^Locations/,/^Mappings/p' "$T/raw2" | awk -v m="M=$m" '$3 == m { print $2, $4 }' > "$T/locs2"
diff -u "$T/locs" "$T/locs2" || fail "pprof names the addresses otherwise"
ok "go tool pprof -symbolize=force names every address as hearth did"

# hearth's own export of the file keeps mappings and addresses.
"$HEARTH" export --pprof -o "$T/again.pb.gz" "$T/p.pb.gz" || fail "export --pprof failed"
go tool pprof -raw "$T/again.pb.gz" > "$T/raw3" 2>&1 || fail "go tool pprof cannot read the export"
grep -q " $W $id " "$T/raw3" || fail "the export lost the mapping of $W"
sed -n '/^Locations/,/^Mappings/p' "$T/raw3" | awk '$4 == "burn" { print $2 }' > "$T/burn3"
awk '$2 == "burn" { print $1 }' "$T/locs" | diff -u - "$T/burn3" || fail "the export moved burn's addresses"
ok "export --pprof keeps mappings and addresses"
