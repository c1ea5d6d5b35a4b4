#!/bin/sh
# Runs every test: cmocka unit binaries, fuzz targets for a bounded time,
# then the end-to-end scripts (real BPF, real processes, real windows).
# Prints one closing line "N passed, N failed". Exit status 1 on any failure.
#
# Environment: BUILD (build folder, default build-test), ONLY (a substring:
# run only the tests whose name contains it), FUZZ_SECONDS (default 6: each
# fuzz target starts from its corpus; FUZZ_SECONDS=600 for a long run).
BUILD=${BUILD:-build-test}
FUZZ_SECONDS=${FUZZ_SECONDS:-6}
export BUILD HEARTH="$PWD/$BUILD/hearth" HEARTHD="$PWD/$BUILD/hearthd" FIXTURES="$PWD/$BUILD/fixtures"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
pass=0
fail=0
failed=
logdir=$BUILD/test-logs
mkdir -p "$logdir"

run_one() { # name command...
	name=$1; shift
	case "$name" in *"${ONLY:-}"*) ;; *) return ;; esac
	log="$logdir/$name.log"
	mkdir -p "$(dirname "$log")"
	start=$(date +%s)
	if "$@" >"$log" 2>&1; then
		pass=$((pass + 1))
		printf 'PASS %-40s %3ss\n' "$name" "$(( $(date +%s) - start ))"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		printf 'FAIL %-40s %3ss (log: %s)\n' "$name" "$(( $(date +%s) - start ))" "$log"
		tail -25 "$log" | sed 's/^/     | /'
	fi
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for f in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	n=$(basename "$f")
	corpus=tests/fuzz/corpus/${n#fuzz_}
	mkdir -p "$logdir/corpus-$n"
	if [ -d "$corpus" ]; then
		run_one "fuzz/$n" "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 "$logdir/corpus-$n" "$corpus"
	else
		run_one "fuzz/$n" "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 "$logdir/corpus-$n"
	fi
done
for s in tests/e2e/*.sh; do
	[ -f "$s" ] || continue
	case "$(basename "$s")" in lib*) continue ;; esac # sourced helpers
	run_one "e2e/$(basename "$s" .sh)" sh "$s"
done

echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
