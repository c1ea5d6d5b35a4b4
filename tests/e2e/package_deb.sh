#!/bin/sh
# The Debian packages: `make deb` builds hearth and hearth-viewer with
# dpkg-buildpackage; hearth holds the binaries, gzipped man pages, the
# unit (ExecStart in /usr/sbin), the sysusers and tmpfiles files, the
# default config (a conffile) and the bash completion, and links no SDL.
# Installed with dpkg into the booted Debian 12 container of the daemon
# tests (tests/e2e/lib_nspawn.sh):
#  - the hearth group and /var/lib/hearth (0750 root:hearth) exist;
#  - the unit is neither enabled nor started;
#  - `systemctl start hearthd` runs the packaged daemon, which samples;
#    a member of the hearth group reads its status and exports a snapshot
#    as SVG (no viewer needed);
#  - `dpkg -r` stops it and removes the binaries but keeps the config;
#    `dpkg -P` removes the config.
. tests/e2e/lib_nspawn.sh
[ "$(id -u)" = 0 ] || fail "this test installs packages into a container and must run as root"

version=$(make -s --no-print-directory print-VERSION)
nice make --no-print-directory deb BUILD="$T/b" > "$T/make.log" 2>&1 || { tail -30 "$T/make.log"; fail "make deb failed"; }
arch=$(dpkg --print-architecture)
deb=$T/b/deb/hearth_${version}_$arch.deb
viewer=$T/b/deb/hearth-viewer_${version}_$arch.deb
[ -f "$deb" ] && [ -f "$viewer" ] || { ls "$T/b/deb"; fail "make deb left no hearth and hearth-viewer packages"; }
ok "make deb: $(basename "$deb") $(basename "$viewer")"

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' > "$T/files"
for f in /usr/bin/hearth /usr/sbin/hearthd /usr/share/man/man1/hearth.1.gz \
	/usr/share/man/man5/hearthd.conf.5.gz /usr/share/man/man8/hearthd.8.gz \
	/lib/systemd/system/hearthd.service /usr/lib/sysusers.d/hearth.conf \
	/usr/lib/tmpfiles.d/hearth.conf /etc/hearth/hearthd.conf \
	/usr/share/bash-completion/completions/hearth /usr/share/bash-completion/completions/hearthd; do
	grep -qx "$f" "$T/files" || fail "hearth's package lacks $f"
done
grep -q 'hearth-view$' "$T/files" && fail "the viewer is in the hearth package"
dpkg-deb -c "$viewer" | grep ' \./usr/libexec/hearth/hearth-view$' >/dev/null || fail "hearth-viewer lacks /usr/libexec/hearth/hearth-view"
dpkg-deb -f "$deb" Depends | grep -qi sdl && fail "hearth depends on SDL: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$viewer" Depends | grep "hearth (= $version)" >/dev/null || fail "hearth-viewer does not depend on hearth $version"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -x /etc/hearth/hearthd.conf >/dev/null ||
	fail "/etc/hearth/hearthd.conf is not a conffile"
ok "contents: binaries, gzipped man pages, unit, sysusers, tmpfiles, conffile, completion; no SDL"

# A root with the package's dependencies (first of each alternative).
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | paste -sd, -)
nspawn_root "$deps"
cp "$deb" "$ROOT/root/"
nspawn_boot
inside dpkg -i "/root/$(basename "$deb")" > "$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail "dpkg -i failed"; }
inside getent group hearth >/dev/null || fail "installing created no hearth group"
st=$(inside stat -c '%a %U:%G' /var/lib/hearth) || fail "installing created no /var/lib/hearth"
[ "$st" = "750 root:hearth" ] || fail "/var/lib/hearth is $st, not 750 root:hearth"
en=$(inside systemctl is-enabled hearthd)
act=$(inside systemctl is-active hearthd)
[ "$en" = disabled ] && [ "$act" = inactive ] || fail "after install hearthd is $en and $act, not disabled and inactive"
inside sh -c 'zcat /usr/share/man/man1/hearth.1.gz | head -1' | grep '^\.TH HEARTH 1' >/dev/null || fail "hearth.1.gz is not the man page"
[ "$(inside hearth --version)" = "hearth $version" ] || fail "the installed hearth says '$(inside hearth --version)'"
ok "dpkg -i: group, state directory 750 root:hearth, unit $en and $act"

# Short windows for the test.
sed -i 's/^window = .*/window = 1s/' "$ROOT/etc/hearth/hearthd.conf"
inside systemctl start hearthd || fail "systemctl start hearthd failed"
[ "$(inside systemctl show -p ExecMainPID --value hearthd)" -gt 0 ] || fail "no main process"
exe=$(inside readlink "/proc/$(inside systemctl show -p MainPID --value hearthd)/exe")
[ "$exe" = /usr/sbin/hearthd ] || fail "the unit runs $exe, not /usr/sbin/hearthd"
inside useradd -m -G hearth alice || fail "useradd alice"
i=0
while :; do
	out=$(inside runuser -u alice -- hearth status 2>&1)
	w=$(echo "$out" | awk '/^windows stored:/ { print $3 }')
	s=$(echo "$out" | awk '/^samples:/ { print $2 }')
	[ "${w:-0}" -ge 2 ] && [ "${s:-0}" -gt 0 ] && break
	i=$((i + 1)); [ $i -gt 100 ] && { echo "$out"; fail "the packaged hearthd stored no sampled windows in 20 s"; }
	sleep 0.2
done
echo "$out"
inside runuser -u alice -- sh -c 'cd && hearth snapshot --last 1m -o s.folded && hearth export --svg -o s.svg s.folded' ||
	fail "a member of hearth could not snapshot and export"
inside grep -q '<svg' /home/alice/s.svg || fail "export wrote no SVG"
ok "the packaged hearthd ($exe) samples; alice (group hearth) reads status, snapshots, exports SVG"

inside dpkg -r hearth > "$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail "dpkg -r failed"; }
[ "$(inside systemctl is-active hearthd)" = active ] && fail "hearthd still runs after dpkg -r"
inside test -e /usr/sbin/hearthd && fail "dpkg -r left /usr/sbin/hearthd"
inside test -f /etc/hearth/hearthd.conf || fail "dpkg -r removed the config"
inside dpkg -P hearth > "$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail "dpkg -P failed"; }
inside test -e /etc/hearth/hearthd.conf && fail "dpkg -P left the config"
ok "dpkg -r stops hearthd and keeps the config; dpkg -P removes it"
