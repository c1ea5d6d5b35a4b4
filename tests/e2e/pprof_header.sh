#!/bin/sh
# go tool pprof names a profile's "File:" after its first mapping: a
# whole-host recording names none (it once said the first process met,
# even hearthd), a recording of one process names its executable.
. tests/e2e/lib.sh
require_root
command -v go >/dev/null || fail "go is missing (package golang-go)"
# (two busy processes, so that even a quiet host shows more than one)
bg "$FIXTURES/record_work" spin 2
bg sh -c 'while :; do :; done'
"$HEARTH" record -d 1 -o "$T/host.pb.gz" 2> "$T/err" || { cat "$T/err"; fail "record of the host failed"; }
go tool pprof -top "$T/host.pb.gz" > "$T/top" 2>&1 || { cat "$T/top"; fail "go tool pprof cannot read the host's profile"; }
head -3 "$T/top"
grep -q '^Type: cpu' "$T/top" || fail "no Type: cpu line"
grep -q '^File:' "$T/top" && fail "the whole host's profile is named after one file: $(grep '^File:' "$T/top")"
ok "the whole host: no File line"
bg "$FIXTURES/record_work" spin 4
sleep 0.3
"$HEARTH" record -d 1 -p "$LAST_PID" -o "$T/one.pb.gz" 2> "$T/err" || { cat "$T/err"; fail "record -p failed"; }
go tool pprof -top "$T/one.pb.gz" > "$T/top" 2>&1 || { cat "$T/top"; fail "go tool pprof cannot read it"; }
grep -qx 'File: record_work' "$T/top" || fail "one process's profile: $(head -2 "$T/top")"
ok "one process: File: record_work"
