/* SPDX-License-Identifier: MIT */
/* hearth record: run the sampler in-process and write a profile. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/drops.h"
#include "agent/sampler.h"
#include "agent/time_profiles.h"
#include "agent/config.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/record_json.h"
#include "cli/record_loop.h"
#include "cli/record_memory.h"
#include "profile/profile.h"
#include "symbolize/debuginfod.h"

/* Drain this often so short-lived processes are symbolized while their
 * mappings are still cached, and kernel maps never fill up. */
#define DRAIN_INTERVAL_NS 1000000000ULL
/* How long the end of a recording waits for debug files by default. */
#define DEBUGINFOD_WAIT_NS (30 * 1000000000ULL)

struct record_args {
	struct sampler_opts opts;
	uint64_t duration_ns;    /* 0 = until Ctrl-C */
	const char *output;
	unsigned out_flags;
	uint64_t debuginfod_wait_ns;
	unsigned question;       /* enum prof_question: one profile of time
				  * or of memory */
	uint64_t sample_bytes;   /* --alloc, --held: mean bytes a sample */
	bool min_block_set;
	bool json;               /* --json: the summary on stdout too */
};

static const char usage_text[] =
	"usage: hearth record [options]\n"
	"\n"
	"Samples every process on the host (or the ones chosen) with hearth's\n"
	"eBPF sampler and writes folded stacks (flamegraph.pl, inferno,\n"
	"speedscope read them). Needs root, or CAP_BPF and CAP_PERFMON.\n"
	"\n"
	"  -d, --duration TIME    how long to record: 10, 10s, 500ms, 2m (default: until Ctrl-C)\n"
	"  -F, --frequency HZ     on-CPU samples per second per CPU (default 99)\n"
	"  -p, --pid PID          only this process, all its threads, and the processes\n"
	"                         it forks from now on (repeatable)\n"
	"      --no-children      with -p: not the processes it forks\n"
	"      --comm NAME        only processes or threads named NAME\n"
	"      --on-cpu           sample where CPUs spend time (default)\n"
	"      --off-cpu          record where threads wait, weighted by blocked ns\n"
	"      --both             both: writes OUT.oncpu.folded and OUT.offcpu.folded\n"
	"                         (OUT.oncpu.pb.gz and OUT.offcpu.pb.gz for -o OUT.pb.gz)\n"
	"      --wall             where the elapsed time goes, waiting included: each\n"
	"                         thread's on-CPU samples (1e9/HZ ns each) and its waits\n"
	"                         in one profile of nanoseconds\n"
	"      --threads          what every thread did: one row per thread, all the\n"
	"                         same width; a thread asleep the whole time ends in\n"
	"                         '(blocked the whole snapshot)' above its kernel frames\n"
	"      --locks            only the waits on locks and conditions (futex, kernel\n"
	"                         mutexes and rw-semaphores, flock/fcntl), in ns\n"
	"      --waker            with --off-cpu, --both, --wall or --locks: above each\n"
	"                         wait, a frame '--' and the stack of the thread that\n"
	"                         woke it, leaf first, then that thread's process\n"
	"      --alloc            where memory is allocated, in bytes: probes malloc,\n"
	"                         calloc, realloc, posix_memalign, aligned_alloc and\n"
	"                         memalign in the processes chosen with -p (needed)\n"
	"                         and samples one allocation every --sample-bytes\n"
	"      --held             what holds memory: the bytes allocated (as --alloc)\n"
	"                         and not freed yet when the recording ends\n"
	"      --growth           where memory grows: every request to the kernel for\n"
	"                         more (brk that grows the heap, anonymous mmap, mremap\n"
	"                         that grows), counted, with bytes beside\n"
	"      --sample-bytes SIZE  --alloc, --held: bytes between samples on average\n"
	"                         (random intervals; default 512K; K, M, G)\n"
	"      --min-block USEC   off-CPU: ignore waits shorter than this (default 1;\n"
	"                         0 with --wall, --threads and --locks)\n"
	"      --kernel           include kernel frames (default)\n"
	"      --no-kernel        user-space frames only\n"
	"      --per-thread       add a row per thread (name-tid) under each process\n"
	"      --annotate         mark inline frames _[i] (kernel frames are always _[k])\n"
	CLI_PLAIN_HELP
	"      --unwind MODE      user stacks: auto (default: walk them in the kernel\n"
	"                         with each module's compiled DWARF CFI; a sample the\n"
	"                         walker cannot finish is copied and counted), fp\n"
	"                         (frame pointers only), dwarf (copy every stack and\n"
	"                         unwind it with DWARF in user space; see the README)\n"
	"      --stack-bytes N    bytes of user stack copied per sample (1024..16384, default 16384)\n"
	"      --stack-map-size N distinct stacks the kernel holds per second of\n"
	"                         recording (1024..1048576; default 16384, 2048 with\n"
	"                         -p or --comm); the samples of stacks past it are\n"
	"                         kept as [lost: stack map full] and counted\n"
	"  -o, --output FILE      where to write (default '-', standard output): folded\n"
	"                         stacks, or pprof when FILE ends in .pb.gz or .pprof\n"
	"                         (pprof keeps each location's lines; folded keeps a\n"
	"                         function's hottest line)\n"
	"      --debuginfod-wait TIME  with DEBUGINFOD_URLS set: how long the end of\n"
	"                         the recording waits for debug files still being\n"
	"                         fetched (default 30s; 0 = not at all)\n"
	"      --json             also write the summary as one JSON object to\n"
	"                         standard output (needs -o FILE; fields in hearth(1))\n"
	"  -h, --help             this text\n"
	"\n"
	"With -p, recording also ends when every chosen process (and every child\n"
	"followed) has exited.\n"
	"With DEBUGINFOD_URLS set, stripped binaries without a local debug file\n"
	"are named from debug files fetched by build-id from those servers (kept\n"
	"in debuginfod's own cache, at most 2 GiB); the end waits for the ones\n"
	"on the way, with a progress line (Ctrl-C stops the wait).\n"
	"Folded stacks start with hearth's comment lines: the unit, and each\n"
	"frame's class, language and file:line, which 'hearth view' reads back;\n"
	"flamegraph.pl and inferno skip them (saying how many lines they ignored).\n"
	"On a terminal a progress line shows on stderr; Ctrl-C stops early and\n"
	"still writes a complete profile. A summary line (samples, processes,\n"
	"duration, drops) always ends the run.\n";

