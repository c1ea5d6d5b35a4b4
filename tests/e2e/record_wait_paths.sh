# One place in a program, two kernel paths: a thread that calls read()
# from one call site blocks there alternately 100 ms on the pipe's mutex
# (a lock) and 100 ms for data (not a lock), with the same user registers
# and stack each time. A wait that reused the user stack of the last wait
# at the same place must still get its own kernel stack: the off-CPU
# profile splits the thread's time half and half between the two paths,
# and the lock profile holds only the mutex half.
. tests/e2e/lib.sh
require_root

start_ready wait_paths paths 30 "$T/mutex.log"
sleep 0.5

mutex='mixed_reader;.*anon_pipe_read_\[k\];[^;]*mutex_lock[^;]*_\[k\];'
data='mixed_reader;.*anon_pipe_read_\[k\];schedule_\[k\];'
"$HEARTH" record --off-cpu -p "$p" -d 4 -o "$T/off.folded" 2>"$T/off.err" || { cat "$T/off.err"; fail "record --off-cpu exited non-zero"; }
m=$(sum "$T/off.folded" "$mutex")
d=$(sum "$T/off.folded" "$data")
echo "mixed_reader: $m ns on the pipe's mutex, $d ns waiting for data"
[ $((m + d)) -gt 3000000000 ] || { cat "$T/off.folded"; fail "mixed_reader waited only $((m + d)) ns in 4 s"; }
# (About half each; the lock profile below checks the mutex's time.)
share=$(ratio "$m" "$d")
between "$share" 25 75 || { grep mixed_reader "$T/off.folded"; fail "the mutex holds $share% of mixed_reader's waits, expected about 50%: a wait kept another path's kernel stack"; }
ok "the same user site's waits keep their own kernel paths ($share% on the mutex)"

"$HEARTH" record --locks -p "$p" -d 3 -o "$T/locks.folded" 2>"$T/locks.err" || { cat "$T/locks.err"; fail "record --locks exited non-zero"; }
set -- $(capture_window "$T/locks.err")
[ $# -eq 2 ] || { cat "$T/locks.err"; fail "record --locks did not say when the capture ran"; }
len=$(($2 - $1))
l=$(sum "$T/locks.folded" 'mixed_reader;')
lm=$(sum "$T/locks.folded" "$mutex")
echo "lock profile: mixed_reader $l ns, $lm ns of it on the mutex, in $len ns"
[ "$l" = "$lm" ] || { grep mixed_reader "$T/locks.folded"; fail "the lock profile holds mixed_reader's waits for data"; }
# The reader waits on the mutex from the signal that sends it there until
# the writer lets go, as the fixture logged it.
sleep 0.5
want=$(overlap "$T/mutex.log" mutex "$1" "$2")
echo "the fixture held the reader on the mutex $want ns of the capture"
within "$lm" "$want" 10 || fail "mixed_reader's lock waits hold $lm ns, the fixture held it on the mutex $want ns (+-10%)"
ok "the lock profile holds the mutex waits ($lm ns, $want ns logged) and none of the waits for data"
