# Names through hearth record of programs linked by LLD, whose read-only
# and executable segments share the file's first page (an address's
# segment, not its page, gives the load bias): C, C++ calling its own
# shared library, and Rust with its standard library. The hot paths read
# as the sources name them, under main.
. tests/e2e/lib.sh
require_root

spin_record 3 sym_funcs_lld sym_cxx_lld sym_rust_legacy_lld
expect_under sym_funcs_lld ';main;sym_hot_loop(;|$)' 'main;sym_hot_loop'
expect_under sym_cxx_lld ';main;\(anonymous namespace\)::drive\(shapes::Shape const&, int\);shapes::sorted_areas\(shapes::Shape const&, int\)(;|$)' \
	'main;drive;shapes::sorted_areas (in libshapes_lld.so)'
# the process name is cut to 15 characters
expect_under sym_rust_legacy ';main;std::rt::lang_start_internal;.*;sym_rust::main;sym_rust::shapes::churn(;|$)' \
	'main;std::rt::lang_start_internal;...;sym_rust::main;sym_rust::shapes::churn'
