# Short-lived processes through hearth record: a parent forks 20 children
# a second, each burns 30 ms and exits; the children's function must be
# named in at least 95% of their samples (their maps are gone by the time
# the window is drained). By hand, MODE=exec: children that exec a fresh
# image first (named only when the sampler reads them before they exit).
# UNWIND picks the recorder's --unwind mode (default auto).
. tests/e2e/lib.sh
require_root
check() { # MODE ("" or exec)
	# the recorder first, so every child is born while it watches
	"$HEARTH" record -d 6 --comm sym_forker --per-thread --no-kernel --unwind "${UNWIND:-auto}" -o "$T/f.folded" 2>"$T/f.err" &
	rpid=$!
	sleep 1.5
	"$FIXTURES/sym_forker" 3 $1 &
	ppid=$!
	wait "$ppid"
	wait "$rpid" || { cat "$T/f.err"; fail "record failed"; }
	# child samples: every thread row but the parent's own
	awk -v p="sym_forker-$ppid" '{ split($0, f, ";"); if (f[2] != p) print }' "$T/f.folded" >"$T/children"
	all=$(total "$T/children")
	named=$(sum "$T/children" ';sym_child_burn(;|$)')
	echo "${1:-fork}: children's samples $all, named sym_child_burn $named"
	# 3 s x 20 children x 30 ms = 1.8 CPU-s, about 180 samples at 99 Hz
	[ "$all" -gt 60 ] || { head "$T/f.folded"; fail "only $all samples of children"; }
	pct=$(ratio "$named" $((all - named)))
	between "$pct" 95 100 || { grep -v sym_child_burn "$T/children" | sort -k2 -n -r | head; fail "children named in $pct% of their samples, expected >= 95%"; }
	ok "${1:-fork}: short-lived children named in $pct% of their samples"
}
check "${MODE:-}"
