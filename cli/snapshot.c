/* SPDX-License-Identifier: MIT */
/* hearth snapshot: cut a profile out of hearthd's rolling store. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"
#include "profile/profile.h"
#include "render/format.h"
#include "render/model.h"

#define NEXT_GRACE_MS (5 * 60 * 1000)

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hearth snapshot (--last DUR | --next DUR | --since TIME [--until TIME])\n"
		"                       [options]\n"
		"\n"
		"Cuts a profile out of hearthd's rolling store.\n"
		"\n"
		"      --last DUR       the windows of the last DUR (5m), at once\n"
		"      --next DUR       waits for the next DUR (30s) of windows, 10m at most\n"
		"      --since TIME     a range of the past, until now or --until\n"
		"      --until TIME     the end of the --since range\n"
		"  -p, --pid PID        only this process (repeatable, up to 64)\n"
		"      --comm NAME      only processes with this name\n"
		"      --off-cpu        blocked time (ns) instead of on-CPU samples\n"
		"      --wall           elapsed time (ns): on-CPU samples (1e9/HZ ns each) and\n"
		"                       the waits hearthd kept (off_cpu_min_block and longer)\n"
		"      --threads        what every thread did: one row per thread, all the\n"
		"                       span's width, its samples and waits inside; a thread\n"
		"                       asleep the whole span ends in '(blocked the whole\n"
		"                       snapshot)' above the kernel function it waits in\n"
		"      --locks          only the waits on locks and conditions (ns)\n"
		"      --waker          with --next and --off-cpu, --wall or --locks: above\n"
		"                       each wait, a frame '--' and the stack of the thread\n"
		"                       that woke it; hearthd notes wake-ups for the next DUR\n"
		"      --growth         requests for more memory (brk, anonymous mmap, a\n"
		"                       growing mremap), their bytes beside\n"
		"      --alloc          with --next and --pid: hearthd probes the processes'\n"
		"                       allocator for the next DUR; bytes allocated, objects\n"
		"                       beside\n"
		"      --held           as --alloc: the bytes allocated then and still held\n"
		"                       at its end, objects beside\n"
		"      --sample-bytes SIZE  --alloc, --held: bytes between samples on average\n"
		"                       (default 512K)\n"
		"  -o, --output FILE    folded stacks (default '-', standard output), pprof\n"
		"                       when FILE ends in .pb.gz\n"
		"      --plain          folded stacks without hearth's comment lines first\n"
		"                       (the unit, each frame's class, language and file:line)\n"
		"      --socket PATH    hearthd's control socket\n"
		"  -h, --help           this text\n"
		"\n"
		"TIME: now, HH:MM[:SS], 'YYYY-MM-DD HH:MM[:SS]', @EPOCH or -DURATION (ago).\n");
}

struct snap_args {
	struct ctl_snapshot_req req;
	const char *sock;
	const char *out;
	unsigned out_flags;
};

static int parse_span(const char *opt, const char *v, uint64_t *ns)
{
	uint64_t d;

	if (config_parse_duration(v, &d) < 0 || d == 0) {
		cli_error("%s takes a duration like 30s, 5m or 2h, not '%s'.", opt, v);
		return -1;
	}
	*ns = d;
	return 0;
}

static int parse_pid(struct snap_args *a, const char *v)
{
	char *end;
	long pid = strtol(v, &end, 10);

	if (end == v || *end || pid <= 0 || pid > 4194304) {
		cli_error("--pid takes a process id, not '%s'.", v);
		return -1;
	}
	if (a->req.npids == CTL_PIDS_MAX) {
		cli_error("at most %u --pid options.", CTL_PIDS_MAX);
		return -1;
	}
	a->req.pids[a->req.npids++] = (uint32_t)pid;
	return 0;
}

static int parse_opt(struct snap_args *a, int c, const char *v)
{
	uint64_t now = cli_now_ns();

	switch (c) {
	case 'l': return parse_span("--last", v, &a->req.last_ns);
	case 'n':
		if (parse_span("--next", v, &a->req.next_ns) < 0)
			return -1;
		/* A waiting snapshot holds one of hearthd's client slots. */
		if (a->req.next_ns > CTL_NEXT_MAX_NS) {
			cli_error("--next waits 10 minutes at most, not '%s'; for a longer span, take --since TIME later.", v);
			return -1;
		}
		return 0;
	case 'S':
	case 'U':
		if (cli_parse_time(v, now, c == 'S' ? &a->req.since_ns : &a->req.until_ns) < 0) {
			cli_error("'%s' is not a time (now, HH:MM[:SS], 'YYYY-MM-DD HH:MM', @EPOCH or -5m).", v);
			return -1;
		}
		return 0;
	case 'p': return parse_pid(a, v);
	case 'c':
		if (!v[0] || strlen(v) > CTL_COMM_MAX) {
			cli_error("--comm takes a process name of 1-15 characters, not '%s'.", v);
			return -1;
		}
		snprintf(a->req.comm, sizeof(a->req.comm), "%s", v);
		return 0;
	case 'f': a->req.flags |= CTL_SNAP_OFFCPU; return 0;
	case 'w': a->req.flags |= CTL_SNAP_WALL; return 0;
	case 'k': a->req.flags |= CTL_SNAP_LOCKS; return 0;
	case 'T': a->req.flags |= CTL_SNAP_THREADS; return 0;
	case 'W': a->req.flags |= CTL_SNAP_WAKER; return 0;
	case 'g': a->req.flags |= CTL_SNAP_GROWTH; return 0;
	case 'A': a->req.flags |= CTL_SNAP_ALLOC; return 0;
	case 'H': a->req.flags |= CTL_SNAP_HELD; return 0;
	case 'B':
		if (config_parse_size(v, &a->req.sample_bytes) < 0 || !a->req.sample_bytes ||
		    a->req.sample_bytes > CTL_SAMPLE_BYTES_MAX) {
			cli_error("'%s' is not a size: use bytes (4096) or a unit (512K, 1M), up to 1T.", v);
			return -1;
		}
		return 0;
	case 'o': a->out = v; return 0;
	case 's': a->sock = v; return 0;
	case 'P': a->out_flags |= CLI_OUT_PLAIN; return 0;
	default: return -1;
	}
}

