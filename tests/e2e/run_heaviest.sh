#!/bin/sh
# make run's "heaviest stacks" (mk/heaviest.sh): sorted on the count, the
# last field, even where frames hold spaces; off-CPU time as durations;
# the file's "# hearth-..." lines are not ranked.
set -u
. tests/e2e/lib.sh
# A 50 s wait must rank above a 1 us one whose frames hold spaces.
cat > "$T/off.folded" <<'F'
app;main;[waiting for a CPU]_[k] 1000
app;main;read config;vfs_read_[k];schedule_[k] 50000000000
app;worker;futex wait;schedule_[k] 999700000
app;log;write 850
app;gc;mark 12345
app;idle 7
app;batch;sleep 5400000000000
F
sh mk/heaviest.sh "$T/off.folded" ns > "$T/got"
cat > "$T/want" <<'F'
      90.0 min  app;batch;sleep
        50.0 s  app;main;read config;vfs_read_[k];schedule_[k]
        1.00 s  app;worker;futex wait;schedule_[k]
       12.3 µs  app;gc;mark
       1.00 µs  app;main;[waiting for a CPU]_[k]
F
cat "$T/got"
cmp -s "$T/got" "$T/want" || { diff "$T/want" "$T/got"; fail "off-CPU stacks ranked or written wrong"; }
ok "off-CPU: ranked by time, written as durations"

# hearth's header and frame notes are no stacks, whatever their last field.
printf '# hearth-profile 1 unit=samples hz=99 #\n# hearth-frame\td\tuser\tyours\tc\ta\ta.c\t900 #\na;b c;d 9\na;e 120\na;f 10\n' > "$T/on.folded"
sh mk/heaviest.sh "$T/on.folded" samples > "$T/got"
printf '           120  a;e\n            10  a;f\n             9  a;b c;d\n' > "$T/want"
cmp -s "$T/got" "$T/want" || { diff "$T/want" "$T/got"; fail "on-CPU stacks ranked or written wrong"; }
ok "on-CPU: ranked by samples"
# mk/run.sh uses it for both kinds.
[ "$(grep -c 'sh mk/heaviest.sh "$f" \(samples\|ns\)' mk/run.sh)" = 2 ] || fail "mk/run.sh does not rank with mk/heaviest.sh"
