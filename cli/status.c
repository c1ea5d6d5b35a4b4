/* SPDX-License-Identifier: MIT */
/* hearth status: what hearthd is doing and what it costs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/drops.h"
#include "agent/metrics.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/status_formats.h"

static void human_bytes(uint64_t b, char *out, size_t len)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(out, len, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static void human_span(uint64_t ns, char *out, size_t len)
{
	uint64_t s = ns / 1000000000ull;

	if (s >= 86400)
		snprintf(out, len, "%llud %lluh", (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
	else if (s >= 3600)
		snprintf(out, len, "%lluh %llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else if (s >= 60)
		snprintf(out, len, "%llum %llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else
		snprintf(out, len, "%.1fs", (double)ns / 1e9);
}

/* The push's line: what it sent and whether it keeps up. The reason
 * numbers are agent/push_http.h's enum push_err. */
static void print_push(const struct ctl_status *st)
{
	static const char *const why[] = {
		"", "HTTP", "connection refused or unreachable", "timed out",
		"host name did not resolve", "TLS failed",
		"connection blocked on this host (IPAddressAllow=?)", "network error",
	};
	uint64_t kind = st->push_last_err;
	char bytes[32], lag[32], when[32];

	if (!st->push_on) {
		printf("push:           off\n");
		return;
	}
	human_bytes(st->push_bytes, bytes, sizeof(bytes));
	human_span(st->push_lag_ns, lag, sizeof(lag));
	printf("push:           %llu windows sent, %llu requests, %s; lag %s, %llu windows pending; %llu rejected (4xx), %llu retries\n",
	       (unsigned long long)st->push_windows, (unsigned long long)st->push_requests, bytes,
	       lag, (unsigned long long)st->push_pending, (unsigned long long)st->push_rejected,
	       (unsigned long long)st->push_retries);
	if (!st->push_last_err_ns)
		return;
	cli_format_time(st->push_last_err_ns, when, sizeof(when));
	if (kind == 1)
		printf("push error:     HTTP %llu at %s\n", (unsigned long long)st->push_last_status, when);
	else
		printf("push error:     %s at %s\n", kind < sizeof(why) / sizeof(why[0]) ? why[kind] : "unknown", when);
}

/* ns per run of one BPF program, or "n/a" when stats are off. */
static void per_run(uint64_t ns, uint64_t cnt, char *out, size_t len)
{
	if (cnt)
		snprintf(out, len, "%.0f ns", (double)ns / (double)cnt);
	else
		snprintf(out, len, "n/a");
}

static void print_unwinder(const struct ctl_status *st)
{
	static const char *const modes[] = { "fp", "dwarf", "auto" };
	char used[32], pool[32], on[32], off[32];

	/* A hearthd older than these fields sends none: no lines. */
	if (st->unwind_mode == 0 || st->unwind_mode > 3)
		return;
	printf("unwinder:       %s", modes[st->unwind_mode - 1]);
	if (st->unwind_mode == 3) {
		human_bytes(st->cfi_bytes, used, sizeof(used));
		human_bytes(st->cfi_pool_bytes, pool, sizeof(pool));
		printf(", tables for %llu processes and %llu modules, %s of %s;"
		       " %llu stacks walked in the kernel, %llu fell back to a copy"
		       " (%llu before their tables); %llu waits reused their user stacks",
		       (unsigned long long)st->cfi_processes, (unsigned long long)st->cfi_modules,
		       used, pool, (unsigned long long)st->cfi_walks,
		       (unsigned long long)st->cfi_fallbacks, (unsigned long long)st->cfi_no_table,
		       (unsigned long long)st->waits_reused);
	}
	if (st->unwind_mode != 1)
		printf("; %llu stacks copied, %llu more fell to frame pointers (copy budget or ring full)",
		       (unsigned long long)st->stack_copies, (unsigned long long)st->copy_fallbacks);
	printf("\n");
	per_run(st->oncpu_run_ns, st->oncpu_run_cnt, on, sizeof(on));
	per_run(st->offcpu_run_ns, st->offcpu_run_cnt, off, sizeof(off));
	printf("BPF per event:  on-CPU sample %s, context switch %s%s\n", on, off,
	       st->oncpu_run_cnt || st->offcpu_run_cnt ? "" :
	       " (set kernel.bpf_stats_enabled=1 to measure)");
}

