#!/bin/sh
# hearthd (etc/hearthd.conf, unwind = auto) on a host that starts
# short-lived processes all day, against `perf record -a -g` on the same
# storm. Rows:
#  1. idle host;
#  2. both cores busy (two unwind_nofp spin, -fomit-frame-pointer) and
#     10 short-lived processes a second;
#  3. RATE short-lived processes a second (default 200).
# A short-lived process is `unwind_nofp spin WORK` (-O2
# -fomit-frame-pointer, main -> level1 .. level5 -> leaf, WORK seconds of
# spinning, default 0.001: about 1.5 ms of CPU with its start), started by
# tests/fixtures/exec_storm. Each row runs SECS seconds (default 30) after
# a SETTLE (default 5 s: start-up is not the steady cost). Figures:
# hearthd's user+sys from /proc/PID/stat and its BPF programs' run time
# (every program it holds open, by /proc/PID/fdinfo, with
# kernel.bpf_stats_enabled), both as % of one core; RSS at the start and
# end of the row and its peak (VmHWM); the storm's samples named (no frame
# "[unknown]" or "module+0x...") and whole (main through leaf), from
# `hearth snapshot --last` of the row. perf: `perf record -a -g -F 99` on
# the storm, the CPU of perf record and of the `perf script` that names
# its samples, and the same shares from that script.
# Prints a Markdown table (see the exec storm section of bench/RESULTS.md).
# Run as root:
#   make all fixtures
#   sh bench/exec_storm.sh               (RATE=200 SECS=30 WORK=0.001 SETTLE=5)
set -eu
BUILD=${BUILD:-build}
RATE=${RATE:-200}
SECS=${SECS:-30}
WORK=${WORK:-0.001}
SETTLE=${SETTLE:-5}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
HEARTHD=${HEARTHD:-$PWD/$BUILD/hearthd}
FIX=${FIXTURES:-$PWD/$BUILD/fixtures}
CONF=${CONF:-$PWD/etc/hearthd.conf}
T=$(mktemp -d /tmp/hearth-storm.XXXXXX)
HD= W1= W2= ST=
stats_old=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	for p in $HD $W1 $W2 $ST; do kill "$p" 2>/dev/null || true; done
	echo "$stats_old" > /proc/sys/kernel/bpf_stats_enabled
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. bench/lib.sh
need_storm exec_storm
echo 1 > /proc/sys/kernel/bpf_stats_enabled
HZ=$(getconf CLK_TCK)
NOFP=$FIX/unwind_nofp

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
# bpf_ns PID: run time of the BPF programs PID holds open, summed.
bpf_ns() {
	ids=$(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -u | tr '\n' ' ')
	bpftool prog show 2>/dev/null | awk -v ids=" $ids" '
		/^[0-9]+:/ { id = $1; sub(/:$/, "", id); keep = index(ids, " " id " ") > 0
			     for (i = 1; i <= NF; i++) if ($i == "run_time_ns" && keep) t += $(i + 1) }
		END { printf "%.0f\n", t }'
}
# shares FILE COMM: "named whole samples" of process row COMM in folded FILE.
shares() {
	awk -v c="$2" 'index($0, c ";") == 1 || $0 ~ "^" c " " {
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += n
		if (s !~ /\[unknown\]|\+0x[0-9a-f]+(;|$)/) named += n
		if (s ~ /;main;level1;level2;level3;level4;level5;leaf(;|$)/) whole += n }
		END { printf "%d %d %d\n", named, whole, t }' "$1"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b) printf "%.1f%%", 100 * a / b; else printf "—" }'; }
storm() { # RATE SECONDS
	"$FIX/exec_storm" "$1" "$2" "$NOFP" spin "$WORK" > "$T/storm.out" &
	ST=$!
}

