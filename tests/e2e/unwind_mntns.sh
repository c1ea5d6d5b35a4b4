# DWARF unwinding of a process in another mount namespace: the -O2
# -fomit-frame-pointer fixture sits on a tmpfs only that namespace sees, so
# its CFI can only be read through /proc/PID/root. Every sample must still
# reach main through the exact chain (a frame-pointer walk cannot).
. tests/e2e/lib.sh
require_root
command -v unshare >/dev/null || fail "unshare is needed (Debian package util-linux)"
chain='main;level1;level2;level3;level4;level5;leaf'
D=$T/ns
mkdir -p "$D"
cat >"$T/inner.sh" <<EOS
mount -t tmpfs tmpfs "$D" || exit 91
cp "$FIXTURES/unwind_nofp" "$D/unwind_nofp_ns" || exit 92
exec "$D/unwind_nofp_ns" spin 30
EOS
bg unshare -m --propagation private sh "$T/inner.sh"
# the fixture replaces the shell (exec) in the namespace: same pid
upid=$LAST_PID
sleep 0.5
[ -e "$D/unwind_nofp_ns" ] && fail "the binary is visible on the host: the namespace test proves nothing"
comm=$(cat /proc/$upid/comm 2>/dev/null)
[ "$comm" = unwind_nofp_ns ] || fail "the fixture is not running in the namespace (comm '$comm')"

for mode in dwarf auto; do
	"$HEARTH" record --unwind $mode -d 4 -p "$upid" --no-kernel -o "$T/$mode.folded" 2>"$T/$mode.err" ||
		{ cat "$T/$mode.err"; fail "record --unwind $mode exited non-zero"; }
	all=$(sum "$T/$mode.folded" ';leaf$')
	whole=$(sum "$T/$mode.folded" ";$chain\$")
	pct=$(ratio "$whole" "$((all - whole))")
	echo "--unwind $mode: $whole of $all samples in leaf() reach main through the exact chain ($pct%)"
	[ "$all" -gt 20 ] || { cat "$T/$mode.err"; fail "--unwind $mode: only $all samples in leaf()"; }
	between "$pct" 99 100 || { sort -t' ' -k2 -nr "$T/$mode.folded" | head -5; fail "--unwind $mode in another mount namespace: $pct% whole, expected >= 99%"; }
	ok "--unwind $mode in another mount namespace: $pct% of samples reach main through $chain"
done
