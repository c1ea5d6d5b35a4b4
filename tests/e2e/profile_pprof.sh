#!/bin/sh
# pprof interoperability with Go's own tools, both ways:
#  1. a profile hearth writes is read by `go tool pprof`: -top shows the
#     real function names with exactly the values we put in (samples and
#     cpu time), -raw shows the process label; an off-CPU profile reads
#     as Type off_cpu in milliseconds, and comes back to the same stacks;
#  2. a CPU profile written by Go's runtime/pprof (a tiny program built
#     here, standard library only, no network) is read by hearth: the same
#     total and the same flat value for the busy function as pprof reports,
#     and rewritten by hearth it reads the same in pprof.
# The converter is the pprof unit test binary run as
# "convert IN OUT [HZ | offcpu]".
set -eu

BUILD=${BUILD:-build-test}
ROOT=$(pwd)
case "$BUILD" in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
CONV=$B/tests/test_pprof
WORK=$B/e2e-profile-pprof
fail() { echo "FAIL: $*"; exit 1; }

[ -x "$CONV" ] || fail "$CONV is missing (make BUILD=$BUILD unit)"
command -v go >/dev/null 2>&1 || fail "go is not installed (Debian package golang-go)"

rm -rf "$WORK"
mkdir -p "$WORK/home" "$WORK/gopath" "$WORK/gocache" "$WORK/tmp"
# Go writes nothing outside the build folder and never goes online.
export HOME="$WORK/home" GOPATH="$WORK/gopath" GOCACHE="$WORK/gocache" \
	GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local PPROF_TMPDIR="$WORK/tmp"
cd "$WORK"

# ---- 1. ours -> go tool pprof ---------------------------------------------
cat > in.folded <<'EOF'
app;main;work;hot 30
app;main;work 10
app;main;cold 5
app;main;work;sys_write_[k] 2
other;main;hot 1
EOF
"$CONV" convert in.folded ours.pb.gz 99 || fail "hearth could not write pprof"

go tool pprof -top -sample_index=samples ours.pb.gz > top.txt 2> top.err ||
	{ cat top.err; fail "go tool pprof -top could not read our file"; }
# Hand-computed: total 48; hot 31 flat (30 + 1 in another process);
# work 10 flat, 42 cum; main 48 cum. Percentages of 48.
sed -n '/^ *flat /,$p' top.txt > top.body
cat > top.want <<'EOF'
      flat  flat%   sum%        cum   cum%
        31 64.58% 64.58%         31 64.58%  hot
        10 20.83% 85.42%         42 87.50%  work
         5 10.42% 95.83%          5 10.42%  cold
         2  4.17%   100%          2  4.17%  sys_write
         0     0%   100%         48   100%  main
EOF
diff -u top.want top.body || fail "go tool pprof -top (samples) differs from what we wrote"
grep -q "of 48 total" top.txt || fail "go tool pprof does not see 48 samples in total"

# cpu/nanoseconds values: period 1e9/99 = 10101010 ns, hot = 31 periods.
go tool pprof -top -sample_index=cpu -unit=ns ours.pb.gz > topns.txt 2>/dev/null ||
	fail "go tool pprof -top -sample_index=cpu failed"
grep -Eq '^ *313131310ns +64\.58% .* hot$' topns.txt ||
	{ cat topns.txt; fail "cpu time of hot is not 31 x 10101010 ns"; }

go tool pprof -raw ours.pb.gz > raw.txt 2>/dev/null || fail "go tool pprof -raw failed"
grep -q '^PeriodType: cpu nanoseconds$' raw.txt || fail "-raw shows no cpu period type"
grep -q '^Period: 10101010$' raw.txt || fail "-raw shows the wrong period"
grep -q 'process:\[other\]' raw.txt || fail "-raw shows no process label"

