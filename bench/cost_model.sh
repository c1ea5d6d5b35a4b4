#!/bin/sh
# The cost model: per-event costs measured on this host, extrapolated to
# larger hosts. From the BPF ns of one on-CPU sample and of one context
# switch (and the user-space ns hearthd spends per sample, when known),
# prints what sampling costs at 99 Hz on 8, 64 and 192 CPUs, and what
# off-CPU recording costs at 10k, 100k and 1M context switches a second,
# each as a share of one core and of the whole host.
#   sh bench/cost_model.sh SAMPLE_NS SWITCH_NS [USER_SAMPLE_NS]
#   sh bench/cost_model.sh --socket PATH [USER_SAMPLE_NS]
# With --socket, the two BPF figures are read from `hearth status` of the
# hearthd on that socket ("BPF per event:" line). Linear in the event
# rate: cache misses that grow with the host (more distinct stacks, a
# fuller stack map) are not modelled. Prints a Markdown table.
set -eu
HEARTH=${HEARTH:-$PWD/${BUILD:-build}/hearth}
if [ "${1:-}" = --socket ]; then
	[ $# -ge 2 ] || { echo "cost_model: --socket needs a path" >&2; exit 2; }
	line=$("$HEARTH" status --socket "$2" | grep '^BPF per event:') ||
		{ echo "cost_model: no 'BPF per event' line from hearth status" >&2; exit 1; }
	sample=$(echo "$line" | sed -n 's/.*on-CPU sample \([0-9]*\) ns.*/\1/p')
	switch=$(echo "$line" | sed -n 's/.*context switch \([0-9]*\) ns.*/\1/p')
	user=${3:-0}
else
	[ $# -ge 2 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
	sample=$1 switch=$2 user=${3:-0}
fi
[ -n "$sample" ] && [ -n "$switch" ] || { echo "cost_model: missing figures" >&2; exit 1; }

echo "### Cost model: on-CPU sample ${sample} ns BPF + ${user} ns user space, context switch ${switch} ns BPF"
echo
echo "| load | events/s | % of one core | % of the whole host |"
echo "|---|---|---|---|"
awk -v s="$sample" -v u="$user" 'BEGIN { p8 = 8 * 99 * (s + u) / 1e7; p64 = 8 * p8; p192 = 24 * p8
	printf "| 99 Hz on 8 / 64 / 192 CPUs | %d / %d / %d | %.2f%% / %.2f%% / %.2f%% | %.3f%% |\n",
	    8 * 99, 64 * 99, 192 * 99, p8, p64, p192, p8 / 8 }'
awk -v w="$switch" 'BEGIN { p = 1e4 * w / 1e7
	printf "| 10k / 100k / 1M context switches/s | | %.1f%% / %.1f%% / %.1f%% | 1M/s on 64 CPUs: %.1f%% |\n",
	    p, 10 * p, 100 * p, 100 * p / 64 }'