static int parse_args(struct snap_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "last", required_argument, NULL, 'l' },
		{ "next", required_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },
		{ "off-cpu", no_argument, NULL, 'f' },
		{ "wall", no_argument, NULL, 'w' },
		{ "locks", no_argument, NULL, 'k' },
		{ "threads", no_argument, NULL, 'T' },
		{ "waker", no_argument, NULL, 'W' },
		{ "growth", no_argument, NULL, 'g' },
		{ "alloc", no_argument, NULL, 'A' },
		{ "held", no_argument, NULL, 'H' },
		{ "sample-bytes", required_argument, NULL, 'B' },
		{ "output", required_argument, NULL, 'o' },
		{ "socket", required_argument, NULL, 's' },
		{ "plain", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t kind;
	int c, modes;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:p:h", opts, NULL)) != -1) {
		if (c == 'h')
			return usage(stdout), 1;
		if (c == '?' || parse_opt(a, c, optarg) < 0)
			return -1;
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'; 'hearth snapshot --help' shows the options.", argv[optind]);
		return -1;
	}
	kind = a->req.flags & ~(uint32_t)CTL_SNAP_WAKER;
	if (kind & (kind - 1)) {
		cli_error("--off-cpu, --wall, --threads, --locks, --growth, --alloc and --held each ask for a snapshot of their own: choose one.");
		return -1;
	}
	if (a->req.sample_bytes && !(a->req.flags & CTL_SNAP_PROBES)) {
		cli_error("--sample-bytes goes with --alloc or --held.");
		return -1;
	}
	modes = (a->req.last_ns > 0) + (a->req.next_ns > 0) +
		(a->req.since_ns > 0 || a->req.until_ns > 0);
	if (modes != 1) {
		cli_error("say which time to cut: one of --last, --next, or --since [--until].");
		return -1;
	}
	if ((a->req.flags & CTL_SNAP_PROBES) && !a->req.next_ns) {
		cli_error("--alloc and --held probe the allocator from now on, so they take --next DUR, not --last or --since.");
		return -1;
	}
	if ((a->req.flags & CTL_SNAP_PROBES) && (!a->req.npids || a->req.comm[0])) {
		cli_error("--alloc and --held probe only the processes chosen with --pid (not --comm).");
		return -1;
	}
	if ((a->req.flags & CTL_SNAP_WAKER) && !(kind & CTL_SNAP_WAITS)) {
		cli_error("--waker names who woke each wait: use it with --off-cpu, --wall or --locks.");
		return -1;
	}
	if ((a->req.flags & CTL_SNAP_WAKER) && !a->req.next_ns) {
		cli_error("hearthd notes who wakes each wait only from now on, so --waker takes --next DUR, not --last or --since.");
		return -1;
	}
	if (a->req.until_ns && !a->req.since_ns) {
		cli_error("--until needs --since.");
		return -1;
	}
	if (a->req.until_ns && !(a->req.since_ns < a->req.until_ns)) {
		cli_error("--since must be earlier than --until.");
		return -1;
	}
	return 0;
}

