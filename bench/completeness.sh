#!/bin/sh
# Whole stacks on Debian's own programs: hearth record, whole host, as
# shipped (unwind auto), against perf record --call-graph dwarf, both
# recording the same seconds of the same four busy programs (xz, python3,
# sqlite3, perl: no frame pointers, as Debian builds them).
#
# A stack is whole when it reaches the start of its thread: libc's
# __libc_start_call_main (under _start) or start_thread. Named frames are
# those that are not an address (hearth: module+0x..., perf: [unknown]).
#
#   BUILD=build SECS=10 sh bench/completeness.sh   (KEEP=DIR keeps the folded files)
BUILD=${BUILD:-build}
SECS=${SECS:-10}
HEARTH=${HEARTH:-$PWD/$BUILD/hearth}
T=$(mktemp -d)
. bench/lib.sh
pids=""
cleanup() {
	for p in $pids; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && cp "$T"/*.folded "$KEEP"/
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

[ -x "$HEARTH" ] || { echo "completeness: build $HEARTH first (make)"; exit 1; }
command -v perf >/dev/null || { echo "completeness: perf is not installed"; exit 1; }

# The workloads, each its own process group so one kill ends its loop.
cat >"$T/work.py" <<'EOF'
def square_sum(n):
    return sum(i * i for i in range(n))
while True:
    square_sum(200000)
EOF
spawn() { setsid sh -c "$1" >/dev/null 2>&1 & pids="$pids -$!"; }
spawn "while :; do xz -6 -T1 -c </usr/bin/perl >/dev/null; done"
spawn "exec /usr/bin/python3 $T/work.py"
spawn "while :; do sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT sum(x) FROM c;'; done"
spawn "exec perl -e 'sub square_sum { my \$s = 0; \$s += \$_ * \$_ for 1 .. \$_[0]; \$s } square_sum(200000) while 1'"
sleep 1

"$HEARTH" record -d "$SECS" --no-kernel --plain -o "$T/hearth.folded" >"$T/hearth.log" 2>&1 &
hpid=$!
perf record -q -a -F 99 --call-graph dwarf -o "$T/perf.data" -- sleep "$SECS" >/dev/null 2>&1
wait "$hpid" || { echo "completeness: hearth record failed:"; cat "$T/hearth.log"; exit 1; }
perf script -i "$T/perf.data" 2>/dev/null | perf_fold >"$T/perf.folded"

# row FOLDED COMM: samples, whole %, named frames % of COMM's stacks.
row() {
	awk -v comm="$2" '
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
	  if (f[1] != comm) next
	  all += n
	  if (s ~ /;(__libc_start_call_main|start_thread)(;|$)/) whole += n
	  for (i = 2; i <= k; i++) { frames += n; if (f[i] !~ /\+0x[0-9a-f]+$/ && f[i] != "[unknown]") named += n } }
	END { if (all) printf "%d | %.1f%% | %.1f%%", all, 100 * whole / all, 100 * named / frames; else printf "0 | n/a | n/a" }' "$1"
}

echo "$SECS s, whole host; hearth record (unwind auto) and perf record -F 99 --call-graph dwarf at once"
echo
echo "| program | hearth samples | hearth whole | hearth named | perf samples | perf whole | perf named |"
echo "|---|---|---|---|---|---|---|"
for c in xz python3 sqlite3 perl; do
	echo "| $c | $(row "$T/hearth.folded" "$c") | $(row "$T/perf.folded" "$c") |"
done
