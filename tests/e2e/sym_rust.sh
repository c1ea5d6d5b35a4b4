# Rust names through hearth record: programs in the v0 and the legacy
# mangling, linked by BFD and by LLD, read as rustfilt prints them (no
# hash, no $LT$ escapes, nothing left mangled), hot path under main.
. tests/e2e/lib.sh
require_root

spin_record 3 sym_rust_v0_bfd sym_rust_v0_lld sym_rust_legacy_bfd
for c in sym_rust_v0_bfd sym_rust_v0_lld sym_rust_legacy; do
	expect_under $c ';sym_rust::main;sym_rust::shapes::churn(;|$)' 'sym_rust::main;sym_rust::shapes::churn'
	# the trait method, named as its impl: most of the time goes there
	expect_under $c ';sym_rust::shapes::churn;<sym_rust::shapes::Square as sym_rust::shapes::Area>::area(;|$)' \
		'churn;<Square as Area>::area' 50
done
# nothing mangled, no hash, no escape
if grep '^sym_rust' "$T/p.folded" | grep -E '\$LT\$|\$u20\$|::h[0-9a-f]{16}|(^|;)_(ZN|R[NCMXYIB])'; then
	fail "Rust frames above are still mangled"
fi
ok "every Rust frame demangled"