/* The summary line's total: "N samples", "N ns blocked", "1.2 K
 * requests for more memory (3.4 MiB)", "12 MiB allocated (3.4 K
 * objects)". */
static void total_text(const struct snap_args *a, const struct prof_profile *p,
		       const struct prof_profile *second, char *buf, size_t n)
{
	uint32_t f = a->req.flags;
	char v[32], w[32];

	rd_fmt_value(v, sizeof(v), prof_total(p), prof_meta_const(p)->unit);
	w[0] = '\0';
	if (second)
		rd_fmt_value(w, sizeof(w), prof_total(second), prof_meta_const(second)->unit);
	if (f & CTL_SNAP_GROWTH)
		snprintf(buf, n, "%s requests for more memory (%s)", v, w);
	else if (f & CTL_SNAP_PROBES)
		snprintf(buf, n, "%s %s (%s objects)", v, f & CTL_SNAP_HELD ? "held" : "allocated", w);
	else
		snprintf(buf, n, "total %llu %s", (unsigned long long)prof_total(p),
			 f & (CTL_SNAP_WALL | CTL_SNAP_THREADS) ? "ns elapsed" : f ? "ns blocked" :
			 "samples");
}

/* A question of memory says its answer, the empty profile's too ("The
 * service did not ask for more memory in these 30 seconds: ..."). */
static void say_answer(const struct snap_args *a, struct prof_profile *p)
{
	struct rd_model *m;

	if (!(a->req.flags & (CTL_SNAP_GROWTH | CTL_SNAP_PROBES)))
		return;
	m = rd_model_new(p);
	if (m && m->answer[0])
		fprintf(stderr, "hearth: %s\n", m->answer);
	rd_model_free(m);
}

int cmd_snapshot(int argc, char **argv)
{
	struct snap_args a = { .sock = CLI_DEFAULT_SOCKET, .out = "-" };
	struct ctl_snapshot_reply info;
	struct prof_profile *p, *second = NULL;
	char from[32], to[32], total[128];
	int rc, timeout;

	rc = parse_args(&a, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	timeout = 60000 + (int)(a.req.next_ns / 1000000) + (a.req.next_ns ? NEXT_GRACE_MS : 0);
	p = cli_fetch_snapshot_pair(a.sock, &a.req, timeout, &info, &second);
	if (!p)
		return 1;
	cli_format_time(info.from_ns, from, sizeof(from));
	cli_format_time(info.to_ns, to, sizeof(to));
	/* (an allocation or waker snapshot is not cut from the store's
	 * windows) */
	if (info.windows == 0 && !(a.req.flags & CTL_SNAP_SESSIONS)) {
		prof_free(p);
		prof_free(second);
		cli_error("hearthd has no windows stored for that time yet.");
		return 1;
	}
	if (info.corrupt || info.torn)
		fprintf(stderr, "hearth: warning: %u damaged window(s) were skipped\n",
			info.corrupt + info.torn);
	total_text(&a, p, second, total, sizeof(total));
	rc = cli_write_profile_pair(a.out, p, second, a.out_flags);
	if (rc == 0 && (a.req.flags & CTL_SNAP_PROBES))
		fprintf(stderr, "hearth: %u process(es), %s to %s, %s\n", a.req.npids, from, to, total);
	else if (rc == 0 && (a.req.flags & CTL_SNAP_WAKER))
		fprintf(stderr, "hearth: wakers noted %s to %s, %s\n", from, to, total);
	else if (rc == 0)
		fprintf(stderr, "hearth: %u windows, %s to %s, %s\n", info.windows, from, to, total);
	if (rc == 0)
		say_answer(&a, p);
	prof_free(p);
	prof_free(second);
	return rc ? 1 : 0;
}
