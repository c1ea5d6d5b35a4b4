#!/bin/sh
# Push to a Pyroscope-style backend (tests/e2e/push_receiver.py: the
# ingest API checked as documented, on 127.0.0.1). hearthd runs with 2 s
# windows and a workload in a systemd-style unit cgroup while the backend
# works, answers 503, goes away, hangs past push_timeout, and answers 400.
# Then, for every stored window: what the backend took, decoded by
# `go tool pprof -raw`, adds up to the store's own totals for that window
# (on-CPU samples, off-CPU nanoseconds, and growth's requests for more
# memory with their bytes, one profile of their own) exactly: nothing
# lost, nothing twice; requests come in window order with from/until following on; 400s
# are skipped, counted and logged once; 503s and time-outs are retried;
# the credentials are sent and appear in no log line and no status. An
# auth file others can read, and push_format = otlp, are refused with one
# sentence.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_push.sh"
TOKEN="e2e-token-$$-7f3a9c"

# Refusals first: each is one sentence and hearthd does not start.
printf '%s\n' "$TOKEN" > "$T/auth"
chmod 644 "$T/auth"
"$HEARTHD" --state-dir "$T/state0" --socket "$T/ctl0.sock" --push-url http://127.0.0.1:9 \
	--push-auth-file "$T/auth" 2>"$T/refused.log" && fail "hearthd started with an auth file others can read"
grep -q "refusing the push auth file $T/auth: it must be .*(chmod 600)" "$T/refused.log" ||
	{ cat "$T/refused.log"; fail "no sentence refusing the 0644 auth file"; }
grep -q "$TOKEN" "$T/refused.log" && fail "the refusal shows the token"
"$HEARTHD" --push-format otlp 2>"$T/otlp.log" && fail "push_format = otlp was taken"
grep -q "otlp is not supported: the OTLP profiles signal is still in development" "$T/otlp.log" ||
	{ cat "$T/otlp.log"; fail "no sentence refusing otlp"; }
ok "a 0644 auth file and push_format = otlp are refused with one sentence"
chmod 600 "$T/auth"

EXPECT_AUTH="Bearer $TOKEN"
rx_start
CG=$(unit_cgroup hearth-push-e2e.service) || fail "cannot make a unit cgroup"
"$FIXTURES/daemon_shift" &
FX=$!
echo "$FX" > "$CG/cgroup.procs" || fail "cannot move the workload into $CG"
# and one that asks for more memory 20 times a second
"$FIXTURES/alloc_work" churn 20 &
GW=$!
echo "$GW" > "$CG/cgroup.procs" || fail "cannot move the growing workload into $CG"
hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" --window 2s \
	--push-url "http://127.0.0.1:$PORT/" --push-auth-file "$T/auth" --push-tenant team-e2e \
	--push-labels "env=e2e, rack=r7" --push-timeout 2s
rx_wait_windows 2 60

echo 503 > "$RX_DIR/mode"; sleep 5
echo ok > "$RX_DIR/mode"; rx_wait_windows 1 60
rx_stop; sleep 5; rx_start; rx_wait_windows 1 90
echo hang > "$RX_DIR/mode"; sleep 6
echo ok > "$RX_DIR/mode"; rx_wait_windows 1 90
echo 400 > "$RX_DIR/mode"; sleep 4.5
echo ok > "$RX_DIR/mode"
# Caught up: the windows stored until now arrive (on a loaded machine the
# push thread, niced below sampling, catches up at its own pace).
rx_wait_until "$(date +%s)" 240
echo 503 > "$RX_DIR/mode"; sleep 1
"$HEARTH" status --socket "$T/ctl.sock" > "$T/status" || fail "hearth status failed"
cat "$T/status"

# ---- what the backend was sent ----------------------------------------
[ -s "$RX_DIR/invalid.log" ] && { head "$RX_DIR/invalid.log"; fail "requests broke the ingest API"; }
grep -c . "$RX_DIR/failed.log" | grep -qv '^0$' || fail "no failed attempt recorded"
grep -q ' 503$' "$RX_DIR/failed.log" || fail "503 answers were not retried"
grep -q ' hang$' "$RX_DIR/failed.log" || fail "no request ran into the time-out"
[ -s "$RX_DIR/rejected.tsv" ] || fail "nothing was answered 400"
cat "$RX_DIR/accepted.tsv" "$RX_DIR/rejected.tsv" | sort -n > "$T/sent.tsv"
awk -F'\t' '$9 != "auth-ok" { print; exit 1 }' "$T/sent.tsv" || fail "a request lacked the bearer token"
awk -F'\t' '$10 != "team-e2e" { print; exit 1 }' "$T/sent.tsv" || fail "a request lacked X-Scope-OrgID"
host=$(hostname | tr -c 'A-Za-z0-9_./\n-' '_')
awk -F'\t' -v h="hostname=$host" '$7 !~ /(^|,)env=e2e(,|$)/ || $7 !~ /(^|,)rack=r7(,|$)/ ||
	index($7, h) == 0 || $7 !~ /hearth_version=/ { print; exit 1 }' "$T/sent.tsv" ||
	fail "a request lacked a label"
grep -q "	hearth-push-e2e.service	[0-9]*	[0-9]*	samples	99	" "$T/sent.tsv" ||
	fail "the workload's on-CPU profile was not sent under its unit"
g=$(awk -F'\t' '$2 == "hearth-push-e2e.service" && $5 == "objects" { print $8; exit }' "$T/sent.tsv")
[ -n "$g" ] || fail "the workload's growth profile was not sent under its unit (units=objects)"
go tool pprof -raw "$g" > "$T/g.raw" 2>&1 || { cat "$T/g.raw"; fail "go tool pprof cannot read a growth body"; }
grep -qx 'growth_space/bytes growth_requests/count' "$T/g.raw" ||
	{ head -8 "$T/g.raw"; fail "the growth body's sample types are not growth_space/bytes growth_requests/count"; }
grep -q 'grow_big' "$T/g.raw" || fail "the growth body does not name grow_big"
ok "every request follows the ingest API, with token, tenant and labels; the workload's unit is its service, its growth a profile of its own"

n400=$(grep -c . "$RX_DIR/rejected.tsv")
grep -q "^push: .* $n400 rejected (4xx)" "$T/status" || fail "status does not count $n400 rejected"
[ "$(grep -c 'refused .* with HTTP 400' "$T/hearthd.log")" -eq 1 ] || fail "HTTP 400 not logged exactly once"
grep -q "^push error: " "$T/status" || fail "status shows no last error"
if grep -q "$TOKEN" "$T/hearthd.log" "$T/status"; then fail "the token shows in the log or the status"; fi
ok "$n400 parts refused with 400: skipped, counted, logged once; no token in the log or the status"

push_check_windows "$T/sent.tsv"
kill "$HD"; wait "$HD"; HD=
grep -q "$TOKEN" "$T/hearthd.log" && fail "the token shows in the log"
echo ok
