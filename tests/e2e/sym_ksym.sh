# Kernel frames named one address at a time by the kernel (a BPF program
# printing "%pS") are the frames the /proc/kallsyms table names
# (HEARTH_KSYM=kallsyms): a process sleeping in nanosleep, recorded
# off-CPU by two recorders at once, one per path, gives the same kernel
# frames in the same stacks; and only the table path reads /proc/kallsyms.
. "$(dirname "$0")/lib.sh"
require_root
command -v strace >/dev/null || fail "strace is needed (Debian package strace)"
W=$FIXTURES/record_work

# sleeper() blocks 200 ms in nanosleep(), 15 times.
bg "$W" sleep 15 >/dev/null
wpid=$LAST_PID
sleep 0.3
# LeakSanitizer cannot run under ptrace (the sanitized test build)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
strace -f -e trace=openat -o "$T/asked.trace" \
	"$HEARTH" record --off-cpu -p "$wpid" -d 3 -o "$T/asked.folded" 2>"$T/asked.err" &
a=$!
HEARTH_KSYM=kallsyms strace -f -e trace=openat -o "$T/table.trace" \
	"$HEARTH" record --off-cpu -p "$wpid" -d 3 -o "$T/table.folded" 2>"$T/table.err" &
b=$!
wait "$a" || { cat "$T/asked.err"; fail "record (asking the kernel) exited non-zero"; }
wait "$b" || { cat "$T/table.err"; fail "record (HEARTH_KSYM=kallsyms) exited non-zero"; }

grep -q '"/proc/kallsyms"' "$T/asked.trace" && fail "the asking path read /proc/kallsyms"
grep -q '"/proc/kallsyms"' "$T/table.trace" || fail "HEARTH_KSYM=kallsyms did not read /proc/kallsyms"
ok "only the fallback reads /proc/kallsyms"

# The kernel part of each sleeping stack (frames marked _[k]), as a set.
kstacks() {
	grep ';sleeper' "$1" | sed 's/ [0-9]*$//' |
		awk -F';' '{ k = ""; for (i = 1; i <= NF; i++) if ($i ~ /_\[k\]$/) k = k ";" $i; print k }' | sort -u
}
kstacks "$T/asked.folded" >"$T/asked.k"
kstacks "$T/table.folded" >"$T/table.k"
echo "kernel paths of the sleeper, asking the kernel:"
cat "$T/asked.k"
[ -s "$T/asked.k" ] || { cat "$T/asked.folded"; fail "no kernel frames under sleeper"; }
for f in do_nanosleep hrtimer_nanosleep; do
	grep -q ";${f}_\[k\]" "$T/asked.k" || fail "no $f frame when asking the kernel"
	grep -q ";${f}_\[k\]" "$T/table.k" || fail "no $f frame with the table"
done
grep -Eq ';__(x64|arm64)_sys_(clock_)?nanosleep_\[k\]' "$T/asked.k" ||
	fail "no nanosleep system call frame when asking the kernel"
ok "the sleeping path is named: do_nanosleep, hrtimer_nanosleep, the system call"
# Both recorders saw the sleeps: the same kernel path under nanosleep
# (whether a wake-up then waited for a CPU is timing, not naming).
nsleep() { grep 'do_nanosleep' "$1" | sed 's/;\[waiting for a CPU\]_\[k\]$//' | sort -u; }
nsleep "$T/asked.k" >"$T/asked.n"
nsleep "$T/table.k" >"$T/table.n"
diff "$T/table.n" "$T/asked.n" || fail "the kernel path of nanosleep differs between the table and asking the kernel"
ok "the same kernel frames with and without the fallback: $(cat "$T/asked.n")"
grep -Eq 'bpf_prog_|bpf_trace_run|__bpf_trace|__traceiter_' "$T/asked.folded" &&
	fail "the sampler's own frames are in the stacks when asking the kernel"
ok "no frames of the sampler itself"
