#!/bin/sh
# A process that execs again and again while hearthd drains: exec_spin
# spins in spin_first for 300 ms, sleeps 1.5 s, then execs exec_spin_b,
# which does the same in spin_other and execs exec_spin again, under one
# process id. Both images are built without PIE, so the same addresses are
# spin_first in one and spin_other in the other: stacks or frames
# remembered for the old image would name the new image's samples wrongly.
# hearthd cuts 200 ms windows, with frame pointers and with the walker
# (auto: walked in the kernel, tables per image: an exec makes them
# stale at once).
#  - the second binary's samples (process row exec_spin_b) are never named
#    spin_first, and hold spin_other; the first's never spin_other and hold
#    spin_first.
# The sleep keeps each image's samples out of the window its exec falls in
# (even when a loaded host delays hearthd's drains by several windows):
# a window's samples are named from the mappings read at the process's
# last exec, so on-CPU samples taken before an exec in the same window
# would be named from the new image (a limit of one mapping set per
# process, not of the remembered stacks tested here). For the same reason
# this test does not drive an exec into the middle of a drain: the unit
# test test_stack_exec does (it fails when an exec leaves the frames cached
# by address in place); this one checks naming across many execs end to
# end, in both unwind modes. Each image spins 300 ms of its own CPU time,
# so a loaded host gives it as many samples, only later.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
HD= FX=
fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
cleanup() {
	[ -n "$FX" ] && kill "$FX" 2>/dev/null
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
# rows FILE COMM REGEX: samples of process row COMM whose frames match REGEX.
rows() {
	awk -v c="$2" -v re="$3" 'index($0, c ";") == 1 { s = $0; sub(/ [0-9]+$/, "", s)
		if (s ~ re) t += $NF } END { printf "%.0f\n", t }' "$1"
}

[ -x "$HEARTHD" ] && [ -x "$FIXTURES/exec_spin" ] && [ -x "$FIXTURES/exec_spin_b" ] ||
	fail "build hearthd and the fixtures first"
for mode in fp auto; do
	hearthd_start --state-dir "$T/state-$mode" $S --window 200ms --unwind $mode
	# 8 execs, 9 images of 1.8 s: 16 s, about 80 windows.
	"$FIXTURES/exec_spin" "$FIXTURES/exec_spin_b" 8 300 1500 >/dev/null &
	FX=$!
	pid=$FX
	wait "$FX" || fail "$mode: exec_spin failed"
	FX=
	sleep 0.5
	f=$T/$mode.folded
	"$HEARTH" snapshot $S --last 60s --pid "$pid" -o "$f" || fail "$mode: snapshot failed"
	kill -TERM "$HD"; wait "$HD"; HD=
	first=$(rows "$f" exec_spin ';spin_first(;|$)')
	other=$(rows "$f" exec_spin_b ';spin_other(;|$)')
	wrong_b=$(rows "$f" exec_spin_b 'spin_first')
	wrong_a=$(rows "$f" exec_spin 'spin_other')
	echo "$mode: exec_spin rows in spin_first $first (in spin_other $wrong_a), exec_spin_b rows in spin_other $other (in spin_first $wrong_b)"
	# About 120-150 samples each at a full CPU; a busy shared host gives less,
	# and at least 20 keep the zero counts above meaningful.
	[ "$wrong_b" -eq 0 ] || { grep '^exec_spin_b;.*spin_first' "$f"; fail "$mode: $wrong_b samples of the second binary named after the first's function"; }
	[ "$wrong_a" -eq 0 ] || { grep '^exec_spin;.*spin_other' "$f"; fail "$mode: $wrong_a samples of the first binary named after the second's function"; }
	[ "$other" -ge 20 ] || fail "$mode: only $other samples of exec_spin_b in spin_other"
	[ "$first" -ge 20 ] || fail "$mode: only $first samples of exec_spin in spin_first"
done
echo "ok: an exec never names one image's samples after the other's functions"
