#!/bin/sh
# One loader for view, export and diff: a raw (not gzip'd) pprof reads as
# the gzip'd one through each command; a directory, an empty profile, a
# file over the input limit (a sparse 1.1 GiB file, /dev/zero, a gzip
# bomb) and a file cut short while it is read each end with one sentence
# and a non-zero status, within the limit's time and memory, never a
# crash (this runs the sanitized build).
set -u
. "$(dirname "$0")/lib.sh"
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/server.pb.gz
export ASAN_OPTIONS=detect_leaks=0
gunzip -c "$fixture" >"$T/raw.pprof"

# ---- a raw pprof through each command ------------------------------------
"$HEARTH" export --folded -o "$T/gz.folded" "$fixture" || fail "export of the gzip'd pprof"
"$HEARTH" export --folded -o "$T/raw.folded" "$T/raw.pprof" 2>"$T/err" ||
	fail "export of the raw pprof: $(cat "$T/err")"
cmp -s "$T/gz.folded" "$T/raw.folded" || fail "raw and gzip'd pprof export differently"
[ "$(total "$T/raw.folded")" -gt 0 ] || fail "nothing exported"
"$HEARTH" export --svg -o "$T/raw.svg" "$T/raw.pprof" || fail "export --svg of the raw pprof"
grep -q 'build_report' "$T/raw.svg" || fail "the SVG of the raw pprof lacks build_report"
"$HEARTH" diff "$T/raw.pprof" "$fixture" >"$T/diff.txt" 2>"$T/err" || fail "diff of the raw pprof: $(cat "$T/err")"
grep -q "no function's share changed" "$T/diff.txt" || fail "raw and gzip'd differ: $(head -3 "$T/diff.txt")"
ok "raw pprof: export --folded, export --svg, diff"

if command -v Xvfb >/dev/null && command -v xdotool >/dev/null; then
	tmp=$T xpid=
	. "$here/tests/e2e/lib_x11.sh"
	x11_start 131 1400x900x24
	for f in "$fixture" "$T/raw.pprof"; do
		dl=$T/layout.$(basename "$f")
		"$HEARTH" view --size 1200x700 --debug-layout "$dl" "$f" >"$T/view.log" 2>&1 &
		vpid=$!
		i=0
		until [ -s "$dl" ]; do
			i=$((i + 1)); [ $i -gt 100 ] && { kill "$vpid"; kill "$xpid"; fail "no view of $f: $(cat "$T/view.log")"; }
			sleep 0.1
		done
		sed -n 's/^answer //p' "$dl" >"$dl.answer"
		kill "$vpid"; wait "$vpid" 2>/dev/null
	done
	kill "$xpid"
	[ -s "$T/layout.server.pb.gz.answer" ] || fail "the view wrote no answer"
	cmp -s "$T/layout.server.pb.gz.answer" "$T/layout.raw.pprof.answer" ||
		fail "view of the raw pprof: $(cat "$T/layout.raw.pprof.answer")"
	ok "raw pprof: view"
else
	[ "${CI:-}" = true ] && fail "Xvfb or xdotool is missing (PKGS_TEST installs them)"
	echo "skipped: the view part needs Xvfb and xdotool"
fi

# expect_error STATUS_FILE ERR_FILE SENTENCE: exit status 1 and the one
# sentence.
expect_error() {
	[ "$(cat "$1")" = 1 ] || fail "exit status $(cat "$1") for '$3', not 1: $(cat "$2")"
	grep -qx "hearth: $3" "$2" || fail "said: $(cat "$2"), not: $3"
}
run() { "$@" 2>"$T/err"; echo $? >"$T/rc"; }

# ---- a directory, an empty profile -------------------------------------------
mkdir "$T/dir"
run "$HEARTH" export --svg -o "$T/out.svg" "$T/dir"
expect_error "$T/rc" "$T/err" "$T/dir is a directory."
: >"$T/empty.folded"
run "$HEARTH" export --svg -o "$T/out.svg" "$T/empty.folded"
expect_error "$T/rc" "$T/err" "$T/empty.folded: the profile is empty."
[ ! -e "$T/out.svg" ] || fail "an SVG was written for an empty profile"
ok "a directory and an empty profile"

# ---- past the input limit --------------------------------------------------
truncate -s 1100M "$T/big.folded"
run "$HEARTH" diff "$T/big.folded" "$T/big.folded"
expect_error "$T/rc" "$T/err" "$T/big.folded is larger than 1024 MiB (--max-input raises the limit)."
start=$(date +%s)
run /usr/bin/time -f %M -o "$T/mem" "$HEARTH" export --svg --max-input 16M -o "$T/out.svg" /dev/zero
expect_error "$T/rc" "$T/err" "/dev/zero is larger than 16 MiB (--max-input raises the limit)."
head -c 100M /dev/zero | gzip -1 >"$T/bomb.gz"
run /usr/bin/time -f %M -o "$T/mem2" "$HEARTH" export --folded --max-input 16M -o "$T/out.folded" "$T/bomb.gz"
expect_error "$T/rc" "$T/err" "$T/bomb.gz is larger than 16 MiB once decompressed (--max-input raises the limit)."
secs=$(($(date +%s) - start))
# The sanitized build's own memory comes on top of the limit's 16 MiB.
for m in "$T/mem" "$T/mem2"; do
	[ "$(tail -1 "$m")" -lt 300000 ] || fail "$(tail -1 "$m") KiB for a 16 MiB limit"
done
[ "$secs" -lt 30 ] || fail "$secs s to refuse /dev/zero and the bomb"
ok "1.1 GiB sparse file, /dev/zero and a gzip bomb refused ($secs s; $(tail -1 "$T/mem") and $(tail -1 "$T/mem2") KiB)"

# ---- a file cut short while it is read -----------------------------------
yes 'app;main;work;leaf 1' | head -c 300M >"$T/cut.folded"
changed=0
for try in 1 2 3 4 5; do
	cp "$T/cut.folded" "$T/cut.$try.folded"
	"$HEARTH" export --folded -o "$T/cut.out" "$T/cut.$try.folded" 2>"$T/err" &
	pid=$!
	sleep 0.$try
	truncate -s 1000 "$T/cut.$try.folded"
	wait "$pid"
	rc=$?
	[ "$rc" -le 1 ] || fail "killed by a signal ($rc) when the file was cut short: $(cat "$T/err")"
	grep -qx "hearth: $T/cut.$try.folded changed while it was read." "$T/err" && changed=$((changed + 1))
	rm -f "$T/cut.$try.folded"
done
[ "$changed" -gt 0 ] || fail "no read met the cut (the file was cut too early or too late each time)"
ok "a file cut short while read: $changed of 5 said so, none crashed"
