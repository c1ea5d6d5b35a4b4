#!/bin/sh
# Every sample type of a pprof file can be read: a Go heap profile
# (tests/fixtures/goheap, written by runtime/pprof) has alloc_objects,
# alloc_space, inuse_objects and inuse_space, and --sample-type picks each
# in view, export and diff:
#  - each type's total is go tool pprof's: the sum of its column in
#    -raw, and for the counts the total -top prints with -sample_index;
#  - with none asked, the last type (inuse_space) is read, as pprof does;
#  - the answer says "in use" for inuse_*, "allocated" for alloc_*;
#  - export --pprof writes the type back under its name, and every type
#    when none is asked for, with the file's period (space bytes, not a
#    sampling rate) and each sample's numeric label (bytes:[N]) as go
#    tool pprof -raw shows them;
#  - a name the file lacks lists the ones it has; folded text refuses
#    --sample-type.
. tests/e2e/lib.sh
command -v go >/dev/null || fail "go is missing (package golang-go)"
"$FIXTURES/go_heap" "$T/heap.pb.gz" || fail "the Go fixture wrote no heap profile"
go tool pprof -raw "$T/heap.pb.gz" > "$T/raw" 2>/dev/null || fail "go tool pprof -raw failed"
header=$(grep -m1 '/count\|/bytes' "$T/raw")
echo "sample types: $header"
col=0
for t in alloc_objects alloc_space inuse_objects inuse_space; do
	col=$((col + 1))
	echo "$header" | awk -v c=$col -v t=$t '{ split($c, a, "/"); exit a[1] != t }' ||
		fail "column $col of the heap profile is not $t"
	want=$(awk -v c=$col '/^Samples:/ { on = 1 } /^Locations/ { on = 0 }
		on && /^ *[0-9]+( +[0-9]+)+:/ { t += $c } END { printf "%.0f", t }' "$T/raw")
	"$HEARTH" export --folded --plain --sample-type $t -o "$T/$t.folded" "$T/heap.pb.gz" ||
		fail "export --sample-type $t failed"
	got=$(total "$T/$t.folded")
	[ "$got" = "$want" ] || fail "$t: hearth's total is $got, go tool pprof's $want"
	case $t in *objects)
		top=$(go tool pprof -sample_index=$t -top "$T/heap.pb.gz" 2>/dev/null | sed -n 's/.* of \([0-9]*\) total.*/\1/p')
		[ "$top" = "$got" ] || fail "$t: go tool pprof -top says $top in total, hearth $got" ;;
	esac
	"$HEARTH" diff --json --sample-type $t "$T/heap.pb.gz" "$T/heap.pb.gz" |
		grep -q "\"before\":{\"name\":\"$T/heap.pb.gz\",\"total\":$want}" || fail "diff --sample-type $t"
	echo "$t: $got"
done
"$HEARTH" export --folded --plain -o "$T/default.folded" "$T/heap.pb.gz" || fail "export of the heap profile"
cmp -s "$T/default.folded" "$T/inuse_space.folded" || fail "with no --sample-type the last type is not the one read"
ok "four sample types, each with go tool pprof's total; the last by default"

for t in inuse_space alloc_space inuse_objects; do
	"$HEARTH" export --svg --sample-type $t -o "$T/$t.svg" "$T/heap.pb.gz" || fail "export --svg --sample-type $t"
	a=$(grep -o '<text x="10" y="46">[^<]*' "$T/$t.svg" | sed 's/.*>//')
	echo "$t: $a"
	case $t:$a in
	inuse_space:*"of the memory in use was allocated under"*) ;;
	alloc_space:*"of the memory allocated came from"*) ;;
	inuse_objects:*"of the objects in use was held under"*) ;;
	*) fail "$t's answer does not say what the type holds" ;;
	esac
done
ok "the answer says in use or allocated"

# period FILE: the PeriodType and Period lines of a -raw listing.
period() { grep -E '^Period(Type)?:' "$1" | tr -s ' \n' ' '; }
want_period=$(period "$T/raw")
case $want_period in *"PeriodType: space bytes Period: "[1-9]*) ;; *) fail "the Go heap profile's period: $want_period" ;; esac
"$HEARTH" export --pprof --sample-type inuse_objects -o "$T/re.pb.gz" "$T/heap.pb.gz" || fail "export --pprof"
go tool pprof -raw "$T/re.pb.gz" >"$T/re.raw" 2>/dev/null
grep -qx 'inuse_objects/count' "$T/re.raw" || fail "the re-export lost the type's name"
[ "$(period "$T/re.raw")" = "$want_period" ] || fail "the re-export's period is $(period "$T/re.raw"), not $want_period"
"$HEARTH" export --folded --plain -o "$T/re.folded" "$T/re.pb.gz" || fail "reading the re-export"
[ "$(total "$T/re.folded")" = "$(total "$T/inuse_objects.folded")" ] || fail "the re-export's total changed"
ok "export --pprof keeps inuse_objects/count and the period ($want_period)"

