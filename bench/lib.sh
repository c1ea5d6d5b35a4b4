# Shared helpers for the benchmarks (sourced, not run). They expect $T,
# a scratch folder.

# prog_ids: ids of the BPF programs loaded now, one per line.
prog_ids() { bpftool prog show 2>/dev/null | sed -n 's/^\([0-9]*\):.*/\1/p'; }

# bpf_ns NAME-REGEX: mean run_time_ns/run_cnt over the programs whose name
# matches and that were loaded after the ids in $T/ids.before (so other
# tools' programs on the machine are not counted).
bpf_ns() {
	bpftool prog show 2>/dev/null | awk -v re="$1" -v before="$T/ids.before" '
		BEGIN { while ((getline l < before) > 0) old[l] = 1 }
		/^[0-9]+:/ { id = $1; sub(/:$/, "", id); name = ""; rt = 0; rc = 0
			     for (i = 1; i <= NF; i++) { if ($i == "name") name = $(i + 1); if ($i == "run_time_ns") rt = $(i + 1); if ($i == "run_cnt") rc = $(i + 1) }
			     if (!(id in old) && name ~ re && rc > 0) { t += rt; c += rc } }
		END { if (c) printf "%.0f", t / c; else printf "n/a" }'
}

# cpu_of FILE: user+sys seconds from GNU time's "%U %S" output.
cpu_of() { tail -1 "$1" | awk '{ printf "%.2f", $1 + $2 }'; }

# median FILE: median of the numbers in FILE, one per line.
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# perf_fold: `perf script` output on stdin to folded stacks on stdout,
# root first under the sample's command name (as stackcollapse-perf), one
# line a sample, offsets dropped.
perf_fold() {
	awk '
	/^[^ \t]/ { if (n) emit(); n = 0; comm = $1; next }
	/^[ \t]+[0-9a-f]+ / { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); f[n++] = sym; next }
	/^$/ { if (n) emit(); n = 0 }
	function emit(  s, i) { s = comm; for (i = n - 1; i >= 0; i--) s = s ";" f[i]; print s " 1" }
	END { if (n) emit() }'
}

# need_storm NAME: exits unless run as root with tests/fixtures/exec_storm
# and unwind_nofp built in $FIX (the scripts that start exec storms).
need_storm() {
	[ "$(id -u)" = 0 ] || { echo "$1: needs root" >&2; exit 1; }
	[ -x "$FIX/exec_storm" ] && [ -x "$FIX/unwind_nofp" ] ||
		{ echo "$1: build the fixtures first (make fixtures)" >&2; exit 1; }
}
