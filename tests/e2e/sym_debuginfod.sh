# Stripped binaries named through debuginfod: the real elfutils server on
# 127.0.0.1 serves the debug file of a stripped fixture (built with DWARF,
# split with objcopy --only-keep-debug, stripped; nothing on disk names it).
#  - hearth record with DEBUGINFOD_URLS: frames named, with file:line, both
#    when the file comes during the recording and when the end has to wait
#    for it (progress line, then the frames taken before are renamed);
#    a second record finds it in the cache;
#  - hearthd with debuginfod_urls: a later snapshot has the names, windows
#    keep their pace while fetching;
#  - a server that never answers: one log line, windows on time, the daemon
#    answers; a server that is down: one log line, whatever the number of
#    build-ids.
# debuginfod listens on every address of its network namespace: the test
# runs in a private one whose only interface is loopback.
[ "$(id -u)" = 0 ] || { echo "FAIL: end-to-end tests load BPF programs and must run as root"; exit 1; }
[ -n "${HEARTH_E2E_NETNS:-}" ] || exec unshare --net env HEARTH_E2E_NETNS=1 sh "$0"
. tests/e2e/lib.sh
for t in debuginfod curl ip go; do
	command -v $t >/dev/null || fail "$t is needed (Debian packages debuginfod, curl, iproute2, golang-go)"
done
ip link set lo up || fail "cannot bring loopback up in the test's network namespace"
hearthd_traps
SRC=$(cd "$(dirname "$0")/../fixtures" && pwd)/sym_funcs.c
BIN=$FIXTURES/sym_dbgd
ID=$(readelf -n "$BIN" 2>/dev/null | sed -n 's/.*Build ID: *//p')
[ -n "$ID" ] || fail "the fixture has no build-id"
readelf -S "$BIN" | grep -q -e '\.symtab' -e '\.debug_info' && fail "the fixture is not stripped"
PORT=8002 # any port: the namespace is ours
URL=http://127.0.0.1:$PORT

bg debuginfod -F -p $PORT -d "$T/server.sqlite" -t 0 -g 0 "$FIXTURES/dbgd-served"
SERVER=$LAST_PID
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/buildid/$ID/debuginfo")" = 200 ]; do
	i=$((i + 1)); [ $i -gt 300 ] && fail "debuginfod did not serve the debug file within 30 s"
	sleep 0.1
done
ok "debuginfod serves build-id $ID on $URL"

# names FOLDED: samples of the fixture and those under main;sym_hot_loop
check_names() {
	all=$(sum "$1" '^sym_dbgd;')
	hot=$(sum "$1" '^sym_dbgd;.*main;sym_hot_loop(;|$)')
	anon=$(sum "$1" 'sym_dbgd\+0x')
	echo "$2: $hot of $all samples under main;sym_hot_loop, $anon left sym_dbgd+0x..."
	[ "$all" -gt 15 ] || fail "$2: too few samples: $all"
	pct=$(ratio "$hot" $((all - hot)))
	between "$pct" 90 100 || { sort -t' ' -k2 -rn "$1" | head -5; fail "$2: only $pct% of samples named main;sym_hot_loop"; }
	[ "$anon" = 0 ] || { grep 'sym_dbgd+0x' "$1" | head -3; fail "$2: frames of sym_dbgd left unnamed"; }
}

# file:line of sym_hot_loop in pprof, as go tool pprof reads it
check_line() {
	go tool pprof -raw "$1" >"$T/raw" 2>"$T/raw.err" || { cat "$T/raw.err"; fail "go tool pprof cannot read $1"; }
	loc=$(awk '/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ sym_inline_helper / { print $5; getline; print $1, $2; exit }' "$T/raw")
	[ -n "$loc" ] || { sed -n '/Locations/,$p' "$T/raw" | head -20; fail "$2: no location with sym_inline_helper"; }
	hfile=$(echo "$loc" | sed -n 1p)
	caller=$(echo "$loc" | sed -n 2p)
	[ "${hfile%:*}" = "$SRC" ] || fail "$2: the helper's file is ${hfile%:*}, expected $SRC"
	sed -n "${hfile##*:}p" "$SRC" | grep -q 'in-helper' || fail "$2: line ${hfile##*:} is not the helper's body"
	[ "${caller%% *}" = sym_hot_loop ] || fail "$2: the helper's caller is '$caller'"
	sed -n "${caller##*:}p" "$SRC" | grep -q 'sym_inline_helper(64)' || fail "$2: line ${caller##*:} is not the call"
	ok "$2: sym_inline_helper at sym_funcs.c:${hfile##*:} inlined in sym_hot_loop at sym_funcs.c:${caller##*:}"
}

# ---- hearth record ----
export DEBUGINFOD_CACHE_PATH="$T/cache"
bg "$BIN" spin 600 # outlives the test on a slow machine; cleanup ends it
FX=$LAST_PID
# 3 s: the file comes with the first drain's request, during the recording
DEBUGINFOD_URLS=$URL "$HEARTH" record -d 3 -p $FX --no-kernel -o "$T/r.pb.gz" 2>"$T/r.err" ||
	{ cat "$T/r.err"; fail "record failed"; }
