#!/bin/sh
# What sampling costs: hearth record vs perf record -g vs bpftrace, all
# whole-host at 99 Hz with kernel and user stacks, on a fixed CPU-bound
# workload using both cores. hearth runs twice: --unwind fp, like for like
# with the frame-pointer walks of perf -g and bpftrace, and --unwind auto
# (its default: stack copies unwound with DWARF).
#
# Prints, from one run:
#   - the workload's slowdown under each profiler (median of ROUNDS runs,
#     profilers alternated round by round, ratio to no profiler);
#   - the CPU seconds (user+sys) each profiler used, including what it
#     needs to produce named stacks (perf: record + script);
#   - the BPF programs' mean ns per run (kernel.bpf_stats_enabled).
#
# Environment: ROUNDS (default 5), ITERS (workload size, default 500000).
set -u
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-500000}
W="$FIXTURES/bench_work"
T=$(mktemp -d /tmp/hearth-bench.XXXXXX)
trap 'rm -rf "$T"; sysctl -q kernel.bpf_stats_enabled=0' EXIT
[ "$(id -u)" = 0 ] || { echo "record_cost: needs root"; exit 1; }
for tool in perf bpftrace bpftool; do
	command -v $tool >/dev/null || { echo "record_cost: $tool is missing (make deps-bench installs it)"; exit 1; }
done
[ -x "$W" ] || { echo "record_cost: build the fixtures first (make fixtures)"; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1
. bench/lib.sh

# bpf_ns NAME-REGEX: mean run_time_ns/run_cnt over loaded programs whose
# name matches.

# start_profiler NAME: starts it under GNU time, sets PROF_PID (the
# profiler itself) and TIME_PID.
start_profiler() {
	prog_ids >"$T/ids.before"
	case $1 in
	hearth) /usr/bin/time -f '%U %S' -o "$T/cpu" "$HEARTH" record --unwind fp -o "$T/hearth.folded" 2>"$T/hearth.err" & ;;
	hearth_auto) /usr/bin/time -f '%U %S' -o "$T/cpu" "$HEARTH" record --unwind auto -o "$T/hearth.folded" 2>"$T/hearth.err" & ;;
	perf) /usr/bin/time -f '%U %S' -o "$T/cpu" perf record -q -F 99 -a -g -o "$T/perf.data" >/dev/null 2>&1 & ;;
	bpftrace) /usr/bin/time -f '%U %S' -o "$T/cpu" bpftrace -e 'profile:hz:99 { @[kstack,ustack,comm]=count(); }' >"$T/bpftrace.out" 2>&1 & ;;
	esac
	TIME_PID=$!
	sleep 0.3
	PROF_PID=$(pgrep -P "$TIME_PID" | head -1)
	# Wait until the profiler is really sampling: bpftrace compiles first
	# and says "Attaching" when its probe is in; a signal before that is
	# lost on it.
	if [ "$1" = bpftrace ]; then
		for _ in $(seq 120); do grep -q Attaching "$T/bpftrace.out" 2>/dev/null && break; sleep 0.5; done
	fi
	sleep 2
}

# stop_profiler: SIGINT to the profiler, then its user+sys seconds in CPU_S.
# (Not run in a subshell: only this shell can wait for the profiler.)
stop_profiler() {
	kill -INT "$PROF_PID" 2>/dev/null
	for _ in $(seq 60); do kill -0 "$PROF_PID" 2>/dev/null || break; sleep 0.5; done
	kill -KILL "$PROF_PID" 2>/dev/null
	wait "$TIME_PID" 2>/dev/null
	CPU_S=$(cpu_of "$T/cpu")
}

run_workload() { "$W" 2 "$ITERS"; }

for p in none hearth hearth_auto perf bpftrace; do : >"$T/wall.$p"; : >"$T/cpu.$p"; : >"$T/bpf.$p"; done
for r in $(seq 1 "$ROUNDS"); do
	for p in none hearth hearth_auto perf bpftrace; do
		if [ $p = none ]; then
			run_workload >>"$T/wall.$p"
			continue
		fi
		start_profiler $p
		run_workload >>"$T/wall.$p"
		case $p in
		hearth|hearth_auto) bpf_ns '^on_cpu$' >>"$T/bpf.$p" ;;
		bpftrace) bpf_ns '^99$' >>"$T/bpf.$p" ;; # bpftrace names it after the rate
		esac
		echo >>"$T/bpf.$p"
		stop_profiler
		c=$CPU_S
		if [ $p = perf ]; then
			# perf's stacks are only named once perf script has run.
			/usr/bin/time -f '%U %S' -o "$T/cpu2" perf script -i "$T/perf.data" >/dev/null 2>&1
			c=$(tail -1 "$T/cpu2" | awk -v a="$c" '{ printf "%.2f", a + $1 + $2 }')
		fi
		echo "$c" >>"$T/cpu.$p"
	done
	printf '.'
done
echo

base=$(median "$T/wall.none")
printf '\nworkload: 2 threads x %s iterations, %s rounds, median wall %.3f s without a profiler\n\n' "$ITERS" "$ROUNDS" "$base"
printf '%-34s %10s %10s %14s %12s\n' profiler wall_s slowdown profiler_cpu_s bpf_ns/run
for p in hearth hearth_auto perf bpftrace; do
	w=$(median "$T/wall.$p")
	c=$(median "$T/cpu.$p")
	b=$(grep -v '^n/a$' "$T/bpf.$p" | grep . >"$T/b" && median "$T/b" || echo n/a)
	case $p in
	hearth) label="hearth record --unwind fp" ;;
	hearth_auto) label="hearth record --unwind auto (DWARF)" ;;
	perf) label="perf record -F 99 -a -g + script" ;;
	bpftrace) label="bpftrace profile:hz:99 k+u stacks" ;;
	esac
	printf '%-34s %10.3f %9.4fx %14s %12s\n' "$label" "$w" "$(awk -v a="$w" -v b="$base" 'BEGIN { print a / b }')" "$c" "$b"
done
ratio() { awk -v a="$(median "$T/cpu.$1")" -v b="$(median "$T/cpu.$2")" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'; }
printf '\nprofiler CPU ratios: perf / hearth fp = %s, bpftrace / hearth fp = %s, perf / hearth auto = %s, bpftrace / hearth auto = %s\n' \
	"$(ratio perf hearth)" "$(ratio bpftrace hearth)" "$(ratio perf hearth_auto)" "$(ratio bpftrace hearth_auto)"
