#!/bin/sh
# The viewer is its own binary: hearth links no SDL (so record, snapshot,
# diff and export --svg start without loading it) and hands view, export
# --png and diff --view to hearth-view next to it, with the same command
# line, output and exit status; without a viewer it says so in one
# sentence, and still answers --help for view, export --png and diff
# --view itself (the same text the viewer prints).
set -u
: "${HEARTH:?}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fixture=$here/tests/fixtures/profiles/small.folded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
view=$(dirname "$HEARTH")/hearth-view
[ -x "$view" ] || fail "no $view next to $HEARTH"

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
needed "$HEARTH" >"$tmp/hearth.needed"
needed "$view" >"$tmp/view.needed"
grep -qi 'sdl' "$tmp/hearth.needed" && fail "hearth links SDL: $(tr '\n' ' ' <"$tmp/hearth.needed")"
grep -q 'libSDL2-2' "$tmp/view.needed" || fail "hearth-view does not link SDL2"
# and nothing SDL is loaded while hearth runs a command
LD_DEBUG=libs "$HEARTH" export --svg -o "$tmp/x.svg" "$fixture" 2>"$tmp/ld" || fail "export --svg"
grep -qi 'libSDL' "$tmp/ld" && fail "hearth export --svg loads SDL"
grep -q '<svg' "$tmp/x.svg" || fail "export --svg wrote no SVG"
LD_DEBUG=libs "$HEARTH" --version 2>"$tmp/ld" >/dev/null || fail "--version"
grep -qi 'libSDL' "$tmp/ld" && fail "hearth --version loads SDL"
grep -q 'calling init: .*libdw' "$tmp/ld" || fail "LD_DEBUG gave no list of libraries"

# The same answers through hearth as from hearth-view itself.
"$HEARTH" view --help >"$tmp/a" 2>&1; a=$?
"$view" view --help >"$tmp/b" 2>&1; b=$?
[ $a -eq 0 ] && [ $b -eq 0 ] && cmp -s "$tmp/a" "$tmp/b" || fail "view --help differs"
grep -q '^usage: hearth view' "$tmp/a" || fail "view --help: $(head -1 "$tmp/a")"
env -u DISPLAY -u WAYLAND_DISPLAY "$HEARTH" view "$fixture" >"$tmp/a" 2>&1; a=$?
[ $a -eq 1 ] || fail "view without a display: exit $a"
grep -q '^hearth: there is no display' "$tmp/a" || fail "no-display sentence: $(cat "$tmp/a")"
"$HEARTH" export --png -o "$tmp/x.png" --width 400 "$tmp/missing.folded" >"$tmp/a" 2>&1; a=$?
[ $a -eq 1 ] || fail "export --png of a missing file: exit $a"
grep -q "^hearth: cannot open $tmp/missing.folded" "$tmp/a" || fail "export --png message: $(cat "$tmp/a")"
# exec keeps the process: what started as hearth ends as hearth-view
env -u DISPLAY -u WAYLAND_DISPLAY "$HEARTH" diff --view "$fixture" "$fixture" >"$tmp/a" 2>&1; a=$?
[ $a -eq 1 ] || fail "diff --view without a display: exit $a"
grep -q '^hearth: there is no display' "$tmp/a" || fail "diff --view sentence: $(cat "$tmp/a")"
[ "$(wc -l <"$tmp/a")" -eq 1 ] || fail "diff --view: not one line: $(cat "$tmp/a")"

# A hearth without its viewer says what is missing (unless one is installed).
mkdir "$tmp/alone"
cp "$HEARTH" "$tmp/alone/hearth"
inst=$(strings "$HEARTH" | sed -n 's|^\(/.*/libexec/hearth\)$|\1|p' | head -1)
[ -n "$inst" ] || fail "no install folder compiled into hearth"
# Help needs no viewer: the same text, exit 0, nothing on stderr.
for args in "view --help" "view -h" "help view" "view --live --help" \
	"export --png --help" "diff --view --help"; do
	# shellcheck disable=SC2086 # word splitting wanted
	"$tmp/alone/hearth" $args >"$tmp/a" 2>"$tmp/err"; a=$?
	# shellcheck disable=SC2086
	"$view" $args >"$tmp/b" 2>&1; b=$?
	[ $a -eq 0 ] || fail "alone: $args: exit $a: $(cat "$tmp/err")"
	[ -s "$tmp/err" ] && fail "alone: $args wrote to stderr: $(cat "$tmp/err")"
	[ $b -eq 0 ] && cmp -s "$tmp/a" "$tmp/b" || fail "alone: $args differs from the viewer's"
	grep -q '^usage: hearth' "$tmp/a" || fail "alone: $args: $(head -1 "$tmp/a")"
done
if [ ! -x "$inst/hearth-view" ]; then
	"$tmp/alone/hearth" view "$fixture" >"$tmp/a" 2>&1; a=$?
	[ $a -eq 1 ] || fail "no viewer: exit $a"
	[ "$(wc -l <"$tmp/a")" -eq 1 ] || fail "no viewer: not one line: $(cat "$tmp/a")"
	grep -q "^hearth: the viewer is not installed: no hearth-view next to hearth or in $inst\.$" "$tmp/a" ||
		fail "no viewer message: $(cat "$tmp/a")"
else
	"$tmp/alone/hearth" view --help | grep -q '^usage: hearth view' ||
		fail "installed viewer in $inst not used"
fi
echo "view_split: all checks passed"
