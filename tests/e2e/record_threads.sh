# hearth record --threads: one row per thread, all the same width; a
# thread blocked since before the capture (so the scheduler never sees
# it) is found by the task iterator and shows, between its user stack and
# the kernel function it is blocked in, "(blocked the whole snapshot)".
. tests/e2e/lib.sh
require_root

time_work_start
"$HEARTH" record --threads -p "$p" -d 5 -o "$T/threads.folded" 2>"$T/threads.err" || { cat "$T/threads.err"; fail "record --threads exited non-zero"; }
set -- $(capture_window "$T/threads.err")
[ $# -eq 2 ] || { cat "$T/threads.err"; fail "record --threads did not say when the capture ran"; }
rows_as_tasks "$T/threads.folded" "$p" $(($2 - $1)) 0.1

line=$(grep ';stuck_reader;' "$T/threads.folded")
echo "$line"
[ "$(echo "$line" | wc -l)" -eq 1 ] || fail "the stuck reader has more than one stack"
echo "$line" | grep -q '(blocked the whole snapshot)' || fail "the stuck reader is not marked blocked the whole snapshot"
# user frames, then the mark, then the kernel frames down to the read
echo "$line" | grep -Eq ';stuck_reader;([^;]*;)*\(blocked the whole snapshot\);([^;]*_\[k\];)*[^;]*read[^;]*_\[k\] [0-9]+$' ||
	fail "the mark is not between the user stack and the kernel frames down to the read"
echo "$line" | cut -d';' -f1-3 | grep -q '_\[k\]' && fail "kernel frames above the user stack"
grep -q 'threads blocked all that time: 1;' "$T/threads.err" || { cat "$T/threads.err"; fail "the summary does not count the one thread blocked all the time"; }
ok "the thread blocked in read() since before the capture: user stack, mark, kernel frames"
