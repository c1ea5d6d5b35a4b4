# JIT runtimes through their perf maps: Node.js run with
# --perf-basic-prof, and a JVM told to write its map with
# `jcmd PID Compiler.perfmap` (JDK 17 and later). The hot JavaScript and
# Java functions are named in most of the runtimes' samples.
. tests/e2e/lib.sh
require_root
D=$(cd "$(dirname "$0")/../fixtures/jit" && pwd)
command -v node >/dev/null || fail "node is needed (Debian package nodejs)"
command -v javac >/dev/null && command -v jcmd >/dev/null || fail "javac and jcmd are needed (Debian package openjdk-17-jdk-headless)"

jit_share() { # NAME FILE REGEX: the share of samples whose leaf matches REGEX
	all=$(total "$2")
	n=$(sum "$2" "$3")
	pct=$(ratio "$n" $((all - n)))
	echo "$1: $n of $all samples in the hot function"
	[ "$all" -gt 15 ] || { cat "$T/err"; fail "too few samples of $1: $all"; }
	between "$pct" 70 100 || { sort -t' ' -k2 -rn "$2" | head -5 | cut -c1-300; fail "$1: the hot function holds only $pct% of samples"; }
	ok "$1: the hot function named in $pct% of samples"
}

# From $T: node leaves isolate-*.log files in its working directory.
bg sh -c 'cd "$1" && exec node --perf-basic-prof "$2" 8' sh "$T" "$D/hot.js"
npid=$LAST_PID
sleep 1
"$HEARTH" record -d 3 -p "$npid" --no-kernel -o "$T/node.folded" 2>"$T/err" || { cat "$T/err"; fail "record of node failed"; }
kill "$npid" 2>/dev/null
rm -f "/tmp/perf-$npid.map"
jit_share node "$T/node.folded" 'jsHotLoop[^;]*$'

javac -d "$T" "$D/Hot.java" || fail "javac failed"
bg java -cp "$T" Hot 20
jpid=$LAST_PID
sleep 3 # compiled by then
jcmd "$jpid" Compiler.perfmap >"$T/jcmd.out" 2>&1 || { cat "$T/jcmd.out"; fail "jcmd Compiler.perfmap failed"; }
[ -s "/tmp/perf-$jpid.map" ] || fail "the JVM wrote no /tmp/perf-$jpid.map"
"$HEARTH" record -d 3 -p "$jpid" --no-kernel -o "$T/java.folded" 2>"$T/err" || { cat "$T/err"; fail "record of java failed"; }
kill "$jpid" 2>/dev/null
rm -f "/tmp/perf-$jpid.map"
jit_share java "$T/java.folded" 'Hot\.javaHotLoop[^;]*$'
