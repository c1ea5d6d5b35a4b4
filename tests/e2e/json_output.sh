#!/bin/sh
# Machine-readable output, parsed by real parsers (json_output.py) and
# compared with the text of the same command:
#  - record --json: its summary object against the summary lines;
#  - diff --json of two files whose names hold quotes, backslashes, a
#    control character and bytes that are not UTF-8: valid JSON, each
#    side's total and every row's values and shares as the table shows;
#  - with a hearthd: status --json, marks --json and diff --at --json;
#    status --prometheus through prometheus_client's parser, equal to
#    the JSON, and hearthd_up 0 (exit 1) when nobody answers.
set -u
. "$(dirname "$0")/lib.sh"
require_root
hearthd_traps
prometheus_python
check() { $PY tests/e2e/json_output.py "$@" || fail "$1: JSON and text differ"; }

# A spinning process, so the whole host's recording has samples to count
# even when nothing else runs.
bg "$FIXTURES/record_work" spin 4
"$HEARTH" record -d 2 --both --json -o "$T/rec" > "$T/rec.json" 2> "$T/rec.err" ||
	{ cat "$T/rec.err"; fail "record --json failed"; }
check record "$T/rec.json" "$T/rec.err"
"$HEARTH" record -d 1 --json 2>&1 | grep -q 'give the profile a file with -o' ||
	fail "record --json without -o was not refused"

printf 'app;main;work 600\napp;main;"quoted" 30\napp;main;back\\slash 20\napp;main;ctl\001x 10\napp;main;bad\377byte 5\napp;idle 300\n' > "$T/a.folded"
printf 'app;main;work 900\napp;main;"quoted" 10\napp;main;back\\slash 20\napp;main;ctl\001x 40\napp;main;new 50\napp;idle 100\n' > "$T/b.folded"
check diff "$HEARTH" "$T/a.folded" "$T/b.folded"
check diff "$HEARTH" --top 2 "$T/b.folded" "$T/a.folded"
"$HEARTH" diff --json --view "$T/a.folded" "$T/b.folded" 2>&1 | grep -q 'give one' ||
	fail "diff --json --view was not refused"

hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s
hearthd_wait_windows 4 30
"$HEARTH" mark --socket "$T/ctl.sock" --at -2s deploy-42 >/dev/null || fail "mark failed"
"$HEARTH" mark --socket "$T/ctl.sock" 'v1.2+b@x:y' >/dev/null || fail "mark failed"
hearthd_wait_windows 2 30
check marks "$HEARTH" "$T/ctl.sock"
check diff "$HEARTH" --socket "$T/ctl.sock" --at deploy-42 --window 1s
check status "$HEARTH" "$T/ctl.sock"
check prometheus "$HEARTH" "$T/ctl.sock"
"$HEARTH" status --socket "$T/ctl.sock" --json --prometheus 2>&1 | grep -q 'one of --json and --prometheus' ||
	fail "--json --prometheus was not refused"
"$HEARTH" status --socket "$T/ctl.sock" --prometheus -o "$T/hearth.prom" || fail "status --prometheus -o failed"
grep -q '^hearthd_up 1$' "$T/hearth.prom" || fail "status --prometheus -o wrote no hearthd_up 1"
check prometheus-down "$HEARTH" "$T/nobody.sock"
ok "record, diff, status, marks: JSON parses and equals the text; Prometheus parses"
