#!/bin/sh
# hearthd over a long run: WINDOWS windows of 100 ms (default 100,000,
# about 3 hours) under a mixed load: a spinning process (CPU), a pipe
# ping-pong (context switches) and ~20 execs a second (churn), with the
# shipped configuration apart from the window length and a retention size
# small enough to be reached (RETENTION, default 64M).
#
# Checks, and prints as one Markdown table row each:
#   - RSS is flat after warm-up (the first WARMUP windows, default a
#     tenth, at least 300): the highest RSS of the second half of the rest
#     is within 5% of the highest of the first half. Caches bounded by
#     configuration (the symbol cache, SYMBOL_CACHE, default the shipped
#     256M) and the open 10-minute roll-up rise and fall: a leak grows
#     from one half to the next, a cache at its bound does not;
#   - the open descriptors at the end are no more than after warm-up
#     (give or take 8: caches of open modules come and go);
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
# 90 s, a 32M symbol cache so that it is full within the warm-up).
set -eu
BUILD=${BUILD:-build}
WINDOWS=${WINDOWS:-100000}
WARMUP=${WARMUP:-$((WINDOWS / 10))}
[ "$WARMUP" -ge 300 ] || WARMUP=300
[ "$WARMUP" -lt "$WINDOWS" ] || { echo "soak: WINDOWS must be more than the warm-up ($WARMUP)" >&2; exit 2; }
RETENTION=${RETENTION:-64M}
SYMBOL_CACHE=${SYMBOL_CACHE:-256M}
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
fd0=0 n=0 next=0
while [ "$n" -lt "$WINDOWS" ]; do
	sleep 2
	kill -0 "$HD" 2>/dev/null || { tail -5 "$T/hearthd.log" >&2; echo "soak: hearthd died" >&2; exit 1; }
	n=$((($(date +%s) - t0) * 10))
	[ "$n" -lt "$WARMUP" ] && continue
	r=$(rss_kib "$HD")
	[ "$fd0" -eq 0 ] && fd0=$(fds "$HD")
	echo "$n $r $(fds "$HD")" >>"$T/trace"
	if [ "$n" -ge "$next" ]; then
		[ -t 2 ] && printf '\rsoak: %d of %d windows, RSS %d KiB' "$n" "$WINDOWS" "$r" >&2
		next=$((n + WINDOWS / 10))
	fi
done
[ -t 2 ] && printf '\n' >&2
fd1=$(fds "$HD")
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
# The highest RSS of each half of the trace, and the lowest of all.
set -- $(awk -v mid=$(((WARMUP + WINDOWS) / 2)) '
	$1 < mid { if ($2 > a) a = $2 } $1 >= mid { if ($2 > b) b = $2 }
	!lo || $2 < lo { lo = $2 } END { print a + 0, b + 0, lo + 0 }' "$T/trace")
h1=$1 h2=$2 rlo=$3
growth=$(awk -v a="$h1" -v b="$h2" 'BEGIN { printf "%.1f", a ? (b - a) * 100 / a : 100 }')
row "RSS flat after warm-up ($WARMUP windows)" \
	"$(awk -v g="$growth" -v a="$h1" 'BEGIN { print (a && g <= 5) ? "ok" : "FAIL" }')" \
	"highest $h1 KiB in the first half, $h2 KiB in the second ($growth%); lowest $rlo KiB"
# (caches of open modules come and go: a leak is growth)
row "descriptors flat" "$([ "$fd1" -le $((fd0 + 8)) ] && echo ok || echo FAIL)" "$fd0 after warm-up, $fd1 at the end"
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
