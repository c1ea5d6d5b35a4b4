/* SPDX-License-Identifier: MIT */
/* metrics: hearthd's status figures by name (see metrics.h). */
#include "agent/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define F(field, json, jd, prom, type, pd, help) \
	{ offsetof(struct ctl_status, field), json, jd, prom, type, pd, help }

const struct metrics_field metrics_fields[] = {
	F(pid, "pid", 0, "hearthd_pid", "gauge", 0, "hearthd's process id."),
	F(uptime_ns, "uptime_ns", 0, "hearthd_uptime_seconds", "gauge", 9,
	  "Time since hearthd started."),
	F(window_ns, "window_ns", 0, "hearthd_window_seconds", "gauge", 9,
	  "Length of one window."),
	F(windows, "windows", 0, "hearthd_windows_stored", "gauge", 0,
	  "Windows in the store."),
	F(store_bytes, "store_bytes", 0, "hearthd_store_bytes", "gauge", 0,
	  "Bytes the store takes on disk."),
	F(segments, "segments", 0, "hearthd_store_segments", "gauge", 0,
	  "Segment files of the store."),
	F(samples, "samples", 0, "hearthd_samples_total", "counter", 0,
	  "On-CPU samples with a stack since start."),
	F(idle_samples, "idle_samples", 0, "hearthd_idle_samples_total", "counter", 0,
	  "On-CPU samples of idle CPUs since start."),
	F(offcpu_ns, "offcpu_ns", 0, "hearthd_offcpu_blocked_seconds_total", "counter", 9,
	  "Off-CPU time blocked, summed over threads, since start."),
	F(drops, "drops", 0, "hearthd_drops_total", "counter", 0,
	  "Samples, events and requests for more memory lost in the kernel since start."),
	F(cpu_ns, "cpu_ns", 0, "hearthd_cpu_seconds_total", "counter", 9,
	  "hearthd's own CPU time (user and system) since start."),
	F(cpu_pct_milli, "cpu_percent", 3, "hearthd_cpu_ratio", "gauge", 5,
	  "hearthd's own CPU use over the last window, in cores."),
	F(rss_bytes, "rss_bytes", 0, "hearthd_resident_memory_bytes", "gauge", 0,
	  "hearthd's resident memory."),
	F(last_window_end_ns, "last_window_end_ns", 0,
	  "hearthd_last_window_end_timestamp_seconds", "gauge", 9,
	  "When the last stored window ended, since the epoch (0: none yet)."),
	F(windows_skipped, "windows_lost", 0, "hearthd_windows_lost_total", "counter", 0,
	  "Windows neither written nor held in memory since start."),
	F(store_error, "store_error", 0, "hearthd_store_errno", "gauge", 0,
	  "errno of the store's last failed write, 0 while it writes."),
	F(retention_bytes, "retention_bytes", 0, "hearthd_retention_bytes", "gauge", 0,
	  "The store's size limit (0: none)."),
	F(retention_age_ns, "retention_age_ns", 0, "hearthd_retention_age_seconds", "gauge", 9,
	  "Age past which windows are deleted (0: never)."),
	F(clients, "clients", 0, "hearthd_clients", "gauge", 0,
	  "Control clients connected."),
	F(bpf_run_ns, "bpf_run_ns", 0, "hearthd_bpf_run_seconds_total", "counter", 9,
	  "Time the BPF programs ran, when the kernel counts it."),
	F(bpf_run_cnt, "bpf_runs", 0, "hearthd_bpf_runs_total", "counter", 0,
	  "Runs of the BPF programs, when the kernel counts them."),
	F(sym_modules, "symbol_modules", 0, "hearthd_symbol_modules", "gauge", 0,
	  "Modules the symbolizer holds."),
	F(sym_module_bytes, "symbol_cache_bytes", 0, "hearthd_symbol_cache_bytes", "gauge", 0,
	  "Memory the symbolizer's modules take."),
	F(sym_module_limit, "symbol_cache_limit_bytes", 0, "hearthd_symbol_cache_limit_bytes",
	  "gauge", 0, "The symbolizer's memory budget."),
	F(sym_evictions, "symbol_evictions", 0, "hearthd_symbol_evictions_total", "counter", 0,
	  "Modules evicted to stay within the budget since start."),
	F(windows_held, "windows_held", 0, "hearthd_windows_held", "gauge", 0,
	  "Windows held in memory while the store cannot write."),
	F(push_on, "push_on", 0, "hearthd_push_enabled", "gauge", 0,
	  "1 when hearthd pushes windows to a backend (push_url is set)."),
	F(push_windows, "push_windows", 0, "hearthd_push_windows_total", "counter", 0,
	  "Windows whose every part the backend answered, since start."),
	F(push_requests, "push_requests", 0, "hearthd_push_requests_total", "counter", 0,
	  "Requests the backend took, since start."),
	F(push_bytes, "push_bytes", 0, "hearthd_push_bytes_total", "counter", 0,
	  "Bytes of the request bodies the backend took, since start."),
	F(push_rejected, "push_rejected", 0, "hearthd_push_rejected_total", "counter", 0,
	  "Profiles skipped on a 4xx answer, since start."),
	F(push_retries, "push_retries", 0, "hearthd_push_retries_total", "counter", 0,
	  "Failed requests that were retried, since start."),
	F(push_lag_ns, "push_lag_ns", 0, "hearthd_push_lag_seconds", "gauge", 9,
	  "How far the push is behind the newest stored window."),
	F(push_pending, "push_pending_windows", 0, "hearthd_push_pending_windows", "gauge", 0,
	  "Windows stored and not yet pushed (about)."),
	F(push_last_err, "push_last_error", 0, "hearthd_push_last_error", "gauge", 0,
	  "Kind of the push's last failure (0: none; see hearth(1))."),
	F(push_last_status, "push_last_http_status", 0, "hearthd_push_last_http_status",
	  "gauge", 0, "HTTP status of the push's last failure (0: none)."),
	F(push_last_err_ns, "push_last_error_ns", 0,
	  "hearthd_push_last_error_timestamp_seconds", "gauge", 9,
	  "When the push last failed, since the epoch (0: never)."),
	F(unwind_mode, "unwind_mode", 0, "hearthd_unwind_mode", "gauge", 0,
	  "User-stack unwinder: 1 fp, 2 dwarf, 3 auto (in-kernel)."),
	F(cfi_walks, "unwind_walks", 0, "hearthd_unwind_walks_total", "counter", 0,
	  "User stacks walked in the kernel with compiled CFI, since start."),
	F(cfi_fallbacks, "unwind_fallbacks", 0, "hearthd_unwind_fallbacks_total", "counter", 0,
	  "In-kernel walks that fell back to a stack copy, since start."),
	F(cfi_no_table, "unwind_fallbacks_no_table", 0,
	  "hearthd_unwind_fallbacks_no_table_total", "counter", 0,
	  "Of those: the tables were not loaded yet."),
	F(stack_copies, "stack_copies", 0, "hearthd_stack_copies_total", "counter", 0,
	  "Stacks copied and unwound in hearthd, since start."),
	F(copy_fallbacks, "copy_fallbacks", 0, "hearthd_copy_fallbacks_total", "counter", 0,
	  "Copies over budget or with the ring full: frame pointers used."),
	F(waits_reused, "waits_reused", 0, "hearthd_waits_reused_total", "counter", 0,
	  "Waits that reused their thread's last user stack without a walk."),
	F(cfi_processes, "unwind_processes", 0, "hearthd_unwind_processes", "gauge", 0,
	  "Processes with in-kernel unwind tables loaded."),
	F(cfi_modules, "unwind_modules", 0, "hearthd_unwind_modules", "gauge", 0,
	  "Modules with compiled CFI rows in the kernel."),
	F(cfi_bytes, "unwind_table_bytes", 0, "hearthd_unwind_table_bytes", "gauge", 0,
	  "Kernel memory the unwind tables use."),
	F(cfi_pool_bytes, "unwind_table_limit_bytes", 0, "hearthd_unwind_table_limit_bytes",
	  "gauge", 0, "Kernel memory the unwind tables may use (unwind_memory)."),
	F(oncpu_run_ns, "bpf_oncpu_run_ns", 0, "hearthd_bpf_oncpu_run_seconds_total", "counter", 9,
	  "Time the on-CPU program ran, when the kernel counts it."),
	F(oncpu_run_cnt, "bpf_oncpu_runs", 0, "hearthd_bpf_oncpu_runs_total", "counter", 0,
	  "Runs of the on-CPU program (samples), when the kernel counts them."),
	F(offcpu_run_ns, "bpf_offcpu_run_ns", 0, "hearthd_bpf_offcpu_run_seconds_total", "counter", 9,
	  "Time the context-switch program ran, when the kernel counts it."),
	F(offcpu_run_cnt, "bpf_offcpu_runs", 0, "hearthd_bpf_offcpu_runs_total", "counter", 0,
	  "Runs of the context-switch program, when the kernel counts them."),
	F(drop_collisions, "drops_stack_collisions", 0, "hearthd_drops_stack_collisions_total", "counter", 0,
	  "Drops since start: stack map collisions: samples and waits kept as lost because their stack's slot held another stack."),
	F(drop_stack_full, "drops_stack_map_full", 0, "hearthd_drops_stack_map_full_total", "counter", 0,
	  "Drops since start: samples and waits kept as lost because the stack map was full."),
	F(drop_map_full, "drops_aggregation_map_full", 0, "hearthd_drops_aggregation_map_full_total", "counter", 0,
	  "Drops since start: samples and waits the aggregation map had no room for (kept per thread as lost, or gone), and waits lost with the off-CPU start map full."),
	F(drop_ring_full, "drops_ring_full", 0, "hearthd_drops_ring_full_total", "counter", 0,
	  "Drops since start: process events lost and stack copies not made (frame pointers used) with a ring full."),
	F(drop_copy_budget, "drops_copy_budget", 0, "hearthd_drops_copy_budget_total", "counter", 0,
	  "Drops since start: waits over the off-CPU copy budget, walked by frame pointers."),
	F(drop_unnamed, "drops_unnamed", 0, "hearthd_drops_unnamed_total", "counter", 0,
	  "Drops since start: samples and waits whose process was gone before its mappings were read (symbolization gave up)."),
	F(window_drop_collisions, "window_drops_stack_collisions", 0, "hearthd_window_drops_stack_collisions", "gauge", 0,
	  "The same in the last window."),
	F(window_drop_stack_full, "window_drops_stack_map_full", 0, "hearthd_window_drops_stack_map_full", "gauge", 0,
	  "The same in the last window."),
	F(window_drop_map_full, "window_drops_aggregation_map_full", 0, "hearthd_window_drops_aggregation_map_full", "gauge", 0,
	  "The same in the last window."),
	F(window_drop_ring_full, "window_drops_ring_full", 0, "hearthd_window_drops_ring_full", "gauge", 0,
	  "The same in the last window."),
	F(window_drop_copy_budget, "window_drops_copy_budget", 0, "hearthd_window_drops_copy_budget", "gauge", 0,
	  "The same in the last window."),
	F(window_drop_unnamed, "window_drops_unnamed", 0, "hearthd_window_drops_unnamed", "gauge", 0,
	  "The same in the last window."),
	F(drop_unkept, "drops_unkept", 0, "hearthd_drops_unkept_total", "counter", 0,
	  "Of the aggregation map's: samples and waits in no profile at all."),
	F(drop_events, "drops_events", 0, "hearthd_drops_events_total", "counter", 0,
	  "Of ring full: process events lost (short-lived processes may go unnamed)."),
	F(stack_map_size, "stack_map_size", 0, "hearthd_stack_map_size", "gauge", 0,
	  "Distinct stacks the kernel holds per window (stack_map_size)."),
	F(window_drops, "window_drops", 0, "hearthd_window_drops", "gauge", 0,
	  "Samples, waits, process events and requests for more memory lost in the last window."),
	F(drop_growth_ring, "drops_growth_ring_full", 0, "hearthd_drops_growth_ring_full_total", "counter", 0,
	  "Drops since start: requests for more memory lost with their ring full (memory_growth)."),
	F(window_drop_growth_ring, "window_drops_growth_ring_full", 0, "hearthd_window_drops_growth_ring_full", "gauge", 0,
	  "The same in the last window."),
};

