#!/bin/sh
# make uninstall removes what make install put (same PREFIX and DESTDIR):
# no file is left but a config that was changed, which it names.
. tests/e2e/lib.sh
san=0
grep -q fsanitize "$BUILD/.flags-cc" 2>/dev/null && san=1
mk() { make --no-print-directory -s BUILD="$BUILD" SAN=$san DESTDIR="$T/root" "$@" > "$T/out" 2>&1 || { tail "$T/out"; fail "make $* failed"; }; }

mk install
find "$T/root" -type f | sed "s|$T/root||" | sort > "$T/installed"
n=$(wc -l < "$T/installed")
for f in /usr/local/bin/hearth /usr/local/sbin/hearthd /usr/local/libexec/hearth/hearth-view \
	/usr/local/share/man/man1/hearth.1 /lib/systemd/system/hearthd.service /etc/hearth/hearthd.conf; do
	grep -qx "$f" "$T/installed" || fail "make install did not install $f"
done
mk uninstall
left=$(find "$T/root" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
ok "make uninstall removed the $n files make install put"

mk install
echo 'window = 5s' >> "$T/root/etc/hearth/hearthd.conf"
mk uninstall
grep -q "kept $T/root/etc/hearth/hearthd.conf" "$T/out" || { cat "$T/out"; fail "uninstall did not say it kept the changed config"; }
left=$(find "$T/root" -type f | sed "s|$T/root||")
[ "$left" = /etc/hearth/hearthd.conf ] || fail "make uninstall with a changed config left: $left"
ok "a changed config is kept and named"
