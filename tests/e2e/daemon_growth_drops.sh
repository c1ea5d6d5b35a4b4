#!/bin/sh
# hearthd's requests for more memory lost to a full ring are a cause of
# drops like the sampler's: `hearth status` names it with how many since
# start and in the last window and what avoids it, --json and
# --prometheus carry it, the journal says it, and the total counts it.
# The ring (4 MiB a CPU, 8 MiB here: some 7,000 requests) fills the way it does on a
# host: hearthd gets no CPU (here SIGSTOP) while a process asks for
# memory 40,000 times.
set -u
. "$(dirname "$0")/lib.sh"
S="--socket $T/ctl.sock"
hearthd_traps
require_root
prometheus_python
N=40000

echo "# empty: defaults and flags" >"$T/hearthd.conf"
hearthd_start --config "$T/hearthd.conf" --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s
bg "$FIXTURES/alloc_work" grow "$N" >"$T/grow.out"
g=$LAST_PID
fixture_says "$T/grow.out" ready
hearthd_wait_windows 2 30

kill -STOP "$HD"
kill -USR1 "$g"
fixture_says "$T/grow.out" done
kill -CONT "$HD"
hearthd_wait_windows 2 30

# (other processes' requests may still be lost meanwhile: each figure is
# taken between two of --json)
lost_json() {
	"$HEARTH" status $S --json | python3 -c 'import json, sys
print(json.load(sys.stdin)["drops_growth_ring_full"])' || fail "status --json has no growth ring drops"
}
j0=$(lost_json)
"$HEARTH" status $S >"$T/status" || fail "status failed"
p=$("$HEARTH" status $S --prometheus | $PY -c 'import sys
from prometheus_client.parser import text_string_to_metric_families
for f in text_string_to_metric_families(sys.stdin.read()):
    for s in f.samples:
        if s.name == "hearthd_drops_growth_ring_full_total":
            print(f.type, int(s.value))')
j1=$(lost_json)
line=$(grep '^  growth ring full: ' "$T/status") || { cat "$T/status"; fail "status names no growth ring drops"; }
echo "$line"
lost=$(echo "$line" | sed -n 's/^  growth ring full: \([0-9]*\) since start, [0-9]* in the last window; .*/\1/p')
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "status counts no requests lost since start"
echo "$line" | grep -q '; requests for more memory lost, in no growth profile; hearthd fell behind their ring .*: memory_growth = no stops recording them$' ||
	fail "the growth ring's drop line does not say what was lost and what avoids it"
drops=$(sed -n 's/^drops: *\([0-9]*\) since start.*/\1/p' "$T/status")
[ "$drops" -ge "$lost" ] || fail "the drops total ($drops) leaves out the $lost requests lost"
ok "status: $lost requests for more memory lost to a full ring, within $drops drops"

[ "$j0" -le "$lost" ] && [ "$lost" -le "$j1" ] || fail "status --json says $j0 then $j1 requests lost, the text $lost between"
set -- $p
[ "${1:-}" = counter ] && [ "$j0" -le "$2" ] && [ "$2" -le "$j1" ] ||
	fail "--prometheus says '$p' for hearthd_drops_growth_ring_full_total, not a counter from $j0 to $j1"
grep -q 'hearthd: drops: [0-9]* growth ring full in the last window: requests for more memory lost' "$T/hearthd.log" ||
	fail "the journal does not name the growth ring's drops"
ok "--json, --prometheus and the journal count them too"

# While hearthd is stopped its 16 MiB ring takes at most 15,087 requests
# (1,112 bytes each without a stack copy, the smallest), so at least the
# rest of grow_big's are lost and counted. (Whether every request kept
# reaches the store is daemon_memory's question: on a busy host hearthd
# takes windows to work through a full ring.)
least=$((N - (16 << 20) / 1112))
[ "$lost" -ge "$least" ] || fail "$lost requests counted lost; grow_big alone lost at least $least"
ok "at least the $least requests of grow_big the ring could not hold are counted ($lost lost)"