/* The drops, then a line per cause: since start, in the last window,
 * what became of them and the setting that avoids them. */
static void print_drops(const struct ctl_status *st)
{
	struct drop_settings set = { .who = DROP_FOR_DAEMON, .stack_map_size = st->stack_map_size,
				     .unwind = SAMPLER_UNWIND_AUTO };
	struct drop_counts dc = { .unkept = st->drop_unkept, .events = st->drop_events };
	char advice[512];

	if (st->unwind_mode >= 1 && st->unwind_mode <= 3)
		set.unwind = (enum sampler_unwind)(st->unwind_mode - 1);
	/* A hearthd older than the causes sends the total alone. */
	if (!st->stack_map_size) {
		printf("drops:          %llu\n", (unsigned long long)st->drops);
		return;
	}
	printf("drops:          %llu since start, %llu in the last window\n",
	       (unsigned long long)st->drops, (unsigned long long)st->window_drops);
	for (int i = 0; i < DROP_CAUSES; i++)
		dc.n[i] = ctl_status_drop(st, (unsigned)i, false);
	for (int i = 0; i < DROP_CAUSES; i++)
		if (dc.n[i])
			printf("  %s: %llu since start, %llu in the last window; %s\n",
			       drops_name((enum drop_cause)i), (unsigned long long)dc.n[i],
			       (unsigned long long)ctl_status_drop(st, (unsigned)i, true),
			       drops_advice((enum drop_cause)i, &dc, &set, advice, sizeof(advice)));
}

static void print_status(const struct ctl_status *st)
{
	char up[32], win[32], bytes[32], lim[32], age[32], rss[32], cpu[32], last[32];
	char modb[32], modlim[32];

	human_span(st->uptime_ns, up, sizeof(up));
	human_span(st->window_ns, win, sizeof(win));
	human_bytes(st->store_bytes, bytes, sizeof(bytes));
	human_bytes(st->retention_bytes, lim, sizeof(lim));
	human_span(st->retention_age_ns, age, sizeof(age));
	human_bytes(st->rss_bytes, rss, sizeof(rss));
	human_span(st->cpu_ns, cpu, sizeof(cpu));
	printf("hearthd:        pid %llu, up %s\n", (unsigned long long)st->pid, up);
	printf("windows stored: %llu of %s, %llu segments, %s on disk (limits %s, %s)\n",
	       (unsigned long long)st->windows, win, (unsigned long long)st->segments,
	       bytes, st->retention_bytes ? lim : "none", st->retention_age_ns ? age : "none");
	printf("samples:        %llu on-CPU with a stack, %llu idle; off-CPU %.3f s blocked\n",
	       (unsigned long long)st->samples, (unsigned long long)st->idle_samples,
	       (double)st->offcpu_ns / 1e9);
	print_drops(st);
	printf("own cost:       %llu.%02llu%% of one core (last window), RSS %s, %s CPU since start",
	       (unsigned long long)(st->cpu_pct_milli / 1000),
	       (unsigned long long)(st->cpu_pct_milli % 1000 / 10), rss, cpu);
	if (st->bpf_run_cnt)
		printf(", BPF %.3f s in %llu runs (%.0f ns each)", (double)st->bpf_run_ns / 1e9,
		       (unsigned long long)st->bpf_run_cnt,
		       (double)st->bpf_run_ns / (double)st->bpf_run_cnt);
	printf("\n");
	/* A hearthd older than these fields sends none: no line. */
	if (st->sym_module_limit) {
		human_bytes(st->sym_module_bytes, modb, sizeof(modb));
		human_bytes(st->sym_module_limit, modlim, sizeof(modlim));
		printf("symbols:        %llu modules cached, %s of %s (%.1f%%), %llu evicted\n",
		       (unsigned long long)st->sym_modules, modb, modlim,
		       100.0 * (double)st->sym_module_bytes / (double)st->sym_module_limit,
		       (unsigned long long)st->sym_evictions);
	}
	print_unwinder(st);
	if (st->last_window_end_ns) {
		cli_format_time(st->last_window_end_ns, last, sizeof(last));
		printf("last window:    ended %s\n", last);
	}
	if (st->store_error && st->windows_held)
		printf("store:          NOT WRITING: %s (%llu windows held in memory, %llu lost)\n",
		       strerror((int)st->store_error), (unsigned long long)st->windows_held,
		       (unsigned long long)st->windows_skipped);
	else if (st->store_error)
		printf("store:          NOT WRITING: %s (%llu windows lost)\n",
		       strerror((int)st->store_error), (unsigned long long)st->windows_skipped);
	else if (st->windows_skipped)
		printf("store:          writing (%llu windows were lost earlier)\n",
		       (unsigned long long)st->windows_skipped);
	else
		printf("store:          writing\n");
	print_push(st);
	printf("clients:        %llu\n", (unsigned long long)st->clients);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: hearth status [options]\n\n"
		     "What hearthd is doing and what it costs.\n\n"
		     "      --json           one JSON object (field names in hearth(1))\n"
		     "      --prometheus     Prometheus text-format metrics, for a node\n"
		     "                       exporter's textfile collector; hearthd_up 0\n"
		     "                       when hearthd does not answer\n"
		     "  -o, --output FILE    with --json or --prometheus: write FILE whole or\n"
		     "                       not at all (default '-', standard output)\n"
		     "      --socket PATH    hearthd's control socket\n"
		     "  -h, --help           this text\n");
}

