#!/bin/sh
# A backend that reads one byte a second (tests/e2e/push_receiver.py,
# mode "slow") does not slow hearthd down: with 1 s windows and a 2 s
# push_timeout, for 12 s of a slow backend against 12 s of a quick one
# before it,
#  - every window is still cut on time (each 1 s long, within 0.3 s);
#  - sampling keeps its rate: on-CPU samples a second (hearth status)
#    stay within 25% of the quick phase's (drops are printed, not
#    judged: on a shared host they swing by half between two phases);
#  - `hearth snapshot --last 3s` and `hearth status` answer as fast as
#    before (under 1 s, or 3 times the quick phase's, the larger);
#  - the push did meet the slow backend: its requests timed out and were
#    retried, and status says so; once the backend is quick again, the
#    windows stored meanwhile arrive.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_push.sh"

# status_field NAME: a number of `hearth status --json`.
status_field() {
	"$HEARTH" status --json --socket "$T/ctl.sock" |
		python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"
}
# secs COMMAND...: how long COMMAND took, in seconds; fails when it does.
secs() {
	s0=$(now_ns)
	# its output is the caller's figure: a failure is told on stderr
	"$@" > /dev/null 2>"$T/cmd.err" || { cat "$T/cmd.err"; fail "$* failed"; } >&2
	awk -v a="$s0" -v b="$(now_ns)" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
}
# phase NAME: 12 s of hearthd under the backend's current mode; writes
# NAME.rate (samples/s), NAME.drops, NAME.snap and NAME.status (the
# slowest of 4 calls each) and NAME.span (ns, start and end).
phase() {
	t0=$(now_ns); n0=$(status_field samples); d0=$(status_field drops)
	: > "$T/$1.snaps"; : > "$T/$1.stats"
	for i in 1 2 3 4; do
		sleep 2
		secs "$HEARTH" snapshot --socket "$T/ctl.sock" --last 3s -o "$T/snap.folded" >> "$T/$1.snaps"
		secs "$HEARTH" status --socket "$T/ctl.sock" >> "$T/$1.stats"
	done
	sleep $((12 - 8))
	t1=$(now_ns); n1=$(status_field samples); d1=$(status_field drops)
	awk -v a="$n0" -v b="$n1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f\n", (b - a) / ((t1 - t0) / 1e9) }' > "$T/$1.rate"
	echo $((d1 - d0)) > "$T/$1.drops"
	sort -n "$T/$1.snaps" | tail -1 > "$T/$1.snap"
	sort -n "$T/$1.stats" | tail -1 > "$T/$1.status"
	echo "$t0 $t1" > "$T/$1.span"
	echo "$1: $(cat "$T/$1.rate") samples/s, $(cat "$T/$1.drops") drops; slowest snapshot $(cat "$T/$1.snap") s, status $(cat "$T/$1.status") s"
}

rx_start
"$FIXTURES/daemon_shift" &
FX=$!
hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s \
	--push-url "http://127.0.0.1:$PORT" --push-timeout 2s
rx_wait_windows 2 60
phase quick
echo slow > "$RX_DIR/mode"
phase slow
retries=$(status_field push_retries)
err=$(status_field push_last_error)
"$HEARTH" status --socket "$T/ctl.sock" | grep '^push'
echo ok > "$RX_DIR/mode"
rx_wait_until "$(awk '{ printf "%d", $2 / 1e9 }' "$T/slow.span")" 120

# ---- the push met the slow backend ---------------------------------------
[ "$retries" -ge 2 ] || fail "only $retries push retries against a backend reading a byte a second"
[ "$err" = 3 ] || fail "the last push error is $err, not a time-out (3)"
ok "the push timed out against the slow backend ($retries retries) and caught up after it"

# ---- windows cut on time -------------------------------------------------
"$HEARTHD" --verify-store "$T/state" > "$T/verify" || fail "the store does not verify"
read -r s0 s1 < "$T/slow.span"
awk -v a="$s0" -v b="$s1" '/^window / && $2 >= a && $3 <= b { n++; d = ($3 - $2) / 1e9
		if (d < 0.7 || d > 1.3) { printf "a window of %.3f s\n", d; bad = 1 } }
	END { if (n < 9) { printf "only %d windows in 12 s\n", n; bad = 1 } exit bad }' "$T/verify" ||
	fail "windows were not cut on time while the backend was slow"
ok "every window cut on time (1 s within 0.3 s) while the backend read a byte a second"

# ---- sampling and answers as quick as before ----------------------------
awk -v q="$(cat "$T/quick.rate")" -v s="$(cat "$T/slow.rate")" 'BEGIN { exit !(s >= 0.75 * q && s <= 1.25 * q) }' ||
	fail "sampling went from $(cat "$T/quick.rate") to $(cat "$T/slow.rate") samples/s"
for what in snap status; do
	awk -v q="$(cat "$T/quick.$what")" -v s="$(cat "$T/slow.$what")" \
		'BEGIN { lim = 3 * q; if (lim < 1) lim = 1; exit !(s <= lim) }' ||
		fail "$what took $(cat "$T/slow.$what") s with the slow backend, $(cat "$T/quick.$what") s before"
done
ok "sampling rate, snapshots and status as with a quick backend"
kill "$HD"; wait "$HD"; HD=
echo ok
