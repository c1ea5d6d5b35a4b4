# Names through hearth record of programs linked by LLD, whose read-only
# and executable segments share the file's first page (an address's
# segment, not its page, gives the load bias): C, C++ calling its own
# shared library, and Rust with its standard library. The hot paths read
# as the sources name them, under main.
. tests/e2e/lib.sh
require_root

pids=
for f in sym_funcs_lld sym_cxx_lld sym_rust_legacy_lld; do
	bg "$FIXTURES/$f" spin 6
	pids="$pids -p $LAST_PID"
done
"$HEARTH" record -d 3 $pids --no-kernel -o "$T/p.folded" 2>"$T/err" || { cat "$T/err"; fail "record failed"; }

expect() { # COMM REGEX WHAT: most samples of process COMM hold REGEX
	all=$(sum "$T/p.folded" "^$1;")
	n=$(sum "$T/p.folded" "^$1;.*$2")
	pct=$(ratio "$n" $((all - n)))
	echo "$1: $n of $all samples under $3"
	[ "$all" -gt 15 ] || { cat "$T/err"; fail "too few samples of $1: $all"; }
	between "$pct" 90 100 || { grep "^$1;" "$T/p.folded" | sort -t' ' -k2 -rn | head -5; fail "$1: only $pct% of samples under $3"; }
	ok "$1: $pct% of samples under $3"
}

expect sym_funcs_lld ';main;sym_hot_loop(;|$)' 'main;sym_hot_loop'
expect sym_cxx_lld ';main;\(anonymous namespace\)::drive\(shapes::Shape const&, int\);shapes::sorted_areas\(shapes::Shape const&, int\)(;|$)' \
	'main;drive;shapes::sorted_areas (in libshapes_lld.so)'
# the process name is cut to 15 characters
expect sym_rust_legacy ';main;std::rt::lang_start_internal;.*;sym_rust::main;sym_rust::shapes::churn(;|$)' \
	'main;std::rt::lang_start_internal;...;sym_rust::main;sym_rust::shapes::churn'
