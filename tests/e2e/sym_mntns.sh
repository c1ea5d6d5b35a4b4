# Symbolization through hearth record of a process in another mount
# namespace, whose binary sits on a tmpfs only that namespace sees: it is
# read through /proc/PID/root and named.
. tests/e2e/lib.sh
require_root
command -v unshare >/dev/null || fail "unshare is needed (Debian package util-linux)"
D=$T/ns
mkdir -p "$D"
cat >"$T/inner.sh" <<EOS
mount -t tmpfs tmpfs "$D" || exit 91
cp "$FIXTURES/sym_funcs" "$D/sym_funcs_ns" || exit 92
exec "$D/sym_funcs_ns" spin 5
EOS
bg unshare -m --propagation private sh "$T/inner.sh"
# the fixture replaces the shell (exec) in the namespace: same pid
upid=$LAST_PID
sleep 0.5
[ -e "$D/sym_funcs_ns" ] && fail "the binary is visible on the host: the namespace test proves nothing"
comm=$(cat /proc/$upid/comm 2>/dev/null)
[ "$comm" = sym_funcs_ns ] || fail "the fixture is not running in the namespace (comm '$comm')"
"$HEARTH" record -d 2 -p "$upid" --no-kernel -o "$T/ns.folded" 2>"$T/ns.err" || { cat "$T/ns.err"; fail "record failed"; }
all=$(total "$T/ns.folded")
# Naming is what this checks (the stack's depth is the unwinder's job).
n=$(sum "$T/ns.folded" ';sym_hot_loop(;sym_inline_helper)?$')
echo "samples $all, named sym_hot_loop: $n"
[ "$all" -gt 20 ] || fail "too few samples: $all"
pct=$(ratio "$n" $((all - n)))
between "$pct" 90 100 || { head "$T/ns.folded"; fail "only $pct% named in the other mount namespace"; }
ok "process in another mount namespace named via /proc/PID/root ($pct%)"
