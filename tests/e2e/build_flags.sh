#!/bin/sh
# The build keeps its promises: a build in a scratch folder (at -O0, to be
# quick), then
#  - a second `make` rebuilds nothing;
#  - `make PREFIX=/usr install` rebuilds the viewer's launcher alone, and
#    the installed hearth runs /usr/libexec/hearth/hearth-view (checked in
#    a mount namespace of its own: `hearth export --png` draws a picture);
#  - LDFLAGS relinks without recompiling; FIXTURE_FLAGS rebuilds a
#    fixture; SAN=1 recompiles an object with the sanitizers, SAN=0
#    without them; CLANG rebuilds the BPF object; each only once.
set -u
. tests/e2e/lib.sh
require_root
B=$T/b
export CFLAGS=-O0
# mk: make TARGETS with VARS...; its output in $T/out.
mk() { nice make --no-print-directory -j2 BUILD="$B" "$@" > "$T/out" 2>&1 || { tail -20 "$T/out"; fail "make $* failed"; }; }
built() { grep -E '^  (CC|LINK|BPF|SKEL|FIXTURE|AR) ' "$T/out" | awk '{ print $1, $2 }' | sed "s|$B/||" | sort | tr '\n' ' '; }
expect() { # WHAT EXPECTED
	got=$(built)
	[ "$got" = "$2" ] || { cat "$T/out"; fail "$1: built '$got', expected '$2'"; }
	ok "$1: ${2:-nothing rebuilt}"
}

mk all
[ -x "$B/hearth" ] && [ -x "$B/hearthd" ] && [ -x "$B/hearth-view" ] || fail "make all built no binaries"
mk all
expect "a second make" ""

mk PREFIX=/usr DESTDIR="$T/root" install
expect "make PREFIX=/usr install after make" "CC cli/viewer_exec.o LINK hearth "
[ -x "$T/root/usr/libexec/hearth/hearth-view" ] || fail "no viewer in /usr/libexec/hearth"
mk PREFIX=/usr DESTDIR="$T/root" install
expect "the same install again" ""
# The installed hearth, with its viewer at /usr/libexec/hearth and nothing
# in /usr/local (where a PREFIX=/usr/local build would look).
unshare -m sh -c '
	mount -t tmpfs none /usr/libexec && mkdir /usr/libexec/hearth &&
	cp "$1/usr/libexec/hearth/hearth-view" /usr/libexec/hearth/ &&
	mount -t tmpfs none /usr/local &&
	env -u DISPLAY "$1/usr/bin/hearth" export --png --width 400 -o "$2" tests/fixtures/profiles/small.folded' \
	sh "$T/root" "$T/out.png" > "$T/png.log" 2>&1 || { cat "$T/png.log"; fail "the installed hearth found no viewer"; }
[ "$(head -c 8 "$T/out.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || fail "export --png wrote no PNG"
ok "the installed hearth runs /usr/libexec/hearth/hearth-view"

mk LDFLAGS=-Wl,-z,now "$B/hearthd"
expect "LDFLAGS" "LINK hearthd "
readelf -d "$B/hearthd" | grep -q 'FLAGS.*NOW' || fail "LDFLAGS did not reach the link"
mk LDFLAGS=-Wl,-z,now "$B/hearthd"
expect "LDFLAGS again" ""

mk "$B/fixtures/record_work"
mk FIXTURE_FLAGS='-O1 -g' "$B/fixtures/record_work"
expect "FIXTURE_FLAGS" "FIXTURE fixtures/record_work "
mk FIXTURE_FLAGS='-O1 -g' "$B/fixtures/record_work"
expect "FIXTURE_FLAGS again" ""

obj=profile/gzip.o
mk SAN=1 "$B/$obj"
expect "SAN=1" "CC $obj "
nm "$B/$obj" | grep -q __asan || fail "SAN=1 compiled $obj without ASan"
mk SAN=1 "$B/$obj"
expect "SAN=1 again" ""
mk "$B/$obj"
expect "SAN=0" "CC $obj "
nm "$B/$obj" | grep -q __asan && fail "SAN=0 left ASan in $obj"

# Last: a new BPF object makes new skeletons, which every object includes.
mk CLANG=/usr/bin/clang "$B/bpf/sampler.bpf.o"
expect "CLANG" "BPF bpf/sampler.bpf.o "
mk CLANG=/usr/bin/clang "$B/bpf/sampler.bpf.o"
expect "CLANG again" ""
echo "build_flags: all checks passed"
