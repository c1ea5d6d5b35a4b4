#!/bin/sh
# make install puts the bash completion where bash-completion's loader
# finds it, for hearth and hearthd; make uninstall removes what make
# install put (same PREFIX and DESTDIR): no file is left but a config that
# was changed, which it names.
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
[ -r /usr/share/bash-completion/bash_completion ] || fail "bash-completion is not installed (package bash-completion)"
for c in hearth hearthd; do
	got=$(XDG_DATA_DIRS="$T/root/usr/local/share" bash -c \
		'. /usr/share/bash-completion/bash_completion && __load_completion "$1" && complete -p "$1"' sh $c 2>&1)
	[ "$got" = "complete -F _$c $c" ] || fail "bash-completion's loader does not find the completion for $c: $got"
done
ok "bash-completion loads the installed completion of hearth and hearthd"

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
