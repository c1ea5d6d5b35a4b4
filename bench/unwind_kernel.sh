#!/bin/sh
# The in-kernel unwinder (unwind = auto) against frame pointers, and
# hearthd's shipped configuration's own cost:
#  1. BPF ns per on-CPU sample, `hearth record -p` with --unwind auto and
#     --unwind fp on the same fixture: record_work spin (built with frame
#     pointers: both walk the whole chain) and unwind_nofp spin (-O2
#     -fomit-frame-pointer: fp stops early, so it is cheaper there).
#  2. hearthd with etc/hearthd.conf for SECS seconds, the host running
#     unwind_nofp spin and starting 10 short-lived processes a second:
#     user+sys and BPF time as % of one core, RSS at the end.
#  3. Whole-host pipe ping-pong (unwind_nofp pingpong, 2 switches per round
#     trip): round trips in PP_SECS alone, with that hearthd running, and
#     (when installed) with libbpf-tools offcputime watching the whole
#     host, alternated PP_RUNS times, hearthd given SETTLE seconds after
#     its start (the host's processes ask for their tables at once then);
#     slowdown = median alone / median with.
# Environment: SECS (default 60), REC_SECS (default 10), PP_SECS (default
# 5), PP_RUNS (default 3), SETTLE (default 10), PARTS (default 123: the
# parts to run, e.g. PARTS=3 for the ping-pong alone).
set -u
SECS=${SECS:-60}
REC_SECS=${REC_SECS:-10}
PP_SECS=${PP_SECS:-5}
PP_RUNS=${PP_RUNS:-3}
SETTLE=${SETTLE:-10}
PARTS=${PARTS:-123}
N="$FIXTURES/unwind_nofp"
W="$FIXTURES/record_work"
T=$(mktemp -d /tmp/hearth-bench.XXXXXX)
HD= OC=
cleanup() {
	[ -n "$HD" ] && kill "$HD" 2>/dev/null
	[ -n "$OC" ] && kill "$OC" 2>/dev/null
	rm -rf "$T"
	sysctl -q kernel.bpf_stats_enabled=0
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "unwind_kernel: needs root"; exit 1; }
[ -x "$N" ] && [ -x "$W" ] || { echo "unwind_kernel: build the fixtures first"; exit 1; }
. bench/lib.sh
# bpf_s FILE: the seconds hearthd's BPF programs ran, from a status reply.
bpf_s() { sed -n 's/.*, BPF \([0-9.]*\) s in .*/\1/p' "$1"; }
sysctl -q kernel.bpf_stats_enabled=1
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# part N: whether PARTS has part N.
part() { case "$PARTS" in *"$1"*) return 0 ;; esac; return 1; }

# 1. BPF ns per on-CPU sample.
if part 1; then
printf '\n%-40s %10s %10s %s\n' "record -p, $REC_SECS s" "BPF ns" "samples" "whole/walked"
for fx in "$W spin" "$N spin"; do
	for mode in fp auto; do
		$fx $((REC_SECS + 5)) >/dev/null &
		wp=$!
		sleep 0.5
		"$HEARTH" record --unwind $mode -d "$REC_SECS" -p "$wp" -o "$T/r.folded" 2>"$T/r.err"
		kill "$wp" 2>/dev/null; wait "$wp" 2>/dev/null
		ns=$(sed -n 's/.*BPF \([0-9]*\) ns per on-CPU sample (\([0-9]*\) runs).*/\1 \2/p' "$T/r.err")
		walked=$(sed -n 's/^hearth: \([0-9]*\) user stacks walked in the kernel, \([0-9]*\) fell back.*/\1 walked, \2 fell back/p' "$T/r.err")
		printf '%-40s %10s %10s %s\n' "$(basename "${fx% *}") --unwind $mode" "${ns% *}" "${ns#* }" "${walked:-—}"
	done
done

fi

# 2. hearthd, shipped config, busy host with churn.
if part 2; then
"$N" spin $((SECS + 10)) >/dev/null &
spin=$!
( end=$(( $(date +%s) + SECS + 5 )); while [ "$(date +%s)" -lt "$end" ]; do
	for i in 1 2 3 4 5 6 7 8 9 10; do "$N" sleep 0 >/dev/null & done; sleep 1; done ) &
