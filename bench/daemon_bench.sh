#!/bin/sh
# hearthd's own cost while always on, and its store's size.
#  1. idle host, default 10 s windows, DURATION seconds (default 600):
#     hearthd's CPU (user+sys from /proc, % of one core, and per stored
#     window), the BPF programs' run time (kernel.bpf_stats_enabled), its
#     wake-ups a second (voluntary context switches), RSS sampled every
#     10 s, the load average at start and end;
#  2. the same with both cores busy (two spinning workloads);
#  3. (the soak is bench/soak.sh)
#  4. bytes per stored window against the same profiles as gzip'd folded
#     text (from the busy run's store);
#  5. `hearth snapshot --last 1h` on a store of 360 busy 10 s windows.
# With AB=OLD-HEARTHD, instead: the old and this hearthd side by side
# (BUSY=1: with both cores busy), then each one's bytes per stored window
# and its `snapshot --last 1h` (folded and pprof) over 360 of its own
# windows (filled with AB_TOOL, the old store tool, for the old one).
# With GROWTH=RATE, instead: what recording growth always costs: two of
# this hearthd side by side, memory_growth = no and yes, while alloc_work
# asks the kernel for more memory RATE times a second (1 MiB mmaps).
# Prints a Markdown section (see the hearthd section of bench/RESULTS.md). Run as root:
#   make BUILD=build all fixtures
#   BUILD=build sh bench/daemon_bench.sh    (builds its store tool if needed)
set -eu
BUILD=${BUILD:-build}
DURATION=${DURATION:-600}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
HEARTHD=${HEARTHD:-$PWD/$BUILD/hearthd}
FIX=${FIXTURES:-$PWD/$BUILD/fixtures}
TOOL=$PWD/$BUILD/bench/daemon_store_tool
T=$(mktemp -d /tmp/hearthd-bench.XXXXXX)
HD= W1= W2= W3= B1= B2=
stats_old=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	for p in $HD $W1 $W2 $W3 $B1 $B2; do kill "$p" 2>/dev/null || true; done
	echo "$stats_old" > /proc/sys/kernel/bpf_stats_enabled
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -x "$TOOL" ] || make --no-print-directory -s BUILD="$BUILD" "$BUILD/bench/daemon_store_tool" ||
	{ echo "daemon_bench: cannot build $TOOL" >&2; exit 1; }
echo 1 > /proc/sys/kernel/bpf_stats_enabled
HZ=$(getconf CLK_TCK)
PAGE=$(getconf PAGESIZE)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
wakeups() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$1/status"; }
windows() { "$HEARTH" status --socket "$T/ctl.sock" | awk '/^windows stored:/ { print $3 }'; }
rss_kib() { awk -v p="$PAGE" '{ print int($2 * p / 1024) }' "/proc/$1/statm"; }
bpf_ns() { "$HEARTH" status --socket "$T/ctl.sock" | sed -n 's/.*BPF \([0-9.]*\) s in.*/\1/p' | awk '{ printf "%d\n", $1 * 1e9 }'; }
start() { # STATE-DIR extra flags...
	dir=$1; shift
	"$HEARTHD" --state-dir "$dir" --socket "$T/ctl.sock" "$@" 2>>"$T/hearthd.log" &
	HD=$!
	until "$HEARTH" status --socket "$T/ctl.sock" >/dev/null 2>&1; do sleep 0.2; done
}
stop() { kill -TERM "$HD"; wait "$HD" || true; HD=; }
host_busy() { top -bn2 -d1 | awk '/^%Cpu/ { idle = $8 } END { printf "%.0f", 100 - idle }'; }

