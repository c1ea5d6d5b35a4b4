#!/bin/sh
# Whole stacks without frame pointers, and what they cost: hearth
# --unwind dwarf / auto / fp against perf record --call-graph dwarf and
# perf record -g, on the same -O2 -fomit-frame-pointer fixture.
#
# On-CPU: unwind_nofp spin (main -> level1..level5 -> leaf burning CPU).
# Off-CPU: unwind_nofp pingpong (two threads bouncing a byte over pipes,
# every wait a read() under leaf(): tens of thousands of switches a second).
#
# Prints per profiler: completeness (share of the fixture's samples whose
# stack reaches main through the whole chain), the profiler's user+sys CPU
# seconds (perf: record + script, since its stacks only exist after
# script), hearth's BPF ns per program run and user-space us per unwind,
# and (runs of 8 s and more) hearth's steady CPU in ms per second after
# start-up; with a row on a sleeping target, the CPU per copied sample.
# Environment: SECS (default 5 on-CPU), OFF_SECS (default 2 off-CPU),
# ROWS (a regular expression: only the rows whose label matches, e.g.
# ROWS='dwarf' for the two DWARF unwinders).
set -u
SECS=${SECS:-5}
N="$FIXTURES/unwind_nofp"
T=$(mktemp -d /tmp/hearth-bench.XXXXXX)
trap 'rm -rf "$T"; sysctl -q kernel.bpf_stats_enabled=0' EXIT
[ "$(id -u)" = 0 ] || { echo "unwind_cost: needs root"; exit 1; }
command -v perf >/dev/null || { echo "unwind_cost: perf is missing (make deps-bench)"; exit 1; }
[ -x "$N" ] || { echo "unwind_cost: build the fixtures first"; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1
. bench/lib.sh
# perf needs tracefs for sched:sched_switch.
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

# Whole: the chain, under main (main thread) or ponger (second thread).
chain='level1;level2;level3;level4;level5;leaf'

# complete FOLDED LEAF_RE: percentage of the value through LEAF_RE whose
# stack has the whole chain from main or the thread's start function.
complete() {
	awk -v leaf="$2" -v c1=";main;$chain" -v c2=";ponger;$chain" '
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ leaf) { all += n; if (index(s, c1) || index(s, c2)) whole += n } }
	END { if (all) printf "%.1f%% of %.0f", 100 * whole / all, all; else print "n/a" }' "$1"
}



# run_hearth LABEL WORKLOAD ARGS...: hearth record on a fresh workload.
# wanted LABEL: whether ROWS selects this row.
wanted() { echo "$1" | grep -Eq "${ROWS:-.}"; }

run_hearth() {
	label=$1; work=$2; shift 2
	wanted "$label" || return 0
	# sleep N sleeps N x 200 ms; the other workloads run N seconds.
	cnt=$((SECS + 2)); [ "$work" = sleep ] && cnt=$((5 * SECS + 15))
	"$N" $work "$cnt" >/dev/null &
	wpid=$!
	sleep 0.2
	prog_ids >"$T/ids.before"
	/usr/bin/time -f '%U %S' -o "$T/cpu" "$HEARTH" record -d "$SECS" -p "$wpid" "$@" -o "$T/h.folded" 2>"$T/h.err" &
	tpid=$!
	sleep 0.5
	hpid=$(pgrep -P "$tpid" | head -1)
	# Steady state: hearth's CPU between 3 s and SECS-1 s, after start-up
	# (program load, first symbolization); runs of 8 s and more.
	steady=-
	if [ "$SECS" -ge 8 ] && [ -n "$hpid" ]; then
		sleep 2.5
		c0=$(cut -d' ' -f1 "/proc/$hpid/schedstat")
		sleep "$((SECS - 4))"
		c1=$(cut -d' ' -f1 "/proc/$hpid/schedstat")
		steady=$(awk -v a="$c0" -v b="$c1" -v s="$((SECS - 4))" 'BEGIN { printf "%.3f", (b - a) / s / 1e6 }')
	else
		sleep "$((SECS - 1))"
	fi
	prog=on_cpu; case "$*" in *off-cpu*) prog=off_cpu ;; esac
	b=$(bpf_ns "^$prog\$")
	wait $tpid
	kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
	us=$(sed -n 's/.*(\([0-9.]*%\) to the outermost frame, \([0-9.]*\) us each), \([0-9]*\) waits reused.*/\2/p' "$T/h.err")
	n=$(sed -n 's/^hearth: \([0-9]*\) on-CPU samples.*/\1/p' "$T/h.err")
	printf '%-40s %-22s %8s %10s %10s %10s\n' "$label" "$(complete "$T/h.folded" ';leaf(;|$)')" "$(cpu_of "$T/cpu")" "$b" "${us:-n/a}" "$steady"
	# For the per-sample figure below: steady ms/s and samples.
	case "$*" in *"--unwind dwarf"*) echo "$steady ${n:-0}" >"$T/steady.$work" ;; esac
}

