#!/bin/sh
# FlameGraph's difffolded.pl output ("stack before after") is read as a
# diff, never misread as folded text:
#  - hearth diff FILE compares its two columns: the same totals and rows
#    as hearth diff of the two folded files it was made from (a name
#    ending in a count, "crypto/sha256.block 147", stays a name);
#  - view and export refuse it in one sentence that says what to do,
#    exit status 1;
#  - a line with one count among two-count lines is an error naming it;
#  - hearth diff of one plain folded file is refused.
. tests/e2e/lib.sh
cat > "$T/a.folded" <<'F'
app;main;crypto/sha256.block 147
app;main;parse 30
app;main;parse;lex 12
app;idle 5
F
cat > "$T/b.folded" <<'F'
app;main;crypto/sha256.block 153
app;main;parse 40
app;main;render 25
app;idle 5
F
# difffolded.pl's form: every stack of either file, with both counts.
awk 'FNR == NR { n = $NF; sub(/ [0-9]+$/, ""); a[$0] = n; seen[$0] = 1; next }
     { n = $NF; sub(/ [0-9]+$/, ""); b[$0] = n; seen[$0] = 1 }
     END { for (s in seen) print s, a[s] + 0, b[s] + 0 }' "$T/a.folded" "$T/b.folded" > "$T/d.diff"
cat "$T/d.diff"

"$HEARTH" diff --json "$T/d.diff" > "$T/d.json" || fail "hearth diff of a difffolded file failed"
"$HEARTH" diff --json "$T/a.folded" "$T/b.folded" > "$T/ab.json" || fail "hearth diff of the two files failed"
python3 - "$T/d.json" "$T/ab.json" <<'PY' || fail "the difffolded diff differs from the two files'"
import json, sys
d, ab = (json.load(open(f)) for f in sys.argv[1:3])
for side in ("before", "after"):
    assert d[side]["total"] == ab[side]["total"], (side, d[side], ab[side])
assert d["functions"] == ab["functions"], (d["functions"], ab["functions"])
names = {f["name"] for f in d["functions"]}
assert "crypto/sha256.block" in names, names
print("difffolded: totals", d["before"]["total"], d["after"]["total"], "and",
      len(d["functions"]), "rows equal to the two files'")
PY
"$HEARTH" diff "$T/d.diff" | grep -q "^before: $T/d.diff (before), total 194 samples" ||
	fail "the text does not name the difffolded sides"

for cmd in "view" "export --svg -o $T/x.svg"; do
	"$HEARTH" $cmd "$T/d.diff" > "$T/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "$cmd of a difffolded file: exit status $rc"
	grep -q "holds two counts a line, difffolded.pl's before and after: 'hearth diff FILE' compares them" "$T/out" ||
		fail "$cmd of a difffolded file said: $(cat "$T/out")"
done
[ -e "$T/x.svg" ] && fail "export wrote an SVG of a difffolded file"
ok "view and export refuse it: $(cat "$T/out")"

{ cat "$T/d.diff"; echo "app;main;odd 3"; } > "$T/bad.diff"
"$HEARTH" diff "$T/bad.diff" > "$T/out" 2>&1 && fail "a difffolded file with a one-count line was read"
grep -q "line 6 has not two counts" "$T/out" || fail "the bad line is not named: $(cat "$T/out")"
"$HEARTH" diff "$T/a.folded" > "$T/out" 2>&1 && fail "diff of one folded file ran"
grep -q "is folded, not difffolded.pl's two counts a line" "$T/out" || fail "one folded file: $(cat "$T/out")"
ok "a one-count line is named; one plain folded file is refused"
