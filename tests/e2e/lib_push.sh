# Helpers of the push tests (sourced after lib.sh). They use $T, $HEARTH,
# $HEARTHD, hearthd's socket $T/ctl.sock and store $T/state, and keep the
# test backend (push_receiver.py) in $RX_DIR with its process id in $RX.
# At exit they stop hearthd ($HD), the workloads ($FX, $GW) and the backend,
# and remove the unit cgroup $CG. The tests need root, hearthd, the
# daemon_shift fixture, go and python3.
FX= RX= CG= GW=
RX_DIR=$T/rx
PORT=0
hearthd_traps # its fail(); the cleanup below is this file's
cleanup() {
	[ -n "$HD" ] && kill -9 "$HD" 2>/dev/null
	for p in $FX $GW; do kill "$p" 2>/dev/null; done
	[ -n "$RX" ] && kill "$RX" 2>/dev/null
	wait 2>/dev/null
	[ -n "$CG" ] && rmdir "$CG" "$(dirname "$CG")" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
require_root
[ -x "$HEARTHD" ] && [ -x "$FIXTURES/daemon_shift" ] || fail "build hearthd and the fixtures first"
command -v go >/dev/null || fail "go is missing (golang-go): the bodies are read with go tool pprof"
command -v python3 >/dev/null || fail "python3 is missing: it runs the test backend"
mkdir -p "$RX_DIR"
export PPROF_TMPDIR="$T" HOME="${HOME:-$T}"

# rx_start: starts the backend (on $PORT when it is set, else any port).
rx_start() {
	rm -f "$RX_DIR/port"
	EXPECT_AUTH="${EXPECT_AUTH:-}" python3 "$(dirname "$0")/push_receiver.py" "$RX_DIR" "$PORT" \
		2>>"$RX_DIR/stderr" &
	RX=$!
	rx_i=0
	until [ -s "$RX_DIR/port" ]; do
		rx_i=$((rx_i + 1)); [ $rx_i -gt 100 ] && fail "the test backend did not start"
		sleep 0.1
	done
	PORT=$(cat "$RX_DIR/port")
}

rx_stop() { kill "$RX"; wait "$RX" 2>/dev/null; RX=; }

# rx_windows: how many distinct windows the backend took.
rx_windows() {
	[ -f "$RX_DIR/accepted.tsv" ] || { echo 0; return; }
	awk -F'\t' '{ print $3 "-" $4 }' "$RX_DIR/accepted.tsv" | sort -u | wc -l
}

# rx_wait_windows N SECONDS: until the backend took N more windows.
rx_wait_windows() {
	rw0=$(rx_windows); rw_i=0
	while [ "$(rx_windows)" -lt $((rw0 + $1)) ]; do
		rw_i=$((rw_i + 1)); [ $rw_i -gt $(($2 * 10)) ] && fail "the backend took no $1 more windows in $2 s"
		kill -0 "$HD" 2>/dev/null || fail "hearthd exited"
		sleep 0.1
	done
}

# rx_wait_until UNIX_SECONDS SECONDS: until the backend took a window
# that starts at UNIX_SECONDS or later.
rx_wait_until() {
	pw_i=0
	until [ -f "$RX_DIR/accepted.tsv" ] &&
		awk -F'\t' -v t="$1" '$3 >= t { f = 1 } END { exit !f }' "$RX_DIR/accepted.tsv"; do
		pw_i=$((pw_i + 1)); [ $pw_i -gt $(($2 * 10)) ] && fail "the push did not catch up in $2 s"
		kill -0 "$HD" 2>/dev/null || fail "hearthd exited"
		sleep 0.1
	done
}

# unit_cgroup NAME: makes hearth-e2e.slice/NAME in the hierarchy that
# names systemd units (name=systemd on a legacy or hybrid boot, else the
# unified one) and prints its path.
unit_cgroup() {
	for uc_root in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ -f "$uc_root/cgroup.procs" ] || continue
		mkdir -p "$uc_root/hearth-e2e.slice/$1" 2>/dev/null || continue
		[ -f "$uc_root/hearth-e2e.slice/$1/cgroup.procs" ] || continue
		echo "$uc_root/hearth-e2e.slice/$1"
		return 0
	done
	return 1
}

# pprof_total FILE...: the first value of every sample, summed, as
# `go tool pprof -raw` reads the profiles (merged).
pprof_total() {
	go tool pprof -raw "$@" 2>"$T/pprof.err" |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		     s && $1 ~ /^[0-9]+:?$/ { v = $1; sub(/:$/, "", v); t += v }
		     END { printf "%.0f\n", t + 0 }'
}

# pprof_sums FILE...: each value column of every sample summed, as `go
# tool pprof -raw` reads the profiles (merged): "BYTES REQUESTS" for
# growth's two sample types ("0 0" without a sample).
pprof_sums() {
	go tool pprof -raw "$@" 2>"$T/pprof.err" |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		     s && $1 ~ /^[0-9]+:?$/ { for (i = 1; i <= NF; i++) { v = $i; last = sub(/:$/, "", v)
				t[i] += v; if (i > n) n = i; if (last) break } }
		     END { if (!n) n = 2; for (i = 1; i <= n; i++) printf("%s%.0f", (i > 1 ? " " : ""), t[i]); print "" }'
}