# run_perf LABEL WORKLOAD PERF-ARGS...
run_perf() {
	label=$1; work=$2; shift 2
	wanted "$label" || return 0
	"$N" $work "$((SECS + 2))" >/dev/null &
	wpid=$!
	sleep 0.2
	/usr/bin/time -f '%U %S' -o "$T/cpu" perf record -q "$@" -p "$wpid" -o "$T/perf.data" -- sleep "$SECS" >/dev/null 2>&1
	kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
	/usr/bin/time -f '%U %S' -o "$T/cpu2" perf script -i "$T/perf.data" 2>/dev/null | perf_fold >"$T/p.folded"
	c=$(awk -v a="$(cpu_of "$T/cpu")" -v b="$(cpu_of "$T/cpu2")" 'BEGIN { printf "%.2f", a + b }')
	printf '%-40s %-22s %8s %10s %10s %10s\n' "$label" "$(complete "$T/p.folded" ';leaf(;|$)')" "$c" "-" "-" "-"
}

# per_sample: hearth's CPU per copied sample in the steady state, from the
# spinning row minus the sleeping row (the poll loop's own cost).
per_sample() {
	[ -r "$T/steady.spin" ] && [ -r "$T/steady.sleep" ] || return 0
	awk -v secs="$SECS" 'FILENAME ~ /spin$/ { s = $1; n = $2 } FILENAME ~ /sleep$/ { i = $1 }
		END { if (s != "-" && i != "-" && n > 0) printf "hearth per copied sample (steady, spinning minus sleeping target): %.1f us; idle floor %.3f ms/s\n", (s - i) * 1000 / (n / secs), i }' \
		"$T/steady.spin" "$T/steady.sleep"
}

printf 'on-CPU, %s s, unwind_nofp spin (-O2 -fomit-frame-pointer)\n' "$SECS"
printf '%-40s %-22s %8s %10s %10s %10s\n' profiler "whole stacks" cpu_s bpf_ns us/unwind steady_ms/s
run_hearth "hearth --unwind dwarf" spin --unwind dwarf
# The same on a target that sleeps: what the poll loop costs by itself.
run_hearth "hearth --unwind dwarf, sleeping target" sleep --unwind dwarf
run_hearth "hearth --unwind auto" spin --unwind auto
run_hearth "hearth --unwind fp" spin --unwind fp
run_perf "perf record -F 99 --call-graph dwarf" spin -F 99 --call-graph dwarf
run_perf "perf record -F 99 -g" spin -F 99 -g
per_sample

SECS=${OFF_SECS:-2}
printf '\noff-CPU, %s s, unwind_nofp pingpong (context-switch heavy)\n' "$SECS"
printf '%-40s %-22s %8s %10s %10s %10s\n' profiler "whole stacks" cpu_s bpf_ns us/unwind steady_ms/s
run_hearth "hearth --off-cpu --unwind auto" pingpong --off-cpu --unwind auto
run_hearth "hearth --off-cpu --unwind fp" pingpong --off-cpu --unwind fp
# libbpf-tools offcputime (frame pointers, in-kernel aggregation): cost only,
# its output is not folded stacks.
if command -v offcputime >/dev/null; then
	"$N" pingpong "$((SECS + 2))" >/dev/null &
	wpid=$!
	sleep 0.2
	prog_ids >"$T/ids.before"
	/usr/bin/time -f '%U %S' -o "$T/cpu" offcputime -p "$wpid" "$SECS" >/dev/null 2>&1 &
	tpid=$!
	sleep "$((SECS - 1))"
	b=$(bpf_ns '^sched_switch$')
	wait $tpid
	kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
	printf '%-40s %-22s %8s %10s %10s %10s\n' "libbpf-tools offcputime -p" "(FP only, not folded)" "$(cpu_of "$T/cpu")" "$b" "-" "-"
fi
if [ -d /sys/kernel/tracing/events/sched ]; then
	run_perf "perf -e sched:sched_switch --call-graph dwarf" pingpong -e sched:sched_switch --call-graph dwarf
	run_perf "perf -e sched:sched_switch -g" pingpong -e sched:sched_switch -g
else
	echo "perf off-CPU rows skipped: tracefs could not be mounted at /sys/kernel/tracing"
fi
