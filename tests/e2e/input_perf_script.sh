#!/bin/sh
# `perf script` text is read directly, as stackcollapse-perf does:
#  - a real `perf record -g` of a fixture (cpu-clock, a fixed period, so
#    each sample weighs the same), its `perf script --header` text: the
#    same stacks as perf's own collapser (perf script -s stackcollapse.py
#    --kernel), each worth its count of samples times the period, in
#    nanoseconds; kernel frames marked _[k];
#  - the whole host for a second (C++ names, [unknown] frames, kernel
#    modules, many processes): read whole, the same processes and the
#    same total as the sum of the samples' periods;
#  - view's loader takes it too (export --svg draws it).
. tests/e2e/lib.sh
require_root
command -v perf >/dev/null || fail "perf is missing (package linux-perf)"
collapse=/usr/lib/perf-core/scripts/python/stackcollapse.py
[ -f "$collapse" ] || fail "perf's stackcollapse.py is missing (package linux-perf)"
P=1000000

perf record -q -e cpu-clock -c $P -g -o "$T/fx.data" -- "$FIXTURES/record_work" spin 2 \
	> "$T/perf.log" 2>&1 || { cat "$T/perf.log"; fail "perf record failed"; }
perf script --header -i "$T/fx.data" > "$T/fx.txt" 2>/dev/null || fail "perf script failed"
perf script -i "$T/fx.data" -s "$collapse" -- --kernel 2>/dev/null | sort > "$T/fx.ref" ||
	fail "perf's stackcollapse.py failed"
hdr=$(grep -c '^#' "$T/fx.txt")
echo "perf script: $(grep -c 'cpu-clock' "$T/fx.txt") samples after $hdr header lines ($(head -c 65536 "$T/fx.txt" | grep -c '^#') in the first 64 KiB)"
"$HEARTH" export --folded --plain -o "$T/fx.folded" "$T/fx.txt" || fail "hearth did not read perf script text"
# hearth's values are nanoseconds of cpu-clock: samples times the period.
# A frame with no symbol is "[module]" in hearth, as in stackcollapse-perf
# ("[[vdso]]"), and "[unknown]" in stackcollapse.py: compared as the latter.
awk -v p=$P '{ n = $NF; sub(/ [0-9]+$/, ""); if (n % p) { print "not a multiple: " $0; exit 1 }
	k = split($0, f, ";"); s = f[1]; for (i = 2; i <= k; i++) s = s ";" (f[i] ~ /^\[.*\]$/ ? "[unknown]" : f[i])
	print s, n / p }' \
	"$T/fx.folded" | sort > "$T/fx.mine" || fail "a value is not a whole number of periods"
if ! cmp -s "$T/fx.mine" "$T/fx.ref"; then
	diff "$T/fx.ref" "$T/fx.mine" | head -20
	fail "hearth's stacks differ from stackcollapse.py's"
fi
n=$(awk '{ t += $NF } END { print t }' "$T/fx.ref")
[ "$n" -gt 100 ] || fail "only $n samples of the fixture"
grep -q '^record_work;.*;main;spin;burn' "$T/fx.ref" || fail "no record_work;...;main;spin;burn stack"
"$HEARTH" diff --json "$T/fx.txt" "$T/fx.txt" | grep -q '"unit":"nanoseconds"' || fail "cpu-clock is not read as nanoseconds"
ok "a fixture: $(wc -l < "$T/fx.ref") stacks, $n samples, the same as stackcollapse.py's"

perf record -q -a -g -F 199 -o "$T/host.data" -- sleep 1 > "$T/perf.log" 2>&1 ||
	{ cat "$T/perf.log"; fail "perf record -a failed"; }
perf script -i "$T/host.data" > "$T/host.txt" 2>/dev/null || fail "perf script failed"
"$HEARTH" export --folded --plain -o "$T/host.folded" "$T/host.txt" || fail "hearth did not read the host's perf script"
want=$(awk '/^[^ \t#].*: *[0-9]+ +cpu-clock/ { sub(/ *cpu-clock.*/, ""); t += $NF } END { printf "%.0f", t }' "$T/host.txt")
got=$(awk '{ t += $NF } END { printf "%.0f", t }' "$T/host.folded")
[ "$got" = "$want" ] || fail "the host's total is $got, the periods add to $want"
perf script -i "$T/host.data" -s "$collapse" 2>/dev/null | sed 's/;.*//; s/ [0-9]*$//' | sort -u > "$T/host.procs.ref"
sed 's/;.*//; s/ [0-9]*$//' "$T/host.folded" | sort -u > "$T/host.procs"
cmp -s "$T/host.procs" "$T/host.procs.ref" || { diff "$T/host.procs.ref" "$T/host.procs"; fail "the processes differ"; }
"$HEARTH" export --svg -o "$T/host.svg" "$T/host.txt" || fail "export --svg of perf script text"
grep -q '<svg' "$T/host.svg" || fail "no SVG"
ok "the host: $(wc -l < "$T/host.procs") processes, total $got ns as the periods add up; export --svg draws it"
