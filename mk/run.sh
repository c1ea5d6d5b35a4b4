#!/bin/sh
# The main job of 'make run': profile the whole host for 10 seconds, on-CPU
# and off-CPU, and leave the profiles (and flame graphs, once the exporter
# can draw them) in BUILD/run/.
B=${1:-build}
out=$B/run
mkdir -p "$out"
echo "hearth: profiling every process on this host for 10 s (on-CPU and off-CPU)..."
"$B/hearth" record -d 10 --both -o "$out/host" || exit 1
for kind in oncpu offcpu; do
	f=$out/host.$kind.folded
	[ -s "$f" ] || continue
	if "$B/hearth" export --svg -o "$out/host.$kind.svg" "$f" 2>/dev/null; then
		echo "hearth: flame graph: $out/host.$kind.svg"
	fi
	if [ $kind = oncpu ]; then
		echo "hearth: $f — heaviest stacks (samples):"
		sh mk/heaviest.sh "$f" samples
	else
		echo "hearth: $f — heaviest stacks (time blocked):"
		sh mk/heaviest.sh "$f" ns
	fi
done
echo "hearth: open one with '$B/hearth view $out/host.oncpu.folded'"
