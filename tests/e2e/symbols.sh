#!/bin/sh
# Every function and variable is defined once: nm over every object of the
# build finds no global symbol defined in two objects and no weak symbol
# (defined or referenced), so what a binary runs never depends on link
# order. Each program's main() (the objects named *_main.o) is the one
# exception. BPF objects are left out: each is a program of its own,
# loaded alone. The check is first shown to catch both faults on objects
# made for it, and every source of the build must have its object, so it
# cannot pass by looking at nothing.
set -u
. "$(dirname "$0")/lib.sh"
: "${BUILD:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || fail "cannot enter $here"
command -v nm >/dev/null || fail "nm is not installed (binutils)"

# check OBJECT...: prints "twice NAME OBJ OBJ" and "weak NAME OBJ" lines.
check() {
	nm -A "$@" 2>/dev/null | awk '
	{
		# "file.o:ADDR T name" or "file.o: U name" (no address)
		split($0, a, ":"); obj = a[1]
		type = $(NF - 1); name = $NF
		if (type ~ /^[WwVv]$/) { print "weak", name, obj; next }
		if (type !~ /^[A-TX-Z]$/ || type == "U") next
		if (name == "main" && obj ~ /_main\.o$/) next
		if (name in first) print "twice", name, first[name], obj
		else first[name] = obj
	}'
}

# ---- the check catches what it is for -------------------------------------
cat >"$T/a.c" <<'EOF'
int twice_defined(void) { return 1; }
EOF
cat >"$T/b.c" <<'EOF'
int twice_defined(void) { return 2; }
__attribute__((weak)) int weakly(void) { return 3; }
EOF
cc -c -o "$T/a.o" "$T/a.c" && cc -c -o "$T/b.o" "$T/b.c" || fail "cannot compile the check's own objects"
check "$T/a.o" "$T/b.o" >"$T/self"
grep -q "^twice twice_defined $T/a.o $T/b.o$" "$T/self" || fail "the check missed a symbol defined twice: $(cat "$T/self")"
grep -q "^weak weakly $T/b.o$" "$T/self" || fail "the check missed a weak symbol: $(cat "$T/self")"
ok "the check finds a symbol defined twice and a weak one"

# ---- the build ----------------------------------------------------------
# Its objects are those of the sources (an object left from a source
# since removed is linked into nothing).
missing=
: >"$T/objs"
for src in profile/*.c symbolize/*.c agent/*.c render/*.c cli/*.c; do
	o=$BUILD/${src%.c}.o
	if [ -f "$o" ]; then echo "$o" >>"$T/objs"; else missing="$missing $src"; fi
done
[ -z "$missing" ] || fail "no object in $BUILD for:$missing (build it first)"
n=$(wc -l <"$T/objs")
# shellcheck disable=SC2046 # one argument per object
check $(cat "$T/objs") >"$T/found"
if [ -s "$T/found" ]; then
	cat "$T/found"
	fail "$(wc -l <"$T/found") symbol(s) defined twice or weak in $n objects"
fi
ok "$n objects: every global symbol defined once, none weak"
echo "symbols: all checks passed"
