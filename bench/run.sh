#!/bin/sh
# make bench: every benchmark, each printing its figures and ratios against
# the peers measured in the same run. Run as root (BPF, perf).
# BENCH=name runs only bench/<name>.sh.
BUILD=${BUILD:-build}
export BUILD HEARTH="$PWD/$BUILD/hearth" HEARTHD="$PWD/$BUILD/hearthd" FIXTURES="$PWD/$BUILD/fixtures"
rc=0
for b in bench/*.sh; do
	n=$(basename "$b" .sh)
	case "$n" in run|lib*) continue ;; esac
	[ -n "${BENCH:-}" ] && [ "$n" != "$BENCH" ] && continue
	echo "== $n"
	sh "$b" || rc=1
done
exit $rc
