#!/bin/sh
# hearthd's RSS on a busy build host, shipped config (etc/hearthd.conf,
# 10 s windows): for SECS (default 360) a loop compiling hearth's sources
# with sanitizers (gcc, cc1, as: large binaries new to the unwinder and
# the symbolizer), a python process that keeps growing and freeing up to
# 512 MiB (brk and mmap requests that fill the growth ring), and RATE
# (default 50) short-lived processes a second (tests/fixtures/exec_storm).
# VmRSS every 10 s; after a WARMUP (default 100 s) its range, VmHWM, and at
# the end what holds it, from /proc/PID/smaps: the heap, the other threads'
# malloc arenas (the unwind tables' compiling threads), the kernel's BPF
# maps and rings mapped in, and files mapped (DWARF of the modules read).
# Also each hearthd's user+sys CPU after the warm-up (% of one core) and
# the modules its symbol caches evicted (`hearth status`).
# AB=old/hearthd runs that one beside, under the same load.
# Prints a Markdown table (the RSS section of bench/RESULTS.md). As root:
#   make all fixtures
#   sh bench/rss_build.sh                    (SECS=360 RATE=50 WARMUP=100)
set -eu
BUILD=${BUILD:-build}
SECS=${SECS:-360}
RATE=${RATE:-50}
WARMUP=${WARMUP:-100}
HEARTHD=${HEARTHD:-$PWD/$BUILD/hearthd}
FIX=${FIXTURES:-$PWD/$BUILD/fixtures}
CONF=${CONF:-$PWD/etc/hearthd.conf}
T=$(mktemp -d /tmp/hearth-rss.XXXXXX)
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. bench/lib.sh
need_storm rss_build

# The load, each part a process of its own (killed at the end).
SRC=$PWD
sh -c 'while :; do for f in agent/store.c agent/config.c profile/profile.c symbolize/symtab.c; do
	nice gcc -O1 -g -fsanitize=address,undefined -I. -I"$1" -c "$f" -o "$2/x.o" 2>/dev/null
done; done' rss_build "$BUILD" "$T" &
PIDS="$PIDS $!"
python3 -c '
import mmap, random, time
held = []
while True:
    n = random.randint(1, 64) << 20
    b = bytearray(n)
    for i in range(0, n, 4096): b[i] = 1
    held.append(b)
    if len(held) > 8: held.pop(random.randrange(len(held)))
    m = mmap.mmap(-1, 1 << 16); m[0] = 1; m.close()
    time.sleep(0.01)' &
PIDS="$PIDS $!"
"$FIX/exec_storm" "$RATE" "$SECS" "$FIX/unwind_nofp" spin 0.001 >/dev/null &
PIDS="$PIDS $!"

# start NAME BINARY: hearthd under its own state folder; its pid in $T/NAME.pid.
start() {
	mkdir -p "$T/$1"
	"$2" --config "$CONF" --state-dir "$T/$1/state" --socket "$T/$1/ctl.sock" \
		>"$T/$1/log" 2>&1 &
	echo $! >"$T/$1.pid"
	PIDS="$PIDS $!"
}
NAMES=new
start new "$HEARTHD"
[ -n "${AB:-}" ] && { NAMES="old new"; start old "$AB"; }

rss_mib() { awk '/^VmRSS:/ { printf "%d\n", $2 / 1024 }' "/proc/$1/status"; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
t=0
while [ "$t" -lt "$SECS" ]; do
	sleep 10
	t=$((t + 10))
	for n in $NAMES; do
		p=$(cat "$T/$n.pid")
		[ "$t" -gt "$WARMUP" ] && rss_mib "$p" >>"$T/$n.rss"
		[ "$t" -eq "$WARMUP" ] && ticks "$p" >"$T/$n.t0"
	done
	cut -d' ' -f1 /proc/loadavg >>"$T/load"
done

# parts PID: "heap, arenas, bpf maps, files" in MiB from smaps.
parts() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6; arena = ($6 == "" && $2 == "rw-p") }
	     /^Rss:/ { if (name == "[heap]") h += $2
		       else if (name ~ /^anon_inode:bpf/) b += $2
		       else if (name ~ /^\//) f += $2
		       else if (arena) a += $2 }
	     END { printf "%d, %d, %d, %d", h / 1024, a / 1024, b / 1024, f / 1024 }' "/proc/$1/smaps"
}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
echo "| hearthd | RSS after ${WARMUP} s (MiB) | VmHWM | at the end: heap, other anonymous (arenas), BPF maps, files (MiB) | user+sys after ${WARMUP} s, % of one core | modules evicted |"
echo "|---|---|---|---|---|---|"
for n in $NAMES; do
	p=$(cat "$T/$n.pid")
	r=$(sort -n "$T/$n.rss" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d-%d", lo, hi }')
	hwm=$(awk '/^VmHWM:/ { printf "%d", $2 / 1024 }' "/proc/$p/status")
	cpu=$(awk -v a="$(cat "$T/$n.t0")" -v b="$(ticks "$p")" -v hz="$(getconf CLK_TCK)" \
		-v s=$((SECS - WARMUP)) 'BEGIN { printf "%.2f%%", 100 * (b - a) / hz / s }')
	ev=$("$HEARTH" status --socket "$T/$n/ctl.sock" 2>/dev/null |
		awk '/^symbols:/ { for (i = 1; i < NF; i++) if ($(i + 1) == "evicted") print $i }')
	echo "| $n | $r | $hwm | $(parts "$p") | $cpu | ${ev:-?} |"
done
echo
echo "load $(sort -n "$T/load" | sed -n '1p')-$(sort -n "$T/load" | tail -1), $SECS s, $RATE execs/s"
