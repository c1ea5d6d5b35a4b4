#!/bin/sh
# The cost of a cold debuginfod fetch: the real elfutils debuginfod on
# 127.0.0.1 (in a private network namespace, as the test runs it) serves
# two debug files, the stripped fixture's (11 KB) and libc's (from
# libc6-dbg, 4 MB). For each: hearth's fetcher from request to READY
# (bench/debuginfod_fetch) with an empty cache (cold) and again with it
# filled (warm), beside elfutils' own client (debuginfod-find); then what
# it adds to `hearth record -d 0.5` of the stripped fixture, whose end
# waits for the file. Medians of RUNS. Prints a Markdown section.
#
#   BUILD=build sh bench/debuginfod_cost.sh   (after: make all fixtures build/bench/debuginfod_fetch)
set -eu
[ "$(id -u)" = 0 ] || { echo "debuginfod_cost: run as root (BPF, a network namespace)" >&2; exit 1; }
[ -n "${HEARTH_BENCH_NETNS:-}" ] || exec unshare --net env HEARTH_BENCH_NETNS=1 sh "$0"
BUILD=${BUILD:-build}
RUNS=${RUNS:-7}
B=$BUILD/bench/debuginfod_fetch
FIX=$BUILD/fixtures
HEARTH=${HEARTH:-$BUILD/hearth}
[ -x "$B" ] || { echo "debuginfod_cost: build it first: make BUILD=$BUILD $B" >&2; exit 1; }
[ -x "$FIX/sym_dbgd" ] || { echo "debuginfod_cost: build the fixtures first: make BUILD=$BUILD fixtures" >&2; exit 1; }
ip link set lo up
T=$(mktemp -d /tmp/hearth-dbgdbench.XXXXXX)
SRV=
FX=
trap '[ -n "$SRV" ] && kill $SRV; [ -n "$FX" ] && kill $FX; rm -rf "$T"' EXIT
. bench/lib.sh

build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -1; }
FIXID=$(build_id "$FIX/sym_dbgd")
LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
LIBCID=$(build_id "$LIBC")
LIBCDBG=/usr/lib/debug/.build-id/$(echo "$LIBCID" | cut -c1-2)/$(echo "$LIBCID" | cut -c3-).debug
[ -r "$LIBCDBG" ] || { echo "debuginfod_cost: libc's debug file is missing (Debian package libc6-dbg)" >&2; exit 1; }
mkdir "$T/srv"
cp "$FIX/dbgd-served/sym_dbgd.debug" "$T/srv/"
cp "$LIBCDBG" "$T/srv/libc.debug"
debuginfod -F -p 8002 -d "$T/db.sqlite" -t 0 -g 0 "$T/srv" >"$T/server.log" 2>&1 &
SRV=$!
export DEBUGINFOD_URLS=http://127.0.0.1:8002
for id in $FIXID $LIBCID; do
	i=0
	until [ "$(curl -s -o /dev/null -w '%{http_code}' "$DEBUGINFOD_URLS/buildid/$id/debuginfo")" = 200 ]; do
		i=$((i + 1)); [ $i -gt 300 ] && { echo "debuginfod_cost: the server does not serve $id" >&2; exit 1; }
		sleep 0.1
	done
done
ms_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'; }

row() { # NAME ID
	: >"$T/hc"; : >"$T/hw"; : >"$T/ec"; : >"$T/ew"
	for r in $(seq "$RUNS"); do
		rm -rf "$T/cache"
		DEBUGINFOD_CACHE_PATH=$T/cache "$B" "$2" | cut -d' ' -f1 >>"$T/hc"
		DEBUGINFOD_CACHE_PATH=$T/cache "$B" "$2" | cut -d' ' -f1 >>"$T/hw"
		rm -rf "$T/cache"
		t0=$(date +%s%N)
		DEBUGINFOD_CACHE_PATH=$T/cache debuginfod-find debuginfo "$2" >/dev/null
		ms_since "$t0" >>"$T/ec"
		t0=$(date +%s%N)
		DEBUGINFOD_CACHE_PATH=$T/cache debuginfod-find debuginfo "$2" >/dev/null
		ms_since "$t0" >>"$T/ew"
	done
	size=$(stat -c %s "$T/srv/$3")
	echo "| $1 ($(awk -v s="$size" 'BEGIN { if (s > 1048576) printf "%.1f MiB", s / 1048576; else printf "%.0f KiB", s / 1024 }')) | $(median "$T/hc") | $(median "$T/hw") | $(median "$T/ec") | $(median "$T/ew") |"
}

echo "## debuginfod: the cost of a cold fetch"
echo
echo "    BUILD=$BUILD RUNS=$RUNS sh bench/debuginfod_cost.sh"
echo
echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M') UTC, load average $(cut -d' ' -f1 /proc/loadavg)."
echo
echo "| debug file | hearth fetcher cold ms | warm ms | debuginfod-find cold ms | warm ms |"
echo "|---|---|---|---|---|"
row "sym_dbgd fixture" "$FIXID" sym_dbgd.debug
row "libc.so.6" "$LIBCID" libc.debug

# End to end: record of the stripped fixture, its file fetched at the end
"$FIX/sym_dbgd" spin 600 &
FX=$!
: >"$T/rc"; : >"$T/rw"; : >"$T/tc"; : >"$T/tw"
for r in $(seq "$RUNS"); do
	rm -rf "$T/cache"
	for k in c w; do
		t0=$(date +%s%N)
		DEBUGINFOD_CACHE_PATH=$T/cache "$HEARTH" record -d 0.5 -p $FX --no-kernel -o /dev/null 2>"$T/err"
		ms_since "$t0" >>"$T/t$k"
		sed -n 's/^hearth: debuginfod: .*waited \([0-9.]*\) s at the end$/\1/p' "$T/err" |
			awk '{ printf "%.0f\n", $1 * 1000 }' >>"$T/r$k"
	done
done
echo
echo "| hearth record -d 0.5 -p (sym_dbgd) | wall ms | end waited ms |"
echo "|---|---|---|"
echo "| cold cache | $(median "$T/tc") | $(median "$T/rc") |"
echo "| warm cache | $(median "$T/tw") | $(median "$T/rw") |"
