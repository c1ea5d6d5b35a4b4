#!/bin/sh
# What the questions of time and --waker cost over plain --off-cpu, on a
# context-switch heavy workload: unwind_nofp pingpong (two threads bouncing
# a byte over pipes, each wait a read()). For each way of recording (none,
# --off-cpu, --off-cpu --waker, --threads, --wall, --locks), alternated
# round by round: the ping-pong's
# round trips per second while hearth is attached (its main thread's
# voluntary switches, one a round trip, over a window well inside the
# recording), the slowdown against no profiler, hearth's user+sys CPU for
# the whole recording, BPF ns per run of the sched_switch program and, with
# --waker, of the sched_waking one (each wake-up of the host runs it).
# Modes "hearthd" and "hearthd+--waker": hearthd always on (started for
# the round, on-CPU and off-CPU of the whole host), alone, and while a
# `hearth snapshot --next --off-cpu --waker -p` session runs; hearthd's
# CPU is its user+sys over the same span (/proc), once it has started.
# Then a process of 5,000 threads all blocked (what the task iterator's
# passes cost when every thread has to be read, unwound and named): hearth
# --off-cpu against --threads, CPU and the passes' time.
# Run as root: make all fixtures; BENCH=threads_cost sh bench/run.sh
# Environment: SECS (measured window, default 5), ROUNDS (default 3),
# THREADS (default 5000), MODES (the ways of recording, default all).
set -u
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-5000}
N="$FIXTURES/unwind_nofp"
T=$(mktemp -d /tmp/hearth-bench.XXXXXX)
W= HD=
trap '[ -n "$W" ] && kill $W 2>/dev/null; [ -n "$HD" ] && kill $HD 2>/dev/null; rm -rf "$T"; sysctl -q kernel.bpf_stats_enabled=0' EXIT
[ "$(id -u)" = 0 ] || { echo "threads_cost: needs root"; exit 1; }
[ -x "$N" ] || { echo "threads_cost: build the fixtures first"; exit 1; }
[ -x /usr/bin/time ] || { echo "threads_cost: /usr/bin/time is missing (the time package)"; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1
. bench/lib.sh

"$N" pingpong 100000 >/dev/null &
W=$!
sleep 1
switches() { sed -n 's/^voluntary_ctxt_switches:[ \t]*//p' "/proc/$W/status"; }
# hd_ticks: hearthd's user+sys clock ticks so far.
hd_ticks() { awk '{ print $14 + $15 }' "/proc/$HD/stat"; }

# hd_start: starts hearthd (HD) and waits until it answers and 2 s more.
hd_start() {
	rm -rf "$T/state"
	"$HEARTHD" --state-dir "$T/state" --socket "$T/ctl.sock" 2>"$T/hearthd.log" &
	HD=$!
	i=0; until "$HEARTH" status --socket "$T/ctl.sock" >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 300 ] && { cat "$T/hearthd.log"; echo "threads_cost: hearthd did not start"; exit 1; }; sleep 0.1
	done
	sleep 2
}

# measure MODE: one round of MODE ("none" or record flags joined by "+")
# into $T/MODE.{rate,cpu,bpf,wake}.
measure() {
	mode=$1
	case $mode in hearthd*) hd_start; c0=$(hd_ticks) ;; esac
	prog_ids >"$T/ids.before"
	if [ "$mode" = hearthd+--waker ]; then
		"$HEARTH" snapshot --socket "$T/ctl.sock" --next $((SECS + 4))s --off-cpu --waker -p "$W" \
			-o "$T/p.folded" 2>"$T/err" &
		R=$!
		sleep 2
	elif [ "$mode" = hearthd ]; then
		sleep 2
	elif [ "$mode" != none ]; then
		# shellcheck disable=SC2046 # the flags split on purpose
		/usr/bin/time -f '%U %S' -o "$T/time" "$HEARTH" record $(echo "$mode" | tr + ' ') -p "$W" \
			-d $((SECS + 4)) -o "$T/p.folded" 2>"$T/err" &
		R=$!
		sleep 2 # start-up: programs loaded, the start's pass done
	fi
	a=$(switches)
	t0=$(date +%s%N)
	sleep "$SECS"
	b=$(switches)
	t1=$(date +%s%N)
	[ "$mode" != none ] && ns=$(bpf_ns '^off_cpu$') && wake=$(bpf_ns '^waking$')
	awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f\n", (b - a) / ((t1 - t0) / 1e9) }' >>"$T/$mode.rate"
	case $mode in hearthd*)
		if [ "$mode" = hearthd ]; then sleep 2; else wait "$R" || { cat "$T/err"; exit 1; }; fi
		awk -v a="$c0" -v b="$(hd_ticks)" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f\n", (b - a) / hz }' >>"$T/$mode.cpu"
		echo "$wake" >>"$T/$mode.wake"
		kill "$HD"; wait "$HD"; HD=
		return ;;
	esac
	if [ "$mode" != none ]; then
		wait "$R" || { cat "$T/err"; exit 1; }
		echo "$(cpu_of "$T/time")" >>"$T/$mode.cpu"
		echo "$ns" >>"$T/$mode.bpf"
		echo "$wake" >>"$T/$mode.wake"
	fi
}

