#!/bin/sh
# Push: bytes sent per window against the same windows as folded text and
# as gzip'd folded text, and what pushing costs hearthd. Two hearthd run
# side by side for $SECS s (default 300) with 10 s windows on this host as
# it is, one with push off and one pushing to the test backend on
# 127.0.0.1 (tests/e2e/push_receiver.py, answering 200), so that both see
# the same load. The cost is read twice: the push thread's own CPU
# (/proc/PID/task, the thread named hearthd-push), and the difference
# between the two daemons' user+sys. Run as root, release build.
set -u
BUILD=${BUILD:-build}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
HEARTHD=${HEARTHD:-$PWD/$BUILD/hearthd}
SECS=${SECS:-300}
T=$(mktemp -d /tmp/hearth-push-bench.XXXXXX)
RX= OFF= ON=
trap 'kill $OFF $ON $RX 2>/dev/null; wait; rm -rf "$T"' EXIT
mkdir -p "$T/rx"
python3 tests/e2e/push_receiver.py "$T/rx" 0 2>/dev/null &
RX=$!
until [ -s "$T/rx/port" ]; do sleep 0.1; done

# start NAME FLAGS...: a hearthd with store $T/NAME and socket $T/NAME.sock.
start() {
	n=$1; shift
	"$HEARTHD" --state-dir "$T/$n" --socket "$T/$n.sock" --window 10s "$@" 2>"$T/$n.log" &
	echo $! > "$T/$n.pid"
	until "$HEARTH" status --socket "$T/$n.sock" >/dev/null 2>&1; do sleep 0.1; done
}
# ticks PID: user+sys clock ticks of the process.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# push_ticks PID: user+sys clock ticks of its push thread.
push_ticks() {
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm")" = hearthd-push ] && awk '{ print $14 + $15 }' "$t/stat"
	done
}
pct() { awk -v a="$1" -v b="$2" -v s="$SECS" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", 100 * (b - a) / hz / s }'; }

start off
start on --push-url "http://127.0.0.1:$(cat "$T/rx/port")"
OFF=$(cat "$T/off.pid") ON=$(cat "$T/on.pid")
[ -n "$(push_ticks "$ON")" ] || { echo "no hearthd-push thread"; exit 1; }
l0=$(cut -d' ' -f1 /proc/loadavg)
a0=$(ticks "$OFF"); b0=$(ticks "$ON"); p0=$(push_ticks "$ON")
sleep "$SECS"
a1=$(ticks "$OFF"); b1=$(ticks "$ON"); p1=$(push_ticks "$ON")
l1=$(cut -d' ' -f1 /proc/loadavg)
# Let the push take the last window before counting.
sleep 3
"$HEARTH" status --json --socket "$T/on.sock" > "$T/on.json"

# Folded and gzip'd folded, window by window, both kinds, of what was pushed.
"$HEARTHD" --verify-store "$T/on" | awk '/^window / { print $2, $3 }' > "$T/windows"
: > "$T/sizes"
while read -r s e; do
	key="$(awk -v s="$s" 'BEGIN { printf "%d", s / 1e9 }')"
	awk -F'\t' -v k="$key" '$3 == k { f = 1 } END { exit !f }' "$T/rx/accepted.tsv" || continue
	f=0; g=0; p=0
	for k in "" --off-cpu; do
		"$HEARTH" snapshot --socket "$T/on.sock" $k -o "$T/w.folded" \
			--since "@$(awk -v s="$s" 'BEGIN { printf "%.6f", (s + 1e6) / 1e9 }')" \
			--until "@$(awk -v e="$e" 'BEGIN { printf "%.6f", (e - 1e6) / 1e9 }')" 2>/dev/null
		f=$((f + $(wc -c < "$T/w.folded"))); g=$((g + $(gzip -c "$T/w.folded" | wc -c)))
	done
	p=$(awk -F'\t' -v k="$key" '$3 == k { print $8 }' "$T/rx/accepted.tsv" | xargs cat | wc -c)
	r=$(awk -F'\t' -v k="$key" '$3 == k' "$T/rx/accepted.tsv" | grep -c .)
	echo "$f $g $p $r" >> "$T/sizes"
done < "$T/windows"

echo "$SECS s side by side, load average $l0 -> $l1, $(wc -l < "$T/sizes") windows pushed"
awk -v off="$(pct "$a0" "$a1")" -v on="$(pct "$b0" "$b1")" -v thr="$(pct "$p0" "$p1")" '
	{ f += $1; g += $2; p += $3; r += $4; n++ }
	END {
		printf "per window: %.0f requests; pushed %.1f KiB, folded %.1f KiB, gzip'"'"'d folded %.1f KiB (pushed = %.2fx gzip'"'"'d folded)\n",
			r / n, p / n / 1024, f / n / 1024, g / n / 1024, p / g
		printf "hearthd CPU, %% of one core: push off %.3f, push on %.3f (difference %+.3f); the push thread %.3f\n",
			off, on, on - off, thr
	}' "$T/sizes"
