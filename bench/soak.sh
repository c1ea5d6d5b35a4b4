#!/bin/sh
# hearthd over a long run: WINDOWS windows of 100 ms (default 100,000,
# about 3 hours) under a mixed load: a spinning process (CPU), a pipe
# ping-pong (context switches) and ~20 execs a second (churn), with the
# shipped configuration apart from the window length and a retention size
# small enough to be reached (RETENTION, default 64M).
#
# Checks, and prints as one Markdown table row each:
#   - RSS is flat after warm-up (the first WARMUP windows, default a
#     tenth, at least 300): the median RSS of the second half of the rest
#     is within RSS_TOLERANCE percent (default 5) of the first half's.
#     Caches bounded by configuration (the symbol cache, SYMBOL_CACHE,
#     default the shipped 32M) and the open 10-minute roll-up rise and
#     fall, and a new large binary costs a passing peak: a leak moves the
#     whole second half up, a cache at its bound or a peak does not;
#   - the open descriptors are flat: the second half's median no more
#     than the first half's peak plus 8 (caches of open modules swing
#     them by about 50 between windows: a median can land on either
#     side; a leak moves the whole second half past the peak);
#   - the store stays within its retention size;
#   - `hearthd --verify-store` finds nothing damaged;
#   - every roll-up equals the sum of its windows: the whole store merged
#     through the roll-ups (as snapshots read it) and merged window by
#     window give the same folded text, byte for byte (from 10 minutes on;
#     shorter runs write no roll-up and say so).
# Exit status 1 when a check fails. Run as root:
#   make BUILD=build all fixtures
#   WINDOWS=100000 BUILD=build sh bench/soak.sh
# The suite runs a short version (tests/e2e/daemon_soak.sh: 900 windows,
# 90 s, a 32M symbol cache so that it is full within the warm-up, RSS
# within 25%: it catches gross leaks only).
set -eu
BUILD=${BUILD:-build}
WINDOWS=${WINDOWS:-100000}
WARMUP=${WARMUP:-$((WINDOWS / 10))}
[ "$WARMUP" -ge 300 ] || WARMUP=300
[ "$WARMUP" -lt "$WINDOWS" ] || { echo "soak: WINDOWS must be more than the warm-up ($WARMUP)" >&2; exit 2; }
RETENTION=${RETENTION:-64M}
SYMBOL_CACHE=${SYMBOL_CACHE:-32M}
RSS_TOLERANCE=${RSS_TOLERANCE:-5}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
HEARTHD=${HEARTHD:-$PWD/$BUILD/hearthd}
FIX=${FIXTURES:-$PWD/$BUILD/fixtures}
TOOL=${TOOL:-$PWD/$BUILD/bench/daemon_store_tool}
T=$(mktemp -d /tmp/hearthd-soak.XXXXXX)
HD= W1= W2= W3=
cleanup() {
	for p in $HD $W1 $W2 $W3; do kill "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -x "$TOOL" ] || make --no-print-directory -s BUILD="$BUILD" "$BUILD/bench/daemon_store_tool" ||
	{ echo "soak: cannot build $TOOL" >&2; exit 1; }
PAGE=$(getconf PAGESIZE)
rss_kib() { awk -v p="$PAGE" '{ print int($2 * p / 1024) }' "/proc/$1/statm"; }
fds() { ls "/proc/$1/fd" | wc -l; }
bytes_of() { # 64M -> bytes
	echo "$1" | awk '/[Kk]$/ { v = $0 * 1024 } /[Mm]$/ { v = $0 * 1048576 }
		/[Gg]$/ { v = $0 * 1073741824 } /^[0-9]+$/ { v = $0 } END { printf "%d\n", v }'
}

"$FIX/record_work" spin 1000000 >/dev/null & W1=$!
"$FIX/unwind_nofp" pingpong 1000000 >/dev/null & W2=$!
sh -c 'while :; do /bin/true; sleep 0.05; done' & W3=$!

"$HEARTHD" --state-dir "$T/state" --socket "$T/ctl.sock" --window 100ms \
	--retention-size "$RETENTION" --symbol-cache "$SYMBOL_CACHE" 2>"$T/hearthd.log" &
HD=$!
i=0
until "$HEARTH" status --socket "$T/ctl.sock" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 150 ] && { tail -5 "$T/hearthd.log" >&2; echo "soak: hearthd did not start" >&2; exit 1; }
	sleep 0.2
done

