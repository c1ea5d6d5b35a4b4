# hearth record as a person runs it: Ctrl-C ends early with a complete
# profile, a progress line only on a terminal, one summary line otherwise.
. tests/e2e/lib.sh
require_root
W=$FIXTURES/record_work

bg "$W" spin 30
wpid=$LAST_PID

# No duration: runs until SIGINT, then writes everything and exits 0.
"$HEARTH" record -p "$wpid" -o "$T/int.folded" 2>"$T/int.err" &
rpid=$!
sleep 3
kill -INT "$rpid"
wait "$rpid" || fail "record exited $? after SIGINT"
n=$(total "$T/int.folded")
counted=$(sed -n 's/^hearth: \([0-9]*\) on-CPU samples.*/\1/p' "$T/int.err")
[ "$n" -gt 20 ] || fail "after 3 s and Ctrl-C, only $n samples of a spinning process were written"
[ "$n" = "$counted" ] || fail "the sampler counted $counted samples but $n were written after Ctrl-C"
tail -c 1 "$T/int.folded" | od -c | grep -q '\\n' || fail "the profile written after Ctrl-C does not end with a newline"
ok "Ctrl-C stops and writes a complete profile (all $n samples counted)"

# Not on a terminal: no progress, only the summary lines.
"$HEARTH" record -d 1 -p "$wpid" -o "$T/q.folded" 2>"$T/q.err" || fail "record exited non-zero"
grep -q 'recording' "$T/q.err" && fail "progress line written when stderr is not a terminal: $(cat "$T/q.err")"
grep -q '^hearth: [0-9]* on-CPU samples' "$T/q.err" || fail "no summary line: $(cat "$T/q.err")"
bad=$(grep -v '^hearth: ' "$T/q.err" | wc -l)
[ "$bad" -eq 0 ] || fail "unexpected stderr lines: $(cat "$T/q.err")"
ok "no progress noise off a terminal"

# On a terminal (script(1) gives it one): the progress line shows.
script -qec "$HEARTH record -d 2 -p $wpid -o $T/tty.folded" /dev/null >"$T/tty.out" 2>&1 || fail "record under a terminal exited non-zero"
grep -q 'recording [0-9.]*/2 s, [0-9]* samples' "$T/tty.out" || fail "no progress line on a terminal: $(cat "$T/tty.out")"
ok "progress line on a terminal"

# Writing to a device or a pipe writes in place: /dev/null stays /dev/null.
"$HEARTH" record -d 1 -p "$wpid" -o /dev/null 2>/dev/null || fail "record -o /dev/null exited non-zero"
[ -c /dev/null ] || { rm -f /dev/null; mknod -m 666 /dev/null c 1 3; fail "record -o /dev/null replaced the device with a file"; }
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.out" &
"$HEARTH" record -d 1 -p "$wpid" -o "$T/fifo" 2>/dev/null || fail "record into a FIFO exited non-zero"
wait $!
[ -p "$T/fifo" ] || fail "record replaced the FIFO with a file"
grep -q ';spin' "$T/fifo.out" || fail "nothing came through the FIFO"
ok "devices and pipes are written in place"