# Without --sample-type, export --pprof keeps every type, named and in
# order, each column with the original's sum, and pprof's default.
"$HEARTH" export --pprof -o "$T/all.pb.gz" "$T/heap.pb.gz" || fail "export --pprof of every type"
go tool pprof -raw "$T/all.pb.gz" > "$T/all.raw" 2>/dev/null || fail "go tool pprof -raw of the re-export"
[ "$(grep -m1 '/count\|/bytes' "$T/all.raw")" = "$header" ] ||
	fail "the re-export's types: $(grep -m1 '/count\|/bytes' "$T/all.raw")"
sums() { awk '/^Samples:/ { on = 1 } /^Locations/ { on = 0 }
	on && /^ *[0-9]+( +[0-9]+)+:/ { for (c = 1; c <= 4; c++) t[c] += $c }
	END { printf "%.0f %.0f %.0f %.0f\n", t[1], t[2], t[3], t[4] }' "$1"; }
[ "$(sums "$T/all.raw")" = "$(sums "$T/raw")" ] || fail "column sums $(sums "$T/all.raw"), not $(sums "$T/raw")"
"$HEARTH" export --folded --plain -o "$T/all.folded" "$T/all.pb.gz" || fail "reading the re-export"
cmp -s "$T/all.folded" "$T/inuse_space.folded" || fail "the re-export's default is not inuse_space"
grep -q "^1: .* $FIXTURES/go_heap " "$T/all.raw" || fail "the re-export lost Go's mapping"
[ "$(period "$T/all.raw")" = "$want_period" ] || fail "the re-export of every type has the period $(period "$T/all.raw"), not $want_period"
ok "export --pprof keeps all four types ($(sums "$T/all.raw")), the default and the mapping"
# by_label FILE: for each numeric label of a -raw listing's samples (Go's
# bytes:[N], the size of the blocks), the four columns' sums; samples at
# one stack with one label are one sample once re-written.
by_label() { awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
	function flush() { if (have) { for (c = 1; c <= 4; c++) t[lab, c] += v[c]; seen[lab] = 1 } have = 0 }
	on && /^ *[0-9]+( +[0-9]+)+:/ { flush(); for (c = 1; c <= 4; c++) v[c] = $c; lab = "none"; have = 1; next }
	on && /^ +[a-z_]+:\[/ { sub(/^ +/, ""); lab = $0 }
	END { flush(); for (l in seen) printf "%s %.0f %.0f %.0f %.0f\n", l, t[l, 1], t[l, 2], t[l, 3], t[l, 4] }' "$1" | sort; }
by_label "$T/raw" >"$T/labels.want"
by_label "$T/all.raw" >"$T/labels.got"
grep -q '^bytes:\[[0-9]*\] ' "$T/labels.want" || fail "the Go heap profile has no bytes label"
grep -q '^none ' "$T/labels.want" && fail "a sample of the Go heap profile has no bytes label"
cmp -s "$T/labels.want" "$T/labels.got" || { diff "$T/labels.want" "$T/labels.got" | head; fail "the re-export's numeric labels differ"; }
ok "export --pprof keeps the samples' numeric labels: $(wc -l <"$T/labels.got") block sizes, each with its sums"

"$HEARTH" view --sample-type nope "$T/heap.pb.gz" > "$T/out" 2>&1 && fail "an unknown sample type was read"
grep -q 'has no sample type named "nope"; it has alloc_objects, alloc_space, inuse_objects, inuse_space' "$T/out" ||
	fail "the unknown type's sentence: $(cat "$T/out")"
"$HEARTH" export --svg --sample-type inuse_space -o "$T/x.svg" "$T/inuse_space.folded" > "$T/out" 2>&1 &&
	fail "--sample-type on folded text was taken"
grep -q 'is folded, not pprof' "$T/out" || fail "folded with --sample-type: $(cat "$T/out")"
ok "an unknown type lists the file's; folded text refuses the option"