# Windows are counted by time: retention deletes stored ones as it goes.
# After the warm-up, RSS and descriptors every 2 s into $T/trace.
t0=$(date +%s)
n=0 next=0
while [ "$n" -lt "$WINDOWS" ]; do
	sleep 2
	kill -0 "$HD" 2>/dev/null || { tail -5 "$T/hearthd.log" >&2; echo "soak: hearthd died" >&2; exit 1; }
	n=$((($(date +%s) - t0) * 10))
	[ "$n" -lt "$WARMUP" ] && continue
	r=$(rss_kib "$HD")
	echo "$n $r $(fds "$HD")" >>"$T/trace"
	if [ "$n" -ge "$next" ]; then
		[ -t 2 ] && printf '\rsoak: %d of %d windows, RSS %d KiB' "$n" "$WINDOWS" "$r" >&2
		next=$((n + WINDOWS / 10))
	fi
done
[ -t 2 ] && printf '\n' >&2
kill -TERM "$HD"; wait "$HD" || true; HD=
kill "$W1" "$W2" "$W3"; W1= W2= W3=
secs=$(($(date +%s) - t0))

limit=$(bytes_of "$RETENTION")
size=$(find "$T/state" -type f \( -name 'seg-*' \) -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
"$HEARTHD" --verify-store "$T/state" >"$T/verify" 2>&1 && vrc=0 || vrc=$?
rollups=$(awk '/^roll-ups checked:/ { print $3 + $5 }' "$T/verify")
first=$(awk '/^window / { print $2; exit }' "$T/verify")
last=$(awk '/^window / { e = $3 } END { print e }' "$T/verify")
"$TOOL" merge "$T/state" "$first" "$last" >"$T/one" 2>/dev/null
"$TOOL" merge "$T/state" "$first" "$last" merged >"$T/rolled" 2>/dev/null
"$TOOL" merge "$T/state" "$first" "$last" off >"$T/one.off" 2>/dev/null
"$TOOL" merge "$T/state" "$first" "$last" off merged >"$T/rolled.off" 2>/dev/null

bad=0
row() { # check result detail
	printf '| %s | %s | %s |\n' "$1" "$2" "$3"
	[ "$2" = ok ] || bad=1
}
stored=$(grep -c '^window ' "$T/verify" || true)
echo "hearthd soak: $n windows of 100 ms in $secs s ($stored kept by retention), mixed load (spin, ping-pong, ~20 execs/s)"
echo
echo "| check | result | figures |"
echo "|---|---|---|"
# median HALF COLUMN: the median of COLUMN (2 RSS, 3 descriptors) in the
# first (1) or second (2) half of the trace after warm-up.
half() {
	awk -v mid=$(((WARMUP + WINDOWS) / 2)) -v h="$1" -v c="$2" '(h == 1) == ($1 < mid) { print $c }' "$T/trace" | sort -n
}
median() { half "$1" "$2" | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
m1=$(median 1 2) m2=$(median 2 2) fd0=$(half 1 3 | tail -1) fd1=$(median 2 3)
set -- $(awk '!lo || $2 < lo { lo = $2 } $2 > hi { hi = $2 } END { print lo + 0, hi + 0 }' "$T/trace")
growth=$(awk -v a="$m1" -v b="$m2" 'BEGIN { printf "%.1f", a ? (b - a) * 100 / a : 100 }')
row "RSS flat after warm-up ($WARMUP windows, ${RSS_TOLERANCE}%)" \
	"$(awk -v g="$growth" -v a="$m1" -v t="$RSS_TOLERANCE" 'BEGIN { print (a && g <= t) ? "ok" : "FAIL" }')" \
	"median $m1 KiB in the first half, $m2 KiB in the second ($growth%); $1 to $2 KiB"
# (caches of open modules come and go: a leak is growth)
row "descriptors flat" "$([ "$fd1" -le $((${fd0:-0} + 8)) ] && echo ok || echo FAIL)" "peak ${fd0:-0} in the first half, median $fd1 in the second"
row "store within retention_size ($RETENTION)" "$([ "$size" -le "$limit" ] && echo ok || echo FAIL)" \
	"$((size / 1048576)) MiB of segments"
row "verify-store" "$([ "$vrc" -eq 0 ] && echo ok || echo FAIL)" "$(tail -1 "$T/verify")"
if [ "${rollups:-0}" -gt 0 ]; then
	same=FAIL
	cmp -s "$T/one" "$T/rolled" && cmp -s "$T/one.off" "$T/rolled.off" && [ -s "$T/one" ] && same=ok
	row "roll-ups equal their windows" "$same" "$rollups roll-ups; $(wc -l <"$T/one") on-CPU stacks"
else
	echo "| roll-ups equal their windows | n/a | none written in a run this short |"
fi
echo
echo "RSS (KiB) and descriptors by window: $(awk -v step=$((WINDOWS / 10)) 'NR == 1 || $1 >= at {
	printf "%s%d: %d/%d", (NR > 1 ? ", " : ""), $1, $2, $3; at = $1 + step }' "$T/trace")"
exit $bad
