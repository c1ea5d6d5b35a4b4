#!/bin/sh
# Symbolization benchmark: hearth's symbolizer against eu-addr2line and
# binutils addr2line, given the same addresses in batch, on libc (with its
# separate debug file when installed), libstdc++ and a C++ fixture; then
# the cold first symbolization of a live process linking libc and
# libstdc++. Prints a Markdown section for bench/RESULTS.md.
#
#   BUILD=build sh bench/sym_bench.sh      (after: make all fixtures)
#
# Environment: BUILD (default build), N addresses per binary (default
# 20000), RUNS for the process measurement (default 7, median shown).
set -eu
BUILD=${BUILD:-build}
N=${N:-20000}
RUNS=${RUNS:-7}
B=$BUILD/bench/sym_bench
FIX=$BUILD/fixtures
[ -x "$B" ] || { echo "sym_bench: build it first: make BUILD=$BUILD $B" >&2; exit 1; }
[ -x "$FIX/sym_cpp" ] || { echo "sym_bench: build the fixtures first: make BUILD=$BUILD fixtures" >&2; exit 1; }
for t in eu-addr2line addr2line; do
	command -v $t >/dev/null || { echo "sym_bench: $t is missing" >&2; exit 1; }
done
lib() { ldd "$FIX/sym_cpp" | awk -v n="$1" 'index($1, n) == 1 { print $3 }'; }
LIBC=$(readlink -f "$(lib libc.so)")
LIBSTDCXX=$(readlink -f "$(lib libstdc++.so)")
FIXBIN=$(readlink -f "$FIX/sym_cpp")
out=$(mktemp -d /tmp/hearth-symbench.XXXXXX)
trap 'rm -rf "$out"' EXIT

now() { date +%s.%N; }
# rate_of CMD BIN FILE: seconds for CMD -f -i -e BIN < FILE
secs() {
	t0=$(now)
	"$1" -f -i -e "$2" <"$3" >/dev/null 2>&1 || true
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }'
}

"$B" files "$out" "$N" "$LIBC" "$LIBSTDCXX" "$FIXBIN" >"$out/ours"
echo "## Symbolization (symbolize/)"
echo
echo "Command: \`BUILD=$BUILD N=$N sh bench/sym_bench.sh\` on $(nproc) CPUs, $(uname -r),"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (wall times include waiting for a CPU)."
echo "$N random addresses in each binary's executable segment, the same list"
echo "for every tool (function names, inline chains and file:line: \`-f -i\`)."
echo "Cold: a fresh process/context symbolizing the list once (loading"
echo "included). Warm: hearth's context asked again (its per-address cache);"
echo "for eu-addr2line and addr2line, which keep nothing between runs, the"
echo "steady rate inside one run: N / (t(2N) - t(N))."
echo
echo "| binary | hearth cold addr/s | hearth warm addr/s | eu-addr2line cold addr/s | eu-addr2line steady addr/s | addr2line cold addr/s | addr2line steady addr/s | hearth memory for the module |"
echo "|---|---|---|---|---|---|---|---|"
i=0
prev=0
for bin in "$LIBC" "$LIBSTDCXX" "$FIXBIN"; do
	cat "$out/$i.addrs" "$out/$i.addrs" >"$out/$i.addrs2"
	line=$(awk -v i=$i '$1 == "file" && $2 == i' "$out/ours")
	cold=$(echo "$line" | awk '{ print $5 }')
	warm=$(echo "$line" | awk '{ print $7 }')
	mem=$(echo "$line" | awk -v p="$prev" '{ printf "%.1f MiB", ($11 - p) / 1048576 }')
	prev=$(echo "$line" | awk '{ print $11 }')
	eu1=$(secs eu-addr2line "$bin" "$out/$i.addrs")
	eu2=$(secs eu-addr2line "$bin" "$out/$i.addrs2")
	b1=$(secs addr2line "$bin" "$out/$i.addrs")
	b2=$(secs addr2line "$bin" "$out/$i.addrs2")
	awk -v b="$(basename "$bin")" -v n="$N" -v c="$cold" -v w="$warm" \
		-v e1="$eu1" -v e2="$eu2" -v b1="$b1" -v b2="$b2" -v m="$mem" 'BEGIN {
		es = (e2 > e1) ? n / (e2 - e1) : 0
		bs = (b2 > b1) ? n / (b2 - b1) : 0
		printf "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %s |\n",
			b, c, w, n / e1, es, n / b1, bs, m }'
	i=$((i + 1))
done
mods=$(awk '$1 == "modules" { print $2, $4, $6 }' "$out/ours")
echo
echo "Memory per cached module (symbols, line/function indexes, DWARF"
echo "sections as libdw holds them, resolved addresses), 3 modules:"
echo "$mods" | awk '{ printf "%.1f MiB in all, %.1f MiB per module on average.\n", $2 / 1048576, $3 / 1048576 }'
echo
echo "Cold first symbolization of a live process (fixture sym_cpp: libc,"
echo "libstdc++, libm, libgcc_s, ld.so), from a fresh context: read its"
echo "maps, open every module, resolve the addresses; median of $RUNS runs."
echo "Then warm: the same addresses again through sym_user()."
echo
echo "| addresses | cold ms wall (median) | cold ms wall (min) | cold ms CPU (median) | warm addr/s | modules | memory |"
echo "|---|---|---|---|---|---|---|"
for n in 100 2000; do
	: >"$out/proc"
	r=0
	while [ $r -lt "$RUNS" ]; do
		"$B" proc "$FIX/sym_cpp" $n >>"$out/proc"
		r=$((r + 1))
	done
	cpu=$(sort -t' ' -k15 -n "$out/proc" | awk -v runs="$RUNS" 'NR == int((runs + 1) / 2) { print $15 }')
	sort -t' ' -k7 -n "$out/proc" | awk -v runs="$RUNS" -v n=$n -v cpu="$cpu" '
		{ ms[NR] = $7; w[NR] = $9; m = $11; b = $13 }
		END { printf "| %d | %.1f | %.1f | %.1f | %.0f | %d | %.1f MiB |\n", n,
			ms[int((runs + 1) / 2)], ms[1], cpu,
			w[int((runs + 1) / 2)], m, b / 1048576 }'
done
echo
echo "Whole host from a fresh context (what hearthd does when it starts):"
echo "every process's maps and 50 addresses spread over its executable"
echo "mappings (random addresses also land in padding and PLT stubs, which"
echo "count as misses)."
echo
"$B" host 50 | awk '{ printf "%d processes, %d addresses: %.0f ms wall, %.0f ms CPU; %d modules cached, %.1f MiB; %d misses.\n", $3, $5, $7, $9, $11, $13 / 1048576, $15 }'
