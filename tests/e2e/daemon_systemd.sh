#!/bin/sh
# systemd, offline (this machine is not booted with systemd):
#  - `systemd-analyze verify` accepts systemd/hearthd.service (with
#    @SBINDIR@ filled in as `make install` does);
#  - `systemd-analyze security --offline` rates it OK or better, and the
#    capability set is exactly the five the unit justifies;
#  - the sysusers snippet creates the hearth group and the tmpfiles snippet
#    the state directory (into a scratch root, not this machine's);
#  - `make install DESTDIR=...` installs the binaries, the unit, the
#    default config, the snippets and the three man pages, and the man
#    pages render without warnings.
set -u
T=$(mktemp -d /tmp/hearthd-systemd.XXXXXX)
fail() { echo "FAIL: $*"; exit 1; }
trap 'rm -rf "$T"' EXIT
for tool in systemd-analyze systemd-sysusers systemd-tmpfiles man; do
	command -v $tool >/dev/null || fail "$tool is missing (install the systemd and man-db packages)"
done
sbindir=$(dirname "$HEARTHD")
sed "s|@SBINDIR@|$sbindir|g" systemd/hearthd.service > "$T/hearthd.service"
grep -q '@' "$T/hearthd.service" && grep '@SBINDIR@' "$T/hearthd.service" && fail "@SBINDIR@ left in the unit"

# Documentation= pages are checked below from man/, not the installed set.
systemd-analyze verify --man=no "$T/hearthd.service" > "$T/verify" 2>&1
rc=$?
cat "$T/verify"
[ "$rc" -eq 0 ] || fail "systemd-analyze verify failed ($rc)"
grep -q . "$T/verify" && fail "systemd-analyze verify printed warnings"

systemd-analyze security --offline=true --no-pager "$T/hearthd.service" > "$T/sec" 2>&1
line=$(grep "Overall exposure level" "$T/sec")
echo "$line"
echo "$line" | grep -Eq ' (PERFECT|SAFE|OK) ' || fail "exposure is not in the OK band or better"
# With the push drop-in (systemd/hearthd-push.conf) in place: still in
# the OK band, and only AF_INET/AF_INET6 added to the address families.
mkdir -p "$T/sroot/lib/systemd/system" "$T/sroot/etc/systemd/system/hearthd.service.d"
cp "$T/hearthd.service" "$T/sroot/lib/systemd/system/hearthd.service"
cp systemd/hearthd-push.conf "$T/sroot/etc/systemd/system/hearthd.service.d/push.conf"
systemd-analyze security --offline=true --root="$T/sroot" --no-pager hearthd.service > "$T/sec-push" 2>&1
pline=$(grep "Overall exposure level" "$T/sec-push")
echo "with hearthd-push.conf: $pline"
echo "$pline" | grep -Eq ' (PERFECT|SAFE|OK) ' || fail "the push drop-in leaves the OK band"
grep -q '^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6$' systemd/hearthd-push.conf ||
	fail "the push drop-in opens other address families"
grep -q 'Service cannot allocate netlink sockets' "$T/sec-push" || fail "the push drop-in allows netlink"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' systemd/hearthd.service)
[ "$caps" = "CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SYSLOG" ] ||
	fail "unexpected capability set: $caps"
for c in $caps; do
	grep -q "^#   $c " systemd/hearthd.service || fail "$c has no justification comment"
done
for k in Type=notify WatchdogSec= StateDirectory=hearth RuntimeDirectory=hearth \
	ConfigurationDirectory=hearth NoNewPrivileges=yes ProtectSystem=strict \
	ProtectHome=read-only RestrictAddressFamilies=AF_UNIX SystemCallArchitectures=native \
	MemoryMax= CPUQuota= Restart=on-failure; do
	grep -q "^$k" systemd/hearthd.service || fail "the unit lacks $k"
done

mkdir -p "$T/root/etc"
: > "$T/root/etc/group"; : > "$T/root/etc/passwd"; : > "$T/root/etc/shadow"; : > "$T/root/etc/gshadow"
systemd-sysusers --root="$T/root" - < systemd/hearth.sysusers || fail "systemd-sysusers rejected the snippet"
grep -q '^hearth:' "$T/root/etc/group" || fail "sysusers did not create the hearth group"
systemd-tmpfiles --root="$T/root" --create - < systemd/hearth.tmpfiles || fail "systemd-tmpfiles rejected the snippet"
[ "$(stat -c '%a %U' "$T/root/var/lib/hearth")" = "750 root" ] || fail "tmpfiles made $(stat -c '%a %U' "$T/root/var/lib/hearth")"

# Install with the same build folder and flags, so nothing is rebuilt.
san=0
grep -q fsanitize "$BUILD/.flags-cc" 2>/dev/null && san=1
make --no-print-directory -s install BUILD="$BUILD" SAN=$san DESTDIR="$T/inst" PREFIX=/usr/local >"$T/make.log" 2>&1 ||
	{ tail "$T/make.log"; fail "make install failed"; }
for f in usr/local/bin/hearth usr/local/sbin/hearthd lib/systemd/system/hearthd.service \
	etc/hearth/hearthd.conf usr/lib/sysusers.d/hearth.conf usr/lib/tmpfiles.d/hearth.conf \
	usr/local/share/man/man1/hearth.1 usr/local/share/man/man8/hearthd.8 \
	usr/local/share/man/man5/hearthd.conf.5 usr/local/share/hearth/hearthd-push.conf; do
	[ -f "$T/inst/$f" ] || fail "make install did not install /$f"
done
grep -q '^ExecStart=/usr/local/sbin/hearthd ' "$T/inst/lib/systemd/system/hearthd.service" ||
	fail "the installed unit does not run /usr/local/sbin/hearthd"
for m in man/hearth.1 man/hearthd.8 man/hearthd.conf.5; do
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "$m: $w"
	LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$m" 2>/dev/null | grep -q . || fail "$m renders empty"
done
# Every config key is documented in hearthd.conf(5).
for k in $(sed -n 's/^\([a-z_]*\) =.*/\1/p' etc/hearthd.conf); do
	grep -q "^\\.B $k\$\|^\\.BR $k " man/hearthd.conf.5 || fail "hearthd.conf(5) does not document $k"
done
echo ok