# Off-CPU time: one sample type off_cpu/nanoseconds, values as written.
cat > off.folded <<'EOF'
db;main;wait_io;futex_wait_[k] 3000000000
db;main;sleep;hrtimer_nanosleep_[k] 1500000000
EOF
"$CONV" convert off.folded off.pb.gz offcpu || fail "hearth could not write off-CPU pprof"
go tool pprof -top -unit=ms off.pb.gz > off.txt 2>/dev/null || fail "go tool pprof cannot read off-CPU pprof"
grep -q '^Type: off_cpu$' off.txt || { cat off.txt; fail "off-CPU pprof does not say Type: off_cpu"; }
grep -Eq '^ *3000ms +66\.67% .* futex_wait$' off.txt || { cat off.txt; fail "futex_wait is not 3000 ms (66.67%)"; }
grep -Eq '^ *1500ms +33\.33% .* hrtimer_nanosleep$' off.txt || { cat off.txt; fail "hrtimer_nanosleep is not 1500 ms"; }
"$CONV" convert off.pb.gz off.back.folded || fail "hearth could not read its off-CPU pprof"
LC_ALL=C sort off.folded | diff -u - off.back.folded || fail "off-CPU folded -> pprof -> folded changed the stacks"

# ---- 2. Go's runtime/pprof -> hearth ----------------------------------------
mkdir -p busy
cat > busy/go.mod <<'EOF'
module hearthfixture

go 1.19
EOF
cat > busy/main.go <<'EOF'
package main

import (
	"os"
	"runtime/pprof"
	"time"
)

//go:noinline
func hearthBusyLoop(d time.Duration) uint64 {
	var x uint64
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			x += uint64(i) * 2654435761
		}
	}
	return x
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	x := hearthBusyLoop(1500 * time.Millisecond)
	pprof.StopCPUProfile()
	f.Close()
	if x == 1 {
		println(x)
	}
}
EOF
(cd busy && go build -o ../busybin .) || fail "go build of the Go fixture failed"
./busybin go.pprof || fail "the Go fixture did not run"

go tool pprof -top -sample_index=samples go.pprof > gotop.txt 2>/dev/null ||
	fail "go tool pprof cannot read its own file"
want_total=$(sed -n 's/.*of \([0-9][0-9]*\) total.*/\1/p' gotop.txt)
want_flat=$(awk '$NF == "main.hearthBusyLoop" { print $1 }' gotop.txt)
[ -n "$want_total" ] && [ "$want_total" -gt 0 ] || fail "no samples in Go's profile"
[ -n "$want_flat" ] || fail "pprof shows no main.hearthBusyLoop"

"$CONV" convert go.pprof go.folded || fail "hearth could not read Go's pprof file"
got_total=$(awk '{ s += $NF } END { print s + 0 }' go.folded)
got_flat=$(awk '{ n = split($1, f, ";"); if (f[n] == "main.hearthBusyLoop") s += $NF }
	END { print s + 0 }' go.folded)
[ "$got_total" = "$want_total" ] ||
	fail "hearth read $got_total samples, go tool pprof $want_total"
[ "$got_flat" = "$want_flat" ] ||
	fail "hearth gives main.hearthBusyLoop $got_flat self samples, pprof $want_flat"
grep -q '^runtime.main;main.main;main.hearthBusyLoop ' go.folded ||
	{ cat go.folded; fail "the stack runtime.main;main.main;main.hearthBusyLoop is missing"; }

# And back: Go's profile through hearth reads the same in pprof.
"$CONV" convert go.pprof again.pb.gz || fail "hearth could not rewrite Go's profile"
go tool pprof -top -sample_index=samples again.pb.gz > again.txt 2>/dev/null ||
	fail "go tool pprof cannot read the rewritten profile"
sed -n '/^ *flat /,$p' gotop.txt > a.body
sed -n '/^ *flat /,$p' again.txt > b.body
diff -u a.body b.body || fail "Go's profile rewritten by hearth reads differently in pprof"

echo "ok: go tool pprof reads hearth's pprof exactly; hearth reads Go's ($got_total samples, $got_flat in main.hearthBusyLoop)"
