# Symbolization through hearth record of stripped binaries: with a
# .gnu_debuglink debug file they are fully named; without any debug
# information their frames read binary+0xoffset, never bare hex.
. tests/e2e/lib.sh
require_root

record() { # NAME: runs the fixture copy NAME spinning and records it
	bg "$FIXTURES/$1" spin 4
	p=$LAST_PID
	"$HEARTH" record -d 2 -p "$p" --no-kernel -o "$T/$1.folded" 2>"$T/$1.err" || { cat "$T/$1.err"; fail "record of $1 failed"; }
	kill "$p" 2>/dev/null
	[ "$(total "$T/$1.folded")" -gt 20 ] || fail "too few samples of $1: $(total "$T/$1.folded")"
}

record sym_dbglink
n=$(sum "$T/sym_dbglink.folded" ';main;sym_hot_loop(;|$)')
all=$(total "$T/sym_dbglink.folded")
echo "sym_dbglink: $n of $all samples in main;sym_hot_loop"
pct=$(ratio "$n" $((all - n)))
between "$pct" 90 100 || { head "$T/sym_dbglink.folded"; fail "stripped binary with a debuglink: only $pct% of samples named sym_hot_loop under main"; }
ok "stripped + debuglink: named through its debug file ($pct%)"

record sym_stripped
all=$(total "$T/sym_stripped.folded")
anon=$(sum "$T/sym_stripped.folded" ';sym_stripped\+0x[0-9a-f]+$')
echo "sym_stripped: $anon of $all samples with a sym_stripped+0x... leaf"
grep -q 'sym_hot_loop' "$T/sym_stripped.folded" && fail "a stripped binary without debug info cannot know sym_hot_loop"
pct=$(ratio "$anon" $((all - anon)))
between "$pct" 90 100 || { head "$T/sym_stripped.folded"; fail "only $pct% of leaves read sym_stripped+0x..."; }
# never bare hex: every frame has a name or a module before +0x
awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] ~ /^(0x)?[0-9a-f]+$/) { print f[i]; exit 1 } }' "$T/sym_stripped.folded" || fail "bare hex frame"
ok "stripped without debug info: frames read sym_stripped+0x... ($pct%)"
