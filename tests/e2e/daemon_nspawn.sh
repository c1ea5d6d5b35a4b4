#!/bin/sh
# systemd, for real: a minimal Debian 12 root (debootstrap minbase with
# systemd, cached between runs on this machine, rebuilt when missing) gets
# `make install DESTDIR=` plus the runtime libraries of the binaries, and
# boots in systemd-nspawn (BPF and perf_event_open let through its system
# call filter). Inside:
#  - `systemctl start hearthd` returns once hearthd said READY=1: the unit
#    is active, the socket exists and the status line is set;
#  - the running daemon has exactly the unit's five capabilities, no new
#    privileges, a seccomp filter, and still samples (windows stored with
#    samples in them);
#  - `hearth status` works for a member of the hearth group and is refused
#    for another user;
#  - `systemctl kill -s KILL hearthd`: restarted by Restart=on-failure, the
#    store verifies and keeps its windows;
#  - a hung main loop (HEARTHD_TEST_HANG_AFTER) is killed by the watchdog
#    and restarted.
. tests/e2e/lib_nspawn.sh

# The libraries hearth and hearthd link, as Debian packages.
nspawn_root "$(nspawn_pkgs "$HEARTH" "$HEARTHD")"

san=0
grep -q fsanitize "$BUILD/.flags-cc" 2>/dev/null && san=1
make --no-print-directory -s install BUILD="$BUILD" SAN=$san DESTDIR="$ROOT" PREFIX=/usr/local \
	>"$T/make.log" 2>&1 || { tail "$T/make.log"; fail "make install into the root failed"; }
# Short windows for the test; the rest stays the shipped default.
sed -i 's/^window = .*/window = 1s/' "$ROOT/etc/hearth/hearthd.conf"
# ASan (in the test build) must not stop hearthd for leaks at exit.
mkdir -p "$ROOT/etc/systemd/system/hearthd.service.d"
printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' > "$ROOT/etc/systemd/system/hearthd.service.d/asan.conf"
nspawn_boot
inside getent group hearth >/dev/null || fail "sysusers did not create the hearth group at boot"

inside systemctl start hearthd || fail "systemctl start hearthd failed"
[ "$(inside systemctl show -p ActiveState --value hearthd)" = active ] || fail "hearthd is not active after start"
inside test -S /run/hearth/control.sock || fail "active before the socket existed (READY came too early)"
status=$(inside systemctl show -p StatusText --value hearthd)
echo "status line: $status"
echo "$status" | grep -q "windows stored" || fail "no STATUS= line from sd_notify"
inside journalctl -u hearthd --no-pager | grep -q "hearthd: sampling;" || fail "no start line in the journal"

MAIN=$(inside systemctl show -p MainPID --value hearthd)
eff=$(inside awk '/^CapEff/ { print $2 }' /proc/$MAIN/status)
bnd=$(inside awk '/^CapBnd/ { print $2 }' /proc/$MAIN/status)
want=$(printf '%016x' $(( (1 << 2) | (1 << 19) | (1 << 34) | (1 << 38) | (1 << 39) )))
echo "CapEff $eff CapBnd $bnd (want $want)"
[ "$eff" = "$want" ] && [ "$bnd" = "$want" ] || fail "the capability set is not the unit's"
inside grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$MAIN/status || fail "NoNewPrivileges is not set"
inside grep -q '^Seccomp:[[:space:]]*2' /proc/$MAIN/status || fail "no seccomp filter"
inside nsenter -t "$MAIN" -m -- sh -c 'touch /usr/hearth-probe' 2>&1 | grep -q "Read-only file system" ||
	fail "hearthd's /usr is not read-only (ProtectSystem=strict)"
sleep 3
st=$(inside /usr/local/bin/hearth status) || fail "hearth status failed as root"
echo "$st"
w=$(echo "$st" | awk '/^windows stored:/ { print $3 }')
s=$(echo "$st" | awk '/^samples:/ { print $2 }')
[ "$w" -ge 2 ] && [ "$s" -gt 0 ] || fail "no sampling under the unit's hardening ($w windows, $s samples)"

inside useradd -m -G hearth alice || fail "useradd alice"
inside useradd -m bob || fail "useradd bob"
inside runuser -u alice -- /usr/local/bin/hearth status >/dev/null || fail "a member of hearth was refused"
out=$(inside runuser -u bob -- /usr/local/bin/hearth status 2>&1) && fail "bob (not in hearth) got a status"
echo "bob: $out"

before=$(inside /usr/local/sbin/hearthd --verify-store /var/lib/hearth | grep -c '^window ')
inside systemctl kill -s KILL hearthd
i=0
until [ "$(inside systemctl show -p MainPID --value hearthd)" != "$MAIN" ] &&
	[ "$(inside systemctl show -p ActiveState --value hearthd)" = active ]; do
	i=$((i + 1)); [ $i -gt 150 ] && fail "hearthd was not restarted after SIGKILL"
	sleep 0.2
done
inside /usr/local/sbin/hearthd --verify-store /var/lib/hearth > "$T/verify" || fail "the store does not verify after SIGKILL"
after=$(grep -c '^window ' "$T/verify")
echo "after SIGKILL: restarted, $(tail -1 "$T/verify")"
[ "$after" -ge "$before" ] || fail "windows were lost ($before -> $after)"

n0=$(inside systemctl show -p NRestarts --value hearthd)
mkdir -p "$ROOT/etc/systemd/system/hearthd.service.d"
printf '[Service]\nEnvironment=HEARTHD_TEST_HANG_AFTER=3\nWatchdogSec=4s\n' \
	> "$ROOT/etc/systemd/system/hearthd.service.d/hang.conf"
inside systemctl daemon-reload
inside systemctl restart hearthd || fail "restart with the fault switch failed"
i=0
until inside journalctl -u hearthd --no-pager | grep -q "Watchdog timeout"; do
	i=$((i + 1)); [ $i -gt 150 ] && fail "the watchdog did not fire on a hung main loop"
	sleep 0.2
done
i=0
until [ "$(inside systemctl show -p NRestarts --value hearthd)" -gt "$n0" ]; do
	i=$((i + 1)); [ $i -gt 150 ] && fail "hearthd was not restarted after the watchdog"
	sleep 0.2
done
inside journalctl -u hearthd --no-pager | grep -E "Watchdog timeout|test fault" | tail -2
rm "$ROOT/etc/systemd/system/hearthd.service.d/hang.conf"
inside systemctl daemon-reload
inside systemctl stop hearthd
echo ok
