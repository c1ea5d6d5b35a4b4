# hearth record: what goes wrong is said in one sentence, with a non-zero exit.
. tests/e2e/lib.sh
require_root

check() { # name expected-substring command...
	name=$1; want=$2; shift 2
	if "$@" >"$T/out" 2>"$T/err"; then fail "$name: exited 0"; fi
	lines=$(wc -l <"$T/err")
	grep -q "$want" "$T/err" || fail "$name: stderr lacks '$want': $(cat "$T/err")"
	[ "$lines" -eq 1 ] || fail "$name: $lines lines on stderr, expected one sentence: $(cat "$T/err")"
	ok "$name: $(cat "$T/err")"
}

# Unprivileged: a user without CAP_BPF/CAP_PERFMON.
check "unprivileged" "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$HEARTH" record -d 1
# Root with every capability dropped: still refused.
check "no capabilities" "needs root" setpriv --inh-caps=-all --bounding-set=-all "$HEARTH" record -d 1
check "no BTF" "no BTF" env HEARTH_BTF_PATH=/nonexistent/vmlinux "$HEARTH" record -d 1
# The kernel refuses perf events (a seccomp filter makes perf_event_open fail).
check "no perf events" "perf events are unavailable" "$FIXTURES/deny_perf" "$HEARTH" record -d 1
# Off-CPU alone needs no perf event: it still runs there.
"$FIXTURES/deny_perf" "$HEARTH" record --off-cpu -d 1 -o "$T/off.folded" 2>/dev/null || fail "--off-cpu needs no perf event but failed under the filter"
ok "--off-cpu runs where perf events are refused"
check "bad duration" "not a duration" "$HEARTH" record -d soon
check "bad frequency" "not a frequency" "$HEARTH" record -F 0
check "bad unwind" "takes fp, dwarf or auto" "$HEARTH" record --unwind frames
check "bad stack bytes" "multiple of 1024" "$HEARTH" record --stack-bytes 1000
check "no such pid" "no process with pid" "$HEARTH" record -p 4194000
check "--both to stdout" "two files" "$HEARTH" record --both
check "unknown option" "unknown option" "$HEARTH" record --frobnicate
check "unknown command" "not a hearth command" "$HEARTH" frobnicate
"$HEARTH" --version | grep -q '^hearth [0-9]' || fail "--version"
"$HEARTH" record --help | grep -q -- '--off-cpu' || fail "record --help"
"$HEARTH" help | grep -q 'record' || fail "help"
ok "help and version"