# measure LABEL STATE-DIR: runs DURATION s, prints one table row.
measure() {
	label=$1
	start "$2"
	busy=$(host_busy)
	t0=$(date +%s.%N); c0=$(cpu_ticks "$HD"); b0=$(bpf_ns); v0=$(wakeups "$HD"); n0=$(windows)
	l0=$(cut -d' ' -f1 /proc/loadavg)
	rmin=999999999 rmax=0 k=0
	while [ $k -lt "$DURATION" ]; do
		sleep 10; k=$((k + 10))
		r=$(rss_kib "$HD")
		[ "$r" -lt "$rmin" ] && rmin=$r
		[ "$r" -gt "$rmax" ] && rmax=$r
	done
	t1=$(date +%s.%N); c1=$(cpu_ticks "$HD"); b1=$(bpf_ns); v1=$(wakeups "$HD"); n1=$(windows)
	l1=$(cut -d' ' -f1 /proc/loadavg)
	busy2=$(host_busy)
	stop
	awk -v l="$label" -v t="$(echo "$t1 - $t0" | bc)" -v c=$((c1 - c0)) -v hz="$HZ" \
	    -v b=$((b1 - b0)) -v rmin="$rmin" -v rmax="$rmax" -v h1="$busy" -v h2="$busy2" \
	    -v w=$((n1 - n0)) -v v=$((v1 - v0)) -v la="$l0 / $l1" 'BEGIN {
		printf "| %s | %.0f s | %s%% / %s%% (load %s) | %.3f%% | %.3f%% | %.3f%% | %.0f ms | %.1f | %.1f-%.1f MiB |\n",
		    l, t, h1, h2, la, 100 * c / hz / t, 100 * b / 1e9 / t, 100 * (c / hz + b / 1e9) / t,
		    w ? 1000 * c / hz / w : 0, v / t, rmin / 1024, rmax / 1024 }'
}

# AB=OLD-HEARTHD: only compare OLD-HEARTHD with $HEARTHD, both running side
# by side for DURATION s on the same host activity (on a shared machine the
# fair comparison): user+sys, per window and wake-ups of each.
if [ -n "${AB:-}" ]; then
	if [ -n "${BUSY:-}" ]; then "$FIX/daemon_shift" & B1=$!; "$FIX/daemon_shift" & B2=$!; fi
	"$AB" --state-dir "$T/ab-old" --socket "$T/old.sock" 2>>"$T/hearthd.log" & W1=$!
	"$HEARTHD" --state-dir "$T/ab-new" --socket "$T/new.sock" 2>>"$T/hearthd.log" & W2=$!
	for s in old new; do
		until "$HEARTH" status --socket "$T/$s.sock" >/dev/null 2>&1; do sleep 0.2; done
	done
	nwin() { "$HEARTH" status --socket "$T/$1.sock" | awk '/^windows stored:/ { print $3 }'; }
	l0=$(cut -d' ' -f1 /proc/loadavg); t0=$(date +%s.%N)
	o0=$(cpu_ticks "$W1") n0=$(cpu_ticks "$W2") ow0=$(wakeups "$W1") nw0=$(wakeups "$W2")
	oc0=$(nwin old) nc0=$(nwin new)
	sleep "$DURATION"
	o1=$(cpu_ticks "$W1") n1=$(cpu_ticks "$W2") ow1=$(wakeups "$W1") nw1=$(wakeups "$W2")
	oc1=$(nwin old) nc1=$(nwin new)
	t1=$(date +%s.%N); l1=$(cut -d' ' -f1 /proc/loadavg)
	kill -TERM "$W1" "$W2"; wait "$W1" "$W2" || true; W1= W2=
	t=$(echo "$t1 - $t0" | bc)
	echo "### side by side, $DURATION s, load $l0 / $l1 ($(nproc) CPUs)"
	echo
	echo "| hearthd | user+sys, % of one core | per window | wake-ups/s |"
	echo "|---|---|---|---|"
	for r in "before $o0 $o1 $ow0 $ow1 $oc0 $oc1" "after $n0 $n1 $nw0 $nw1 $nc0 $nc1"; do
		set -- $r
		awk -v l="$1" -v c=$(($3 - $2)) -v v=$(($5 - $4)) -v w=$(($7 - $6)) -v t="$t" -v hz="$HZ" 'BEGIN {
			printf "| %s | %.3f%% | %.0f ms | %.1f |\n", l, 100 * c / hz / t, w ? 1000 * c / hz / w : 0, v / t }'
	done
	awk -v a=$((o1 - o0)) -v b=$((n1 - n0)) 'BEGIN { if (a) printf "\nafter / before: %.2f\n", b / a }'
	[ -n "$B1" ] && kill "$B1" "$B2"
	B1= B2=
	echo
	echo "| hearthd | windows | stored bytes per window | gzip'd folded | snapshot | wall (best of 3) | hearthd CPU |"
	echo "|---|---|---|---|---|---|---|"
	for side in old new; do
		hd=$HEARTHD tool=$TOOL
		[ $side = old ] && hd=$AB tool=${AB_TOOL:-$TOOL}
		set -- $("$TOOL" sizes "$T/ab-$side")
		win=$2 per=$4 gz=$8
		"$tool" fill "$T/ab-$side" "$T/hour-$side" 360 >/dev/null
		HEARTHD=$hd start "$T/hour-$side" --retention-size 0
		for q in "folded" "folded --off-cpu" "pb.gz" "pb.gz --off-cpu"; do
			set -- $q
			best=999 cpu=0
			for i in 1 2 3; do
				c0=$(cpu_ticks "$HD"); t0=$(date +%s.%N)
				"$HEARTH" snapshot --socket "$T/ctl.sock" --last 1h ${2:-} -o "$T/hour.$1" 2>/dev/null
				t1=$(date +%s.%N); c1=$(cpu_ticks "$HD")
				w=$(echo "$t1 - $t0" | bc)
				if awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$w; cpu=$((c1 - c0)); fi
			done
			printf '| %s | %s | %s | %s | `--last 1h %s -o x.%s` | %.2f s | %s s |\n' "$side" "$win" "$per" \
				"$gz" "${2:-}" "$1" "$best" "$(awk -v c="$cpu" -v hz="$HZ" 'BEGIN { printf "%.2f", c / hz }')"
		done
		stop
	done
	exit 0
