/* SPDX-License-Identifier: MIT */
/* The sampler's user-space side: open, tune, load, attach, drain. */
#include <errno.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/preflight.h"
#include "agent/ring_reader.h"
#include "agent/ring_poll.h"
#include "agent/trusted_dir.h"
#include "agent/sampler.h"
#include "bpf/sampler.h"
#include "bpf/unwind.h"
#include "bpf/sampler.skel.h"
#include "symbolize/symbolize.h"

#include "agent/sampler_impl.h"

/* Time one sampler_poll() spends taking stack copies before it returns
 * to the daemon's loop. */
#define POLL_SLICE_NS (20 * 1000 * 1000)

static int open_cpu_event(int cpu, uint32_t hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* cpu-clock is a timer: a fixed period in ns gives exact
		 * rates, unlike freq mode which adapts. */
		.sample_period = 1000000000ULL / hz,
	};

	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static int attach_on_cpu(struct sampler *s, char *err, size_t errlen)
{
	int cpus[MAX_CPUS];
	int n = preflight_online_cpus(cpus, MAX_CPUS);

	if (n <= 0) {
		snprintf(err, errlen, "cannot read the online CPUs from /sys/devices/system/cpu/online");
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		int fd = open_cpu_event(cpus[i], s->opts.hz);

		if (fd < 0) {
			int e = errno;

			snprintf(err, errlen,
				 "the kernel refused a cpu-clock perf event on CPU %d (%s); check kernel.perf_event_paranoid and that perf events are enabled",
				 cpus[i], strerror(e));
			return -e;
		}
		s->cpu_fds[s->ncpus] = fd;
		s->cpu_links[s->ncpus] =
			bpf_program__attach_perf_event(s->skel->progs.on_cpu, fd);
		s->ncpus++;
		if (!s->cpu_links[s->ncpus - 1]) {
			int e = errno;

			snprintf(err, errlen, "cannot attach the on-CPU program to CPU %d (%s)",
				 cpus[i], strerror(e));
			return -e;
		}
	}
	return 0;
}

static int handle_event(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	const struct hearth_proc_event *e = data;

	if (len < sizeof(*e))
		return 0;
	switch (e->type) {
	case HEARTH_EV_CFI_MISS:
		if (s->cfi && cfi_tables_load(s->cfi, (pid_t)e->pid, e->exec_id) == -ESRCH)
			cfi_tables_note_gone(s->cfi, (pid_t)e->pid);
		break;
	case HEARTH_EV_EXEC:
		/* The new image's tables at once: its first samples walk
		 * instead of falling back (libraries mapped after this point
		 * are asked for at their first miss). */
		if (s->cfi && cfi_tables_load(s->cfi, (pid_t)e->pid, e->exec_id) == -ESRCH)
			/* Gone already (an exec storm's processes live a few
			 * milliseconds): its exit teaches the tables its files,
			 * so the next process running them walks. */
			cfi_tables_note_gone(s->cfi, (pid_t)e->pid);
		/* Its mappings are read when its samples are named, or come
		 * at its exit; without that, now, before it may be gone. */
		if (s->pm)
			sym_proc_clear(s->sym, (pid_t)e->pid);
		else
			sym_proc_load(s->sym, (pid_t)e->pid);
		sym_unwind_forget(s->unw, (pid_t)e->pid);
		/* Its addresses now mean other code. */
		stack_builder_forget_tgid(s->builder, e->pid);
		sampler_py_track(s, (pid_t)e->pid);
		break;
	case HEARTH_EV_FORK:
		/* A child that exits before its samples are named has its
		 * mappings sent at its exit: nothing to copy for it. */
		if (s->pm)
			sym_proc_clear(s->sym, (pid_t)e->pid); /* id reused */
		else if (sym_proc_fork(s->sym, (pid_t)e->ppid, (pid_t)e->pid) < 0)
			sym_proc_load(s->sym, (pid_t)e->pid);
		sym_unwind_fork(s->unw, (pid_t)e->ppid, (pid_t)e->pid);
		if (s->cfi)
			cfi_tables_fork(s->cfi, (pid_t)e->ppid, (pid_t)e->pid);
		stack_builder_forget_tgid(s->builder, e->pid); /* id reused */
		break;
	case HEARTH_EV_EXIT:
		if (s->ngone == s->capgone) {
			size_t cap = s->capgone ? s->capgone * 2 : 64;
			pid_t *g = realloc(s->gone, cap * sizeof(*g));

			if (!g)
				return 0;
			s->gone = g;
			s->capgone = cap;
		}
		s->gone[s->ngone++] = (pid_t)e->pid;
		break;
	}
	return 0;
}