_Static_assert(sizeof(metrics_fields) / sizeof(metrics_fields[0]) == CTL_STATUS_FIELDS,
	       "every field of struct ctl_status needs its JSON and Prometheus names "
	       "in agent/metrics.c (and a line in hearth(1), hearth status)");

uint64_t metrics_value(const struct ctl_status *st, const struct metrics_field *f)
{
	uint64_t v;

	memcpy(&v, (const char *)st + f->off, sizeof(v));
	return v;
}

void metrics_print_fixed(FILE *f, uint64_t v, unsigned decimals)
{
	uint64_t div = 1;

	for (unsigned i = 0; i < decimals; i++)
		div *= 10;
	if (decimals)
		fprintf(f, "%llu.%0*llu", (unsigned long long)(v / div), (int)decimals,
			(unsigned long long)(v % div));
	else
		fprintf(f, "%llu", (unsigned long long)v);
}

void metrics_prometheus(FILE *f, const struct ctl_status *st)
{
	fprintf(f, "# HELP hearthd_up 1 while hearthd runs and answers; 0 when it stopped or did not answer.\n"
		   "# TYPE hearthd_up gauge\nhearthd_up %d\n", st != NULL);
	for (size_t i = 0; st && i < CTL_STATUS_FIELDS; i++) {
		const struct metrics_field *mf = &metrics_fields[i];

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s ", mf->prom, mf->help, mf->prom,
			mf->prom_type, mf->prom);
		metrics_print_fixed(f, metrics_value(st, mf), mf->prom_decimals);
		fputc('\n', f);
	}
}

int metrics_write_file(const char *path, const struct ctl_status *st)
{
	char tmp[4096];
	FILE *f;
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The collector runs as its own user: the figures are for it to
	 * read, whatever hearthd's umask. */
	if (fchmod(fd, 0644) != 0 || !(f = fdopen(fd, "w"))) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	metrics_prometheus(f, st);
	if (fflush(f) != 0)
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
