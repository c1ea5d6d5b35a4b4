#!/bin/sh
# Prints the five heaviest stacks of a folded file, heaviest first: sorted
# on the count, the last field of a line (frames may hold spaces, such as
# "[waiting for a CPU]_[k]"). UNIT "ns" shows the counts as durations, the
# way the viewer writes them ("850 ns", "12.3 µs", "340 ms", "1.20 s",
# "2.5 min"); "samples" shows them as they are. Long stacks keep their end.
# Usage: sh mk/heaviest.sh FILE samples|ns
f=$1 unit=$2
# "# hearth-..." lines are the file's header and frame notes, not stacks.
awk '!/^#/ { print $NF "\t" $0 }' "$f" | LC_ALL=C sort -t"$(printf '\t')" -k1,1nr | head -5 |
awk -F'\t' -v unit="$unit" '
function sig3(v, u) { # three significant digits
	return sprintf(v >= 99.95 ? "%.0f %s" : v >= 9.995 ? "%.1f %s" : "%.2f %s", v, u)
}
function dur(ns,   i) {
	if (ns < 999.5) return sprintf("%d ns", ns)
	if (ns < 999.5e3) return sig3(ns / 1e3, "\302\265s")
	if (ns < 999.5e6) return sig3(ns / 1e6, "ms")
	if (ns < 59.95e9) return sig3(ns / 1e9, "s")
	if (ns < 99.95 * 60e9) return sprintf("%.1f min", ns / 60e9)
	if (ns < 60 * 60e9) return sprintf("%.0f min", ns / 60e9)
	return sprintf(ns < 99.95 * 3600e9 ? "%.1f h" : "%.0f h", ns / 3600e9)
}
{
	s = $2; sub(/ [0-9]+$/, "", s)
	if (length(s) > 110) s = "..." substr(s, length(s) - 106)
	v = unit == "ns" ? dur($1) : $1
	w = length(v) - (v ~ /\302\265/) # awk may count µ as two
	printf "  %" (12 + length(v) - w) "s  %s\n", v, s
}'
