#!/bin/sh
# Without a display, hearth view says so in one sentence that points to
# hearth export, and exits 1, as it does when the display does not answer;
# bad input gets one sentence too.
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/small.folded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

env -u DISPLAY -u WAYLAND_DISPLAY "$HEARTH" view "$fixture" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "exit status $rc, not 1"
[ ! -s "$tmp/out" ] || fail "printed to stdout: $(cat "$tmp/out")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
grep -q '^hearth: there is no display .*hearth export --svg' "$tmp/err" ||
	fail "message: $(cat "$tmp/err")"

# A display that does not answer: one sentence naming it, promptly; never
# a window drawn where nobody can see it.
n=190; while [ -e "/tmp/.X11-unix/X$n" ]; do n=$((n + 1)); done
# (libdbus, loaded by SDL, keeps a buffer LeakSanitizer reports)
ASAN_OPTIONS=detect_leaks=0 env -u WAYLAND_DISPLAY DISPLAY=":$n" timeout 20 "$HEARTH" view "$fixture" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "unreachable display: exit status $rc, not 1"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "unreachable display: not one line: $(cat "$tmp/err")"
grep -q "^hearth: cannot open a window on display :$n .*hearth export --svg" "$tmp/err" ||
	fail "unreachable display message: $(cat "$tmp/err")"

"$HEARTH" view "$tmp/missing.folded" 2>"$tmp/err"
[ $? -eq 1 ] || fail "missing file: wrong exit status"
grep -q "^hearth: cannot open $tmp/missing.folded: No such file or directory\.$" "$tmp/err" ||
	fail "missing file message: $(cat "$tmp/err")"

printf 'a;b 3\nc;d x\n' >"$tmp/bad.folded"
env -u DISPLAY "$HEARTH" view "$tmp/bad.folded" 2>"$tmp/err"
[ $? -eq 1 ] || fail "bad file: wrong exit status"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'line 2' "$tmp/err" ||
	fail "bad file message does not name line 2: $(cat "$tmp/err")"

"$HEARTH" view 2>"$tmp/err"
[ $? -eq 2 ] || fail "no argument: wrong exit status"
"$HEARTH" view --help | grep -q '^usage: hearth view' || fail "--help"
echo "view_nodisplay: all checks passed"
