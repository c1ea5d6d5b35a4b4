# hearth record on the whole host, both kinds, while processes fork, exec,
# exit and switch context fast: it must finish cleanly (the sanitizers
# watch every path: fork aliases, exits, stack copies, signatures) and name
# what it saw.
. tests/e2e/lib.sh
require_root

bg "$FIXTURES/unwind_nofp" pingpong 30
bg sh -c 'while :; do /bin/true; sleep 0.02; done' # short-lived: true, sleep
bg "$FIXTURES/record_work" spin 30
"$HEARTH" record -d 4 --both -o "$T/host" 2>"$T/host.err" || { cat "$T/host.err"; fail "whole-host record --both exited non-zero"; }
cat "$T/host.err"
[ -s "$T/host.oncpu.folded" ] || fail "no on-CPU profile"
[ -s "$T/host.offcpu.folded" ] || fail "no off-CPU profile"
grep -q '^record_work;.*;main;spin' "$T/host.oncpu.folded" || fail "the spinning workload is not in the on-CPU profile"
grep -q '^unwind_nofp;.*;level1;level2;level3;level4;level5;leaf;.*read' "$T/host.offcpu.folded" || fail "the ping-pong waits are not in the off-CPU profile with their whole stack"
# sleep lives 20 ms and always blocks: it must be in the off-CPU profile,
# named down to its nanosleep.
grep -q '^sleep;.*nanosleep' "$T/host.offcpu.folded" || fail "the short-lived sleep processes are not in the off-CPU profile"
# (hearth's own user frames call libbpf's bpf_prog_* and its own
# sym_ksym_bpf_prog_addr: only whole frame names of the sampler count.)
own='(^|;)(bpf_prog_[0-9a-f]{16}[^;]*|bpf_trace_run[0-9]+|__bpf_trace_[^;]*|__traceiter_[^;]*)( |;)'
cat "$T/host.offcpu.folded" "$T/host.oncpu.folded" | grep -E "$own" | head -3 > "$T/own"
[ -s "$T/own" ] && { cut -c1-300 "$T/own"; fail "the sampler's own frames are in the stacks"; }
# Every wait of the ping-pong fixture has user frames: none is left with
# kernel frames only (a signature counted without its unwind would be).
bare=$(grep '^unwind_nofp;entry_SYSCALL' "$T/host.offcpu.folded" | wc -l)
[ "$bare" -eq 0 ] || fail "$bare ping-pong waits lost their user frames"
n=$(grep -c '^\[unknown\];' "$T/host.oncpu.folded" || true)
[ "$n" -eq 0 ] || fail "$n stacks without a process name"
ok "whole host, both kinds, under fork/exec/exit churn"