churn=$!
"$HEARTHD" --config etc/hearthd.conf --state-dir "$T/state" --socket "$T/ctl.sock" 2>"$T/hd.log" &
HD=$!
sleep 5 # start-up (BTF, program load) is not the steady cost
"$HEARTH" status --socket "$T/ctl.sock" > "$T/s0" || { cat "$T/hd.log"; exit 1; }
t0=$(awk '{ print $14 + $15 }' "/proc/$HD/stat")
sleep "$SECS"
t1=$(awk '{ print $14 + $15 }' "/proc/$HD/stat")
"$HEARTH" status --socket "$T/ctl.sock" > "$T/s1"
b0=$(bpf_s "$T/s0") b1=$(bpf_s "$T/s1")
kill "$churn" "$spin" 2>/dev/null
hz=$(getconf CLK_TCK)
echo
echo "hearthd, etc/hearthd.conf, $SECS s, unwind_nofp spin + 10 processes/s:"
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$SECS" -v b0="$b0" -v b1="$b1" 'BEGIN {
	u = 100 * (b - a) / hz / s; k = 100 * (b1 - b0) / s
	printf "  user+sys %.3f%%, BPF %.3f%%, total %.3f%% of one core\n", u, k, u + k }'
grep -E '^(own cost|unwinder|BPF per event|drops)' "$T/s1" | sed 's/^/  /'
kill "$HD"; wait "$HD" 2>/dev/null; HD=
fi

# 3. Ping-pong alone, with hearthd running, with offcputime running.
part 3 || exit 0
OFFCPUTIME=$(command -v offcputime)
: > "$T/alone"; : > "$T/with"; : > "$T/offcpu"
for i in $(seq "$PP_RUNS"); do
	"$N" pingpong "$PP_SECS" | awk '{ print $1 }' >> "$T/alone"
	"$HEARTHD" --config etc/hearthd.conf --state-dir "$T/state2" --socket "$T/ctl2.sock" 2>>"$T/hd2.log" &
	HD=$!
	until "$HEARTH" status --socket "$T/ctl2.sock" >/dev/null 2>&1; do sleep 0.2; done
	sleep "$SETTLE" # hearthd runs for days: its start-up is not the steady cost
	"$N" pingpong "$PP_SECS" | awk '{ print $1 }' >> "$T/with"
	"$HEARTH" status --socket "$T/ctl2.sock" | grep -E '^(unwinder|BPF per event)' | sed 's/^/  /' > "$T/pp_status"
	kill "$HD"; wait "$HD" 2>/dev/null; HD=
	[ -n "$OFFCPUTIME" ] || continue
	# whole host, frame pointers, in-kernel aggregation; its output
	# (printed at its end) is not what is measured
	"$OFFCPUTIME" $((PP_SECS + 3)) >/dev/null 2>&1 &
	OC=$!
	sleep 1
	"$N" pingpong "$PP_SECS" | awk '{ print $1 }' >> "$T/offcpu"
	kill -INT "$OC" 2>/dev/null; wait "$OC" 2>/dev/null; OC=
done
a=$(median "$T/alone") w=$(median "$T/with")
echo
echo "pipe ping-pong, $PP_SECS s x $PP_RUNS: round trips alone $(tr '\n' ' ' < "$T/alone")(median $a), with hearthd $(tr '\n' ' ' < "$T/with")(median $w)"
awk -v a="$a" -v w="$w" 'BEGIN { printf "  slowdown with hearthd, etc/hearthd.conf: %.2fx\n", a / w }'
if [ -s "$T/offcpu" ]; then
	o=$(median "$T/offcpu")
	echo "  with libbpf-tools offcputime (whole host) $(tr '\n' ' ' < "$T/offcpu")(median $o): slowdown $(awk -v a="$a" -v o="$o" 'BEGIN { printf "%.2fx", a / o }')"
fi
cat "$T/pp_status"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