fi

# growth_bpf PID: "RUN_TIME_NS RUN_CNT" summed over PID's programs named
# growth_* (another hearthd's, also named so, are not counted).
growth_bpf() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' > "$T/ids.$1"
	bpftool prog show 2>/dev/null | awk -v f="$T/ids.$1" '
		BEGIN { while ((getline l < f) > 0) mine[l] = 1 }
		/^[0-9]+:/ { id = $1; sub(/:$/, "", id); name = ""; rt = 0; rc = 0
			     for (i = 1; i <= NF; i++) { if ($i == "name") name = $(i + 1); if ($i == "run_time_ns") rt = $(i + 1); if ($i == "run_cnt") rc = $(i + 1) }
			     if ((id in mine) && name ~ /^growth_/) { t += rt; c += rc } }
		END { printf "%.0f %.0f\n", t, c }'
}

# GROWTH=RATE: memory_growth = no and yes side by side for DURATION s, on
# the same host activity, with RATE requests for more memory a second:
# user+sys, the growth programs' run time (their tracepoints run at every
# system call of every process), RSS sampled every 10 s.
if [ -n "${GROWTH:-}" ]; then
	"$FIX/alloc_work" churn "$GROWTH" & W3=$!
	"$HEARTHD" --state-dir "$T/g-no" --socket "$T/no.sock" --memory-growth no 2>>"$T/hearthd.log" & W1=$!
	"$HEARTHD" --state-dir "$T/g-yes" --socket "$T/yes.sock" --memory-growth yes 2>>"$T/hearthd.log" & W2=$!
	for s in no yes; do
		until "$HEARTH" status --socket "$T/$s.sock" >/dev/null 2>&1; do sleep 0.2; done
	done
	sleep 10 # (the first window names every process of the host)
	l0=$(cut -d' ' -f1 /proc/loadavg); busy=$(host_busy); t0=$(date +%s.%N)
	o0=$(cpu_ticks "$W1") n0=$(cpu_ticks "$W2") g0=$(growth_bpf "$W2")
	omin=999999999 omax=0 nmin=999999999 nmax=0 k=0
	while [ $k -lt "$DURATION" ]; do
		sleep 10; k=$((k + 10))
		r=$(rss_kib "$W1"); [ "$r" -lt "$omin" ] && omin=$r; [ "$r" -gt "$omax" ] && omax=$r
		r=$(rss_kib "$W2"); [ "$r" -lt "$nmin" ] && nmin=$r; [ "$r" -gt "$nmax" ] && nmax=$r
	done
	o1=$(cpu_ticks "$W1") n1=$(cpu_ticks "$W2") g1=$(growth_bpf "$W2")
	t1=$(date +%s.%N); l1=$(cut -d' ' -f1 /proc/loadavg); busy2=$(host_busy)
	grep -q 'not recording requests for more memory' "$T/hearthd.log" &&
		{ cat "$T/hearthd.log"; echo "daemon_bench: growth did not load" >&2; exit 1; }
	kill -TERM "$W1" "$W2"; wait "$W1" "$W2" || true; W1= W2=
	kill "$W3"; W3=
	t=$(echo "$t1 - $t0" | bc)
	echo "### memory_growth no / yes side by side, $DURATION s, $GROWTH requests/s, host CPU busy $busy% / $busy2%, load $l0 / $l1 ($(nproc) CPUs)"
	echo
	echo "| memory_growth | hearthd user+sys, % of one core | growth BPF, % of one core | runs/s | ns/run | RSS (min-max) |"
	echo "|---|---|---|---|---|---|"
	set -- $g0 $g1
	awk -v c=$((o1 - o0)) -v t="$t" -v hz="$HZ" -v a="$omin" -v b="$omax" 'BEGIN {
		printf "| no | %.3f%% | - | - | - | %.1f-%.1f MiB |\n", 100 * c / hz / t, a / 1024, b / 1024 }'
	awk -v c=$((n1 - n0)) -v t="$t" -v hz="$HZ" -v a="$nmin" -v b="$nmax" \
	    -v ns=$(($3 - $1)) -v runs=$(($4 - $2)) 'BEGIN {
		printf "| yes | %.3f%% | %.3f%% | %.0f | %.0f | %.1f-%.1f MiB |\n", 100 * c / hz / t,
		    100 * ns / 1e9 / t, runs / t, runs ? ns / runs : 0, a / 1024, b / 1024 }'
	awk -v o=$((o1 - o0)) -v n=$((n1 - n0)) -v t="$t" -v hz="$HZ" -v r="$GROWTH" 'BEGIN {
		printf "\nyes - no: %.3f%% of one core in user space, %.1f us per request\n",
		    100 * (n - o) / hz / t, (n - o) / hz / (r * t) * 1e6 }'
	exit 0