enum {
	OPT_COMM = 256, OPT_ON, OPT_OFF, OPT_BOTH, OPT_MIN_BLOCK, OPT_KERNEL,
	OPT_NO_KERNEL, OPT_PER_THREAD, OPT_ANNOTATE, OPT_UNWIND, OPT_STACK_BYTES,
	OPT_NO_CHILDREN, OPT_DEBUGINFOD_WAIT, OPT_WALL, OPT_THREADS, OPT_LOCKS,
	OPT_JSON, OPT_PLAIN, OPT_ALLOC, OPT_HELD, OPT_SAMPLE_BYTES,
	OPT_STACK_MAP_SIZE, OPT_GROWTH, OPT_WAKER,
};

static const struct option long_opts[] = {
	{ "duration", required_argument, NULL, 'd' },
	{ "frequency", required_argument, NULL, 'F' },
	{ "pid", required_argument, NULL, 'p' },
	{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "on-cpu", no_argument, NULL, OPT_ON },
	{ "off-cpu", no_argument, NULL, OPT_OFF },
	{ "both", no_argument, NULL, OPT_BOTH },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "locks", no_argument, NULL, OPT_LOCKS },
	{ "waker", no_argument, NULL, OPT_WAKER },
	{ "alloc", no_argument, NULL, OPT_ALLOC },
	{ "held", no_argument, NULL, OPT_HELD },
	{ "growth", no_argument, NULL, OPT_GROWTH },
	{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "annotate", no_argument, NULL, OPT_ANNOTATE },
	{ "plain", no_argument, NULL, OPT_PLAIN },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "stack-bytes", required_argument, NULL, OPT_STACK_BYTES },
	{ "stack-map-size", required_argument, NULL, OPT_STACK_MAP_SIZE },
	{ "output", required_argument, NULL, 'o' },
	{ "debuginfod-wait", required_argument, NULL, OPT_DEBUGINFOD_WAIT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parses a whole decimal number in [lo, hi]. */
static int parse_ulong(const char *s, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_unwind(const char *arg, enum sampler_unwind *u)
{
	if (!strcmp(arg, "fp"))
		*u = SAMPLER_UNWIND_FP;
	else if (!strcmp(arg, "dwarf"))
		*u = SAMPLER_UNWIND_DWARF;
	else if (!strcmp(arg, "auto"))
		*u = SAMPLER_UNWIND_AUTO;
	else {
		cli_error("--unwind takes fp, dwarf or auto, not '%s'.", arg);
		return -1;
	}
	return 0;
}

static int add_pid(struct sampler_opts *o, const char *arg)
{
	unsigned long pid;
	char path[64];

	if (parse_ulong(arg, 1, 4194304, &pid) < 0) {
		cli_error("'%s' is not a process id.", arg);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%lu", pid);
	if (access(path, F_OK) != 0) {
		cli_error("no process with pid %lu is running.", pid);
		return -1;
	}
	if (o->npids == SAMPLER_MAX_PIDS) {
		cli_error("at most %d processes can be chosen with -p.", SAMPLER_MAX_PIDS);
		return -1;
	}
	o->pids[o->npids++] = (pid_t)pid;
	return 0;
}

/* Applies option @c (with optarg) to @a and the kinds chosen to @on/@off.
 * Returns 0, or -1 after reporting a bad value. */
static int parse_opt(int c, struct record_args *a, bool *on, bool *off)
{
	unsigned long v;

	switch (c) {
	case 'd':
		if (config_parse_duration(optarg, &a->duration_ns) < 0 || !a->duration_ns) {
			cli_error("'%s' is not a duration: use seconds (10) or a unit (500ms, 30s, 5m).", optarg);
			return -1;
		}
		return 0;
	case 'F':
		if (parse_ulong(optarg, 1, 10000, &v) < 0) {
			cli_error("'%s' is not a frequency: use a whole number of Hz from 1 to 10000.", optarg);
			return -1;
		}
		a->opts.hz = (uint32_t)v;
		return 0;
	case 'p':
		return add_pid(&a->opts, optarg);
	case OPT_NO_CHILDREN: a->opts.follow_children = false; return 0;
	case OPT_COMM:
		if (!*optarg || strlen(optarg) >= sizeof(a->opts.comm)) {
			cli_error("--comm takes a process name of 1 to 15 characters (the kernel's comm).");
			return -1;
		}
		strcpy(a->opts.comm, optarg);
		return 0;
	case OPT_ON: *on = true; return 0;
	case OPT_OFF: *off = true; return 0;
	case OPT_BOTH: *on = *off = true; return 0;
	case OPT_WAKER: a->opts.wakers = true; return 0;
	case OPT_WALL:
	case OPT_THREADS:
	case OPT_LOCKS:
	case OPT_ALLOC:
	case OPT_HELD:
	case OPT_GROWTH: {
		unsigned q = c == OPT_WALL ? PROF_Q_WALL : c == OPT_THREADS ? PROF_Q_THREADS :
			     c == OPT_LOCKS ? PROF_Q_LOCKS : c == OPT_ALLOC ? PROF_Q_ALLOC :
			     c == OPT_HELD ? PROF_Q_HELD : PROF_Q_GROWTH;

		if (a->question && a->question != q) {
			cli_error("--wall, --threads, --locks, --alloc, --held and --growth are questions: ask one.");
			return -1;
		}
		a->question = q;
		return 0;
	}
	case OPT_SAMPLE_BYTES:
		if (config_parse_size(optarg, &a->sample_bytes) < 0 || !a->sample_bytes ||
		    a->sample_bytes > (1ULL << 40)) {
			cli_error("'%s' is not a size: use bytes (4096) or a unit (512K, 1M), up to 1T.", optarg);
			return -1;
		}
		return 0;
	case OPT_MIN_BLOCK:
		a->min_block_set = true;
		if (parse_ulong(optarg, 0, 3600000000UL, &v) < 0) {
			cli_error("'%s' is not a number of microseconds.", optarg);
			return -1;
		}
		a->opts.min_block_ns = (uint64_t)v * 1000;
		return 0;
	case OPT_KERNEL: a->opts.kernel_stacks = true; return 0;
	case OPT_NO_KERNEL: a->opts.kernel_stacks = false; return 0;
	case OPT_PER_THREAD: a->opts.per_thread = true; return 0;
	case OPT_ANNOTATE: a->out_flags |= CLI_OUT_ANNOTATE; return 0;
	case OPT_PLAIN: a->out_flags |= CLI_OUT_PLAIN; return 0;
	case OPT_UNWIND: return parse_unwind(optarg, &a->opts.unwind);
	case OPT_STACK_BYTES:
		if (parse_ulong(optarg, 1024, 16384, &v) < 0 || v % 1024) {
			cli_error("--stack-bytes takes a multiple of 1024 from 1024 to 16384, not '%s'.", optarg);
			return -1;
		}
		a->opts.stack_bytes = (uint32_t)v;
		return 0;
	case OPT_STACK_MAP_SIZE:
		if (parse_ulong(optarg, SAMPLER_STACK_MAP_MIN, SAMPLER_STACK_MAP_MAX, &v) < 0) {
			cli_error("--stack-map-size takes a number of stacks from %u to %u, not '%s'.",
				  SAMPLER_STACK_MAP_MIN, SAMPLER_STACK_MAP_MAX, optarg);
			return -1;
		}
		a->opts.stack_map_size = (uint32_t)v;
		return 0;
	case 'o': a->output = optarg; return 0;
	case OPT_JSON: a->json = true; return 0;
	case OPT_DEBUGINFOD_WAIT:
		if (config_parse_duration(optarg, &a->debuginfod_wait_ns) < 0) {
			cli_error("'%s' is not a duration: use seconds (30) or a unit (500ms, 2m); 0 waits not at all.", optarg);
			return -1;
		}
		return 0;
	}
	return -1;
}

static bool is_memory(unsigned question)
{
	return question == PROF_Q_ALLOC || question == PROF_Q_HELD || question == PROF_Q_GROWTH;
}

/* The sampler's options for a question of time: elapsed time and threads
 * need both kinds and every wait (their stacks add up to the capture's
 * length); threads a row each. Returns 0, or -1 after saying why not. */
static int question_opts(struct record_args *a, bool kinds_chosen)
{
	if (kinds_chosen) {
		cli_error("--wall, --threads, --locks, --alloc, --held and --growth say what to record: leave out --on-cpu, --off-cpu and --both.");
		return -1;
	}
	if (is_memory(a->question)) {
		if (!a->opts.npids && a->question != PROF_Q_GROWTH) {
			cli_error("--alloc and --held probe every call of an allocator: choose the processes with -p PID.");
			return -1;
		}
		if (a->json) {
			cli_error("--json is not written for --alloc, --held and --growth yet.");
			return -1;
		}
		return 0;
	}
	a->opts.on_cpu = a->question != PROF_Q_LOCKS;
	a->opts.off_cpu = true;
	if (!a->min_block_set)
		a->opts.min_block_ns = 0;
	if (a->question == PROF_Q_THREADS)
		a->opts.per_thread = true;
	a->opts.edges = true;
	return 0;
}

/* Returns 0 to run, 1 when --help was printed, -1 on a bad option. */
static int parse_args(int argc, char **argv, struct record_args *a)
{
	bool on = false, off = false;
	int c;

	a->opts.hz = 99;
	a->opts.kernel_stacks = true;
	a->opts.min_block_ns = 1000;
	a->opts.unwind = SAMPLER_UNWIND_AUTO;
	a->opts.follow_children = true;
	a->output = "-";
	a->debuginfod_wait_ns = DEBUGINFOD_WAIT_NS;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:F:p:o:h", long_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 1;
		}
		if (c == ':') {
			cli_error("option '%s' needs a value; see 'hearth record --help'.", argv[optind - 1]);
			return -1;
		}
		if (c == '?') {
			cli_error("unknown option '%s'; see 'hearth record --help'.", argv[optind - 1]);
			return -1;
		}
		if (parse_opt(c, a, &on, &off) < 0)
			return -1;
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'; see 'hearth record --help'.", argv[optind]);
		return -1;
	}
	a->opts.exclude_tgid = getpid();
	if (a->json && !strcmp(a->output, "-")) {
		cli_error("--json writes the summary to standard output: give the profile a file with -o.");
		return -1;
	}
	if (a->sample_bytes && a->question != PROF_Q_ALLOC && a->question != PROF_Q_HELD) {
		cli_error("--sample-bytes goes with --alloc or --held.");
		return -1;
	}
	if (a->opts.wakers && (a->question ? a->question == PROF_Q_THREADS ||
			       is_memory(a->question) : !off)) {
		cli_error("--waker names who woke each wait: use it with --off-cpu, --both, --wall or --locks.");
		return -1;
	}
	if (a->question)
		return question_opts(a, on || off);
	a->opts.on_cpu = on || !off;
	a->opts.off_cpu = off;
	if (a->opts.on_cpu && a->opts.off_cpu && !strcmp(a->output, "-")) {
		cli_error("--both writes two files: name them with -o OUT (OUT.oncpu.folded, OUT.offcpu.folded).");
		return -1;
	}
	return 0;
}

static void progress(const struct record_args *a, const struct sampler_stats *st,
		     uint64_t elapsed)
{
	struct drop_counts dc;
	uint64_t drops;

	drops_of(st, &dc);
	drops = drops_total(&dc);

	if (a->duration_ns)
		fprintf(stderr, "\r\033[Khearth: recording %.1f/%.0f s, %llu samples, %llu waits, %llu drops",
			elapsed / 1e9, a->duration_ns / 1e9, (unsigned long long)st->samples,
			(unsigned long long)st->offcpu_events, (unsigned long long)drops);
	else
		fprintf(stderr, "\r\033[Khearth: recording %.1f s (Ctrl-C stops), %llu samples, %llu waits, %llu drops",
			elapsed / 1e9, (unsigned long long)st->samples,
			(unsigned long long)st->offcpu_events, (unsigned long long)drops);
}

/* A line for each cause of drops: how many, what became of them, and
 * the option that avoids them. */
static void drop_lines(const struct record_args *a, const struct sampler_stats *st)
{
	struct drop_settings set = { .who = DROP_FOR_RECORD,
				     .stack_map_size = st->stack_map_size,
				     .unwind = a->opts.unwind };
	struct drop_counts dc;
	char advice[512];

	drops_of(st, &dc);
	for (int i = 0; i < DROP_CAUSES; i++)
		if (dc.n[i])
			fprintf(stderr, "hearth: drops: %llu %s: %s\n", (unsigned long long)dc.n[i],
				drops_name((enum drop_cause)i),
				drops_advice((enum drop_cause)i, &dc, &set, advice, sizeof(advice)));
}

static void summary(const struct record_args *a, const struct sampler_stats *st,
		    uint64_t start, uint64_t elapsed)
{
	fprintf(stderr,
		"hearth: %llu on-CPU samples (%llu idle), %llu off-CPU waits (%.3f s blocked), %llu processes, %.2f s; drops: %llu stack, %llu map full, %llu events\n",
		(unsigned long long)st->samples, (unsigned long long)st->idle_samples,
		(unsigned long long)st->offcpu_events, st->offcpu_ns / 1e9,
		(unsigned long long)st->processes, elapsed / 1e9,
		(unsigned long long)st->drop_stack, (unsigned long long)st->drop_map_full,
		(unsigned long long)st->drop_events);
	drop_lines(a, st);
	if (a->opts.unwind != SAMPLER_UNWIND_FP && st->stack_copies)
		fprintf(stderr,
			"hearth: %llu stacks unwound with DWARF (%.1f%% to the outermost frame, %.1f us each), %llu waits reused an earlier unwind, %llu over the copy budget used frame pointers\n",
			(unsigned long long)st->stack_copies,
			100.0 * (double)st->unwind_complete / (double)st->stack_copies,
			(double)st->unwind_ns / 1e3 / (double)st->stack_copies,
			(unsigned long long)st->sig_hits,
			(unsigned long long)st->copy_fallbacks);
	/* A question of time accounts for every moment of the capture: say
	 * which moments (as --since takes them). */
	if (a->question)
		fprintf(stderr, "hearth: the capture ran from @%llu.%03llu to @%llu.%03llu; threads blocked all that time: %llu; the passes over the threads took %.1f ms\n",
			(unsigned long long)(start / 1000000000ULL),
			(unsigned long long)(start / 1000000ULL % 1000),
			(unsigned long long)((start + elapsed) / 1000000000ULL),
			(unsigned long long)((start + elapsed) / 1000000ULL % 1000),
			(unsigned long long)st->blocked_whole, st->edge_pass_ns / 1e6);
	/* With kernel.bpf_stats_enabled=1 the kernel times each program. */
	if (st->oncpu_run_cnt || st->offcpu_run_cnt)
		fprintf(stderr, "hearth: BPF %.0f ns per on-CPU sample (%llu runs), %.0f ns per context switch (%llu runs)\n",
			st->oncpu_run_cnt ? (double)st->oncpu_run_ns / (double)st->oncpu_run_cnt : 0.0,
			(unsigned long long)st->oncpu_run_cnt,
			st->offcpu_run_cnt ? (double)st->offcpu_run_ns / (double)st->offcpu_run_cnt : 0.0,
			(unsigned long long)st->offcpu_run_cnt);
	if (st->sample_ns && st->samples)
		fprintf(stderr, "hearth: BPF %.0f ns per recorded on-CPU sample (filtered runs left out)\n",
			(double)st->sample_ns / (double)st->samples);
	if (a->opts.unwind == SAMPLER_UNWIND_AUTO)
		fprintf(stderr,
			"hearth: %llu user stacks walked in the kernel, %llu fell back to a copy (%llu before their tables, %llu on a rule that needs more, %llu stack map full), %llu waits reused their last user stack, %llu samples replayed their thread's last walk; tables: %llu processes, %llu modules, %.1f KiB\n",
			(unsigned long long)st->cfi_walks,
			(unsigned long long)(st->cfi_no_table + st->cfi_no_rule + st->cfi_collisions),
			(unsigned long long)st->cfi_no_table, (unsigned long long)st->cfi_no_rule,
			(unsigned long long)st->cfi_collisions, (unsigned long long)st->waits_reused,
			(unsigned long long)st->cfi_replayed,
			(unsigned long long)st->cfi_processes, (unsigned long long)st->cfi_modules,
			(double)st->cfi_bytes / 1024.0);
}

/* The processes chosen with -p, as pidfds: one turns readable when its
 * process exits, zombie or not (a pid check would wait for the reaping). */
struct targets {
	int fds[SAMPLER_MAX_PIDS];
	size_t n;
	const struct sampler_opts *o; /* no pidfds (old kernel): pid checks */
	bool gone_at_start;
};

static void targets_open(struct targets *t, const struct sampler_opts *o)
{
	size_t gone = 0;

	t->n = 0;
	t->o = NULL;
	for (size_t i = 0; i < o->npids && i < SAMPLER_MAX_PIDS; i++) {
		int fd = (int)syscall(SYS_pidfd_open, o->pids[i], 0);

		if (fd >= 0)
			t->fds[t->n++] = fd;
		else if (errno == ESRCH)
			gone++;
		else
			t->o = o;
	}
	t->gone_at_start = o->npids && gone == o->npids;
}

/* Whether every process chosen with -p has exited (like perf record -p). */
static bool targets_gone(const struct targets *t)
{
	if (t->gone_at_start)
		return true;
	if (t->o) {
		for (size_t i = 0; i < t->o->npids; i++)
			if (kill(t->o->pids[i], 0) == 0 || errno != ESRCH)
				return false;
		return true;
	}
	if (!t->n)
		return false;
	for (size_t i = 0; i < t->n; i++) {
		struct pollfd p = { .fd = t->fds[i], .events = POLLIN };

		if (poll(&p, 1, 0) != 1)
			return false;
	}
	return true;
}

static void targets_close(struct targets *t)
{
	for (size_t i = 0; i < t->n; i++)
		close(t->fds[i]);
	t->n = 0;
}

/* Runs the sampling loop until the duration passes, a signal arrives, or
 * every chosen process has exited. */
static int sample_loop(struct sampler *s, const struct record_args *a,
		       struct prof_profile *on, struct prof_profile *off,
		       uint64_t start, uint64_t *elapsed)
{
	bool tty = isatty(STDERR_FILENO);
	uint64_t last_drain = start;
	struct sampler_stats st;
	struct targets t;
	int rc = 0;

	targets_open(&t, &a->opts);
	while (!record_loop_exiting) {
		uint64_t now = record_loop_now(CLOCK_MONOTONIC);

		*elapsed = now - start;
		if ((a->duration_ns && *elapsed >= a->duration_ns) ||
		    (targets_gone(&t) && !sampler_chosen_alive(s)))
			break;
		/* Process events (a chosen process exiting among them) and
		 * stack copies wake it earlier. Sleeping this long, not
		 * 100 ms at a time, is most of what a quiet recording costs. */
		rc = sampler_poll(s, record_loop_sleep_ms(a->duration_ns, DRAIN_INTERVAL_NS, tty,
							   now, start, last_drain));
		if (rc < 0 && rc != -EINTR)
			break;
		rc = 0;
		now = record_loop_now(CLOCK_MONOTONIC);
		if (now - last_drain >= DRAIN_INTERVAL_NS) {
			rc = sampler_drain(s, on, off);
			if (rc < 0)
				break;
			last_drain = now;
		}
		if (tty) {
			sampler_stats(s, &st);
			progress(a, &st, now - start);
		}
	}
	targets_close(&t);
	*elapsed = record_loop_now(CLOCK_MONOTONIC) - start;
	/* A question of time holds the capture's moments, no later ones. */
	if (a->question)
		sampler_edges_close(s, start + *elapsed);
	/* Nothing may arrive after the last drain: the summary counts what
	 * the profile holds. */
	sampler_stop(s);
	if (tty)
		fputs("\r\033[K", stderr);
	if (rc == 0)
		rc = sampler_drain(s, on, off);
	/* The waits still going when it stopped, up to then. */
	if (rc == 0 && a->question)
		rc = sampler_edges_end(s, off, start + *elapsed);
	return rc;
}

static void set_meta(struct prof_profile *p, const struct record_args *a,
		     const struct sampler_stats *st, uint64_t start, uint64_t elapsed,
		     bool off)
{
	struct drop_counts dc;
	struct prof_meta *m;

	if (!p)
		return;
	m = prof_meta(p);
	m->start_ns = start;
	m->duration_ns = elapsed;
	m->hz = off ? 0 : a->opts.hz;
	m->off_cpu = off;
	drops_of(st, &dc);
	m->drops = drops_total(&dc);
}

/* A sentence from the debuginfod fetcher (its own thread): on a line of
 * its own, the progress line wiped first. */
static void debuginfod_note(void *arg, const char *sentence)
{
	const bool *tty = arg;

	fprintf(stderr, "%shearth: %s\n", *tty ? "\r\033[K" : "", sentence);
}

/* The fetcher when DEBUGINFOD_URLS names servers, else NULL (and a
 * sentence when they cannot be used: the recording goes on without). */
static struct sym_debuginfod *open_debuginfod(const bool *tty)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const char *timeout = getenv("DEBUGINFOD_TIMEOUT");
	struct sym_debuginfod_opts o = { .note = debuginfod_note, .note_arg = (void *)tty };
	struct sym_debuginfod *d;
	char err[300];

	if (!urls || !*urls)
		return NULL;
	/* as libdebuginfod reads it: whole seconds */
	if (timeout && atoi(timeout) > 0)
		o.stall_ns = (uint64_t)atoi(timeout) * 1000000000ULL;
	d = sym_debuginfod_new(&o, err, sizeof(err));
	if (!d)
		cli_error("DEBUGINFOD_URLS: %s; stripped binaries stay unnamed.", err);
	return d;
}

