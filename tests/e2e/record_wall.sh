# hearth record --wall: each thread's on-CPU samples (1e9/hz ns each) and
# its waits in one profile of nanoseconds, so a thread's stacks add up to
# the capture's length, waits begun before it and still going after it
# included; the waits are named as the thread measured them.
. tests/e2e/lib.sh
require_root

# Each 100 ms the main thread sleeps 30 ms, waits 40 ms on a pipe and
# burns 30 ms; six more threads wait on a pipe, hold or wait for a mutex
# or a file lock, or sit blocked in read() from the start.
time_work_start
"$HEARTH" record --wall --per-thread -p "$p" -d 8 -o "$T/wall.folded" 2>"$T/wall.err" || { cat "$T/wall.err"; fail "record --wall exited non-zero"; }
set -- $(capture_window "$T/wall.err")
[ $# -eq 2 ] || { cat "$T/wall.err"; fail "record --wall did not say when the capture ran"; }
from=$1 to=$2 len=$(($2 - $1))
echo "capture: $len ns"

# Every thread: its stacks add up to the capture's length.
n=0
thread_totals "$T/wall.folded" >"$T/totals"
while read -r row ns; do
	echo "$row: $ns ns"
	within "$ns" "$len" 5 || { cat "$T/wall.err"; fail "thread $row holds $ns ns, the capture lasted $len ns (+-5%)"; }
	n=$((n + 1))
done <"$T/totals"
[ "$n" -eq 7 ] || { cat "$T/totals"; fail "$n thread rows, time_work runs 7 threads"; }
ok "each of the 7 threads adds up to the capture's length within 5%"

# The main thread's sleeps: what it measured of them inside the window.
# A wait still going at the end is logged when it ends.
sleep 1
want=$(overlap "$T/waits.log" sleep "$from" "$to")
got=$(sum "$T/wall.folded" ';main;sleep_part;')
echo "sleep_part: $got ns in the profile, $want ns measured by the thread"
within "$got" "$want" 5 || fail "sleep_part holds $got ns, the thread measured $want ns (+-5%)"
ok "the sleep holds its measured blocked time within 5%"
grep ';main;sleep_part;' "$T/wall.folded" | grep -q 'do_nanosleep_\[k\]' || fail "the sleep is not under do_nanosleep"
grep -q ';main;burn_part' "$T/wall.folded" || fail "no on-CPU time in burn_part"
ok "waits and running in one profile"
