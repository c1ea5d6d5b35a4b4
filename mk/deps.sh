#!/bin/sh
# Installs the Debian packages named on the command line that are missing.
# As root: runs 'apt-get update' once (per boot of this machine), then
# installs. Otherwise: prints the exact command and fails.
missing=
for p in "$@"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "hearth: missing Debian packages:$missing" >&2
	echo "hearth: install them with: sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
stamp=/run/hearth-apt-updated
[ -d /run ] || stamp=/tmp/hearth-apt-updated
if [ ! -f "$stamp" ]; then
	echo "  DEPS     apt-get update"
	DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || {
		echo "hearth: apt-get update failed" >&2; exit 1; }
	touch "$stamp"
fi
echo "  DEPS     apt-get install$missing"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/tmp/hearth-apt.log 2>&1 || {
	echo "hearth: apt-get install failed for:$missing (log: /tmp/hearth-apt.log)" >&2
	tail -5 /tmp/hearth-apt.log >&2
	exit 1; }
