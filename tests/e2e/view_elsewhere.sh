#!/bin/sh
# A profile from elsewhere gets its colours: a Go runtime/pprof heap
# profile (a Go program with a vendored dependency, tests/fixtures/goheap)
# is drawn with Go's runtime and standard library as runtime, main's
# functions as your code and the vendored package as a library, none
# unclassified (before, all of it was).
. tests/e2e/lib.sh
# ---- a Go heap profile from elsewhere -----------------------------------------
"$FIXTURES/go_heap" "$T/heap.pb.gz" || fail "the Go fixture wrote no heap profile"
"$HEARTH" export --svg -o "$T/heap.svg" "$T/heap.pb.gz" || fail "export --svg of the heap profile"
for want in 'main.grow:your code' 'example.com/fill.Blocks:libraries' 'runtime.main:runtime' 'fmt.Sprintf:runtime'; do
	fn=${want%%:*}
	t=$(grep -o "<title>$fn ([^<]*" "$T/heap.svg" | head -1)
	case "$t" in *"; ${want#*:})") ;; *) fail "$fn in the heap profile: ${t:-no box}, expected ${want#*:}" ;; esac
done
n=$(grep -c 'unclassified)' "$T/heap.svg")
[ "$n" -eq 0 ] || fail "$n boxes of the heap profile unclassified"
ok "the Go heap profile: your code, its vendored library and Go's runtime"
echo "view_elsewhere: all checks passed"