cat "$T/r.err"
grep -q '^hearth: debuginfod: 1 debug files fetched' "$T/r.err" || fail "record does not say it fetched the debug file"
[ -s "$T/cache/$ID/debuginfo" ] || fail "the debug file is not in the cache $T/cache/$ID"
"$HEARTH" export --folded -o "$T/r.folded" "$T/r.pb.gz" || fail "export failed"
check_names "$T/r.folded" "record, fetched during it"
ok "record: named through debuginfod ($pct%)"
check_line "$T/r.pb.gz" "record"

# Through a server 2 s slow, half a second, no drain before the end: the
# request comes with the last drain, the end waits for the file with a
# progress line, then names what was taken before it came.
bg "$FIXTURES/tcp_slow" 8004 120 $PORT 2000
sleep 0.3
rm -rf "$T/cache"
DEBUGINFOD_URLS=http://127.0.0.1:8004 "$HEARTH" record -d 0.5 -F 499 -p $FX --no-kernel -o "$T/w.folded" 2>"$T/w.err" ||
	{ cat "$T/w.err"; fail "record (waiting) failed"; }
cat "$T/w.err"
grep -q '^hearth: waiting up to 30 s for 1 debug files from debuginfod' "$T/w.err" || fail "no progress line for the wait"
waited=$(sed -n 's/^hearth: debuginfod: 1 debug files fetched.*; waited \([0-9.]*\) s at the end$/\1/p' "$T/w.err")
between "${waited:-0}" 0.5 10 || fail "the end waited '$waited' s for a file 2 s away"
check_names "$T/w.folded" "record, waited for at the end"
ok "record: the end waited $waited s for the file and renamed the frames taken before ($pct%)"
# warm: the cache answers, nothing is waited for
DEBUGINFOD_URLS=http://127.0.0.1:8004 "$HEARTH" record -d 0.5 -F 499 -p $FX --no-kernel -o "$T/w2.folded" 2>"$T/w2.err" ||
	{ cat "$T/w2.err"; fail "record (cached) failed"; }
grep -q '^hearth: waiting' "$T/w2.err" && fail "a cached file was waited for"
check_names "$T/w2.folded" "record, from the cache"
ok "record: named from the cache at once"

# The limit: a file 2 s away, a wait of 0.5 s: given up, said so, frames
# unnamed; the give-up leaves no "not found" mark in the cache, so the
# next record fetches it.
rm -rf "$T/cache"
t0=$(now_ns)
DEBUGINFOD_URLS=http://127.0.0.1:8004 "$HEARTH" record -d 0.5 -F 499 -p $FX --no-kernel \
	--debuginfod-wait 0.5 -o "$T/l.folded" 2>"$T/l.err" || { cat "$T/l.err"; fail "record (limit) failed"; }
t1=$(now_ns)
cat "$T/l.err"
grep -q '^hearth: 1 debug files did not arrive in 0.[0-9] s: their frames stay unnamed' "$T/l.err" || fail "the limit is not said"
[ "$(sum "$T/l.folded" 'sym_dbgd\+0x')" -gt 0 ] || fail "frames named though the file did not arrive"
# The wait as hearth timed it (the whole run's length is mostly BPF
# loading, seconds on a loaded machine): at its limit, not the file's 2 s.
waited=$(sed -n 's/.*; waited \([0-9.]*\) s at the end$/\1/p' "$T/l.err")
[ -n "$waited" ] || fail "the wait's length is not said"
awk -v w="$waited" 'BEGIN { exit !(w < 1.5) }' || fail "the wait lasted $waited s with a 0.5 s limit (the file comes after 2 s)"
[ -e "$T/cache/$ID/debuginfo" ] && fail "the given-up fetch left $T/cache/$ID/debuginfo"
DEBUGINFOD_URLS=$URL "$HEARTH" record -d 0.5 -F 499 -p $FX --no-kernel -o "$T/l2.folded" 2>"$T/l2.err" ||
	{ cat "$T/l2.err"; fail "record after the limit failed"; }
check_names "$T/l2.folded" "record after a given-up fetch"
ok "record: the wait ends at its limit ($waited s; $(( (t1 - t0) / 1000000 )) ms in all), and the next record fetches"

# not asked at all without servers: frames stay unnamed
env -u DEBUGINFOD_URLS "$HEARTH" record -d 1 -p $FX --no-kernel -o "$T/n.folded" 2>"$T/n.err" || fail "record without servers failed"
grep -q debuginfod "$T/n.err" && fail "record without DEBUGINFOD_URLS speaks of debuginfod"
[ "$(sum "$T/n.folded" 'sym_dbgd\+0x')" -gt 0 ] || fail "without servers the stripped fixture cannot be named"
ok "record without DEBUGINFOD_URLS leaves the fixture unnamed"