/* A process exited with these mappings: they name its samples until a
 * drain forgets it (once its copies are taken), and the files of one the walker
 * asked tables for are learned, so the next process running them walks
 * in the kernel however short its life. */
static void take_exit(void *arg, pid_t pid, const struct sym_exit_map *maps, size_t n)
{
	struct sampler *s = arg;

	/* A poll takes the rings in the order they woke: the fork and exec
	 * of a process that lived a few milliseconds may still wait in
	 * theirs, and would clear these mappings when taken after them. */
	ring_reader_consume(s->rb_events);
	/* With a filter, only the processes followed. */
	if ((s->opts.npids || s->opts.comm[0]) && !sym_proc_known(s->sym, pid))
		return;
	sym_proc_set_exit_maps(s->sym, pid, maps, n);
	if (!s->cfi || !cfi_tables_asked(s->cfi, pid))
		return;
	for (size_t i = 0; i < n; i++) {
		struct sym_exec_map em = {
			.start = maps[i].start,
			.end = maps[i].end,
			.pgoff = maps[i].pgoff,
			.dev = (uint64_t)maps[i].dev_major << 32 | maps[i].dev_minor,
			.ino = maps[i].ino,
			.path = maps[i].path,
		};

		if (em.path)
			cfi_tables_learn(s->cfi, &em);
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int handle_copy(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	int rc;

	/* A child's samples can come in before its fork event, which sits in
	 * the other ring: handle process events first so the child is known
	 * (it may be gone already). */
	ring_reader_consume(s->rb_procs);
	rc = sampler_take_copy(s, data, len);
	/* libbpf leaves a ring only once it is empty: under an exec storm
	 * copies come faster than they unwind, and the daemon's loop (window
	 * cuts, control clients, placing compiled tables) would wait for
	 * seconds. The rest wait in the ring for the next poll. */
	if (rc == 0 && s->poll_until_ns && mono_ns() > s->poll_until_ns)
		return -EAGAIN;
	return rc;
}

/* Ring room for stack copies (about 16 KiB each), drained every 100 ms
 * and at half full. Copying every sample (dwarf): 4 MiB per CPU, 8 to
 * 64 MiB. As the in-kernel walker's fallback (auto), copies are budgeted
 * (256 off-CPU a second per CPU, with the on-CPU samples' 99): 2 MiB per
 * CPU holds a third of a second of the whole budget, 4 to 64 MiB. */
static uint32_t copy_ring_bytes(int ncpus, enum sampler_unwind unwind)
{
	if (unwind == SAMPLER_UNWIND_AUTO)
		return ring_poll_bytes(ncpus, 2u << 20, 4u << 20, 64u << 20);
	return ring_poll_bytes(ncpus, 4u << 20, 8u << 20, 64u << 20);
}

/* Per stack of stack_map_size: aggregation entries (threads share
 * stacks) and user stacks walked in the kernel. Every walked stack a
 * window keeps takes an aggregation entry too, so the walked maps stay
 * well below the aggregation map: room for more walks under a stack
 * storm only moves the loss there, where every process's samples are
 * lost, not the storm's waits (bench/stack_storm.sh: walked at 8 per
 * stack lost 40% of the host's on-CPU samples, at 2 none). */
#define COUNTS_PER_STACK 4u
#define WALKED_PER_STACK 2u
_Static_assert(2 * WALKED_PER_STACK <= COUNTS_PER_STACK,
	       "walked stacks leave half the aggregation map to the rest");

/* Room for @n distinct stacks per window and side: stack maps and
 * signature counts @n, the aggregation map COUNTS_PER_STACK @n, walked
 * user stacks @walked. The walked maps are allocated as they fill and
 * take every switch-out's user stack, a recorded wait's or not: a busy
 * host fills them first (bench/stack_storm.sh), so they get more room
 * than the stack maps at no cost until used. */
static void size_stacks(struct sampler_bpf *skel, uint32_t n, uint32_t walked)
{
	bpf_map__set_max_entries(skel->maps.stacks0, n);
	bpf_map__set_max_entries(skel->maps.stacks1, n);
	bpf_map__set_max_entries(skel->maps.walked0, walked);
	bpf_map__set_max_entries(skel->maps.walked1, walked);
	bpf_map__set_max_entries(skel->maps.counts0, COUNTS_PER_STACK * n);
	bpf_map__set_max_entries(skel->maps.counts1, COUNTS_PER_STACK * n);
	bpf_map__set_max_entries(skel->maps.sig_counts0, n);
	bpf_map__set_max_entries(skel->maps.sig_counts1, n);
}

/* A few chosen processes need far smaller maps than the whole host, and
 * preallocated maps cost their full size at load. */
static void size_for_few_tasks(struct sampler_bpf *skel)
{
	bpf_map__set_max_entries(skel->maps.offcpu_start, 4096);
	bpf_map__set_max_entries(skel->maps.copy_woken, 1024);
}

/* Maps a mode never writes shrink to one entry (the ring to one page):
 * creating them costs the kernel their full size at load. */
static void size_for_modes(struct sampler_bpf *skel, const struct sampler_opts *o)
{
	if (!o->off_cpu) {
		bpf_map__set_max_entries(skel->maps.offcpu_start, 1);
		bpf_map__set_max_entries(skel->maps.sig_counts0, 1);
		bpf_map__set_max_entries(skel->maps.sig_counts1, 1);
		bpf_map__set_max_entries(skel->maps.sig_seen, 1);
	}
	if (o->unwind == SAMPLER_UNWIND_FP) {
		bpf_map__set_max_entries(skel->maps.stack_events, 4096);
		bpf_map__set_max_entries(skel->maps.copy_woken, 1);
	}
	if (o->unwind != SAMPLER_UNWIND_AUTO) {
		bpf_map__set_max_entries(skel->maps.walked0, 1);
		bpf_map__set_max_entries(skel->maps.walked1, 1);
		bpf_map__set_max_entries(skel->maps.cfi_modules, 1);
		bpf_map__set_max_entries(skel->maps.cfi_files, 1);
		bpf_map__set_max_entries(skel->maps.cfi_procs, 1);
		bpf_map__set_max_entries(skel->maps.cfi_asked, 1);
		bpf_map__set_max_entries(skel->maps.cfi_asks, 4096);
	}
	if (o->unwind != SAMPLER_UNWIND_AUTO)
		bpf_map__set_max_entries(skel->maps.walk_memos, 1);
}

/* Splits the walker's memory: three quarters rows, the rest process
 * mappings (at least 64). */
static void size_cfi(struct sampler_bpf *skel, const struct sampler_opts *o,
		     uint32_t *pool_rows)
{
	uint64_t bytes = o->cfi_bytes ? o->cfi_bytes : SAMPLER_CFI_BYTES;
	uint64_t rows = bytes / 4 * 3 / sizeof(struct hearth_cfi_row);
	uint64_t procs = bytes / 4 / sizeof(struct hearth_cfi_proc);

	if (rows > UINT32_MAX / 2)
		rows = UINT32_MAX / 2;
	if (rows < 1)
		rows = 1;
	if (procs < 64)
		procs = 64;
	*pool_rows = (uint32_t)rows;
	bpf_map__set_max_entries(skel->maps.cfi_rows, (uint32_t)rows);
	bpf_map__set_max_entries(skel->maps.cfi_procs, (uint32_t)(procs < 65536 ? procs : 65536));
}

/* Whether the kernel times BPF programs now (kernel.bpf_stats_enabled):
 * then the on-CPU program times the runs that record a sample too. */
static bool bpf_stats_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == '1';
}

static void tune(struct sampler *s, const struct sampler_opts *o)
{
	struct sampler_bpf *skel = s->skel;

	skel->rodata->filter_pid = o->npids > 0;
	skel->rodata->follow_children = o->npids > 0 && o->follow_children;
	/* Room for the children a chosen process forks (a build, a shell
	 * script, a pre-forking server); the ones past it are counted. */
	if (o->npids && o->follow_children)
		bpf_map__set_max_entries(skel->maps.pids, SAMPLER_MAX_FOLLOWED);
	skel->rodata->filter_comm = o->comm[0] != '\0';
	memcpy((char *)skel->rodata->target_comm, o->comm, sizeof(o->comm));
	skel->rodata->kernel_stacks = o->kernel_stacks;
	skel->rodata->user_stacks = true;
	skel->rodata->exclude_tgid = (uint32_t)o->exclude_tgid;
	skel->rodata->min_block_ns = o->min_block_ns;
	skel->rodata->time_samples = bpf_stats_on();
	if (o->unwind != SAMPLER_UNWIND_FP) {
		uint32_t bytes = o->stack_bytes ? o->stack_bytes : HEARTH_MAX_STACK_BYTES;

		/* Periodic sampling makes on-CPU copies cheap (hz x CPUs per
		 * second); a busy host switches far more often, so in auto
		 * mode, where copies are only the walker's fallback, off-CPU
		 * copies are budgeted and the FP walk takes the rest. */
		skel->rodata->copy_oncpu_bytes = bytes;
		skel->rodata->copy_offcpu_bytes = bytes;
		skel->rodata->copy_offcpu_per_sec = o->unwind == SAMPLER_UNWIND_AUTO
			? (o->offcpu_copies ? o->offcpu_copies : 256) : 100000;
		bpf_map__set_max_entries(skel->maps.stack_events, copy_ring_bytes(s->npossible, o->unwind));
	}
	if (o->unwind == SAMPLER_UNWIND_AUTO) {
		skel->rodata->cfi_walk = true;
		/* Replays check every word the walk read: exact, where
		 * the signature of registers and the top of the stack it
		 * replaced gave recursive paths of equal depth each other's
		 * stacks. */
		skel->rodata->walk_replay = true;
		size_cfi(skel, o, &s->cfi_pool_rows);
	}
	if (o->npids || o->comm[0])
		size_for_few_tasks(skel);
	if (o->stack_map_size)
		size_stacks(skel, o->stack_map_size, WALKED_PER_STACK * o->stack_map_size);
	else
		size_stacks(skel, o->npids || o->comm[0] ? SAMPLER_STACK_MAP_SIZE / 8
			    : SAMPLER_STACK_MAP_SIZE, WALKED_PER_STACK * SAMPLER_STACK_MAP_SIZE);
	/* The start's pass gives every chosen thread asleep a start: room
	 * for as many as a busy host has. */
	if (o->edges)
		bpf_map__set_max_entries(skel->maps.offcpu_start, SAMPLER_EDGE_THREADS);
	size_for_modes(skel, o);
	if (!o->on_cpu)
		bpf_program__set_autoload(skel->progs.on_cpu, false);
	if (!o->off_cpu)
		bpf_program__set_autoload(skel->progs.off_cpu, false);
	/* Every wake-up on the host runs it: only when asked. */
	if (!o->off_cpu || !o->wakers)
		bpf_program__set_autoload(skel->progs.waking, false);
}

static int fill_pids(struct sampler *s)
{
	int fd = bpf_map__fd(s->skel->maps.pids);
	uint8_t one = 1;

	for (size_t i = 0; i < s->opts.npids; i++) {
		uint32_t pid = (uint32_t)s->opts.pids[i];

		if (bpf_map_update_elem(fd, &pid, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

static void load_existing_procs(struct sampler *s)
{
	/* With a pid filter, cache the targets' mappings up front. */
	for (size_t i = 0; i < s->opts.npids; i++)
		sym_proc_load(s->sym, s->opts.pids[i]);
}

/* The user-space state: symbolizer, unwinder, caches, pending profiles.
 * Returns 0 or -ENOMEM. */
static int alloc_state(struct sampler *s)
{
	/* People read these names: C++ and Rust come demangled, as perf
	 * shows them. */
	struct sym_options so = { .demangle = 1,
				  .max_module_bytes = s->opts.symbol_cache,
				  .debuginfod = s->opts.debuginfod };

	s->npossible = libbpf_num_possible_cpus();
	s->sym = sym_new(&so);
	s->builder = stack_builder_new();
	s->unw = sym_unwinder_new();
	if (s->opts.on_cpu)
		s->pend_on = prof_new(PROF_UNIT_SAMPLES);
	/* Remembered unwinds by wait signature: off-CPU only. */
	if (s->opts.off_cpu) {
		s->pend_off = prof_new(PROF_UNIT_NANOSECONDS);
		s->sigs = sig_cache_new(16384);
		s->sigs_old = sig_cache_new(16384);
	}
	if (!s->sym || !s->builder || !s->unw || s->npossible <= 0 ||
	    (s->opts.on_cpu && !s->pend_on) ||
	    (s->opts.off_cpu && (!s->pend_off || !s->sigs || !s->sigs_old)))
		return -ENOMEM;
	return 0;
}

/* Compiled tables kept in memory: placed ones live in the pool, so this
 * only spares a disk read for a module evicted and seen again. On disk a
 * table costs a read against a compile of 10 to 200 ms: a build host's
 * compilers and their libraries (cc1 5.7 MiB, libLLVM 11 MiB) fit. */
#define CFI_CACHE_BYTES (2u << 20)
#define CFI_DISK_BYTES (128u << 20)

/* The walker's tables over the loaded maps. A cache directory that
 * cannot be opened only costs compiling again after a restart. Returns 0
 * or -ENOMEM. */
static int open_cfi(struct sampler *s)
{
	struct sampler_bpf *k = s->skel;
	struct cfi_tables_opts o = {
		.rows_fd = bpf_map__fd(k->maps.cfi_rows),
		.pool_rows = s->cfi_pool_rows,
		.modules_fd = bpf_map__fd(k->maps.cfi_modules),
		.procs_fd = bpf_map__fd(k->maps.cfi_procs),
		.files_fd = bpf_map__fd(k->maps.cfi_files),
		.vdso_fd = bpf_map__fd(k->maps.cfi_vdso),
		.cache_dirfd = -1,
		.cache_bytes = CFI_CACHE_BYTES,
		.disk_bytes = CFI_DISK_BYTES,
	};

	if (s->opts.cfi_cache_dir) {
		s->cfi_dirfd = trusted_dir_open(s->opts.cfi_cache_dir, true);
		o.cache_dirfd = s->cfi_dirfd < 0 ? -1 : s->cfi_dirfd;
	}
	s->cfi = cfi_tables_new(&o);
	return s->cfi ? 0 : -ENOMEM;
}

/* Opens, tunes and loads the programs, fills the pid filter and opens the
 * rings. Returns 0, or -1 with one sentence in @err. */
static int load_programs(struct sampler *s, char *err, size_t errlen)
{
	int rc;

	s->skel = sampler_bpf__open();
	if (!s->skel) {
		snprintf(err, errlen, "cannot open the BPF programs (%s)", strerror(errno));
		return -1;
	}
	tune(s, &s->opts);
	rc = sampler_bpf__load(s->skel);
	if (rc) {
		snprintf(err, errlen,
			 "the kernel refused hearth's BPF programs (%s); run with HEARTH_DEBUG_BPF=1 to see the verifier's log",
			 strerror(-rc));
		return -1;
	}
	if (s->opts.unwind == SAMPLER_UNWIND_AUTO && open_cfi(s) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (fill_pids(s) < 0) {
		snprintf(err, errlen, "cannot set the pid filter (%s)", strerror(errno));
		return -1;
	}
	s->rb = ring_reader_new(bpf_map__fd(s->skel->maps.events), handle_event, s);
	s->rb_procs = ring_reader_new(bpf_map__fd(s->skel->maps.events), handle_event, s);
	s->rb_events = ring_reader_new(bpf_map__fd(s->skel->maps.events), handle_event, s);
	if (!s->rb || !s->rb_procs || !s->rb_events ||
	    ring_reader_add(s->rb, bpf_map__fd(s->skel->maps.cfi_asks), handle_event, s) < 0 ||
	    ring_reader_add(s->rb, bpf_map__fd(s->skel->maps.stack_events), handle_copy, s) < 0) {
		snprintf(err, errlen, "cannot open the event ring buffer (%s)", strerror(errno));
		return -1;
	}
	/* Exits: after the process events and the walker's asks (an exit
	 * teaches the tables only the files of a process that asked), before
	 * the copies (which name their process at once). A kernel that
	 * cannot send them leaves the mappings to be read at exec and fork,
	 * as before. */
	if (ring_reader_add(s->rb_procs, bpf_map__fd(s->skel->maps.cfi_asks), handle_event, s) < 0) {
		snprintf(err, errlen, "cannot open the event ring buffer (%s)", strerror(errno));
		return -1;
	}
	s->pm = procmaps_open(s->opts.exclude_tgid);
	if (s->pm && (procmaps_add_ring(s->pm, s->rb_procs, take_exit, s) < 0 ||
		      procmaps_add_ring(s->pm, s->rb, take_exit, s) < 0)) {
		snprintf(err, errlen, "cannot open the exit ring buffer (%s)", strerror(errno));
		return -1;
	}
	return 0;
}

struct sampler *sampler_open(const struct sampler_opts *opts, char *err,
			     size_t errlen)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->opts = *opts;
	s->cfi_dirfd = -1;
	if (!s->opts.hz)
		s->opts.hz = 99;
	if (s->opts.stack_map_size && (s->opts.stack_map_size < SAMPLER_STACK_MAP_MIN ||
				       SAMPLER_STACK_MAP_MAX < s->opts.stack_map_size)) {
		snprintf(err, errlen, "the stack map size must be %u to %u stacks",
			 SAMPLER_STACK_MAP_MIN, SAMPLER_STACK_MAP_MAX);
		goto err_free;
	}
	if (preflight_check(s->opts.on_cpu, err, errlen) < 0)
		goto err_free;
	preflight_libbpf_quiet();
	if (alloc_state(s) < 0) {
		snprintf(err, errlen, "out of memory");
		goto err_free;
	}
	if (load_programs(s, err, errlen) < 0)
		goto err_free;
	load_existing_procs(s);
	rc = sampler_bpf__attach(s->skel);
	if (rc) {
		snprintf(err, errlen, "cannot attach to the scheduler tracepoints (%s)", strerror(-rc));
		goto err_free;
	}
	/* Python processes already running get their frames too. */
	sampler_py_scan(s);
	if (s->opts.on_cpu && attach_on_cpu(s, err, errlen) < 0)
		goto err_free;
	/* Kernel symbols are read at the first kernel frame, after this
	 * point: our programs are in them then, so their frames are known
	 * (and dropped) rather than shown as bare addresses. */
	return s;

err_free:
	sampler_close(s);
	return NULL;
}

int sampler_poll(struct sampler *s, int timeout_ms)
{
	int rc;

	if (s->cfi)
		cfi_tables_collect(s->cfi);
	s->poll_until_ns = mono_ns() + POLL_SLICE_NS;
	rc = ring_reader_poll(s->rb, timeout_ms);
	s->poll_until_ns = 0;
	if (rc < 0 && rc != -EAGAIN)
		return rc;
	/* Most on-CPU copies do not wake us (they come in batches): take
	 * whatever is in the rings now. */
	return rc == -EAGAIN ? 0 : sampler_consume_for(s, POLL_SLICE_NS);
}

int sampler_consume_for(struct sampler *s, uint64_t slice_ns)
{
	size_t seen = s->ngone;
	int rc;

	s->poll_until_ns = slice_ns ? mono_ns() + slice_ns : 0;
	rc = ring_reader_consume(s->rb);
	s->poll_until_ns = 0;
	/* Not cut short by the slice (nor failed): the copy ring, taken
	 * after the event ring, was empty once. A process's copies all
	 * precede its exit event: those of every exit read before this
	 * consume are taken. (Not the exits read during it: the exit-maps
	 * ring, read after the copy ring, takes events too.) */
	if (rc >= 0)
		s->gone_covered = seen;
	return rc < 0 && rc != -EAGAIN ? rc : 0;
}

void sampler_set_exclude(struct sampler *s, const char (*comms)[16], size_t n)
{
	if (n > SAMPLER_MAX_EXCLUDE)
		n = SAMPLER_MAX_EXCLUDE;
	for (size_t i = 0; i < n; i++) {
		memcpy(s->exclude[i], comms[i], sizeof(s->exclude[i]));
		s->exclude[i][sizeof(s->exclude[i]) - 1] = '\0';
	}
	s->nexclude = n;
}

int sampler_poll_fd(const struct sampler *s)
{
	return ring_reader_epoll_fd(s->rb);
}

static void read_counters(const struct sampler *s, uint64_t out[HEARTH_CNT_MAX])
{
	int fd = bpf_map__fd(s->skel->maps.counters);
	uint64_t *vals = calloc((size_t)s->npossible, sizeof(*vals));

	memset(out, 0, sizeof(uint64_t) * HEARTH_CNT_MAX);
	if (!vals)
		return;
	for (uint32_t i = 0; i < HEARTH_CNT_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < s->npossible; c++)
			out[i] += vals[c];
	}
	free(vals);
}

static void read_prog_stats(const struct sampler *s, struct sampler_stats *st)
{
	struct bpf_program *progs[] = { s->skel->progs.on_cpu, s->skel->progs.off_cpu };
	uint64_t *ns[] = { &st->oncpu_run_ns, &st->offcpu_run_ns };
	uint64_t *cnt[] = { &st->oncpu_run_cnt, &st->offcpu_run_cnt };

	st->bpf_run_ns = 0;
	st->bpf_run_cnt = 0;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(progs[i]);

		*ns[i] = *cnt[i] = 0;
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		*ns[i] = info.run_time_ns;
		*cnt[i] = info.run_cnt;
		st->bpf_run_ns += info.run_time_ns;
		st->bpf_run_cnt += info.run_cnt;
	}
}

static void read_cfi_stats(const struct sampler *s, const uint64_t *c,
			   struct sampler_stats *st)
{
	struct cfi_tables_stats ct;

	/* A replay gives the stack a walk would: it counts as one. */
	st->cfi_walks = c[HEARTH_CNT_CFI_WALKS] + c[HEARTH_CNT_CFI_REPLAYED];
	st->cfi_no_table = c[HEARTH_CNT_CFI_NO_TABLE];
	st->cfi_no_rule = c[HEARTH_CNT_CFI_NO_RULE];
	st->cfi_collisions = c[HEARTH_CNT_CFI_COLLISION];
	st->waits_reused = c[HEARTH_CNT_WAIT_REUSED];
	st->cfi_replayed = c[HEARTH_CNT_CFI_REPLAYED];
	if (!s->cfi)
		return;
	cfi_tables_stats(s->cfi, &ct);
	st->cfi_processes = ct.processes;
	st->cfi_modules = ct.modules;
	st->cfi_rows = ct.rows;
	st->cfi_bytes = ct.bytes;
	st->cfi_pool_bytes = (uint64_t)s->cfi_pool_rows * sizeof(struct hearth_cfi_row) +
			     (uint64_t)bpf_map__max_entries(s->skel->maps.cfi_procs) *
				     sizeof(struct hearth_cfi_proc);
	st->cfi_evictions = ct.evictions;
}

void sampler_stats(const struct sampler *s, struct sampler_stats *st)
{
	uint64_t c[HEARTH_CNT_MAX];

	*st = s->stats;
	read_counters(s, c);
	st->samples = c[HEARTH_CNT_SAMPLES];
	st->idle_samples = c[HEARTH_CNT_IDLE];
	st->offcpu_events = c[HEARTH_CNT_OFFCPU];
	st->lost_collision = c[HEARTH_CNT_LOST_COLLISION];
	st->lost_stack_full = c[HEARTH_CNT_LOST_STACK_FULL];
	st->lost_no_room = c[HEARTH_CNT_DROP_MAP_FULL];
	st->lost_unkept = c[HEARTH_CNT_LOST_UNKEPT];
	st->copy_ring_full = c[HEARTH_CNT_COPY_RING_FULL];
	st->stack_map_size = bpf_map__max_entries(s->skel->maps.stacks0);
	st->drop_stack = st->lost_collision + st->lost_stack_full;
	st->drop_map_full = c[HEARTH_CNT_DROP_MAP_FULL] + c[HEARTH_CNT_DROP_START_FULL] +
			    c[HEARTH_CNT_DROP_CHILD] + s->edge_full;
	st->drop_events = c[HEARTH_CNT_DROP_EVENTS] + procmaps_lost(s->pm);
	st->processes = s->seen.len;
	st->stack_copies = c[HEARTH_CNT_STACK_COPIES];
	st->copy_fallbacks = c[HEARTH_CNT_COPY_FALLBACK];
	st->sig_hits = c[HEARTH_CNT_SIG_HITS];
	st->sample_ns = c[HEARTH_CNT_SAMPLE_NS];
	read_prog_stats(s, st);
	read_cfi_stats(s, c, st);
}

bool sampler_chosen_alive(const struct sampler *s)
{
	int fd = bpf_map__fd(s->skel->maps.pids);
	uint32_t key, next;
	void *prev = NULL;

	if (!s->opts.npids)
		return false;
	/* Chosen processes already gone at the start never left the map. */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (kill((pid_t)next, 0) == 0 || errno != ESRCH)
			return true;
		key = next;
		prev = &key;
	}
	return false;
}

void sampler_stop(struct sampler *s)
{
	/* The last drain takes everything, whatever the counter says. */
	s->drain.known[0] = s->drain.known[1] = false;
	for (int i = 0; i < s->ncpus; i++) {
		bpf_link__destroy(s->cpu_links[i]);
		close(s->cpu_fds[i]);
	}
	s->ncpus = 0;
	if (s->skel)
		sampler_bpf__detach(s->skel);
	s->stopped = true;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	sampler_edges_free(s->edges);
	ring_reader_free(s->rb);
	ring_reader_free(s->rb_procs);
	ring_reader_free(s->rb_events);
	procmaps_free(s->pm);
	sampler_bpf__destroy(s->skel);
	stack_builder_free(s->builder);
	sym_unwinder_free(s->unw);
	cfi_tables_free(s->cfi);
	if (s->cfi_dirfd >= 0)
		close(s->cfi_dirfd);
	sig_cache_free(s->sigs);
	sig_cache_free(s->sigs_old);
	prof_free(s->pend_on);
	prof_free(s->pend_off);
	sym_free(s->sym);
	pid_set_free(&s->seen);
	drain_state_free(&s->drain);
	free(s->gone);
	free(s);
}
