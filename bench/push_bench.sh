#!/bin/sh
# Push: bytes sent per window against the same windows as folded text and
# as gzip'd folded text, and hearthd's CPU with push off and on. Two
# hearthd runs of $SECS s (default 60) with 10 s windows on this host as it
# is, one without and one with push_url to the test backend on 127.0.0.1
# (tests/e2e/push_receiver.py, answering 200). Run as root.
set -u
BUILD=${BUILD:-build}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
HEARTHD=${HEARTHD:-$PWD/$BUILD/hearthd}
SECS=${SECS:-60}
T=$(mktemp -d /tmp/hearth-push-bench.XXXXXX)
RX= HD=
trap '[ -n "$HD" ] && kill "$HD"; [ -n "$RX" ] && kill "$RX"; wait; rm -rf "$T"' EXIT
mkdir -p "$T/rx"
python3 tests/e2e/push_receiver.py "$T/rx" 0 2>/dev/null &
RX=$!
until [ -s "$T/rx/port" ]; do sleep 0.1; done

# run NAME FLAGS...: hearthd for SECS s; prints its CPU seconds.
run() {
	n=$1; shift
	"$HEARTHD" --state-dir "$T/$n" --socket "$T/$n.sock" --window 10s "$@" 2>"$T/$n.log" &
	HD=$!
	until "$HEARTH" status --socket "$T/$n.sock" >/dev/null 2>&1; do sleep 0.1; done
	c0=$(awk '{ print $14 + $15 }' "/proc/$HD/stat")
	sleep "$SECS"
	c1=$(awk '{ print $14 + $15 }' "/proc/$HD/stat")
	"$HEARTH" status --socket "$T/$n.sock" > "$T/$n.status"
	# folded and gzip'd folded, window by window, both kinds
	"$HEARTHD" --verify-store "$T/$n" | awk '/^window / { print $2, $3 }' > "$T/$n.windows"
	: > "$T/$n.folded.sizes"
	while read -r s e; do
		f=0; g=0
		for k in "" --off-cpu; do
			"$HEARTH" snapshot --socket "$T/$n.sock" $k -o "$T/w.folded" \
				--since "@$(awk -v s="$s" 'BEGIN { printf "%.6f", (s + 1e6) / 1e9 }')" \
				--until "@$(awk -v e="$e" 'BEGIN { printf "%.6f", (e - 1e6) / 1e9 }')" 2>/dev/null
			f=$((f + $(wc -c < "$T/w.folded"))); g=$((g + $(gzip -c "$T/w.folded" | wc -c)))
		done
		echo "$f $g" >> "$T/$n.folded.sizes"
	done < "$T/$n.windows"
	kill "$HD"; wait "$HD"; HD=
	awk -v a="$c0" -v b="$c1" -v s="$SECS" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f", 100 * (b - a) / hz / s }'
}
off=$(run off)
on=$(run on --push-url "http://127.0.0.1:$(cat "$T/rx/port")")
sed -n 's/^push: *//p' "$T/on.status"
w=$(sed -n 's/^push: *\([0-9]*\) windows sent, \([0-9]*\) requests, .*/\1 \2/p' "$T/on.status")
bytes=$(awk -F'\t' '{ print $8 }' "$T/rx/accepted.tsv" | xargs cat | wc -c)
awk -v w="$w" -v b="$bytes" -v off="$off" -v on="$on" -f /dev/stdin "$T/on.folded.sizes" <<'AWK'
{ f += $1; g += $2; n++ }
END {
	split(w, a, " ")
	printf "windows %d (pushed %d, %d requests, %.1f per window)\n", n, a[1], a[2], a[2] / a[1]
	printf "per window: pushed %.1f KiB, folded %.1f KiB, gzip'd folded %.1f KiB (pushed/gzip'd %.2fx)\n",
		b / a[1] / 1024, f / n / 1024, g / n / 1024, (b / a[1]) / (g / n)
	printf "hearthd CPU: push off %.2f%%, push on %.2f%% of one core (+%.2f)\n", off, on, on - off
}
AWK
