# Python frames without flags on the process (Debian's python3.11): a
# script splitting its CPU 60/30/10 across three functions and a thread
# sleeping in nap(). hearth record shows the shares within 3 points, the
# Python frames on at least 90% of the samples, and the sleeping thread's
# time off a CPU under nap within 5% of the kernel's account; hearthd, as
# shipped, shows the Python frames too.
. tests/e2e/lib.sh
require_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || fail "$PY is missing (make test installs python3.11)"

"$PY" tests/fixtures/python/split.py > "$T/ready" &
BG_PIDS="$BG_PIDS $!"; pid=$!
i=0; until grep -q ready "$T/ready"; do i=$((i + 1)); [ $i -gt 100 ] && fail "the script did not start"; sleep 0.1; done

nap_tid=$(ls "/proc/$pid/task" | grep -vx "$pid" | head -1)
[ -n "$nap_tid" ] || fail "the sleeping thread is missing"
on0=$(cut -d' ' -f1 "/proc/$pid/task/$nap_tid/schedstat")
"$HEARTH" record -d 8 -F 999 --both -p "$pid" -o "$T/py" 2>"$T/err" || { cat "$T/err"; fail "hearth record failed"; }
on1=$(cut -d' ' -f1 "/proc/$pid/task/$nap_tid/schedstat")
cat "$T/err"
on=$T/py.oncpu.folded off=$T/py.offcpu.folded
all=$(total "$on")
withpy=$(sum "$on" ';<module>(;|$)')
echo "on-CPU: $all samples, $withpy with Python frames"
[ "$all" -gt 1500 ] || fail "only $all on-CPU samples in 8 s at 999 Hz"
[ $((withpy * 100)) -ge $((all * 90)) ] || { head -3 "$on"; fail "only $withpy of $all samples carry Python frames"; }
s60=$(sum "$on" ';<module>;sixty(;|$)')
s30=$(sum "$on" ';<module>;thirty(;|$)')
s10=$(sum "$on" ';<module>;ten(;|$)')
t=$((s60 + s30 + s10))
echo "sixty $s60, thirty $s30, ten $s10"
for pair in "$s60 60" "$s30 30" "$s10 10"; do
	set -- $pair
	share=$(awk -v a="$1" -v t="$t" 'BEGIN { printf "%.1f", 100 * a / t }')
	between "$share" $(($2 - 3)) $(($2 + 3)) || fail "a function meant to take $2% of the CPU took $share%"
done

# The nap thread lives in nap(): all its time off a CPU (asleep, waiting
# for the GIL or for a CPU) is under nap, and is the capture's length
# less the time the kernel says it ran.
secs=$(rec_secs "$T/err")
napns=$(sum "$off" ';nap(;|$)')
want=$(awk -v s="$secs" -v a="$on0" -v b="$on1" 'BEGIN { printf "%.0f", s * 1e9 - (b - a) }')
echo "nap off-CPU: $napns ns by hearth, $want ns by the kernel's accounting"
within "$napns" "$want" 5 || { grep ';nap' "$off" | head -3; fail "the time off-CPU under nap is not within 5% of the thread's"; }
ok "hearth record: Python frames, shares and the sleep"

# hearthd as shipped (etc/hearthd.conf)
S="--socket $T/ctl.sock"
hearthd_start --config etc/hearthd.conf --state-dir "$T/state" $S --window 1s
BG_PIDS="$BG_PIDS $HD"
sleep 6
"$HEARTH" snapshot $S --last 5s --pid "$pid" -o "$T/d.folded" || fail "no snapshot"
dall=$(total "$T/d.folded")
dpy=$(sum "$T/d.folded" ';<module>(;|$)')
echo "hearthd: $dall samples, $dpy with Python frames"
[ "$dall" -gt 50 ] || fail "hearthd has only $dall samples of the script"
[ $((dpy * 100)) -ge $((dall * 90)) ] || { head -3 "$T/d.folded"; fail "hearthd: only $dpy of $dall samples carry Python frames"; }
ok "hearthd: Python frames"
