# Symbolization through hearth record: an always_inline helper is its own
# inline frame, with the helper's file:line, above its caller at the call's
# line; and the hottest frame's lines are ones eu-addr2line gives for the
# same code.
. tests/e2e/lib.sh
require_root
B=$FIXTURES/sym_funcs
SRC=$(cd "$(dirname "$0")/../fixtures" && pwd)/sym_funcs.c
command -v go >/dev/null || fail "go is needed to read pprof output (Debian package golang-go)"
command -v eu-addr2line >/dev/null || fail "eu-addr2line is needed (Debian package elfutils)"

bg "$B" spin 7
wpid=$LAST_PID
"$HEARTH" record -d 3 -p "$wpid" --no-kernel --annotate -o "$T/p.folded" 2>"$T/err1" || { cat "$T/err1"; fail "record (folded) failed"; }
"$HEARTH" record -d 2 -p "$wpid" --no-kernel -o "$T/p.pb.gz" 2>"$T/err2" || { cat "$T/err2"; fail "record (pprof) failed"; }
kill "$wpid" 2>/dev/null

# Folded, annotated: the helper sits on top of its caller, marked _[i].
all=$(total "$T/p.folded")
inl=$(sum "$T/p.folded" ';sym_hot_loop;sym_inline_helper_\[i\]$')
echo "samples $all, in the inlined helper $inl"
[ "$all" -gt 30 ] || fail "only $all samples of a fixture spinning for 3 s"
pct=$(ratio "$inl" $((all - inl)))
between "$pct" 80 100 || fail "the inlined helper holds $pct% of samples, expected most of them"
ok "inlined helper is its own frame above sym_hot_loop in $pct% of samples"

# pprof: the location holding the helper and its caller, with lines.
go tool pprof -raw "$T/p.pb.gz" >"$T/raw" 2>"$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read our pprof"; }
helper=$(awk '/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ sym_inline_helper / { print $5; getline; print $1, $2; exit }' "$T/raw")
echo "pprof location: $helper"
[ -n "$helper" ] || { head -30 "$T/raw"; cat "$T/err2"; fail "no location with sym_inline_helper in the pprof profile"; }
hfile=$(echo "$helper" | sed -n 1p)
caller=$(echo "$helper" | sed -n 2p)
[ "$(echo "$caller" | cut -d' ' -f1)" = sym_hot_loop ] || fail "the helper's caller is '$caller', expected sym_hot_loop"
hline=${hfile##*:}
cline=${caller##*:}
case "$hfile" in */tests/fixtures/sym_funcs.c:*) ;; *) fail "helper file is $hfile" ;; esac
sed -n "${hline}p" "$SRC" | grep -q 'in-helper' || fail "helper line $hline is not in the helper's body: $(sed -n "${hline}p" "$SRC")"
sed -n "${cline}p" "$SRC" | grep -q 'sym_inline_helper(64)' || fail "caller line $cline is not the call: $(sed -n "${cline}p" "$SRC")"
ok "helper at sym_funcs.c:$hline, called from sym_hot_loop at sym_funcs.c:$cline"

# eu-addr2line over every byte of sym_hot_loop: hearth's pair of lines
# must be one it reports for an address with the helper inlined.
set -- $(nm -S "$B" | awk '$4 == "sym_hot_loop" { print $1, $2 }')
start=$((0x$1)); size=$((0x$2))
i=0
while [ $i -lt $size ]; do printf '0x%x\n' $((start + i)); i=$((i + 1)); done >"$T/addrs"
eu-addr2line -f -i -e "$B" <"$T/addrs" | awk '
	/ inlined at / { helper = 1; next }
	helper == 1 { hl = $0; helper = 2; next }
	helper == 2 { helper = 3; next }
	helper == 3 { print hl " " $0; helper = 0 }' | sort -u >"$T/pairs"
want="$hfile $(echo "$caller" | cut -d' ' -f2)"
echo "eu-addr2line pairs:"; cat "$T/pairs"
# eu-addr2line adds columns; compare file:line only
sed 's/\(:[0-9]*\):[0-9]*/\1/g' "$T/pairs" | grep -qxF "$want" || fail "hearth says '$want', which eu-addr2line never says for sym_hot_loop"
ok "file:line of the hottest frames equal eu-addr2line's"
