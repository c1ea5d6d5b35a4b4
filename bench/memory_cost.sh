#!/bin/sh
# What watching allocations costs a malloc-heavy program, in one run:
# hearth record --alloc and --held (sampled, default 512 KiB) against
# libbpf-tools memleak (uprobe and uretprobe on every call), a bpftrace
# script that sums every malloc's bytes by stack, and heaptrack
# (LD_PRELOAD, every call). The program (alloc_work bench) makes ROUNDS
# rounds of malloc/calloc and free from three functions, 50/25/25 of the
# bytes, and measures its own loop: the CPU time it took (user and
# system: a probe's trap is the program's system time), which a busy
# host does not inflate as it does the elapsed time; each row is the
# median of REPS runs. Also the shares each tool gives the three
# functions.
#
# Run as root: make BUILD=build all fixtures; BUILD=build sh bench/memory_cost.sh
# Environment: ROUNDS (default 5000: 1.99 million allocations; memleak,
# about 40 times slower, runs a tenth of them: every figure is per
# call), REPS (default 3), MEMLEAK (memleak's path; Debian 12's
# libbpf-tools has none: build it from bcc's libbpf-tools, v0.29.0 builds
# against libbpf 1.1).
set -u
ROUNDS=${ROUNDS:-5000}
REPS=${REPS:-3}
BUILD=${BUILD:-build}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
FIX=${FIXTURES:-$PWD/$BUILD/fixtures}
MEMLEAK=${MEMLEAK:-$(command -v memleak || echo /usr/sbin/memleak)}
LIBC=$(readlink -f "$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ { print $NF; exit }')")
T=$(mktemp -d /tmp/hearth-bench.XXXXXX)
W= TOOL=
trap 'for p in $W $TOOL; do kill $p 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
[ "$(id -u)" = 0 ] || { echo "memory_cost: needs root"; exit 1; }

# malloc_byte PID: the first byte of malloc as PID sees it (cc: a probe).
malloc_byte() {
	python3 - "$1" "$LIBC" <<'EOF'
import subprocess, sys
pid, lib = sys.argv[1], sys.argv[2]
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) >= 6 and f[5].rsplit("/", 1)[-1] == lib.rsplit("/", 1)[-1] and int(f[2], 16) == 0:
        base = int(f[0].split("-")[0], 16)
        break
nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
addr = next(int(l.split()[0], 16) for l in nm.splitlines() if l.split()[-1].split("@")[0] == "malloc")
with open(f"/proc/{pid}/mem", "rb") as m:
    m.seek(base + addr)
    print(m.read(1).hex())
EOF
}

# start [PREFIX...]: starts the program (under PREFIX), W its pid once it
# says it is ready.
start() {
	"$@" "$FIX/alloc_work" bench "$R" > "$T/out" 2> "$T/prog.err" &
	W=
	i=0
	until W=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$T/out") && [ -n "$W" ]; do
		i=$((i + 1)); [ $i -gt 300 ] && { cat "$T/prog.err"; echo "memory_cost: the program did not start"; exit 1; }
		sleep 0.1
	done
}

# probed: waits until malloc holds a probe in W (10 s at most).
probed() {
	i=0
	until [ "$(malloc_byte "$W")" = cc ]; do
		i=$((i + 1)); [ $i -gt 100 ] && { echo "memory_cost: $1 placed no probe"; return 1; }
		sleep 0.1
	done
}

# go: runs the loop and prints its "NS CPU_NS CALLS" (the program then
# waits, so a tool can still name its stacks).
go() {
	kill -USR1 "$W"
	until grep -qE '^[0-9]+ [0-9]+ [0-9]+$' "$T/out"; do
		kill -0 "$W" 2>/dev/null || { echo "memory_cost: the program died"; return 1; }
		sleep 0.1
	done
	sleep 0.1
	grep -E '^[0-9]+ [0-9]+ [0-9]+$' "$T/out"
}

# end: ends the program.
end() {
	kill "$W" 2>/dev/null
	W=
}

# stop: ends the tool (SIGINT) and waits for it.
stop() {
	kill -INT "$TOOL" 2>/dev/null
	wait "$TOOL" 2>/dev/null
	TOOL=
}

# one MODE: one run of MODE; prints "NS CPU_NS CALLS".
one() {
	case $1 in
	base)
		start; go; end ;;
	alloc | held)
		start
		"$HEARTH" record --"$1" -p "$W" -o "$T/$1.folded" 2> "$T/$1.err" & TOOL=$!
		probed hearth || return 1
		go; stop; end ;;
	memleak)
		start
		"$MEMLEAK" -p "$W" 3600 > "$T/memleak.out" 2>&1 & TOOL=$!
		probed memleak || return 1
		go; stop; end ;;
	bpftrace)
		start
		bpftrace -e "uprobe:$LIBC:malloc /pid == $W/ { @[ustack] = sum(arg0); }" \
			> "$T/bpftrace.out" 2>&1 & TOOL=$!
		probed bpftrace || return 1
		go; stop; end ;;
	heaptrack)
		rm -f "$T"/ht.*
		start heaptrack -o "$T/ht"
		go; end
		wait 2>/dev/null ;;
	esac
}