# ---- hearthd ----
# windows_paced LOG: the windows hearthd logged (HEARTHD_LOG_WINDOWS) came
# one a second: no gap between window ends over 1.6 s, past the first two
# (which symbolize the whole host with cold caches).
windows_paced() {
	awk '/stored window/ { e = $5 / 1e9; n++; if (n > 3 && e - p > 1.6) { printf "gap %.2f s\n", e - p; bad = 1 } p = e }
		END { printf "%d windows\n", n; exit !(n >= 5 && !bad) }' "$1"
}
# log_line PATTERN SECONDS: waits until hearthd's log has a line
# matching PATTERN.
log_line() {
	i=0
	until grep -q "$1" "$T/hearthd.log"; do
		i=$((i + 1)); [ $i -gt $(($2 * 10)) ] && fail "hearthd logged no '$1' within $2 s"
		sleep 0.1
	done
}
unset DEBUGINFOD_CACHE_PATH
export HEARTHD_LOG_WINDOWS=1
hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s --debuginfod-urls "$URL"
hearthd_wait_windows 2 20
"$HEARTH" snapshot --socket "$T/ctl.sock" --last 30s --pid $FX -o "$T/early.folded" || fail "early snapshot failed"
echo "early snapshot: $(sum "$T/early.folded" 'sym_dbgd\+0x') of $(total "$T/early.folded") samples unnamed (allowed before the file arrives)"
i=0
until [ -s "$T/state/debuginfod/$ID/debuginfo" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "hearthd did not fetch the debug file within 10 s"
	sleep 0.1
done
hearthd_wait_windows 4 20
"$HEARTH" snapshot --socket "$T/ctl.sock" --last 2s --pid $FX -o "$T/late.folded" || fail "late snapshot failed"
check_names "$T/late.folded" "hearthd, a later snapshot"
ok "hearthd: a snapshot after the fetch names the fixture ($pct%), its file in $T/state/debuginfod"
"$HEARTH" snapshot --socket "$T/ctl.sock" --last 2s --pid $FX -o "$T/late.pb.gz" || fail "late snapshot (pprof) failed"
check_line "$T/late.pb.gz" "hearthd"
windows_paced "$T/hearthd.log" || fail "hearthd's windows lost their pace while fetching"
ok "hearthd: windows every second while fetching"
kill "$HD"; wait "$HD" 2>/dev/null; HD=

# A server that accepts and never answers: the fetch is given up after
# DEBUGINFOD_TIMEOUT, one log line; windows keep their pace meanwhile and
# the daemon answers.
bg "$FIXTURES/tcp_slow" 8003 60
SILENT=$LAST_PID
sleep 0.3
rm -rf "$T/state"
export DEBUGINFOD_TIMEOUT=6
hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s \
	--debuginfod-urls http://127.0.0.1:8003
unset DEBUGINFOD_TIMEOUT
log_line 'debuginfod: cannot reach' 30
hearthd_wait_windows 6 20 # windows_paced looks past the first three
grep 'debuginfod: cannot reach' "$T/hearthd.log"
n=$(grep -c 'debuginfod: cannot reach http://127.0.0.1:8003' "$T/hearthd.log")
[ "$n" = 1 ] || { cat "$T/hearthd.log"; fail "a silent server gave $n log lines, expected 1"; }
windows_paced "$T/hearthd.log" || fail "windows lost their pace while a fetch hung"
"$HEARTH" snapshot --socket "$T/ctl.sock" --last 2s --pid $FX -o "$T/silent.folded" || fail "snapshot with a silent server failed"
[ "$(sum "$T/silent.folded" '^sym_dbgd;')" -gt 15 ] || fail "no samples of the fixture with a silent server"
ok "silent server: one log line, windows on time, snapshots answered"
kill "$HD"; wait "$HD" 2>/dev/null; HD=
kill "$SILENT"

# The server down: one line, whatever the number of build-ids asked for;
# the daemon keeps sampling and answering.
kill "$SERVER"; wait "$SERVER" 2>/dev/null
rm -rf "$T/state"
hearthd_start --state-dir "$T/state" --socket "$T/ctl.sock" --window 1s --debuginfod-urls "$URL"
bg "$FIXTURES/sym_stripped" spin 30
log_line 'debuginfod: cannot reach' 30
hearthd_wait_windows 6 20 # windows_paced looks past the first three
n=$(grep -c 'debuginfod: cannot reach' "$T/hearthd.log")
[ "$n" = 1 ] || { cat "$T/hearthd.log"; fail "a server down gave $n log lines, expected 1"; }
grep 'debuginfod: cannot reach' "$T/hearthd.log"
windows_paced "$T/hearthd.log" || fail "windows lost their pace with the server down"
"$HEARTH" snapshot --socket "$T/ctl.sock" --last 2s --pid $FX -o "$T/down.folded" || fail "snapshot with the server down failed"
[ "$(sum "$T/down.folded" '^sym_dbgd;')" -gt 15 ] || fail "no samples of the fixture with the server down"
"$HEARTH" status --socket "$T/ctl.sock" >/dev/null || fail "status with the server down failed"
ok "server down: one log line, the daemon keeps working"
