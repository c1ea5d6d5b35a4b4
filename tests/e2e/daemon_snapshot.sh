#!/bin/sh
# hearthd end to end, on the real sampler: a workload with a known CPU split
# (steady_a 40%, steady_b 40%, shifting 20%; after SIGUSR1 20/20/60) runs
# while hearthd cuts 1 s windows into a temporary store.
#  - after 3 windows, `hearth snapshot --last` holds the workload's stacks
#    with those shares (within 3.5 standard errors of the sample count, plus
#    2 points), for --pid and --comm; status then shows the symbolizer's
#    module cache (modules and memory, below its budget);
#  - `--off-cpu` of a shell that always waits shows it blocked for most of
#    the windows' span;
#  - --since/--until take epoch, clock and relative times; mark --at too;
#  - a mark made now ends the open window (a stored window ends at it);
#  - `hearth mark` + behaviour change + `hearth diff --at` ranks `shifting`
#    first, with a rise of its share; `hearth diff a b` on two snapshot
#    files does the same;
#  - `--next` waits for fresh windows; SIGHUP reloads; SIGTERM stores the
#    last window and exits 0; the store verifies clean.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
HD= FX= SL=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	[ -n "$FX" ] && kill "$FX" 2>/dev/null
	[ -n "$SL" ] && kill "$SL" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
# share FILE FUNC: percent of the samples whose stack holds FUNC.
share() {
	awk -v f="$2" '{ n = $NF; t += n; if ((";" $0 ";") ~ (";" f "[; ]")) s += n }
		END { if (t == 0) print -1; else printf "%.1f\n", 100 * s / t }' "$1"
}
# near VALUE EXPECTED N: within 3.5 standard errors of a share measured
# from N samples, plus 2 points for the workload's own unevenness.
near() {
	awk -v v="$1" -v e="$2" -v n="$3" 'BEGIN { p = e / 100; t = 350 * sqrt(p * (1 - p) / n) + 2
		d = v - e; if (d < 0) d = -d; exit !(d <= t) }'
}
total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }

[ -x "$HEARTHD" ] && [ -x "$FIXTURES/daemon_shift" ] || fail "build hearthd and the fixtures first"
echo "# empty: defaults and flags" > "$T/hearthd.conf"
hearthd_start --config "$T/hearthd.conf" --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s

"$FIXTURES/daemon_shift" &
FX=$!
# A shell that waits for short sleeps all the time: off-CPU almost always.
sh -c 'while :; do sleep 0.1; done' &
SL=$!
sleep 0.3
hearthd_wait_windows 8 20
"$HEARTH" snapshot $S --last 7s --pid "$FX" -o "$T/before.folded" || fail "snapshot --last --pid failed"
grep -q '^daemon_shift;.*;main;steady_a' "$T/before.folded" || fail "no daemon_shift;...;main;steady_a stack in the snapshot"
stacks "$T/before.folded" | grep -v '^daemon_shift[; ]' | grep -q . && fail "--pid let other processes through"
a=$(share "$T/before.folded" steady_a); b=$(share "$T/before.folded" steady_b); c=$(share "$T/before.folded" shifting)
n=$(total "$T/before.folded")
echo "before: steady_a $a% steady_b $b% shifting $c% of $n samples (expected 40/40/20)"
# 99 Hz over 7 s is 693 samples at a full CPU; the host is shared.
[ "$n" -ge 150 ] || fail "only $n samples of the workload in 7 s"
near "$a" 40 "$n" && near "$b" 40 "$n" && near "$c" 20 "$n" || fail "shares before the change are off"
# After symbolizing windows, status shows the module cache: some modules
# (daemon_shift, libc, the kernel's are not modules), some memory, below
# the 32 MiB budget.
"$HEARTH" status $S > "$T/status" || fail "status failed"
set -- $(sed -n 's/^symbols: *\([0-9]*\) modules cached, \([0-9.]*\) \([KMG]*i*B\) of 32.0 MiB (\([0-9.]*\)%), \([0-9]*\) evicted$/\1 \2 \3 \4 \5/p' "$T/status")
[ $# -eq 5 ] || fail "no module cache line in status: $(cat "$T/status")"
echo "status: $(grep '^symbols:' "$T/status")"
[ "$1" -ge 2 ] || fail "status: only $1 modules cached after a snapshot of daemon_shift"
awk -v b="$2" -v u="$3" -v p="$4" 'BEGIN { m = u == "B" ? 1 : u == "KiB" ? 1024 : u == "MiB" ? 1048576 : 1073741824
	exit !(b * m >= 4096 && p > 0 && p < 100) }' || fail "status: implausible module cache: $2 $3, $4% of the budget"

"$HEARTH" snapshot $S --last 3s --comm daemon_shift -o "$T/comm.folded" || fail "snapshot --comm failed"
stacks "$T/comm.folded" | grep -v '^daemon_shift[; ]' | grep -q . && fail "--comm let other processes through"
grep -q ';main;shifting' "$T/comm.folded" || fail "--comm lost the workload"

