# Shared helpers for the end-to-end scripts (sourced, not run).
set -u
T=$(mktemp -d /tmp/hearth-e2e.XXXXXX)
BG_PIDS=
cleanup() {
	for p in $BG_PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
	exit 1
}
ok() { echo "ok: $*"; }

# These tests load real BPF programs: they need root. They never skip.
require_root() {
	[ "$(id -u)" = 0 ] || fail "end-to-end tests load BPF programs and must run as root"
}

bg() { "$@" & BG_PIDS="$BG_PIDS $!"; LAST_PID=$!; }

# fixture_says FILE WORD: waits until the fixture writing FILE says WORD
# (30 s at most: a busy host).
fixture_says() {
	i=0
	until grep -q "$2" "$1"; do
		i=$((i + 1)); [ $i -gt 300 ] && fail "the fixture did not say $2"
		sleep 0.1
	done
}

# sum FILE REGEX: total count of folded lines whose stack matches REGEX
# (an awk ERE tested against the stack part, without the count).
sum() {
	# The pattern goes through the environment: awk -v turns its
	# backslashes into escapes (gawk makes \[ a plain [, mawk does not).
	SUM_RE="$2" awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ ENVIRON["SUM_RE"]) t += n } END { printf "%.0f\n", t + 0 }' "$1"
}

# stacks FILE: the stack lines of a folded file, without the comment
# lines hearth writes before them (flamegraph.pl skips them too).
stacks() { grep -v '^#' "$1"; }

# total FILE: sum of every count.
total() { awk '{ t += $NF } END { printf "%.0f\n", t + 0 }' "$1"; }

# rec_secs ERRFILE: the seconds hearth record says it sampled.
rec_secs() { sed -n 's/.* processes, \([0-9.]*\) s; drops.*/\1/p' "$1" | tail -1; }

# now_ns: wall clock in nanoseconds.
now_ns() { date +%s%N; }

# expect_samples HZ CPU_NS_BEFORE CPU_NS_AFTER WALL_NS_BEFORE WALL_NS_AFTER SAMPLED_SECONDS:
# samples a thread should get: hz x the share of a CPU it had x the time
# the sampler was attached.
expect_samples() {
	awk -v hz="$1" -v c0="$2" -v c1="$3" -v w0="$4" -v w1="$5" -v s="$6" \
		'BEGIN { printf "%.0f", hz * (c1 - c0) / (w1 - w0) * s }'
}

# oncpu_ns PID: nanoseconds the process's main thread has run on a CPU.
oncpu_ns() { cut -d' ' -f1 "/proc/$1/schedstat"; }

# within VALUE EXPECTED PERCENT: succeeds when |VALUE-EXPECTED| <= PERCENT% of EXPECTED.
within() {
	awk -v v="$1" -v e="$2" -v p="$3" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= e * p / 100) }'
}

# ratio A B: A/(A+B) as a percentage with one decimal.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + b == 0) print "nan"; else printf "%.1f\n", 100 * a / (a + b) }'; }

# between X LO HI (floating point)
between() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# spin_record SECONDS FIXTURE...: runs each fixture spinning ("spin",
# twice SECONDS) and records them all for SECONDS, user frames only, into
# $T/p.folded (standard error in $T/err).
spin_record() {
	sr_secs=$1; shift
	sr_pids=
	for sr_f in "$@"; do
		bg "$FIXTURES/$sr_f" spin $((2 * sr_secs))
		sr_pids="$sr_pids -p $LAST_PID"
	done
	"$HEARTH" record -d "$sr_secs" $sr_pids --no-kernel -o "$T/p.folded" 2>"$T/err" || { cat "$T/err"; fail "record failed"; }
}

# expect_under COMM REGEX WHAT [MIN]: at least MIN% (default 90) of the
# samples of process COMM in $T/p.folded (more than 15 of them) have a
# stack matching REGEX after the process name; WHAT says it in words.
expect_under() {
	eu_all=$(sum "$T/p.folded" "^$1;")
	eu_n=$(sum "$T/p.folded" "^$1;.*$2")
	eu_pct=$(ratio "$eu_n" $((eu_all - eu_n)))
	echo "$1: $eu_n of $eu_all samples under $3"
	[ "$eu_all" -gt 15 ] || { cat "$T/err"; fail "too few samples of $1: $eu_all"; }
	between "$eu_pct" "${4:-90}" 100 || { grep "^$1;" "$T/p.folded" | sort -t' ' -k2 -rn | head -5; fail "$1: only $eu_pct% of samples under $3"; }
	ok "$1: $eu_pct% of samples under $3"
}

