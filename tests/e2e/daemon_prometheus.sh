#!/bin/sh
# hearthd writes its health for a node exporter's textfile collector
# (prometheus_file): each window the file is replaced whole, readable by
# the collector's user (0644 under hearthd's umask 027), with nothing
# half-written left beside it; prometheus_client's parser (the format the
# collector reads) takes it, with the metrics `hearth status --prometheus`
# gives and hearthd's own pid; a clean stop leaves hearthd_up 0 alone.
. tests/e2e/lib.sh
require_root
hearthd_traps
prometheus_python
# read_prom FILE: "NAME TYPE VALUE" per sample, as prometheus_client reads them
read_prom() {
	$PY -c 'import sys
from prometheus_client.parser import text_string_to_metric_families as f
for fam in f(open(sys.argv[1]).read()):
    for s in fam.samples:
        print(s.name, fam.type, repr(s.value))' "$1"
}
value() { awk -v n="$1" '$1 == n { print $3 }' "$2"; }

mkdir -p "$T/textfile"
umask 027 # the unit's
hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s \
	--prometheus-file "$T/textfile/hearth.prom"
hearthd_wait_windows 2 30
read_prom "$T/textfile/hearth.prom" > "$T/m1" || fail "prometheus_client cannot parse the file"
[ "$(stat -c %a "$T/textfile/hearth.prom")" = 644 ] || fail "mode $(stat -c %a "$T/textfile/hearth.prom"), not 644"
[ "$(ls "$T/textfile")" = hearth.prom ] || fail "the folder holds more: $(ls "$T/textfile")"
[ "$(value hearthd_up "$T/m1")" = 1.0 ] || fail "hearthd_up is not 1"
[ "$(value hearthd_pid "$T/m1")" = "$HD.0" ] || fail "hearthd_pid $(value hearthd_pid "$T/m1"), not $HD"
grep -q '^hearthd_samples_total counter ' "$T/m1" || fail "no counter hearthd_samples_total"
w=$(value hearthd_windows_stored "$T/m1")
[ "${w%.0}" -ge 1 ] || fail "hearthd_windows_stored is $w"
"$HEARTH" status --socket "$T/ctl.sock" --prometheus -o "$T/status.prom" || fail "status --prometheus failed"
read_prom "$T/status.prom" | awk '{ print $1, $2 }' > "$T/names.status"
awk '{ print $1, $2 }' "$T/m1" | diff -u "$T/names.status" - || fail "the file's metrics differ from hearth status --prometheus's"
ok "$(wc -l < "$T/m1") metrics, those of hearth status --prometheus, hearthd_pid $HD, mode 644"

end1=$(value hearthd_last_window_end_timestamp_seconds "$T/m1")
hearthd_wait_windows 2 30
sleep 0.2
read_prom "$T/textfile/hearth.prom" > "$T/m2" || fail "the rewritten file does not parse"
end2=$(value hearthd_last_window_end_timestamp_seconds "$T/m2")
awk -v a="$end1" -v b="$end2" 'BEGIN { exit !(b > a) }' || fail "the last window's end stayed $end1 ($end2)"
ok "rewritten each window: last window end $end1 -> $end2"

kill -TERM "$HD"
wait "$HD" 2>/dev/null
for i in $(seq 50); do kill -0 "$HD" 2>/dev/null || break; sleep 0.1; done
HD=
read_prom "$T/textfile/hearth.prom" > "$T/m3" || fail "the file after the stop does not parse"
[ "$(cat "$T/m3")" = "hearthd_up gauge 0.0" ] || fail "after a clean stop: $(cat "$T/m3")"
ok "a clean stop leaves hearthd_up 0"
