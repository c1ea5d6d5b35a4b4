# Shared helpers for the end-to-end scripts (sourced, not run).
set -u
T=$(mktemp -d /tmp/hearth-e2e.XXXXXX)
BG_PIDS=
cleanup() {
	for p in $BG_PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }

# These tests load real BPF programs: they need root. They never skip.
require_root() {
	[ "$(id -u)" = 0 ] || fail "end-to-end tests load BPF programs and must run as root"
}

bg() { "$@" & BG_PIDS="$BG_PIDS $!"; LAST_PID=$!; }

# sum FILE REGEX: total count of folded lines whose stack matches REGEX
# (an awk ERE tested against the stack part, without the count).
sum() {
	awk -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) t += n } END { printf "%.0f\n", t + 0 }' "$1"
}

# total FILE: sum of every count.
total() { awk '{ t += $NF } END { printf "%.0f\n", t + 0 }' "$1"; }

# oncpu_ns PID: nanoseconds the process's main thread has run on a CPU.
oncpu_ns() { cut -d' ' -f1 "/proc/$1/schedstat"; }

# within VALUE EXPECTED PERCENT: succeeds when |VALUE-EXPECTED| <= PERCENT% of EXPECTED.
within() {
	awk -v v="$1" -v e="$2" -v p="$3" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= e * p / 100) }'
}

# ratio A B: A/(A+B) as a percentage with one decimal.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + b == 0) print "nan"; else printf "%.1f\n", 100 * a / (a + b) }'; }

# between X LO HI (floating point)
between() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