# ---- hearthd (the daemon_* scripts) ---------------------------------------
# Those scripts use $T, keep their own fail() (which shows hearthd's log)
# and cleanup() (which kills $HD and removes $T), and name hearthd's
# control socket $T/ctl.sock unless HEARTHD_SOCK says otherwise.

# hearthd_traps: the daemon scripts' fail(), which shows the end of
# hearthd's log, and a cleanup on exit that kills hearthd ($HD) first.
hearthd_traps() {
	HD=
	fail() {
		echo "FAIL: $*"
		[ -f "$T/hearthd.log" ] && sed 's/^/  log| /' "$T/hearthd.log" | tail -20
		exit 1
	}
	cleanup() {
		[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
		for p in $BG_PIDS; do kill "$p" 2>/dev/null; done
		wait 2>/dev/null
		rm -rf "$T"
	}
	trap cleanup EXIT INT TERM
}

# prometheus_python: sets PY to a python3 that holds prometheus_client
# (Debian's python3-prometheus-client), or fails.
prometheus_python() {
	PY=python3
	[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
	$PY -c 'import prometheus_client.parser' 2>/dev/null ||
		fail "python3's prometheus_client is missing (package python3-prometheus-client)"
}

# hearthd_wait_ready: waits until hearthd ($HD) answers `hearth status` on
# its socket; fails when it exits first or does not answer within 30 s.
hearthd_wait_ready() {
	hd_i=0
	until "$HEARTH" status --socket "${HEARTHD_SOCK:-$T/ctl.sock}" >/dev/null 2>&1; do
		hd_i=$((hd_i + 1)); [ $hd_i -gt 300 ] && fail "hearthd did not answer on its socket within 30 s"
		kill -0 "$HD" 2>/dev/null || fail "hearthd exited at start"
		sleep 0.1
	done
}

# hearthd_start FLAGS...: starts $HEARTHD with FLAGS (its --socket among
# them), standard error to $T/hearthd.log, HD its process id, and waits
# until it answers (hearthd_wait_ready).
hearthd_start() {
	"$HEARTHD" "$@" 2>"$T/hearthd.log" &
	HD=$!
	hearthd_wait_ready
}

# hearthd_windows: the windows hearthd says it stored (empty when it does
# not answer).
hearthd_windows() {
	"$HEARTH" status --socket "${HEARTHD_SOCK:-$T/ctl.sock}" 2>/dev/null |
		awk '/^windows stored:/ { print $3 }'
}

# hearthd_wait_windows N [SECONDS]: waits until at least N more windows
# than now are stored; fails after SECONDS (default 30).
hearthd_wait_windows() {
	hd_w0=$(hearthd_windows); hd_i=0
	while :; do
		hd_w=$(hearthd_windows)
		[ -n "$hd_w" ] && [ "$hd_w" -ge $((${hd_w0:-0} + $1)) ] && break
		hd_i=$((hd_i + 1)); [ $hd_i -gt $((${2:-30} * 10)) ] && fail "hearthd stored no $1 new windows in ${2:-30} s"
		sleep 0.1
	done
}

# make_test_user: creates user $USR and group $GRP (the user not in the
# group), named for this run so that parallel runs do not share them and
# the host keeps no test accounts: the caller's cleanup removes them with
# drop_test_user. Sets uid, gid (the user's) and ggid (the group's).
USR=hearth-e2e-u$$
GRP=hearth-e2e-g$$
MADE=
make_test_user() {
	for mtu_tool in useradd groupadd userdel groupdel setpriv; do
		command -v $mtu_tool >/dev/null || fail "$mtu_tool is needed (passwd / util-linux)"
	done
	getent group "$GRP" >/dev/null && fail "group $GRP already exists"
	id "$USR" >/dev/null 2>&1 && fail "user $USR already exists"
	groupadd --system "$GRP" || fail "cannot create group $GRP"
	MADE=g
	useradd --system --no-create-home --shell /usr/sbin/nologin "$USR" || fail "cannot create user $USR"
	MADE=gu
	uid=$(id -u "$USR"); gid=$(id -g "$USR"); ggid=$(getent group "$GRP" | cut -d: -f3)
	id -G "$USR" | tr ' ' '\n' | grep -qx "$ggid" && fail "$USR must not be in $GRP"
}

# drop_test_user: removes what make_test_user made.
drop_test_user() {
	case ${MADE:-} in *u*) userdel "$USR" 2>/dev/null ;; esac
	case ${MADE:-} in *g*) groupdel "$GRP" 2>/dev/null ;; esac
}

