#!/bin/sh
# One box per function, from a real recording: `hearth record -o x.pb.gz`
# of a fixture whose hot function runs at several of its lines and in a
# helper inlined at two call sites holds that function as several frames
# (checked with go tool pprof). The SVG export draws it as one <g> whose
# title lists its lines with their shares, holding the same total as the
# folded export of the same file (no lines) gives; the viewer's window
# draws it as one box.
. tests/e2e/lib.sh
require_root
command -v go >/dev/null || fail "go is needed to read pprof output (Debian package golang-go)"
B=$FIXTURES/lines_mix

bg "$B" 8
wpid=$LAST_PID
"$HEARTH" record -d 4 -p "$wpid" --no-kernel -o "$T/p.pb.gz" 2>"$T/err" || { cat "$T/err"; fail "record failed"; }
kill "$wpid" 2>/dev/null

# The recording holds mix_inline at several lines, else this proves nothing.
go tool pprof -raw "$T/p.pb.gz" >"$T/raw" 2>"$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read our pprof"; }
awk '{ for (i = 1; i < NF; i++) if ($i == "mix_inline") print $(i + 1) }' "$T/raw" | sort -u >"$T/lines"
n=$(wc -l <"$T/lines")
[ "$n" -ge 3 ] || { cat "$T/raw"; fail "mix_inline at $n lines in the pprof, expected 3 or more"; }
ok "the pprof holds mix_inline at $n lines: $(tr '\n' ' ' <"$T/lines")"

# SVG: one <g>, its lines in the title, the total of the folded export.
"$HEARTH" export --svg -o "$T/p.svg" "$T/p.pb.gz" || fail "export --svg"
g=$(grep -c 'data-n="mix_inline"' "$T/p.svg")
[ "$g" -eq 1 ] || fail "the SVG has $g boxes for mix_inline, expected 1"
title=$(grep -o '<title>mix_inline ([^<]*' "$T/p.svg")
echo "$title"
echo "$title" | grep -Eq 'lines_mix\.c:[0-9]+ \([0-9.<]+%\)(, [0-9]+ \([0-9.<]+%\)){2,}' ||
	fail "the title does not list mix_inline's lines with their shares: $title"
"$HEARTH" export --folded -o "$T/p.folded" "$T/p.pb.gz" || fail "export --folded"
want=$(sum "$T/p.folded" ';mix_inline(;|$)')
got=$(echo "$title" | sed -n 's/^<title>mix_inline (total \([0-9]*\),.*/\1/p')
[ -n "$want" ] && [ "$want" -gt 20 ] || fail "only $want samples in mix_inline"
[ "$got" = "$want" ] || fail "the box holds $got samples, the folded export $want"
ok "one <g> for mix_inline in the SVG, $got samples, its lines in the title"

# The window: one box (Xvfb; the viewer's tests need it in CI).
for t in Xvfb xdotool; do
	command -v "$t" >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] && fail "$t is missing (PKGS_TEST installs it)"
	echo "skipped the window: $t is not installed"; exit 0
done
tmp=$T
here=$(pwd)
. "$here/tests/e2e/lib_x11.sh"
x11_start 131 1600x1000x24
BG_PIDS="$BG_PIDS $xpid"
dl=$T/layout.txt
ASAN_OPTIONS=detect_leaks=0 bg "$HEARTH" view --size 1400x800 --debug-layout "$dl" "$T/p.pb.gz"
i=0
until [ -s "$dl" ] && grep -q '^box ' "$dl"; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "the viewer wrote no layout"
	sleep 0.1
done
boxes=$(grep -c '^box .* mix_inline$' "$dl")
[ "$boxes" -eq 1 ] || { grep '^box ' "$dl"; fail "the window draws $boxes boxes for mix_inline, expected 1"; }
ok "one box for mix_inline in the window"
echo "view_lines: all checks passed"
