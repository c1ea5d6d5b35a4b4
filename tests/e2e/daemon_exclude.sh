#!/bin/sh
# hearthd leaves out the processes named in exclude_comm, on-CPU and
# off-CPU (the sampler drops their stacks before symbolizing them), keeps
# every other process under its own pid, and a SIGHUP that changes the list
# applies from the next window on.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
HD= FX= RW= SL=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	for p in $FX $RW $SL; do kill "$p" 2>/dev/null; done
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
# rows FILE COMM: the value of the stacks under process COMM.
rows() { awk -v c="$2" 'index($0, c ";") == 1 { t += $NF } END { printf "%.0f\n", t }' "$1"; }

[ -x "$HEARTHD" ] && [ -x "$FIXTURES/daemon_shift" ] && [ -x "$FIXTURES/record_work" ] ||
	fail "build hearthd and the fixtures first"
echo "exclude_comm = daemon_shift sleep" > "$T/hearthd.conf"
hearthd_start --config "$T/hearthd.conf" --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s
"$FIXTURES/daemon_shift" &
FX=$!
"$FIXTURES/record_work" spin 120 &
RW=$!
# A shell that waits for short sleeps: both it and `sleep` wait off-CPU.
sh -c 'while :; do sleep 0.1; done' &
SL=$!
hearthd_wait_windows 3

"$HEARTH" snapshot $S --last 2s -o "$T/on.folded" || fail "snapshot failed"
"$HEARTH" snapshot $S --last 2s --off-cpu -o "$T/off.folded" || fail "snapshot --off-cpu failed"
[ "$(rows "$T/on.folded" record_work)" -gt 0 ] || fail "record_work (not excluded) is missing on-CPU"
[ "$(rows "$T/on.folded" daemon_shift)" -eq 0 ] || fail "daemon_shift is excluded but has on-CPU samples"
[ "$(rows "$T/off.folded" sh)" -gt 0 ] || fail "the shell's waits (not excluded) are missing off-CPU"
[ "$(rows "$T/off.folded" sleep)" -eq 0 ] || fail "sleep is excluded but has off-CPU waits"
echo "ok: excluded daemon_shift (on-CPU) and sleep (off-CPU), kept record_work and sh"

# The process row carries the pid: --pid finds record_work's stacks alone.
"$HEARTH" snapshot $S --last 2s --pid "$RW" -o "$T/pid.folded" || fail "snapshot --pid failed"
[ "$(rows "$T/pid.folded" record_work)" -gt 0 ] || fail "--pid $RW found none of record_work's samples"
stacks "$T/pid.folded" | grep -v '^record_work;' | grep -q . && fail "--pid $RW let other processes through"
echo "ok: --pid keeps record_work's samples alone"

echo "exclude_comm = record_work" > "$T/hearthd.conf"
kill -HUP "$HD"
i=0
until grep -q "configuration reloaded" "$T/hearthd.log"; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no reload logged within 10 s of SIGHUP"
	sleep 0.1
done
hearthd_wait_windows 3
"$HEARTH" snapshot $S --last 1s -o "$T/on2.folded" || fail "snapshot after the reload failed"
[ "$(rows "$T/on2.folded" daemon_shift)" -gt 0 ] || fail "daemon_shift is no longer excluded but is missing"
[ "$(rows "$T/on2.folded" record_work)" -eq 0 ] || fail "record_work is excluded since the reload but has samples"
echo "ok: SIGHUP swapped the excluded names"
kill -TERM "$HD"
wait "$HD" || fail "hearthd exited non-zero on SIGTERM"
HD=
echo "ok: hearthd excludes by name, reloads the list, keeps pids"
