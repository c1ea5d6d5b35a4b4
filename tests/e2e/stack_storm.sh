#!/bin/sh
# A stack storm (tests/fixtures/stack_storm: a new random call path for
# every stretch of work, so almost every sample and wait is a stack never
# seen before) against kernel maps made small (--stack-map-size 1024):
#  - hearth record, on-CPU at 10 kHz with frame pointers (in auto mode
#    the walker's full map sends on-CPU samples to copies, unwound in
#    hearth: not lost) and off-CPU: the samples and waits
#    whose stack found no room are under stack_storm;[lost: stack map full],
#    the profile's total equals the samples (or blocked ns) counted, the
#    lost ones equal the drops counted by cause, and a summary line per
#    cause names --stack-map-size;
#  - hearthd with 1 s windows: status says the causes since start and in
#    the last window with stack_map_size, the journal names them once,
#    snapshots still answer with the lost frame, and after SIGTERM the
#    stored windows hold exactly the samples their headers count.
set -u
. "$(dirname "$0")/lib.sh"
require_root
S="--socket $T/ctl.sock"
TOOL=${TOOL:-$PWD/$BUILD/bench/daemon_store_tool}
[ -x "$FIXTURES/stack_storm" ] && [ -x "$TOOL" ] || fail "build the fixtures first"
# json FILE KEY...: a number of a JSON file, by its path of keys.
json() { f=$1; shift; python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]: v = v[k]
print(v)' "$f" "$@"; }
lost() { sum "$1" '^stack_storm;\[lost: stack map full\]$'; }

# ---- record, on-CPU ---------------------------------------------------
bg "$FIXTURES/stack_storm" cpu 3 20
"$HEARTH" record -F 10000 --unwind fp --stack-map-size 1024 -d 3 -p "$LAST_PID" --json \
	-o "$T/on.folded" >"$T/on.json" 2>"$T/on.err" || { cat "$T/on.err"; fail "record failed"; }
kill "$LAST_PID"
n=$(json "$T/on.json" samples)
t=$(total "$(stacks "$T/on.folded" >"$T/on.stacks"; echo "$T/on.stacks")")
l=$(lost "$T/on.stacks")
c=$(json "$T/on.json" drops stack_collisions); f=$(json "$T/on.json" drops stack_map_full)
m=$(json "$T/on.json" drops aggregation_map_full)
[ "$t" = "$n" ] || fail "on-CPU: the profile holds $t samples, the sampler counted $n"
[ "$l" -gt 0 ] || fail "on-CPU: no [lost: stack map full] under stack_storm ($n samples): $(cat "$T/on.err")"
# A sample is counted once whatever it lost; the aggregation map's come on top.
[ "$l" -ge $((c + f)) ] && [ "$l" -le $((c + f + m)) ] ||
	fail "on-CPU: $l samples lost in the profile, counted $c collisions + $f full (+ $m aggregation)"
grep -q "^hearth: drops: [0-9]* stack map [a-z]*: kept as \[lost: stack map full\]; a larger --stack-map-size (now 1024) avoids them$" "$T/on.err" ||
	fail "on-CPU: no drop line naming --stack-map-size: $(cat "$T/on.err")"
ok "record on-CPU: $n samples, all in the profile; $l kept as lost ($c collisions, $f full, $m aggregation)"

# ---- record, off-CPU --------------------------------------------------
bg "$FIXTURES/stack_storm" sleep 16 20
"$HEARTH" record --off-cpu --stack-map-size 1024 -d 3 -p "$LAST_PID" --json \
	-o "$T/off.folded" >"$T/off.json" 2>"$T/off.err" || { cat "$T/off.err"; fail "record failed"; }
kill "$LAST_PID"
stacks "$T/off.folded" >"$T/off.stacks"
ns=$(json "$T/off.json" offcpu_ns)
t=$(total "$T/off.stacks")
l=$(lost "$T/off.stacks")
[ "$t" = "$ns" ] || fail "off-CPU: the profile holds $t ns, the sampler counted $ns"
[ "$l" -gt 0 ] || fail "off-CPU: no [lost: stack map full] under stack_storm: $(cat "$T/off.err")"
ok "record off-CPU: $ns ns blocked, all in the profile; $(awk -v a="$l" -v b="$t" 'BEGIN { printf "%.0f", 100 * a / b }')% kept as lost"

# ---- hearthd ----------------------------------------------------------
hearthd_start --state-dir "$T/state" $S --window 1s --stack-map-size 1024
BG_PIDS="$BG_PIDS $HD"
bg "$FIXTURES/stack_storm" cpu 1 30
bg "$FIXTURES/stack_storm" sleep 8 30
hearthd_wait_windows 4 30
"$HEARTH" status $S >"$T/status" || fail "status failed"
"$HEARTH" status $S --json >"$T/status.json" || fail "status --json failed"
grep -Eq '^drops: +[0-9]+ since start, [0-9]+ in the last window$' "$T/status" ||
	fail "status: no drops line with since start and the last window: $(cat "$T/status")"
grep -Eq '^  stack map (collisions|full): [0-9]+ since start, [0-9]+ in the last window; kept as \[lost: stack map full\]; a larger stack_map_size \(now 1024\) or a shorter window avoids them$' "$T/status" ||
	fail "status: no stack map line naming stack_map_size: $(cat "$T/status")"
[ "$(json "$T/status.json" stack_map_size)" = 1024 ] || fail "status --json: stack_map_size is not 1024"
sc=$(json "$T/status.json" drops_stack_collisions); sf=$(json "$T/status.json" drops_stack_map_full)
[ $((sc + sf)) -gt 0 ] || fail "status --json counts no stack map drops"
grep -q 'hearthd: drops: [0-9]* stack map [a-z]* in the last window: kept as \[lost: stack map full\]' "$T/hearthd.log" ||
	fail "the journal names no stack map drops"
"$HEARTH" snapshot $S --last 30s --off-cpu -o "$T/snap.folded" 2>"$T/snap.err" || fail "snapshot failed: $(cat "$T/snap.err")"
grep -q '^stack_storm;\[lost: stack map full\] [0-9]*$' "$T/snap.folded" || fail "the snapshot has no lost frame under stack_storm"
rss=$(awk '/^own cost:/ { for (i = 1; i <= NF; i++) if ($i == "RSS") { u = $(i + 2); sub(/,$/, "", u); print $(i + 1), u } }' "$T/status")
kill -TERM "$HD"; wait "$HD" || fail "hearthd exited $? on SIGTERM"
"$HEARTHD" --verify-store "$T/state" >"$T/verify" || fail "verify-store: $(tail -1 "$T/verify")"
counted=$(awk '/^window / { s += $5 } END { print s + 0 }' "$T/verify")
stored=$("$TOOL" merge "$T/state" 0 18446744073709551615 2>/dev/null | grep -v '^#' | awk '{ t += $NF } END { print t + 0 }')
[ "$counted" = "$stored" ] || fail "the windows' headers count $counted on-CPU samples, their profiles hold $stored"
ok "hearthd: $((sc + sf)) stack map drops said by cause in status and journal; snapshot answers; $stored samples stored = counted; RSS $rss"
