#!/bin/sh
# What reading Python frames costs the sampler: BPF ns per on-CPU sample
# of a CPython 3.11 process (whose frames are read at each sample) against
# a native process's, in one run, with the same unwinding (auto) and the
# same rate. Also how many samples carried Python frames.
# Run as root: make BUILD=build all fixtures; BUILD=build sh bench/python_cost.sh
# Environment: SECS (default 5 each).
set -u
SECS=${SECS:-5}
BUILD=${BUILD:-build}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
FIX=${FIXTURES:-$PWD/$BUILD/fixtures}
PY=/usr/bin/python3.11
T=$(mktemp -d /tmp/hearth-bench.XXXXXX)
W=
trap '[ -n "$W" ] && kill $W 2>/dev/null; rm -rf "$T"; sysctl -q kernel.bpf_stats_enabled=0' EXIT
[ "$(id -u)" = 0 ] || { echo "python_cost: needs root"; exit 1; }
[ -x "$PY" ] || { echo "python_cost: $PY is missing"; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1
. bench/lib.sh

# row LABEL COMMAND...: records the started workload for SECS at 999 Hz.
row() {
	label=$1; shift
	"$@" > "$T/ready" 2>/dev/null &
	W=$!
	sleep 1
	prog_ids > "$T/ids.before"
	"$HEARTH" record -d "$SECS" -F 999 -p "$W" -o "$T/p.folded" 2> "$T/err" &
	R=$!
	sleep "$((SECS - 1))"
	ns=$(bpf_ns '^on_cpu$')
	wait "$R"
	kill "$W"; wait "$W" 2>/dev/null; W=
	all=$(awk '{ t += $NF } END { print t + 0 }' "$T/p.folded")
	py=$(awk '/;<module>(;| )/ { t += $NF } END { print t + 0 }' "$T/p.folded")
	printf '| %s | %s | %s | %s |\n' "$label" "$ns" "$all" "$py"
}

echo "| workload | BPF ns per on-CPU sample | samples | with Python frames |"
echo "|---|---|---|---|"
row "native (record_work spin)" "$FIX/record_work" spin 60
row "CPython 3.11, 4 Python frames deep" "$PY" tests/fixtures/python/split.py