modes=${MODES:-none --off-cpu --off-cpu+--waker --threads --wall --locks hearthd hearthd+--waker}
for r in $(seq "$ROUNDS"); do
	for m in $modes; do
		measure "$m"
	done
done
base=$(median "$T/none.rate")
echo "| recording | round trips/s | slowdown | hearth CPU s | BPF ns/run (sched_switch) | (sched_waking) |"
echo "|---|---|---|---|---|---|"
for m in $modes; do
	rate=$(median "$T/$m.rate")
	slow=$(awk -v b="$base" -v r="$rate" 'BEGIN { printf "%.2fx", b / r }')
	if [ "$m" = none ]; then
		printf '| no profiler | %s | 1 | | | |\n' "$rate"
	elif [ "$m" != "${m#hearthd}" ]; then
		# (sched_switch: hearthd's and the session's programs, not told apart)
		printf '| %s, %s s | %s | %s | %s (hearthd) | | %s |\n' \
			"$([ "$m" = hearthd ] && echo "hearthd always on" || echo "hearthd + snapshot --off-cpu --waker")" \
			"$((SECS + 4))" "$rate" "$slow" "$(median "$T/$m.cpu")" \
			"$(grep -qv n/a "$T/$m.wake" && median "$T/$m.wake" || echo —)"
	else
		printf '| hearth record %s, %s s | %s | %s | %s | %s | %s |\n' "$(echo "$m" | tr + ' ')" \
			"$((SECS + 4))" "$rate" "$slow" "$(median "$T/$m.cpu")" "$(median "$T/$m.bpf")" \
			"$(grep -qv n/a "$T/$m.wake" && median "$T/$m.wake" || echo —)"
	fi
done

# Many threads, all asleep: each in a futex wait (a Python thread on an
# Event), so the scheduler never sees them and the iterator finds them.
kill "$W"; wait "$W" 2>/dev/null
python3 -c '
import sys, threading
threading.stack_size(65536)
ev = threading.Event()
for _ in range(int(sys.argv[1])):
    threading.Thread(target=ev.wait, daemon=True).start()
print("ready", flush=True)
ev.wait()
' "$THREADS" >"$T/ready" &
W=$!
i=0; until [ -s "$T/ready" ]; do i=$((i + 1)); [ $i -gt 600 ] && { echo "threads_cost: $THREADS threads did not start"; exit 1; }; sleep 0.1; done
printf '\n%s threads, all blocked, %s s\n\n' "$THREADS" "$SECS"
echo "| recording | hearth CPU s | the passes over the threads, ms | thread rows |"
echo "|---|---|---|---|"
for m in --off-cpu --threads; do
	/usr/bin/time -f '%U %S' -o "$T/time" "$HEARTH" record "$m" -p "$W" -d "$SECS" -o "$T/p.folded" 2>"$T/err" ||
		{ cat "$T/err"; exit 1; }
	pass=$(sed -n 's/.*the passes over the threads took \([0-9.]*\) ms/\1/p' "$T/err")
	rows=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";"); print f[2] }' "$T/p.folded" | sort -u | grep -c .)
	printf '| hearth record %s | %s | %s | %s |\n' "$m" "$(cpu_of "$T/time")" "${pass:-—}" "$rows"
done
