#!/bin/sh
# hearth diff shows a progress line on a terminal while it reads and
# compares, as record does, and nothing of it elsewhere: with standard
# input held back for 2 s (so any machine takes that long), run under a
# pseudo-terminal (script), stderr shows "reading standard input" with
# the seconds counting, the line is wiped before the table, and the
# table is the same as without a terminal, where stderr stays empty.
. tests/e2e/lib.sh
command -v script >/dev/null || fail "script is missing (package util-linux)"
a=tests/fixtures/profiles/small.folded
awk '{ $NF = $NF * 2 + 1; print }' "$a" > "$T/b.folded"

(sleep 2; cat "$a") | "$HEARTH" diff - "$T/b.folded" > "$T/plain.out" 2> "$T/plain.err" ||
	fail "diff without a terminal failed: $(cat "$T/plain.err")"
[ -s "$T/plain.err" ] && fail "diff wrote to stderr without a terminal: $(cat "$T/plain.err")"
grep -q '^before: standard input, total' "$T/plain.out" || fail "no before line: $(head -3 "$T/plain.out")"

HEARTH_B=$T/b.folded script -qfec "sh -c '(sleep 2; cat $a) | \"$HEARTH\" diff - \"\$HEARTH_B\"'" /dev/null \
	> "$T/tty.raw" 2>&1 < /dev/null || fail "diff on a terminal failed: $(cat "$T/tty.raw")"
# The terminal's bytes as lines: each redraw starts with a carriage return.
tr '\r' '\n' < "$T/tty.raw" | sed 's/\x1b\[K//g' | grep -v '^$' > "$T/tty.lines"
n=$(grep -c '^hearth: reading standard input, [0-9.]* s$' "$T/tty.lines")
echo "progress lines: $n"
[ "$n" -ge 3 ] || { cat "$T/tty.lines"; fail "no progress line while standard input was held back"; }
last=$(grep '^hearth: reading standard input' "$T/tty.lines" | tail -1 | sed 's/.*, \([0-9.]*\) s$/\1/')
between "$last" 1.4 10 || fail "the progress line counted to $last s over a 2 s wait"
# The table, once the line is wiped, is what the plain run printed.
grep -v '^hearth: ' "$T/tty.lines" > "$T/tty.table"
grep -v '^$' "$T/plain.out" | cmp -s - "$T/tty.table" || { diff "$T/tty.table" "$T/plain.out"; fail "the table on the terminal differs"; }
ok "progress on a terminal ($n redraws up to $last s), wiped before the table; none without one"
