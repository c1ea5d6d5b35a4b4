#!/bin/sh
# What travels with the files hearth writes, read back as drawn:
#  - `hearth record -o x.folded` (real BPF), viewed: its frames keep their
#    classes, languages and file:line (the SVG export and the window),
#    where the plain folded text of the same stacks reads "unclassified";
#  - the stacks of that file are what flamegraph.pl's line grammar takes
#    (and inferno's), byte for byte the --plain output, and the lines it
#    skips are hearth's comment lines; with FLAMEGRAPH_PL set, flamegraph.pl
#    itself draws the same boxes from both;
#  - an off-CPU recording's unit survives: `export --pprof` of its folded
#    file is in nanoseconds for `go tool pprof`, and the answer speaks of
#    waiting, not CPU time.
. tests/e2e/lib.sh
require_root
command -v go >/dev/null || fail "go is needed (Debian package golang-go)"
command -v perl >/dev/null || fail "perl is needed"
B=$FIXTURES/lines_mix

# ---- on-CPU folded, read back ----------------------------------------------
bg "$B" 8
wpid=$LAST_PID
"$HEARTH" record -d 3 -p "$wpid" --no-kernel -o "$T/on.folded" 2>"$T/err" || { cat "$T/err"; fail "record failed"; }
kill "$wpid" 2>/dev/null
head -1 "$T/on.folded" | grep -q '^# hearth-profile 1 unit=samples off-cpu=0 hz=99 ' ||
	fail "no profile line first: $(head -1 "$T/on.folded")"
"$HEARTH" export --svg -o "$T/on.svg" "$T/on.folded" || fail "export --svg of the folded file"
for fn in mix_inline mix_step mix_loop main; do
	t=$(grep -o "<title>$fn ([^<]*" "$T/on.svg" | head -1)
	echo "$t" | grep -Eq 'lines_mix\.c:[0-9]+; your code\)$' ||
		fail "$fn read back without its class or file:line: ${t:-no box}"
done
# (the process row is no code of anybody's)
bad=$(grep -o '<title>[^<]*unclassified)' "$T/on.svg" | grep -v '^<title>lines_mix (')
[ -z "$bad" ] || fail "frames read back unclassified: $(echo "$bad" | head -3)"
# the same stacks without hearth's lines: unclassified, as before
"$HEARTH" export --folded --plain -o "$T/plain.folded" "$T/on.folded" || fail "export --folded --plain"
"$HEARTH" export --svg -o "$T/plain.svg" "$T/plain.folded" || fail "export --svg of the plain file"
grep -q '<title>mix_inline ([^<]*unclassified)' "$T/plain.svg" || fail "the plain file's mix_inline is not unclassified: the check above proves nothing"
ok "record -o x.folded reads back with classes, languages and file:line"

# ---- flamegraph.pl and inferno read the stacks as before ----------------------
# flamegraph.pl takes a line for a stack when it ends in whitespace and a
# number (skipping the rest, which it counts); inferno when the text after
# the last space is a number.
perl -ne 'print if /\s\d+(?:\.\d*)?$/' "$T/on.folded" >"$T/fg.stacks"
perl -ne 'print unless /\s\d+(?:\.\d*)?$/' "$T/on.folded" >"$T/fg.skipped"
cmp -s "$T/fg.stacks" "$T/plain.folded" || fail "the stacks flamegraph.pl reads differ from the plain output: $(diff "$T/fg.stacks" "$T/plain.folded" | head -3)"
[ "$(grep -c '^#' "$T/on.folded")" -eq "$(wc -l <"$T/fg.skipped")" ] && ! grep -qv '^# hearth-' "$T/fg.skipped" ||
	fail "flamegraph.pl would skip other lines than hearth's: $(grep -v '^# hearth-' "$T/fg.skipped" | head -3)"