fi

echo "### hearthd's own cost ($(nproc) CPUs, $(uname -r), $DURATION s per row)"
echo
echo "| host | run | host CPU busy (start / end) | hearthd user+sys | BPF programs | total, % of one core | user+sys per window | wake-ups/s | RSS (min-max) |"
echo "|---|---|---|---|---|---|---|---|---|"
measure "idle" "$T/idle"
"$FIX/daemon_shift" & W1=$!
"$FIX/daemon_shift" & W2=$!
measure "both cores busy" "$T/busy"
kill "$W1" "$W2"; W1= W2=

sizes=$("$TOOL" sizes "$T/busy") || { echo "daemon_bench: no windows to measure in $T/busy" >&2; exit 1; }
set -- $sizes
echo
echo "Store size, busy host, 10 s windows ($2 windows): $4 bytes stored per window (compact encoding, zlib) vs $6 bytes of folded text, $8 bytes gzip'd: $(awk -v a="$4" -v b="$8" 'BEGIN { printf "%.2f", a / b }') x the gzip'd folded size."

# --last 1h on 360 busy 10 s windows: wall time and hearthd's CPU time.
"$TOOL" fill "$T/busy" "$T/hour" 360
start "$T/hour" --retention-size 0
echo
for kind in on-CPU off-CPU; do
	flag=; [ "$kind" = off-CPU ] && flag=--off-cpu
	best=999 cpu=0
	for i in 1 2 3; do
		c0=$(cpu_ticks "$HD"); s=$(date +%s.%N)
		"$HEARTH" snapshot --socket "$T/ctl.sock" --last 1h $flag -o "$T/hour.folded" 2>/dev/null
		e=$(date +%s.%N); c1=$(cpu_ticks "$HD")
		w=$(echo "$e - $s" | bc)
		if awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$w; cpu=$((c1 - c0)); fi
	done
	echo "\`hearth snapshot --last 1h $flag\` over 360 busy 10 s windows ($(du -sh "$T/hour" | cut -f1) store, $(wc -l < "$T/hour.folded") folded lines): best of 3 $(printf '%.2f' "$best") s wall, hearthd CPU $(awk -v c="$cpu" -v hz="$HZ" 'BEGIN { printf "%.2f", c / hz }') s."
done
stop