"$HEARTH" snapshot $S --last 3s --pid "$SL" --off-cpu -o "$T/off.folded" || fail "snapshot --off-cpu failed"
blocked=$(awk '{ t += $NF } END { printf "%.2f", t / 1e9 }' "$T/off.folded")
echo "off-CPU: the waiting shell blocked $blocked s in the windows of the last 3 s"
# The windows overlapping the last 3 s cover 3 to 4 s; the shell waits
# nearly all of it (minus its own short runs).
awk -v b="$blocked" 'BEGIN { exit !(b >= 2.4 && b <= 4.4) }' || fail "off-CPU time $blocked s is off"
kill "$SL"; SL=

now=$(date +%s)
"$HEARTH" snapshot $S --since "@$((now - 3))" --until now --comm daemon_shift -o "$T/range.folded" ||
	fail "snapshot --since @EPOCH --until now failed"
grep -q ';main;steady_a' "$T/range.folded" || fail "the --since/--until range lacks the workload"
"$HEARTH" snapshot $S --since "$(date -d @$((now - 3)) +%H:%M:%S)" -o "$T/range2.folded" ||
	fail "snapshot --since HH:MM:SS failed"
"$HEARTH" mark $S --at -1h before-test || fail "mark --at -1h failed"
"$HEARTH" marks $S | awk -v w=$((now - 3600)) '$NF == "before-test" { t = substr($3, 2) + 0; d = t - w }
	END { exit !(d >= 0 && d <= 3) }' || fail "mark --at -1h has the wrong time"

"$HEARTH" mark $S deploy-42 || fail "mark failed"
"$HEARTH" marks $S | grep -q ' deploy-42$' || fail "marks does not list deploy-42"
kill -USR1 "$FX"
sleep 0.2
hearthd_wait_windows 8 20
# A mark made now ends the open window there: a stored window ends at it.
at=$("$HEARTH" marks $S --json | python3 -c "import json, sys; print([m['at_ns'] for m in json.load(sys.stdin)['marks'] if m['name'] == 'deploy-42'][0])")
"$HEARTHD" --verify-store "$T/state" > "$T/verify" || fail "the store does not verify"
awk -v at="$at" '$1 == "window" && $3 == at { f = 1 } END { exit !f }' "$T/verify" ||
	fail "no stored window ends at the mark deploy-42 ($at)"
ok "the mark deploy-42 ended the open window"
"$HEARTH" snapshot $S --last 7s --pid "$FX" -o "$T/after.folded" || fail "snapshot after the change failed"
a=$(share "$T/after.folded" steady_a); c=$(share "$T/after.folded" shifting)
n=$(total "$T/after.folded")
echo "after: steady_a $a% shifting $c% of $n samples (expected 20/60)"
[ "$n" -ge 150 ] || fail "only $n samples of the workload in 7 s"
near "$a" 20 "$n" && near "$c" 60 "$n" || fail "shares after the change are off"

"$HEARTH" diff $S --at deploy-42 --window 6s --pid "$FX" > "$T/diff.txt" || fail "diff --at failed"
cat "$T/diff.txt"
first=$(awk '$1 == "function" { getline; print $1; exit }' "$T/diff.txt")
[ "$first" = shifting ] || fail "diff --at ranks '$first' first, not shifting"
# The change is the column in percentage points (values may hold a space).
awk '$1 == "shifting" { for (i = 2; i <= NF; i++) if ($i ~ /pp$/) exit !($i ~ /^\+/); exit 1 }' "$T/diff.txt" ||
	fail "diff --at does not show shifting growing"
"$HEARTH" diff "$T/before.folded" "$T/after.folded" > "$T/diff2.txt" || fail "diff of two files failed"
first=$(awk '$1 == "function" { getline; print $1; exit }' "$T/diff2.txt")
[ "$first" = shifting ] || fail "diff of files ranks '$first' first, not shifting"

start=$(date +%s)
"$HEARTH" snapshot $S --next 2s --pid "$FX" -o "$T/next.folded" || fail "snapshot --next failed"
took=$(( $(date +%s) - start ))
[ "$took" -ge 1 ] && [ "$took" -le 6 ] || fail "--next 2s returned after $took s"
grep -q ';main;shifting' "$T/next.folded" || fail "--next snapshot lacks the workload"

echo "retention_size = 512M" > "$T/hearthd.conf"
kill -HUP "$HD"
sleep 0.5
grep -q "configuration reloaded" "$T/hearthd.log" || fail "SIGHUP did not reload"
"$HEARTH" status $S | grep -q "limits 512.0 MiB" || fail "the reloaded retention_size is not in effect"

w=$(hearthd_windows)
kill -TERM "$HD"
i=0
while kill -0 "$HD" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "hearthd did not stop within 10 s of SIGTERM"
	sleep 0.1
done
wait "$HD"; rc=$?
HD=
[ "$rc" -eq 0 ] || fail "hearthd exited $rc after SIGTERM"
"$HEARTHD" --verify-store "$T/state" > "$T/verify.txt"; rc=$?
tail -1 "$T/verify.txt"
[ "$rc" -eq 0 ] || fail "the store does not verify"
n=$(grep -c '^window ' "$T/verify.txt")
[ "$n" -gt "$w" ] || fail "the window open at SIGTERM was not stored ($n stored, $w before)"
echo "ok"
