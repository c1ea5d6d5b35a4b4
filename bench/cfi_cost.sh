#!/bin/sh
# The cost of compiling a module's CFI into the rows the in-kernel
# unwinder reads (symbolize/cfi_compile.c), cold and from the cache
# (symbolize/cfi_cache.c): in memory, and from its folder after a restart.
# Prints a Markdown section for bench/RESULTS.md.
#
#   make BUILD=build build/bench/cfi_cost && BUILD=build sh bench/cfi_cost.sh
#
# Environment: BUILD (default build), RUNS (default 9, medians shown),
# FILES (default libc, libstdc++, python3.11, perl, sqlite3, xz: those
# present). With valgrind installed, the instructions of one compile too.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-9}
B=$BUILD/bench/cfi_cost
[ -x "$B" ] || { echo "cfi_cost: build it first: make BUILD=$BUILD $B" >&2; exit 1; }
L=/lib/x86_64-linux-gnu
FILES=${FILES:-"$L/libc.so.6 $L/libstdc++.so.6 /usr/bin/python3.11 /usr/bin/perl /usr/bin/sqlite3 /usr/bin/xz"}
T=$(mktemp -d /tmp/hearth-cfibench.XXXXXX)
trap 'rm -rf "$T"' EXIT

present=
for f in $FILES; do
	[ -r "$f" ] && present="$present $(readlink -f "$f")"
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck disable=SC2086
"$B" "$RUNS" $present >"$T/out"

echo "## CFI compile: rows for the in-kernel unwinder, cold and cached"
echo
echo "    BUILD=$BUILD RUNS=$RUNS sh bench/cfi_cost.sh"
echo
echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +'%F %H:%M') UTC,"
echo "load average $load. Medians of $RUNS. Cold: sym_cfi_compile on the file"
echo "(wall and CPU). Memory hit: sym_cfi_cache_get again (fstat and a"
echo "compare). Disk hit: a new cache reading the file a previous one wrote"
echo "(build-id, read, CRC and checks)."
echo
echo "| module | CFI bytes | rows | table | cold wall | cold CPU | instructions | memory hit | disk hit |"
echo "|---|---|---|---|---|---|---|---|---|"
while read -r _ path _ rows _ tbytes _ cbytes _ wall _ cpu _ hit _ disk _ fbytes; do
	ir=
	if command -v valgrind >/dev/null; then
		valgrind --tool=callgrind --toggle-collect=sym_cfi_compile \
			--callgrind-out-file="$T/cg" "$B" once "$path" </dev/null >/dev/null 2>"$T/vg" || true
		ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg" | awk '{ printf "%.1f M", $1 / 1e6 }')
	fi
	awk -v p="$(basename "$path")" -v r="$rows" -v t="$tbytes" -v c="$cbytes" \
		-v w="$wall" -v u="$cpu" -v i="${ir:-n/a}" -v h="$hit" -v d="$disk" 'BEGIN {
		printf "| %s | %.0f KiB | %d | %.0f KiB | %.1f ms | %.1f ms | %s | %.2f µs | %.2f ms |\n",
			p, c / 1024, r, t / 1024, w, u, i, h, d }'
done <"$T/out"