# row MODE: the medians over REPS runs of the CPU time, into
# $T/MODE.cpu, and of the elapsed time, into $T/MODE.ns; the calls into
# $T/MODE.calls.
row() {
	: > "$T/$1.runs"
	: > "$T/$1.cpus"
	R=$ROUNDS
	[ "$1" = memleak ] && R=$(( (ROUNDS + 9) / 10 ))
	for r in $(seq "$REPS"); do
		one "$1" > "$T/one" || return 1
		read -r ns cpu calls < "$T/one" || { echo "memory_cost: $1 gave no figures"; return 1; }
		echo "$ns" >> "$T/$1.runs"
		echo "$cpu" >> "$T/$1.cpus"
	done
	median "$T/$1.runs" > "$T/$1.ns"
	median "$T/$1.cpus" > "$T/$1.cpu"
	echo "$calls" > "$T/$1.calls"
}

. bench/lib.sh

# shares FILE: "big mid small" percentages of a folded file's values.
shares() {
	awk '{ n = $NF; if ($0 ~ /bench_big/) b += n; else if ($0 ~ /bench_mid/) m += n;
	       else if ($0 ~ /bench_small/) s += n }
	     END { t = b + m + s; if (t) printf "%.1f / %.1f / %.1f", 100 * b / t, 100 * m / t, 100 * s / t; else printf "n/a" }' "$1"
}

modes="base alloc held bpftrace heaptrack"
[ -x "$MEMLEAK" ] && modes="base alloc held memleak bpftrace heaptrack"
for m in $modes; do
	row "$m" || exit 1
done
base=$(awk -v t="$(cat "$T/base.cpu")" -v c="$(cat "$T/base.calls")" 'BEGIN { print t / c }')
echo "$ROUNDS rounds, $(cat "$T/base.calls") allocation calls (and as many frees; memleak: a tenth), median of $REPS runs"
echo
echo "| tool | CPU per allocation call (and its free) | slowdown | cost per allocation call | loop elapsed per call |"
echo "|---|---|---|---|---|"
for m in $modes; do
	cpu=$(cat "$T/$m.cpu")
	ns=$(cat "$T/$m.ns")
	calls=$(cat "$T/$m.calls")
	case $m in
	base) name="none" ;;
	alloc) name="hearth record --alloc (sampled, 512 KiB)" ;;
	held) name="hearth record --held (sampled, 512 KiB; frees watched)" ;;
	memleak) name="libbpf-tools memleak (every call, uprobe + uretprobe)" ;;
	bpftrace) name="bpftrace: malloc bytes summed by stack (every call)" ;;
	heaptrack) name="heaptrack (LD_PRELOAD, every call)" ;;
	esac
	awk -v n="$name" -v t="$cpu" -v b="$base" -v c="$calls" -v w="$ns" 'BEGIN {
		printf "| %s | %.0f ns | %.1fx | %.0f ns | %.0f ns |\n", n, t / c, t / c / b, t / c - b, w / c }'
done
[ -x "$MEMLEAK" ] || echo "(memleak: none at $MEMLEAK; set MEMLEAK)"

# Shares of the bytes: hearth's profile; heaptrack's calls by function
# (it sees every call; each function allocates one size: 24 KiB, 2 KiB,
# 64 bytes); the bpftrace map (its walk from malloc's entry starts at the
# caller's caller: none of the three functions is in its stacks).
heaptrack_print -f "$T"/ht.* -a 2>/dev/null | awk '
	/calls to allocation functions with/ { n = $1; getline f
		if (f == "bench_big") b += n * 24576; else if (f == "bench_mid") m += n * 2048
		else if (f == "bench_small") s += n * 64 }
	END { print "x;bench_big " b + 0; print "x;bench_mid " m + 0; print "x;bench_small " s + 0 }' > "$T/ht.folded"
awk '/^@\[/ { s = ""; next } /^\]: / { print s " " $2; next } { s = s ";" $1 }' "$T/bpftrace.out" > "$T/bt.folded"
echo
echo "| tool | bench_big / bench_mid / bench_small, % of bytes (truth 50 / 25 / 25) |"
echo "|---|---|"
echo "| hearth record --alloc | $(shares "$T/alloc.folded") |"
echo "| bpftrace | $(shares "$T/bt.folded") |"
echo "| heaptrack | $(shares "$T/ht.folded") |"
