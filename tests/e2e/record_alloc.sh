# hearth record --alloc and --held: sampled allocations of known sizes from
# known functions, weighed back to their shares of the bytes allocated
# (50/25/25) and of the bytes still held (a third each); pprof carries the
# objects beside the bytes. Only the chosen process is probed, and no probe
# is left behind, even when hearth record is killed.
. tests/e2e/lib.sh
require_root

# The fixture allocates for 9 s. --alloc and --held record it at once for
# 3 s, one sample every 64 KiB on average (about 1,700 samples: the
# default 512 KiB would need eight times the bytes for as many).
bg "$FIXTURES/alloc_work" shares 9
p=$LAST_PID
bg "$FIXTURES/alloc_work" shares 9
other=$LAST_PID
sleep 0.5
before=$(malloc_byte "$p")
[ "$before" != cc ] || fail "malloc starts with an int3 before any probe"
"$HEARTH" record --alloc --sample-bytes 64K -p "$p" -d 3 -o "$T/alloc.folded" 2>"$T/alloc.err" &
ra=$!
"$HEARTH" record --held --sample-bytes 64K -p "$p" -d 3 -o "$T/held.pb.gz" 2>"$T/held.err" &
rh=$!
sleep 1.5
[ "$(malloc_byte "$p")" = cc ] || fail "the chosen process's malloc holds no probe while recording"
[ "$(malloc_byte "$other")" = "$before" ] || fail "a process not chosen has a probe in its malloc"
ok "the chosen process is probed; the one beside it is not"
wait $ra || { cat "$T/alloc.err"; fail "record --alloc exited non-zero"; }
wait $rh || { cat "$T/held.err"; fail "record --held exited non-zero"; }
cat "$T/alloc.err" "$T/held.err"
[ "$(malloc_byte "$p")" = "$before" ] || fail "malloc still holds a probe after the recordings"
ok "the probes are gone when the recordings end"

grep -q '^# hearth-profile 1 unit=bytes .* question=alloc #$' "$T/alloc.folded" || { head -3 "$T/alloc.folded"; fail "the folded file does not say it holds bytes allocated"; }
alloc_shares "$T/alloc.folded"
grep -q ';alloc_mid;[^;]*calloc ' "$T/alloc.folded" || fail "alloc_mid's bytes are not under calloc"
ok "--alloc gives each function its share of the bytes allocated within 5 points"
# The weighed bytes stand for what was allocated: the summary's count.
asked=$(sed -n 's/^hearth: [0-9]* allocations (\([0-9.]*\) MiB).*/\1/p' "$T/alloc.err")
est=$(total "$T/alloc.folded")
within "$est" "$(awk -v m="$asked" 'BEGIN { printf "%.0f", m * 1048576 }')" 10 || fail "the profile holds $est bytes, the calls asked for $asked MiB"
ok "the weighed total ($est bytes) is within 10% of the bytes the calls asked for ($asked MiB)"

go tool pprof -raw "$T/held.pb.gz" >"$T/held.raw" 2>&1 || { cat "$T/held.raw"; fail "go tool pprof cannot read the --held profile"; }
grep -qx 'inuse_objects/count inuse_space/bytes' "$T/held.raw" || { head -8 "$T/held.raw"; fail "the pprof sample types are not inuse_objects/count inuse_space/bytes"; }
"$HEARTH" export --folded -o "$T/held.folded" "$T/held.pb.gz" 2>"$T/export.err" || { cat "$T/export.err"; fail "hearth cannot read its --held profile back"; }
held_shares "$T/held.folded"
ok "--held gives each function a third of the bytes in use within 5 points (half of alloc_big's blocks were freed)"
# Objects: a round makes 398 calls (alloc_big 2, alloc_mid 12,
# alloc_small 384) and leaves alloc_big 1 block, alloc_mid 12, alloc_small
# 384. The fixture aims at 400 rounds a second but falls behind under two
# sets of probes: the rounds are the calls --held counted, over 398.
calls=$(sed -n 's/^hearth: \([0-9]*\) allocations .*/\1/p' "$T/held.err")
[ -n "$calls" ] || { cat "$T/held.err"; fail "record --held does not say how many allocations it saw"; }
rounds=$((calls / 398))
echo "--held saw $calls calls: $rounds rounds"
"$HEARTH" export --folded --sample-type inuse_objects -o "$T/objects.folded" "$T/held.pb.gz" 2>"$T/export.err" || { cat "$T/export.err"; fail "hearth cannot read the objects of its --held profile"; }
for f in alloc_big:$rounds alloc_mid:$((rounds * 12)) alloc_small:$((rounds * 384)); do
	fn=${f%:*} want=${f#*:}
	got=$(sum "$T/objects.folded" ";$fn;")
	echo "$fn: $got objects held (want $want)"
	within "$got" "$want" 15 || { cat "$T/objects.folded"; fail "$fn holds $got objects, not $want (+-15%)"; }
done
ok "the objects held stand for the blocks each function kept within 15%"

# Killed, hearth record leaves no probe: its links close with it.
"$HEARTH" record --alloc -p "$p" -d 30 -o "$T/killed.folded" 2>"$T/killed.err" &
rk=$!
sleep 1.5
[ "$(malloc_byte "$p")" = cc ] || { cat "$T/killed.err"; fail "no probe in malloc while recording"; }
kill -KILL $rk
wait $rk 2>/dev/null
sleep 0.5
[ "$(malloc_byte "$p")" = "$before" ] || fail "malloc keeps a probe after hearth record was killed"
bpftool prog show name mem_call 2>/dev/null | grep -q . && fail "the allocation program stays loaded after hearth record was killed"
ok "a killed hearth record leaves no probe and no program"

# Without -p there is nothing to probe.
"$HEARTH" record --alloc -d 1 -o "$T/none.folded" 2>"$T/none.err" && fail "record --alloc without -p succeeded"
grep -q 'choose the processes with -p PID' "$T/none.err" || { cat "$T/none.err"; fail "record --alloc without -p does not say to choose processes"; }
ok "record --alloc without -p says to choose processes"