/* Waits, up to the limit, for the debug files still on the way, with a
 * progress line; what has not arrived by then is given up. */
static void wait_debuginfod(struct sym_debuginfod *d, const struct record_args *a)
{
	bool tty = isatty(STDERR_FILENO);
	uint64_t start = record_loop_now(CLOCK_MONOTONIC), until = start + a->debuginfod_wait_ns;
	struct sym_debuginfod_progress p;

	sym_debuginfod_progress(d, &p);
	if (!p.waiting && !p.fetched && !p.failed)
		return; /* nothing was asked for */
	if (!p.waiting || p.unreachable || !a->debuginfod_wait_ns)
		goto done;
	fprintf(stderr, "hearth: waiting up to %.3g s for %u debug files from debuginfod (Ctrl-C stops)\n",
		a->debuginfod_wait_ns / 1e9, p.waiting);
	record_loop_exiting = 0; /* a Ctrl-C that ended the recording does not end this */
	while (!record_loop_exiting && !p.unreachable && p.waiting) {
		uint64_t now = record_loop_now(CLOCK_MONOTONIC);

		if (now >= until)
			break;
		sym_debuginfod_wait(d, until - now < 100000000ULL ? until - now : 100000000ULL);
		sym_debuginfod_progress(d, &p);
		if (tty)
			fprintf(stderr, "\r\033[Khearth: fetching debug files: %u fetched, %u to go%s%s (%.1f MiB), %.1f/%.0f s",
				p.fetched, p.waiting, p.module[0] ? ", now " : "", p.module,
				p.bytes / 1048576.0,
				(record_loop_now(CLOCK_MONOTONIC) - start) / 1e9, a->debuginfod_wait_ns / 1e9);
	}
	if (tty)
		fputs("\r\033[K", stderr);
	if (p.waiting && !p.unreachable) {
		sym_debuginfod_cancel(d);
		fprintf(stderr, "hearth: %u debug files did not arrive in %.1f s: their frames stay unnamed (--debuginfod-wait sets how long to wait)\n",
			p.waiting, (record_loop_now(CLOCK_MONOTONIC) - start) / 1e9);
	}
done:
	sym_debuginfod_progress(d, &p);
	fprintf(stderr, "hearth: debuginfod: %u debug files fetched, %u not found or failed%s; waited %.1f s at the end\n",
		p.fetched, p.failed, p.unreachable ? ", servers unreachable" : "",
		(record_loop_now(CLOCK_MONOTONIC) - start) / 1e9);
}

