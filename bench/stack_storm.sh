#!/bin/sh
# What stack_map_size costs and saves: hearthd (shipped configuration,
# 10 s windows) for SECS seconds (default 32: three windows) at each size
# of SIZES (default 4096 16384 65536), on the host as it is, then with a
# stack storm beside it (tests/fixtures/stack_storm: 16 threads waiting
# 1.2 ms at the end of a new random path each time, one spinning the same
# way). Prints one Markdown row per run: the share of on-CPU samples and
# of off-CPU time kept as [lost: stack map full] in the last 30 s, the
# drops by cause since start, hearthd's RSS and CPU, and the kernel
# memory the maps take (bpftool: the preallocated stack, aggregation and
# signature maps, then the most the walked-stack maps took, looked at
# every 2 s: they grow as they fill, about 1 KiB a stack).
# Run as root:
#   make BUILD=build all fixtures
#   BUILD=build sh bench/stack_storm.sh
set -eu
BUILD=${BUILD:-build}
SECS=${SECS:-32}
SIZES=${SIZES:-8192 16384 65536}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
HEARTHD=${HEARTHD:-$PWD/$BUILD/hearthd}
FIX=${FIXTURES:-$PWD/$BUILD/fixtures}
T=$(mktemp -d /tmp/hearth-storm.XXXXXX)
HD= W1= W2=
cleanup() {
	for p in $HD $W1 $W2; do kill "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
S="--socket $T/ctl.sock"
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/st.json" "$1"; }
# lost_share FILE: percent of the profile's total under a lost frame.
lost_share() {
	grep -v '^#' "$1" | awk '{ t += $NF; if ($0 ~ /;\[lost: stack map full\] [0-9]+$/) l += $NF }
		END { if (t) printf "%.1f%%", 100 * l / t; else print "n/a" }'
}
# Kernel memory of the maps of hearthd PID (bpftool's memlock of the maps
# its descriptors hold, as their fdinfo names them, not another
# sampler's): bytes of the preallocated stack, aggregation and signature
# maps, then of the walked-stack maps.
kmem() {
	ids=$(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "map_id:" { print $2 }' | sort -u | tr '\n' ' ')
	bpftool map list -j | python3 -c 'import json, sys
ids = set(int(i) for i in sys.argv[1].split())
pre = ("stacks0", "stacks1", "counts0", "counts1", "sig_counts0", "sig_counts1")
p = w = 0
for m in json.load(sys.stdin):
    if m["id"] not in ids:
        continue
    if m.get("name") in pre:
        p += m["bytes_memlock"]
    elif m.get("name") in ("walked0", "walked1"):
        w += m["bytes_memlock"]
print(p, w)' "$ids"
}

run() { # SIZE STORM(0/1)
	rm -rf "$T/state"
	"$HEARTHD" --state-dir "$T/state" $S --stack-map-size "$1" 2>"$T/log" &
	HD=$!
	i=0
	until "$HEARTH" status $S >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 150 ] && { cat "$T/log" >&2; exit 1; }
		sleep 0.2
	done
	if [ "$2" = 1 ]; then
		"$FIX/stack_storm" sleep 16 $((SECS + 5)) >/dev/null & W1=$!
		"$FIX/stack_storm" cpu 1 $((SECS + 5)) >/dev/null & W2=$!
	fi
	t=0 pre=0 walked=0
	while [ $t -lt "$SECS" ]; do
		sleep 2; t=$((t + 2))
		set -- "$1" "$2" $(kmem "$HD")
		pre=${3:-0}
		if [ "${4:-0}" -gt "$walked" ]; then walked=$4; fi
	done
	"$HEARTH" status $S --json >"$T/st.json"
	"$HEARTH" snapshot $S --last 30s -o "$T/on.folded" 2>/dev/null
	"$HEARTH" snapshot $S --last 30s --off-cpu -o "$T/off.folded" 2>/dev/null
	kill "$HD"; wait "$HD" || true; HD=
	[ -n "$W1" ] && { kill "$W1" "$W2" 2>/dev/null || true; wait "$W1" "$W2" 2>/dev/null || true; W1= W2=; }
	printf '| %s | %s | %s | %s | %s / %s / %s / %s | %.0f MiB | %s%% | %s |\n' \
		"$1" "$([ "$2" = 1 ] && echo "host + storm" || echo host), $(cut -d' ' -f1 /proc/loadavg)" \
		"$(lost_share "$T/on.folded")" "$(lost_share "$T/off.folded")" \
		"$(field drops_stack_collisions)" "$(field drops_stack_map_full)" \
		"$(field drops_aggregation_map_full)" "$(field drops_copy_budget)" \
		"$(awk -v b="$(field rss_bytes)" 'BEGIN { print b / 1048576 }')" \
		"$(field cpu_percent)" "$(awk -v p="$pre" -v w="$walked" 'BEGIN { printf "%.0f + %.0f MiB", p / 1048576, w / 1048576 }')"
}

echo "hearthd, 10 s windows, ${SECS} s a run, load average $(cut -d' ' -f1 /proc/loadavg) at the start"
echo
echo "| stack_map_size | load, load average | on-CPU lost | off-CPU lost | collisions / full / aggregation / copy budget | RSS | CPU (last window) | kernel maps: preallocated + walked (most) |"
echo "|---|---|---|---|---|---|---|---|"
for size in $SIZES; do
	run "$size" 0
	run "$size" 1
done
