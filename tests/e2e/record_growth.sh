# hearth record --growth: every request for more memory, counted exactly
# with its whole stack (unwound through libc's malloc, which keeps no
# frame pointers), bytes beside; with -p and host-wide.
. tests/e2e/lib.sh
require_root

# The fixture asks for more memory at SIGUSR1 only: 100 mmaps of 1 MiB
# (and a page of malloc's header) from grow_big, then brk from grow_heap.
bg "$FIXTURES/alloc_work" grow 100 >"$T/out"
p=$LAST_PID
i=0
until grep -q ready "$T/out"; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "the fixture did not start"
	sleep 0.1
done
"$HEARTH" record --growth -p "$p" -d 3 -o "$T/one.pb.gz" 2>"$T/one.err" &
r1=$!
# (under a name of its own, to tell its requests from the other's)
cp "$HEARTH" "$T/hearth-wide"
"$T/hearth-wide" record --growth --per-thread -d 3 -o "$T/host.folded" 2>"$T/host.err" &
r2=$!
sleep 1
kill -USR1 "$p"
wait $r1 || { cat "$T/one.err"; fail "record --growth -p exited non-zero"; }
wait $r2 || { cat "$T/host.err"; fail "record --growth (every process) exited non-zero"; }
cat "$T/one.err" "$T/host.err"
grep -q done "$T/out" || fail "the fixture did not make its requests"

go tool pprof -raw "$T/one.pb.gz" >"$T/raw" 2>&1 || { cat "$T/raw"; fail "go tool pprof cannot read the --growth profile"; }
grep -qx 'growth_space/bytes growth_requests/count' "$T/raw" || { head -8 "$T/raw"; fail "the sample types are not growth_space/bytes growth_requests/count"; }
"$HEARTH" export --folded -o "$T/one.folded" "$T/one.pb.gz" 2>"$T/export.err" || { cat "$T/export.err"; fail "hearth cannot read its --growth profile back"; }
"$HEARTH" export --folded --sample-type growth_space -o "$T/bytes.folded" "$T/one.pb.gz" 2>"$T/export.err" || { cat "$T/export.err"; fail "hearth cannot read the bytes of its --growth profile"; }
grep -q '^# hearth-profile 1 unit=samples .* question=growth #$' "$T/one.folded" || { head -3 "$T/one.folded"; fail "the profile does not say it answers where memory grows"; }

big=$(sum "$T/one.folded" ';main;grow;grow_big;[^;]*malloc;.*mmap[^;]*$')
[ "$big" = 100 ] || { cat "$T/one.folded"; fail "grow_big made 100 mmap requests, the profile counts $big under it"; }
[ "$(sum "$T/one.folded" ';grow_big;')" = 100 ] || fail "requests under grow_big that are not its mmaps"
bytes=$(sum "$T/bytes.folded" ';grow_big;')
[ "$bytes" = $((100 * 1052672)) ] || fail "grow_big's mmaps asked for $((100 * 1052672)) bytes, the profile says $bytes"
ok "--growth counts grow_big's 100 mmap requests exactly, through malloc, with their bytes"
heap=$(sum "$T/one.folded" ';main;grow;grow_heap;[^;]*malloc;.*brk$')
[ "$heap" -ge 1 ] || { cat "$T/one.folded"; fail "grow_heap's heap growth (brk) is not in the profile"; }
ok "grow_heap's heap grew by brk $heap times"

# Every process: the same requests, counted under the fixture's thread
# row (on a busy host their stacks may be past the copy budget, where
# the frame-pointer walk stops in libc; a request the ring had no room
# for is counted as a drop).
host=$(sum "$T/host.folded" "^alloc_work;alloc_work-$p;.*mmap[^;]*\$")
drops=$(sed -n 's/.* drops: \([0-9]*\) ring full.*/\1/p' "$T/host.err")
echo "every process: $host of grow_big's 100 requests, $drops requests dropped in all"
[ "$host" -le 100 ] && [ $((host + drops)) -ge 100 ] || { grep "^alloc_work;alloc_work-$p;" "$T/host.folded"; fail "recording every process, the fixture's mmap requests are $host (and $drops dropped), not 100"; }
[ "$drops" -gt 0 ] || [ "$host" = 100 ] || fail "no drop, yet $host requests, not 100"
grep -q '^hearth;' "$T/host.folded" || fail "the other hearth record's requests are not in the profile"
grep -q '^hearth-wide;' "$T/host.folded" && fail "hearth's own requests are in the profile"
ok "recording every process counts the same 100 requests, and none of hearth's own"

# A process that asks for nothing: the empty answer.
bg "$FIXTURES/alloc_work" grow 1 >/dev/null
q=$LAST_PID
sleep 0.3
"$HEARTH" record --growth -p "$q" -d 1 -o "$T/none.folded" 2>"$T/none.err" || { cat "$T/none.err"; fail "record --growth of a quiet process exited non-zero"; }
[ "$(stacks "$T/none.folded" | grep -c .)" -eq 0 ] || { cat "$T/none.folded"; fail "a quiet process's growth profile is not empty"; }
grep -q '^# hearth-profile 1 .* question=growth #$' "$T/none.folded" || { cat "$T/none.folded"; fail "the empty profile does not say it answers where memory grows"; }
ok "a process that asks for no memory has an empty growth profile"