/* Names, in @*pp, the frames taken before their debug file arrived. */
static int rename_late(struct sym_debuginfod *d, struct prof_profile **pp)
{
	struct prof_profile *q;
	size_t n;

	if (!*pp)
		return 0;
	q = sym_debuginfod_rename(d, *pp, 1, &n);
	if (!q)
		return -errno;
	prof_free(*pp);
	*pp = q;
	return 0;
}

/* Writes the profile asked for: the question's, or the kinds sampled. */
static int write_out(const struct record_args *a, struct prof_profile *on,
		     struct prof_profile *off, uint64_t elapsed)
{
	struct prof_profile *q;
	int err = 0, rc;

	if (!a->question)
		return cli_write_profiles(a->output, on, off, a->out_flags);
	q = time_profile_new(a->question, on, a->opts.hz, off, elapsed, &err);
	if (!q) {
		cli_error("cannot make the profile: %s.", strerror(-err));
		return -1;
	}
	rc = cli_write_profile(a->output, q, a->out_flags);
	prof_free(q);
	return rc;
}

static int record_memory(const struct record_args *a)
{
	struct record_mem_args m = {
		.question = a->question, .pids = a->opts.pids, .npids = a->opts.npids,
		.duration_ns = a->duration_ns, .sample_bytes = a->sample_bytes,
		.per_thread = a->opts.per_thread, .output = a->output,
		.out_flags = a->out_flags,
	};

	return cli_record_memory(&m);
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	struct prof_profile *on = NULL, *off = NULL;
	struct sampler *s = NULL;
	struct sym_debuginfod *dbgd = NULL;
	struct sampler_stats st;
	char err[512];
	uint64_t start, start_mono, elapsed = 0;
	int rc = parse_args(argc, argv, &a), status = 1;
	bool tty = isatty(STDERR_FILENO);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (is_memory(a.question))
		return record_memory(&a);
	if (a.opts.on_cpu)
		on = prof_new(PROF_UNIT_SAMPLES);
	if (a.opts.off_cpu)
		off = prof_new(PROF_UNIT_NANOSECONDS);
	if ((a.opts.on_cpu && !on) || (a.opts.off_cpu && !off)) {
		cli_error("out of memory.");
		goto out;
	}
	record_loop_signals();
	dbgd = open_debuginfod(&tty);
	a.opts.debuginfod = dbgd;
	s = sampler_open(&a.opts, err, sizeof(err));
	if (!s) {
		cli_error("%s.", err);
		goto out;
	}
	/* A question of time counts the waits begun before the start and
	 * those still going at the end: the capture starts with that pass. */
	start_mono = record_loop_now(CLOCK_MONOTONIC);
	if (a.question && sampler_edges_begin(s, &start_mono, err, sizeof(err)) < 0) {
		cli_error("%s.", err);
		goto out;
	}
	/* The wall clock at start_mono. */
	start = record_loop_now(CLOCK_REALTIME) - (record_loop_now(CLOCK_MONOTONIC) - start_mono);
	rc = sample_loop(s, &a, on, off, start_mono, &elapsed);
	sampler_stats(s, &st);
	if (rc < 0) {
		cli_error("sampling failed: %s.", strerror(-rc));
		goto out;
	}
	if (dbgd) {
		wait_debuginfod(dbgd, &a);
		if (rename_late(dbgd, &on) < 0 || rename_late(dbgd, &off) < 0) {
			cli_error("out of memory.");
			goto out;
		}
	}
	set_meta(on, &a, &st, start, elapsed, false);
	set_meta(off, &a, &st, start, elapsed, true);
	if (write_out(&a, on, off, elapsed) == 0)
		status = 0;
	summary(&a, &st, start, elapsed);
	if (a.json)
		cli_record_json(stdout, &st, elapsed, a.opts.unwind, a.output, status == 0);
out:
	sampler_close(s);
	sym_debuginfod_free(dbgd);
	prof_free(on);
	prof_free(off);
	return status;
}
