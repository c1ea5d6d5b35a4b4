#!/bin/sh
# The viewer's benchmark (make bench-render): load time, memory and frame
# time of hearth's viewer on a generated 1,000,000-line folded profile,
# and flamegraph.pl on the same file when FLAMEGRAPH_PL points at it.
BUILD=${BUILD:-build}
LINES=${RENDER_BENCH_LINES:-1000000}
bin=$BUILD/bench/render_bench
input=$BUILD/bench/render_bench-$LINES.folded
if [ ! -x "$bin" ] || [ ! -x "$BUILD/hearth" ]; then
	# make bench builds the programs, not this benchmark's binary.
	make --no-print-directory BUILD="$BUILD" "$bin" "$BUILD/hearth" || exit 1
fi
mkdir -p "$BUILD/bench"
echo "== hearth viewer: $LINES folded lines"
"$bin" "$input" "$LINES" || exit 1
echo "== hearth export --svg of the same file"
if [ -x "$BUILD/hearth" ]; then
	/usr/bin/time -f 'hearth export --svg: %e s, peak RSS %M KiB' \
		"$BUILD/hearth" export --svg -o "$BUILD/bench/render_bench.svg" "$input"
else
	echo "skipped: $BUILD/hearth is not built"
fi
echo "== flamegraph.pl"
if [ -n "${FLAMEGRAPH_PL:-}" ] && [ -r "$FLAMEGRAPH_PL" ]; then
	/usr/bin/time -f 'flamegraph.pl: %e s, peak RSS %M KiB' \
		perl "$FLAMEGRAPH_PL" "$input" >"$BUILD/bench/render_bench-flamegraph.svg"
else
	echo "skipped: set FLAMEGRAPH_PL to the path of flamegraph.pl to compare with it"
fi