# ---- questions of time (record --wall, --threads, --locks) ----------------
# start_ready FIXTURE ARG...: runs fixture FIXTURE with ARGs in the
# background and waits until it prints "ready" (its threads run); its
# process id in p.
start_ready() {
	sr_name=$1; shift
	bg "$FIXTURES/$sr_name" "$@" >"$T/ready"
	p=$LAST_PID
	sr_i=0
	until [ -s "$T/ready" ]; do
		sr_i=$((sr_i + 1)); [ $sr_i -gt 50 ] && fail "$sr_name did not start"
		sleep 0.1
	done
}

# time_work_start [SECONDS]: runs the time_work fixture for SECONDS
# (default 40), logging its waits to $T/waits.log, and waits until its
# threads run (and a second more); its process id in p.
time_work_start() {
	start_ready time_work "${1:-40}" "$T/waits.log"
	sleep 1
}

# woken_check FILE WAIT WAKER NAMED MIN: the waits matching WAIT that have
# a waker (one still going when the capture ends has none yet), at least
# MIN ns, all have a waker stack matching WAKER above their "--", and at
# least half one matching NAMED. Until the kernel walker has a process's tables (its
# first seconds, more on a busy machine), a waker's user stack is walked by frame pointers,
# which skip the caller of a libc function built without them (and a
# kernel stack may be lost to the stack map): NAMED is the path walked
# with the tables, WAKER the thread that any walk tells.
woken_check() {
	waits=$(sum "$1" "$2;--;")
	woken=$(sum "$1" "$2;--;$3")
	named=$(sum "$1" "$2;--;$4")
	echo "$waits ns of waits $2 woken, $woken ns of them by $3, $named ns by $4"
	[ "$waits" -gt "$5" ] || { cat "$1"; fail "only $waits ns of waits $2 were woken"; }
	within "$woken" "$waits" 1 || { cat "$1"; fail "only $woken of $waits ns of waits $2 have $3 above --"; }
	[ "$named" -ge $((waits / 2)) ] || { cat "$1"; fail "only $named of $waits ns of waits $2 have $4 above --"; }
}

# waking_links PID: the ids of the BPF links process PID holds on
# sched_waking (a waker session's), one a line, read from its
# descriptors' fdinfo.
waking_links() {
	grep -l '^tp_name:[[:space:]]*sched_waking$' /proc/"$1"/fdinfo/* 2>/dev/null |
		xargs -r sed -n 's/^link_id:[[:space:]]*//p'
}

# capture_window ERRFILE: "FROM TO" in nanoseconds since the epoch, from
# the line hearth record writes for a question of time.
capture_window() {
	sed -n 's/^hearth: the capture ran from @\([0-9]*\)\.\([0-9]*\) to @\([0-9]*\)\.\([0-9]*\);.*/\1\2000000 \3\4000000/p' "$1" | tail -1
}

# overlap LOG WHAT FROM TO: nanoseconds of the waits WHAT logged in LOG
# ("WHAT START END" lines, as time_work writes them) inside [FROM, TO].
overlap() {
	awk -v w="$2" -v a="$3" -v b="$4" '$1 == w { s = $2; e = $3; if (s < a) s = a; if (e > b) e = b; if (e > s) t += e - s } END { printf "%.0f\n", t + 0 }' "$1"
}

# thread_totals FILE: "THREAD-ROW TOTAL" per thread row of a folded file
# recorded with thread rows (hearth's "#" lines at the top are not stacks).
thread_totals() {
	awk '/^#/ { next } { n = $NF; s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";"); t[f[2]] += n } END { for (k in t) printf "%s %.0f\n", k, t[k] }' "$1" | sort
}

# rows_as_tasks FILE PID WIDTH TOL: FILE's thread rows (thread_totals, into
# $T/totals) are as many as PID's tasks, each WIDTH ns wide within TOL
# (a fraction); fails otherwise.
rows_as_tasks() {
	thread_totals "$1" >"$T/totals"
	cat "$T/totals"
	rt_n=$(wc -l <"$T/totals") rt_tasks=$(ls "/proc/$2/task" | wc -l)
	[ "$rt_n" -eq "$rt_tasks" ] || fail "$rt_n thread rows, /proc/$2/task has $rt_tasks"
	while read -r rt_row rt_ns; do
		within "$rt_ns" "$3" "$4" || fail "thread $rt_row is $rt_ns ns wide, the span $3 ns: every thread the same width"
	done <"$T/totals"
	ok "$rt_n thread rows, as many as /proc/$2/task holds, each the span ($3 ns) wide"
}

# malloc_byte PID: the first byte of libc's malloc as process PID sees it:
# an int3 (cc) while a uprobe is placed there.
malloc_byte() {
	python3 - "$1" <<'EOF'
import subprocess, sys
pid = sys.argv[1]
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) >= 6 and f[5].rsplit("/", 1)[-1].startswith("libc.so") and int(f[2], 16) == 0:
        base, path = int(f[0].split("-")[0], 16), f[5]
        break
nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
addr = next(int(l.split()[0], 16) for l in nm.splitlines() if l.split()[-1].split("@")[0] == "malloc")
with open(f"/proc/{pid}/mem", "rb") as m:
    m.seek(base + addr)
    print(m.read(1).hex())
EOF
}

# fn_share FILE FUNCTION: FUNCTION's percentage of the profile's values.
fn_share() { ratio "$(sum "$1" ";$2;")" $(($(total "$1") - $(sum "$1" ";$2;"))); }

# alloc_shares FILE: alloc_work shares' functions hold 50/25/25% of the
# bytes allocated in FILE, each within 5 points.
alloc_shares() {
	for f in alloc_big:50 alloc_mid:25 alloc_small:25; do
		fn=${f%:*} want=${f#*:}
		got=$(fn_share "$1" "$fn")
		echo "$fn: $got% of the bytes allocated (want $want%)"
		between "$got" $((want - 5)) $((want + 5)) || { cat "$1"; fail "$fn allocated $got% of the bytes, not $want% (+-5)"; }
	done
}

# held_shares FILE: and a third each of the bytes held (half of
# alloc_big's blocks are freed), within 5 points.
held_shares() {
	for fn in alloc_big alloc_mid alloc_small; do
		got=$(fn_share "$1" "$fn")
		echo "$fn: $got% of the bytes held"
		between "$got" 28.3 38.3 || { cat "$1"; fail "$fn holds $got% of the bytes in use, not a third (+-5)"; }
	done
}

# map_keys NAME: the keys (u32, one a line) of hearthd's BPF map NAME
# (found through the map descriptors hearthd holds).
map_keys() {
	python3 - "$1" "$HD" <<'PY' || echo "FAIL: no BPF map $1 held by hearthd"
import json, os, subprocess, sys
name, pid = sys.argv[1], sys.argv[2]
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf-map":
            continue
        info = dict(l.split(":", 1) for l in open(f"/proc/{pid}/fdinfo/{fd}") if ":" in l)
    except OSError:
        continue
    mid = info.get("map_id", "").strip()
    show = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", mid], capture_output=True, text=True).stdout or "{}")
    if show.get("name") == name:
        dump = subprocess.run(["bpftool", "-j", "map", "dump", "id", mid], capture_output=True, text=True).stdout
        for e in json.loads(dump):
            k = e.get("key")
            # a process or thread id, first in a struct key (walk_memos)
            if isinstance(k, dict):
                k = k.get("tid", k)
            if isinstance(k, list):
                k = int.from_bytes(bytes(int(b, 16) for b in k[:4]), "little")
            print(k)
        sys.exit(0)
sys.exit(1)
PY
}

# dead_keys NAME: the ids in hearthd's BPF map NAME that no living
# thread holds now.
dead_keys() {
	map_keys "$1" | sort -u | while read -r p; do
		case $p in FAIL*) echo "$p"; continue;; esac
		kill -0 "$p" 2>/dev/null || echo "$p"
	done
}

# snapshot_vs_windows DIR SINCE UNTIL [off]: `hearth snapshot` ($S) of
# [@SINCE, @UNTIL) (seconds) into $T/got.folded against the store tool's
# merge ($TOOL) of DIR's windows one by one, which reads no roll-up, into
# $T/want.folded; got_w and want_w are their window counts. Returns 1
# when the counts differ (a window landed in between); fails when they
# agree and the texts do not.
snapshot_vs_windows() {
	sv_flags=; [ -n "${4:-}" ] && sv_flags=--off-cpu
	"$HEARTH" snapshot $S --plain --since "@$2" --until "@$3" $sv_flags -o "$T/got.folded" \
		2> "$T/got.err" || fail "snapshot failed: $(cat "$T/got.err")"
	"$TOOL" merge "$1" "$(($2 * 1000000000))" "$(($3 * 1000000000))" ${4:-} \
		> "$T/want.folded" 2> "$T/want.err" || fail "the reference merge failed"
	got_w=$(sed -n 's/^hearth: \([0-9]*\) windows,.*/\1/p' "$T/got.err")
	want_w=$(awk '/^windows/ { print $2 }' "$T/want.err")
	[ "$got_w" = "$want_w" ] || return 1
	cmp -s "$T/want.folded" "$T/got.folded" ||
		fail "the snapshot (${4:-on-CPU}) of $got_w windows differs from merging them: $(diff "$T/want.folded" "$T/got.folded" | head -5)"
}