# push_check_windows SENT.TSV [KILLS]: every window of the store, up to
# the last one the backend was sent, was sent exactly once in all
# (accepted and refused parts together add up to the store's totals), in
# order, with from/until following on from the window before; where
# hearthd was killed (KILLS: one time in ns a line) the store has a gap,
# and only there. Growth (units objects) is checked too: its requests
# and their bytes.
push_check_windows() {
	"$HEARTHD" --verify-store "$T/state" > "$T/verify" || fail "the store does not verify"
	awk '/^window / { printf "%s %s %d-%d\n", $2, $3, int($2 / 1e9), int($3 / 1e9) }' \
		"$T/verify" > "$T/windows"
	# The last window may be under way still: the check ends before it.
	last=$(awk -F'\t' '{ print $3 "-" $4 }' "$1" | uniq | tail -2 | head -1)
	awk -v l="$last" '{ print } $3 == l { exit }' "$T/windows" > "$T/expected"
	[ "$(tail -1 "$T/expected" | cut -d' ' -f3)" = "$last" ] || fail "the last window sent, $last, is not in the store"
	nwin=$(grep -c . "$T/expected")
	[ "$nwin" -ge 8 ] || fail "only $nwin windows to check"
	# Order and following on: the windows' keys in the order sent.
	awk -F'\t' -v l="$last" '{ print $3 "-" $4 } $3 "-" $4 == l { exit }' "$1" | uniq > "$T/order"
	cut -d' ' -f3 "$T/expected" > "$T/keys"
	# Windows without a sample of either kind send nothing: skip them.
	grep -Fxf "$T/order" "$T/keys" > "$T/keys_sent"
	cmp -s "$T/order" "$T/keys_sent" || { diff "$T/keys_sent" "$T/order" | head; fail "windows were sent out of order or twice"; }
	# A gap is a restart: a kill between the two windows.
	awk -v kills="${2:-/dev/null}" 'BEGIN { while ((getline k < kills) > 0) kill[++nk] = k }
		NR > 1 && $1 != u { ok = 0; for (i = 1; i <= nk; i++) if (u <= kill[i] && kill[i] <= $1) ok = 1
			if (!ok) { print "gap before " $3; bad = 1 } }
		{ u = $2 } END { exit bad }' "$T/expected" ||
		fail "from/until do not follow on"
	dups=$(awk -F'\t' '{ print $3 "-" $4, $2, $5 }' "$1" | sort | uniq -d | head -3)
	[ -z "$dups" ] || fail "parts sent twice: $dups"
	while read -r ws we key; do
		since=$(awk -v s="$ws" 'BEGIN { printf "%.6f", (s + 1e6) / 1e9 }')
		until=$(awk -v e="$we" 'BEGIN { printf "%.6f", (e - 1e6) / 1e9 }')
		for kind in samples nanoseconds objects; do
			flag= out=$T/w.folded
			[ $kind = nanoseconds ] && flag=--off-cpu
			[ $kind = objects ] && flag=--growth out=$T/w.pb.gz
			"$HEARTH" snapshot --socket "$T/ctl.sock" --since "@$since" --until "@$until" $flag \
				-o "$out" 2>"$T/snap.err" || { cat "$T/snap.err"; fail "snapshot of window $key failed"; }
			files=$(awk -F'\t' -v k="$key" -v u=$kind '$3 "-" $4 == k && $5 == u { print $8 }' "$1")
			if [ $kind = objects ]; then
				# a window without requests is an empty profile
				if "$HEARTH" export --folded --sample-type growth_space -o "$T/wb.folded" "$out" 2>"$T/exp.err" &&
					"$HEARTH" export --folded -o "$T/wr.folded" "$out" 2>>"$T/exp.err"; then
					want="$(total "$T/wb.folded") $(total "$T/wr.folded")"
				elif grep -q 'the profile is empty' "$T/exp.err"; then
					want="0 0"
				else
					cat "$T/exp.err"; fail "cannot read the growth snapshot of window $key"
				fi
				got="0 0"
				[ -n "$files" ] && got=$(pprof_sums $files)
			else
				want=$(total "$out") got=0
				[ -n "$files" ] && got=$(pprof_total $files)
			fi
			[ "$got" = "$want" ] || { cat "$T/pprof.err"; grep -c "	$kind	" "$1" | sed 's/^/parts sent: /'
				awk -F'\t' -v k="$key" '$3 "-" $4 == k' "$1" | cut -f1-6 | head -50; fail "window $key $kind: the backend got $got, the store holds $want"; }
		done
	done < "$T/expected"
	ok "$nwin windows: each sent once, in order, from/until following on; totals equal the store's (go tool pprof -raw)"
}
