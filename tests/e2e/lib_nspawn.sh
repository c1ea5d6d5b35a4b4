# A booted Debian 12 container for the tests that need systemd for real
# (sourced, not run). Sets T (a scratch folder), fail() (which shows
# hearthd's journal in the container) and a cleanup that stops the
# container and removes T.
#
# nspawn_root PKGS: a minimal Debian 12 root (debootstrap minbase with
#   systemd and the comma-separated Debian packages PKGS, cached between
#   runs on this machine in $HEARTH_NSPAWN_CACHE, rebuilt when missing),
#   copied to ROOT=$T/root.
# nspawn_boot: boots ROOT in systemd-nspawn (BPF and perf_event_open let
#   through its system call filter) and waits until its systemd is up;
#   PID is the container's systemd.
# inside CMD...: runs CMD in the container.
# nspawn_pkgs BINARY...: the Debian packages holding the libraries the
#   binaries link, comma-separated.
NSPAWN_CACHE=${HEARTH_NSPAWN_CACHE:-/var/cache/hearth-nspawn}
NSPAWN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
set -u
T=$(mktemp -d /tmp/hearth-nspawn.XXXXXX)
NS= PID= ROOT=$T/root
fail() {
	echo "FAIL: $*"
	[ -n "$NS" ] && inside journalctl -u hearthd --no-pager 2>/dev/null | tail -20 | sed 's/^/  journal| /'
	exit 1
}
ok() { echo "ok: $*"; }
nspawn_cleanup() {
	nspawn_stop
	rm -rf "$T"
}
trap nspawn_cleanup EXIT

for tool in debootstrap systemd-nspawn nsenter; do
	command -v $tool >/dev/null || fail "$tool is missing (packages debootstrap, systemd-container, util-linux)"
done

nspawn_pkgs() {
	for b in "$@"; do ldd "$b" | awk '/=>/ { print $3 }'; done | sort -u |
		while read -r l; do dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "$l"; done |
		cut -d: -f1 | sort -u | paste -sd, -
}

nspawn_root() {
	np_include="systemd,systemd-sysv,dbus,$1"
	np_key=$(echo "$np_include" | md5sum | cut -c1-12)
	np_base=$NSPAWN_CACHE/bookworm-$np_key
	if [ ! -f "$np_base/.complete" ]; then
		echo "building the Debian 12 root in $np_base (cached for later runs)"
		rm -rf "$np_base"
		mkdir -p "$NSPAWN_CACHE"
		debootstrap --variant=minbase --include="$np_include" bookworm "$np_base" "$NSPAWN_MIRROR" \
			> "$T/debootstrap.log" 2>&1 || { tail -15 "$T/debootstrap.log"; fail "debootstrap failed"; }
		touch "$np_base/.complete"
	fi
	cp -a "$np_base" "$ROOT" || fail "cannot copy the cached root"
	echo hearthtest > "$ROOT/etc/hostname"
}

inside() { nsenter -t "$PID" -m -p -u -i -- "$@"; }

nspawn_boot() {
	systemd-nspawn --boot --register=no --keep-unit --capability=all \
		--system-call-filter='bpf perf_event_open' -D "$ROOT" > "$T/console.log" 2>&1 &
	NS=$!
	# The container's systemd: the child of nspawn whose comm is systemd.
	np_i=0
	while [ -z "$PID" ]; do
		np_i=$((np_i + 1)); [ $np_i -gt 300 ] && { tail "$T/console.log"; fail "the container did not start"; }
		for np_p in $(pgrep -P "$NS"); do
			[ "$(cat /proc/$np_p/comm 2>/dev/null)" = systemd ] && PID=$np_p
		done
		sleep 0.1
	done
	np_i=0
	until inside systemctl is-system-running 2>/dev/null | grep -Eq 'running|degraded'; do
		np_i=$((np_i + 1)); [ $np_i -gt 600 ] && fail "the container's systemd did not finish booting"
		sleep 0.2
	done
}

# nspawn_stop: powers the container off (SIGTERM to nspawn, then SIGKILL).
nspawn_stop() {
	[ -n "$NS" ] || return 0
	kill -TERM "$NS" 2>/dev/null
	np_i=0; while kill -0 "$NS" 2>/dev/null && [ $np_i -lt 100 ]; do sleep 0.2; np_i=$((np_i + 1)); done
	kill -KILL "$NS" 2>/dev/null
	NS=
}

# wait_active UNIT: waits (30 s at most) until UNIT is active in the container.
wait_active() {
	np_i=0
	until [ "$(inside systemctl show -p ActiveState --value "$1")" = active ]; do
		np_i=$((np_i + 1)); [ $np_i -gt 150 ] && fail "$1 is not active"
		sleep 0.2
	done
}
