#!/bin/sh
# The diff and live views' benchmark (make bench, or make bench-diff): merge
# and frame time for two generated 1,000,000-line profiles, and the live
# update from a window's arrival to the redrawn frame. Figures and how to
# read them: bench/RESULTS.md (section "Diff and live").
#
# DIFF_BENCH_BASE=<git revision> also builds the merge of that revision's
# profile/diff.c beside the current one and runs the two in turn (same
# inputs, same process, so the same machine load), then checks that their
# union trees are the same path by path.
BUILD=${BUILD:-build}
bin=$BUILD/bench/diff_bench
[ -x "$bin" ] || { echo "diff_bench: build $bin first (make bench-diff)"; exit 1; }
if [ -n "${DIFF_BENCH_BASE:-}" ]; then
	dir=$BUILD/bench/base
	mkdir -p "$dir" || exit 1
	git show "$DIFF_BENCH_BASE:profile/diff.c" >"$dir/diff.c" || {
		echo "diff_bench: no profile/diff.c at $DIFF_BENCH_BASE"; exit 1; }
	# The older file's public names get a base_ prefix; the rest of it
	# (statics) stays private to its object.
	syms=$(sed -n 's/^[a-z].* \**\(prof_[a-z0-9_]*\)(.*/\1/p' profile/diff.h | sort -u)
	redef=$(for s in $syms; do printf ' --redefine-sym %s=base_%s' "$s" "$s"; done)
	cflags="-O2 -g -std=c17 -D_GNU_SOURCE -fno-omit-frame-pointer -I. -I$BUILD \
		$(pkg-config --cflags sdl2 SDL2_ttf 2>/dev/null)"
	libs="$(pkg-config --libs libbpf libelf libdw zlib libsystemd sdl2 SDL2_ttf SDL2_image \
		2>/dev/null) -lpthread -lm"
	# shellcheck disable=SC2086
	cc $cflags -Iprofile -c "$dir/diff.c" -o "$dir/diff.o" &&
		objcopy $redef "$dir/diff.o" &&
		cc $cflags -DDIFF_BENCH_BASE -o "$dir/diff_bench" bench/diff_bench.c \
			"$dir/diff.o" "$BUILD/librender.a" "$BUILD/libprofile.a" $libs ||
		{ echo "diff_bench: could not build the merge of $DIFF_BENCH_BASE"; exit 1; }
	bin=$dir/diff_bench
fi
"$bin" "${DIFF_BENCH_LINES:-1000000}" "${DIFF_BENCH_LIVE_LINES:-100000}"