enum { STATUS_TEXT, STATUS_JSON, STATUS_PROMETHEUS };

/* Writes the status (NULL: hearthd did not answer) as @format says to
 * @path. Returns 0, or -1 after one sentence. */
static int write_status(int format, const char *path, const struct ctl_status *st)
{
	struct cli_out o;

	if (format == STATUS_TEXT) {
		print_status(st);
		return 0;
	}
	if (cli_out_open(&o, path) < 0)
		return -1;
	if (format == STATUS_JSON)
		cli_status_json(o.f, st);
	else
		metrics_prometheus(o.f, st);
	return cli_out_close(&o, 0);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = CLI_DEFAULT_SOCKET, *out = NULL;
	struct ctl_request req = { .type = CTL_STATUS };
	struct ctl_status st;
	struct cli_reply r;
	int c, format = STATUS_TEXT;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 's')
			sock = optarg;
		else if (c == 'o')
			out = optarg;
		else if (c == 'j' || c == 'P') {
			if (format != STATUS_TEXT) {
				cli_error("give one of --json and --prometheus.");
				return 2;
			}
			format = c == 'j' ? STATUS_JSON : STATUS_PROMETHEUS;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else
			return 2;
	}
	if (optind < argc) {
		cli_error("status takes no arguments ('%s').", argv[optind]);
		return 2;
	}
	if (out && format == STATUS_TEXT) {
		cli_error("-o writes --json or --prometheus output; the text goes to standard output.");
		return 2;
	}
	if (cli_call(sock, &req, 10000, &r) < 0) {
		/* A scrape still learns that hearthd is down. */
		if (format == STATUS_PROMETHEUS)
			write_status(format, out ? out : "-", NULL);
		return 1;
	}
	if (ctl_decode_status(r.payload, r.len, &st) < 0) {
		free(r.buf);
		cli_error("hearthd sent a malformed status reply.");
		return 1;
	}
	free(r.buf);
	return write_status(format, out ? out : "-", &st) < 0;
}