awk '{ n = split($0, w, " "); if (w[n] ~ /^[0-9]+(\.[0-9]*)?$/) print }' "$T/on.folded" >"$T/inferno.stacks"
cmp -s "$T/inferno.stacks" "$T/plain.folded" || fail "the stacks inferno reads differ from the plain output"
ok "flamegraph.pl and inferno read the plain stacks, skipping $(wc -l <"$T/fg.skipped") comment lines"
if [ -n "${FLAMEGRAPH_PL:-}" ]; then
	perl "$FLAMEGRAPH_PL" --hash "$T/on.folded" 2>"$T/fg.err" | sort >"$T/fg.a" || fail "flamegraph.pl failed: $(cat "$T/fg.err")"
	perl "$FLAMEGRAPH_PL" --hash "$T/plain.folded" 2>/dev/null | sort >"$T/fg.b"
	grep -q '<title>mix_inline' "$T/fg.a" || fail "flamegraph.pl drew no mix_inline"
	cmp -s "$T/fg.a" "$T/fg.b" || fail "flamegraph.pl draws differently with hearth's comment lines"
	ok "flamegraph.pl draws the same SVG (its lines sorted) with and without them: $(cat "$T/fg.err")"
else
	echo "skipped: flamegraph.pl itself (set FLAMEGRAPH_PL to its path; no package ships it)"
fi

# ---- the window --------------------------------------------------------------
if command -v Xvfb >/dev/null && command -v xdotool >/dev/null; then
	tmp=$T
	. "$(pwd)/tests/e2e/lib_x11.sh"
	x11_start 141 1600x1000x24
	BG_PIDS="$BG_PIDS $xpid"
	dl=$T/layout.txt
	ASAN_OPTIONS=detect_leaks=0 bg "$HEARTH" view --size 1400x800 --debug-layout "$dl" "$T/on.folded"
	i=0
	until [ -s "$dl" ] && grep -q '^answer ' "$dl"; do
		i=$((i + 1)); [ $i -gt 100 ] && fail "the viewer wrote no layout"
		sleep 0.1
	done
	grep -Eq '^zone [0-9]+ [0-9 ]+ your code$' "$dl" || { grep '^zone' "$dl" | head; fail "no 'your code' in the window's legend"; }
	grep -q '^answer .* of CPU time was in mix_' "$dl" || fail "the answer: $(grep '^answer' "$dl")"
	ok "the window: $(grep '^answer' "$dl" | cut -c8-)"
elif [ "${CI:-}" = true ]; then
	fail "Xvfb and xdotool are missing (PKGS_TEST installs them)"
else
	echo "skipped the window: Xvfb or xdotool is not installed"
fi

# ---- off-CPU: the unit survives to pprof --------------------------------------
bg "$FIXTURES/record_work" sleep 10 >/dev/null
wpid=$LAST_PID
"$HEARTH" record --off-cpu -d 20 -p "$wpid" -o "$T/off.folded" 2>"$T/err" || { cat "$T/err"; fail "record --off-cpu failed"; }
head -1 "$T/off.folded" | grep -q '^# hearth-profile 1 unit=nanoseconds off-cpu=1 ' ||
	fail "the off-CPU file's first line: $(head -1 "$T/off.folded")"
"$HEARTH" export --pprof -o "$T/off.pb.gz" "$T/off.folded" || fail "export --pprof"
go tool pprof -raw "$T/off.pb.gz" >"$T/raw" 2>"$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read it"; }
sed -n '/^Samples:/{n;p;q}' "$T/raw" | grep -qx 'off_cpu/nanoseconds' ||
	{ head -8 "$T/raw"; fail "go tool pprof does not see nanoseconds of blocked time"; }
"$HEARTH" export --svg -o "$T/off.svg" "$T/off.folded" || fail "export --svg of the off-CPU file"
grep -q 'of the waiting time' "$T/off.svg" || fail "the off-CPU answer: $(grep -o '<text x="10" y="46">[^<]*' "$T/off.svg")"
grep -q 'of CPU time' "$T/off.svg" && fail "the off-CPU file is read as CPU time"
ok "off-CPU: go tool pprof reads off_cpu/nanoseconds; the answer speaks of waiting"
echo "view_kept: all checks passed"
