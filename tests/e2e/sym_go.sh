# Go through hearth record: a program built with `go build -ldflags='-s
# -w'` (no symbols, no DWARF) is named from its .gopclntab. Its three busy
# goroutines' stacks reach runtime.goexit, the main goroutine's through
# runtime.main and main.main; main.mix, which the compiler inlined into
# main.burn, is its own frame with its file:line, above main.burn at the
# line of the call.
. tests/e2e/lib.sh
require_root
command -v go >/dev/null || fail "go is needed to read pprof output (Debian package golang-go)"
SRC=$(cd "$(dirname "$0")/../fixtures/gofix" && pwd)/main.go

bg "$FIXTURES/sym_go_stripped" spin 30 # killed at the end
gpid=$LAST_PID
"$HEARTH" record -d 3 -p "$gpid" --no-kernel --annotate -o "$T/p.folded" 2>"$T/err" || { cat "$T/err"; fail "record failed"; }
"$HEARTH" record -d 2 -p "$gpid" --no-kernel -o "$T/p.pb.gz" 2>"$T/err2" || { cat "$T/err2"; fail "record (pprof) failed"; }

# named at all: nothing reads sym_go_stripped+0x...
grep -q 'sym_go_stripped+0x' "$T/p.folded" && { grep 'sym_go_stripped+0x' "$T/p.folded" | head -3; fail "frames of the stripped Go program left unnamed"; }
ok "every frame of the stripped Go program named"
all=$(total "$T/p.folded")
[ "$all" -gt 15 ] || { cat "$T/err"; fail "too few samples: $all"; }
goexit=$(sum "$T/p.folded" '^sym_go_stripped;runtime\.goexit;')
main=$(sum "$T/p.folded" '^sym_go_stripped;runtime\.goexit;runtime\.main;main\.main;')
inl=$(sum "$T/p.folded" ';main\.burn;main\.mix_\[i\]$')
echo "samples $all: from runtime.goexit $goexit, of them through runtime.main;main.main $main; main.mix inlined on top $inl"
pct=$(ratio "$goexit" $((all - goexit)))
between "$pct" 90 100 || { sort -t' ' -k2 -rn "$T/p.folded" | head -5; fail "only $pct% of the goroutines' stacks reach runtime.goexit"; }
ok "$pct% of the stacks reach runtime.goexit"
# one goroutine of three busy ones is the main goroutine
pct=$(ratio "$main" $((all - main)))
between "$pct" 10 60 || fail "the main goroutine (runtime.main;main.main) has $pct% of samples, expected about a third"
ok "the main goroutine's stacks go through runtime.main;main.main ($pct%)"
[ "$inl" -gt 0 ] || fail "main.mix never shows as an inline frame above main.burn"
ok "main.mix is an inline frame above main.burn"

# file:line, from pprof: main.mix at its body, main.burn at the call
go tool pprof -raw "$T/p.pb.gz" >"$T/raw" 2>"$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read our pprof"; }
loc=$(awk '/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ main\.mix / { print $5; getline; print $1, $2; exit }' "$T/raw")
echo "pprof location: $loc"
[ -n "$loc" ] || { sed -n '/Locations/,$p' "$T/raw" | head -20; fail "no location with main.mix in the pprof profile"; }
mfile=$(echo "$loc" | sed -n 1p)
caller=$(echo "$loc" | sed -n 2p)
[ "${mfile%:*}" = "$SRC" ] || fail "main.mix's file is $mfile, expected $SRC"
[ "$(echo "$caller" | cut -d' ' -f1)" = main.burn ] || fail "main.mix's caller is '$caller', expected main.burn"
cline=${caller##*:}
sed -n "${mfile##*:}p" "$SRC" | grep -q 'return x\*6364136223846793005' || fail "main.mix's line ${mfile##*:} is not its body"
sed -n "${cline}p" "$SRC" | grep -q 'x = mix(x)' || fail "main.burn's line $cline is not the call of mix"
ok "main.mix at main.go:${mfile##*:}, called from main.burn at main.go:$cline"
