# Short-lived processes through hearth record: a parent forks 20 children
# a second, each burns 30 ms and exits; the children's samples must be
# named in at least 95% of cases (their maps are gone by the time the
# window is drained), and their burn must hold at least 80% of them. By
# hand, MODE=exec: children that exec a fresh image first (named only when
# the sampler reads them before they exit).
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
	# A child also runs outside its burn (the return from fork, lazy
	# binding, exit): those samples are whole and named too. Unnamed is a
	# frame hearth could only give as an address.
	burn=$(sum "$T/children" ';sym_child_burn(;|$)')
	unnamed=$(sum "$T/children" '\[unknown\]|\+0x[0-9a-f]+(;|$)')
	named=$((all - unnamed))
	echo "${1:-fork}: children's samples $all, named $named, in sym_child_burn $burn"
	# 3 s x 20 children x 30 ms = 1.8 CPU-s, about 180 samples at 99 Hz
	[ "$all" -gt 60 ] || { head "$T/f.folded"; fail "only $all samples of children"; }
	pct=$(ratio "$named" "$unnamed")
	between "$pct" 95 100 || { grep -E '\[unknown\]|\+0x[0-9a-f]+(;| )' "$T/children" | sort -k2 -n -r | head; fail "children named in $pct% of their samples, expected >= 95%"; }
	# most of a child's life is its burn: its samples are the children's
	bpct=$(ratio "$burn" $((all - burn)))
	between "$bpct" 80 100 || { grep -v sym_child_burn "$T/children" | sort -k2 -n -r | head; fail "sym_child_burn holds $bpct% of the children's samples, expected >= 80%"; }
	ok "${1:-fork}: short-lived children named in $pct% of their samples, $bpct% in sym_child_burn"
}
check "${MODE:-}"
