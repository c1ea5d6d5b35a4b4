#!/bin/sh
# hearth export refuses options that conflict, in one sentence and exit
# status 2, and writes nothing: two formats (--svg --png once wrote a PNG
# named t.svg), and --height, --title, --width, --icicle or --plain with
# a format they do not apply to. The same format twice is no conflict.
. tests/e2e/lib.sh
in=tests/fixtures/profiles/small.folded
refused() { # WHAT SENTENCE ARGS...
	what=$1 want=$2; shift 2
	rm -f "$T/out"
	"$HEARTH" export "$@" -o "$T/out" "$in" > "$T/log" 2>&1
	rc=$?
	[ $rc -eq 2 ] || fail "$what: exit status $rc, not 2 ($(cat "$T/log"))"
	grep -q -- "$want" "$T/log" || fail "$what: said '$(cat "$T/log")', not '$want'"
	[ -e "$T/out" ] && fail "$what: wrote a file"
	ok "$what: $(cat "$T/log")"
}
refused "--svg --png" "--svg and --png are two formats" --svg --png
refused "--png --svg" "--png and --svg are two formats" --png --svg
refused "--folded --pprof" "--folded and --pprof are two formats" --folded --pprof
refused "--height with --svg" "--height does not apply to --svg" --svg --height 300
refused "--title with --png" "--title does not apply to --png" --png --title x
refused "--width with --folded" "--width does not apply to --folded" --folded --width 400
refused "--icicle with --pprof" "--icicle does not apply to --pprof" --pprof --icicle
refused "--plain with --svg" "--plain does not apply to --svg" --svg --plain
"$HEARTH" export --svg --svg -o "$T/out" "$in" || fail "--svg --svg failed"
grep -q '<svg' "$T/out" || fail "--svg --svg wrote no SVG"
ok "the same format twice writes it"