# row LABEL RATE BUSY: hearthd through SETTLE + SECS with RATE processes a
# second (0: none) and BUSY spinning workloads.
row() {
	label=$1 rate=$2 busy=$3
	W1= W2=
	[ "$busy" -ge 1 ] && { "$NOFP" spin $((SETTLE + SECS + 20)) >/dev/null & W1=$!; }
	[ "$busy" -ge 2 ] && { "$NOFP" spin $((SETTLE + SECS + 20)) >/dev/null & W2=$!; }
	rm -rf "$T/state"
	"$HEARTHD" --config "$CONF" --state-dir "$T/state" --socket "$T/ctl.sock" 2>>"$T/hearthd.log" &
	HD=$!
	until "$HEARTH" status --socket "$T/ctl.sock" >/dev/null 2>&1; do sleep 0.2; done
	[ "$rate" -gt 0 ] && storm "$rate" $((SETTLE + SECS + 2))
	sleep "$SETTLE"
	l0=$(cut -d' ' -f1 /proc/loadavg)
	c0=$(cpu_ticks "$HD") b0=$(bpf_ns "$HD") r0=$(rss_kib "$HD") t0=$(date +%s.%N)
	sleep "$SECS"
	c1=$(cpu_ticks "$HD") b1=$(bpf_ns "$HD") r1=$(rss_kib "$HD") t1=$(date +%s.%N)
	l1=$(cut -d' ' -f1 /proc/loadavg)
	hwm=$(hwm_kib "$HD")
	[ -n "$ST" ] && { wait "$ST" || true; ST=; }
	"$HEARTH" snapshot --socket "$T/ctl.sock" --last "$((SETTLE + SECS + 5))s" --plain \
		-o "$T/row.folded" 2>/dev/null || : > "$T/row.folded"
	"$HEARTH" status --socket "$T/ctl.sock" > "$T/status" 2>&1 || true
	kill -TERM "$HD"; wait "$HD" || true; HD=
	for p in $W1 $W2; do kill "$p" 2>/dev/null || true; done
	W1= W2=
	set -- $(shares "$T/row.folded" unwind_nofp)
	if [ "$rate" -gt 0 ]; then named=$(pct "$1" "$3") whole=$(pct "$2" "$3") n=$3
	else named=— whole=— n=—; fi
	started=—
	[ "$rate" -gt 0 ] && started=$(awk '{ print $2 }' "$T/storm.out")
	awk -v l="$label" -v t="$(echo "$t1 - $t0" | bc)" -v c=$((c1 - c0)) -v hz="$HZ" \
	    -v b=$((b1 - b0)) -v r0="$r0" -v r1="$r1" -v hwm="$hwm" -v la="$l0 / $l1" \
	    -v named="$named" -v whole="$whole" -v n="$n" -v st="$started" 'BEGIN {
		u = 100 * c / hz / t; k = 100 * b / 1e9 / t
		printf "| %s | %s | %.2f%% | %.2f%% | **%.2f%%** | %.1f / %.1f (peak %.1f) MiB | %s of %s | %s | %s |\n",
		    l, st, u, k, u + k, r0 / 1024, r1 / 1024, hwm / 1024, named, n, whole, la }'
	grep -E '^(unwinder|drops)' "$T/status" | sed 's/^/    /' >&2 || true
}

echo "### hearthd under an exec storm ($(nproc) CPUs, $(uname -r), $SECS s per row after $SETTLE s)"
echo
echo "| host | processes started | hearthd user+sys | BPF | total, % of one core | RSS start / end (peak) | storm samples named | whole | load |"
echo "|---|---|---|---|---|---|---|---|---|"
row "idle" 0 0
row "both cores busy (no-FP spin), 10 processes/s" 10 2
row "$RATE processes/s" "$RATE" 0

# perf record -a -g on the same storm: its own CPU, then perf script's.
if command -v perf >/dev/null 2>&1; then
	storm "$RATE" "$SECS"
	/usr/bin/time -f '%U %S' -o "$T/perf.time" perf record -q -a -g -F 99 -o "$T/perf.data" \
		-- sleep "$SECS" 2>/dev/null
	wait "$ST" || true; ST=
	/usr/bin/time -f '%U %S' -o "$T/script.time" perf script -i "$T/perf.data" -F comm,ip,sym \
		2>/dev/null > "$T/perf.txt"
	# perf script: one sample per block, "comm" line then frames (ip sym).
	awk 'function flush() { if (c == "unwind_nofp") { t++; if (!bad) named++
			if (index(st, ";leaf;level5;level4;level3;level2;level1;main;")) whole++ } }
	     /^[^ \t]/ { flush(); c = $1; bad = 0; st = ";"; next }
	     /^[ \t]/ && NF >= 1 { s = NF >= 2 ? $2 : ""; if (s == "" || s == "[unknown]") bad = 1
			st = st s ";" }
	     END { flush(); printf "%d %d %d\n", named, whole, t }' "$T/perf.txt" > "$T/perf.shares"
	set -- $(cat "$T/perf.shares")
	pc=$(awk '{ print $1 + $2 }' "$T/perf.time") sc=$(awk '{ print $1 + $2 }' "$T/script.time")
	awk -v r="$RATE" -v t="$SECS" -v pc="$pc" -v sc="$sc" -v named="$(pct "$1" "$3")" -v n="$3" -v whole="$(pct "$2" "$3")" \
	    -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
		printf "| perf record -a -g -F 99, %s processes/s | | %.2f%% (+ perf script %.2f%%) | | **%.2f%%** | | %s of %s | %s | %s |\n",
		    r, 100 * pc / t, 100 * sc / t, 100 * (pc + sc) / t, named, n, whole, la }'
fi
