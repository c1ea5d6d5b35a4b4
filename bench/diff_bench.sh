#!/bin/sh
# The diff and live views' benchmark (make bench, or make bench-diff): merge
# and frame time for two generated 1,000,000-line profiles, and the live
# update from a window's arrival to the redrawn frame. Figures and how to
# read them: bench/RESULTS.md (section "Diff and live").
BUILD=${BUILD:-build}
bin=$BUILD/bench/diff_bench
[ -x "$bin" ] || { echo "diff_bench: build $bin first (make bench-diff)"; exit 1; }
"$bin" "${DIFF_BENCH_LINES:-1000000}" "${DIFF_BENCH_LIVE_LINES:-100000}"
