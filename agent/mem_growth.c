/* SPDX-License-Identifier: MIT */
/* Requests for more memory, from the system calls (mem_growth.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/mem_growth.h"
#include "agent/ring_reader.h"
#include "agent/preflight.h"
#include "agent/ring_poll.h"
#include "agent/stack_build.h"
#include "bpf/growth.h"
#include "bpf/growth.skel.h"
#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"

struct growth {
	struct growth_opts opts;
	struct growth_bpf *skel;
	struct ring_reader *rb;
	struct sym_ctx *sym;
	struct sym_unwinder *unw;
	struct stack_builder *builder;
	/* Requests since the last drain: how many, and bytes. */
	struct prof_profile *pend_req, *pend_bytes;
	pid_t *gone;       /* processes that exec'd or exited: forgotten
			    * after the next drain */
	size_t ngone, capgone;
	int pidfds[GROWTH_MAX_PIDS];
	uint64_t unwound, lost;
	uint64_t until;    /* the poll's deadline (ring_poll.h) */
	bool stopped;
	int rc;            /* the first error a request met */
};

/* The user stack of @e, leaf first, into @out: the DWARF unwind of its
 * copy, spliced with the frame-pointer walk where the unwind stopped;
 * the walk alone without a copy. Returns its length. */
static size_t stack_of(struct growth *g, const struct hearth_grow_event *e, size_t len,
		       uint64_t *out, size_t max)
{
	const struct hearth_grow_copy *copy = (const void *)e;
	uint64_t pcs[HEARTH_GROW_DEPTH];
	size_t nfp = e->nfp < HEARTH_GROW_DEPTH ? e->nfp : HEARTH_GROW_DEPTH;
	struct sym_stack_copy c = {
		.regs = { e->ip, e->sp, e->bp }, .data = copy->data,
		.size = len < sizeof(*copy) ? 0 : e->size < HEARTH_GROW_STACK ? e->size
									: HEARTH_GROW_STACK,
	};
	int complete = 0, n = 0;

	/* Rules shared by module first: sym_unwind()'s libdw session per
	 * process opened every module of each new process again (libc's
	 * debug file inflated whole), a fifth of hearthd's CPU under an
	 * exec storm. What they cannot say goes to the session. */
	if (c.size)
		n = sym_unwind_shared(g->sym, (pid_t)e->tgid, &c, pcs, HEARTH_GROW_DEPTH,
				      &complete);
	if (c.size && n < 0)
		n = sym_unwind(g->unw, (pid_t)e->tgid, (pid_t)e->tid, &c, pcs, HEARTH_GROW_DEPTH,
			       &complete);
	if (n > 0 && complete) {
		g->unwound++;
		memcpy(out, pcs, (size_t)n * sizeof(*pcs));
		return (size_t)n;
	}
	if (n > 0)
		return sym_unwind_splice(pcs, (size_t)n, (const uint64_t *)e->fp_ips, nfp, out,
					 max);
	memcpy(out, e->fp_ips, nfp * sizeof(*out));
	return nfp;
}

static int on_request(void *ctx, void *data, size_t len)
{
	struct growth *g = ctx;
	const struct hearth_grow_event *e = data;
	uint64_t ips[HEARTH_GROW_DEPTH];
	char comm[HEARTH_GROW_COMM + 1], tcomm[HEARTH_GROW_COMM + 1];
	struct stack_input in = { .comm = comm, .tcomm = tcomm, .uips = ips,
				  .per_thread = g->opts.per_thread,
				  .pid_row = g->opts.pid_rows };
	int rc;

	if (len < sizeof(*e))
		return 0;
	memcpy(comm, e->comm, HEARTH_GROW_COMM);
	memcpy(tcomm, e->tcomm, HEARTH_GROW_COMM);
	comm[HEARTH_GROW_COMM] = tcomm[HEARTH_GROW_COMM] = '\0';
	if (g->opts.skip && g->opts.skip(g->opts.skip_arg, comm))
		return ring_poll_past(g->until);
	in.tgid = e->tgid;
	in.tid = e->tid;
	in.nu = stack_of(g, e, len, ips, HEARTH_GROW_DEPTH);
	rc = stack_builder_add_memo(g->builder, g->sym, g->pend_req, &in, 1);
	if (!rc)
		rc = stack_builder_add_memo(g->builder, g->sym, g->pend_bytes, &in, e->bytes);
	if (rc < 0) {
		g->lost++;
		if (!g->rc)
			g->rc = rc;
	}
	return ring_poll_past(g->until);
}

static int on_proc(void *ctx, void *data, size_t len)
{
	struct growth *g = ctx;
	const struct hearth_grow_proc *e = data;

	if (len < sizeof(*e))
		return 0;
	if (g->ngone == g->capgone) {
		size_t cap = g->capgone ? g->capgone * 2 : 64;
		pid_t *p = realloc(g->gone, cap * sizeof(*p));

		if (!p)
			return 0; /* its cache stays: memory, not a loss */
		g->gone = p;
		g->capgone = cap;
	}
	g->gone[g->ngone++] = (pid_t)e->pid;
	return 0;
}

/* Opens, tunes, loads and attaches. Returns 0, or -1 with a sentence. */
static int load(struct growth *g, char *err, size_t errlen)
{
	struct growth_bpf *k;
	uint8_t one = 1;
	int rc;

	g->skel = k = growth_bpf__open();
	if (!k) {
		snprintf(err, errlen, "cannot open the BPF programs (%s)", strerror(errno));
		return -1;
	}
	k->rodata->filter_pid = g->opts.npids > 0;
	k->rodata->exclude_tgid = (uint32_t)g->opts.exclude_tgid;
	k->rodata->copies_per_sec = g->opts.copies_per_sec;
	/* Every process's requests come in bursts (a build starting). A
	 * request is about 1.1 KiB, 9.3 KiB with its stack copy (at most
	 * copies_per_sec a CPU), taken every 100 ms: 4 MiB per CPU holds
	 * some 3,600 requests each, 8 to 64 MiB. (At 2 MiB a busy host
	 * lost 2.5 times the requests while hearthd fell behind.) */
	if (!g->opts.npids)
		bpf_map__set_max_entries(k->maps.events,
					 ring_poll_bytes(libbpf_num_possible_cpus(), 4u << 20,
							 8u << 20, 64u << 20));
	rc = growth_bpf__load(k);
	if (rc) {
		snprintf(err, errlen,
			 "the kernel refused hearth's memory system call programs (%s); HEARTH_DEBUG_BPF=1 shows the verifier's log",
			 strerror(-rc));
		return -1;
	}
	for (size_t i = 0; i < g->opts.npids; i++) {
		uint32_t pid = (uint32_t)g->opts.pids[i];

		if (bpf_map_update_elem(bpf_map__fd(k->maps.pids), &pid, &one, BPF_ANY)) {
			snprintf(err, errlen, "cannot set the pid filter (%s)", strerror(errno));
			return -1;
		}
		g->pidfds[i] = (int)syscall(SYS_pidfd_open, g->opts.pids[i], 0);
		sym_proc_load(g->sym, g->opts.pids[i]);
	}
	g->rb = ring_reader_new(bpf_map__fd(k->maps.events), on_request, g);
	if (!g->rb || ring_reader_add(g->rb, bpf_map__fd(k->maps.procs), on_proc, g) < 0) {
		snprintf(err, errlen, "cannot open the request ring buffer (%s)", strerror(errno));
		return -1;
	}
	rc = growth_bpf__attach(k);
	if (rc) {
		snprintf(err, errlen, "cannot attach to the memory system calls (%s)", strerror(-rc));
		return -1;
	}
	return 0;
}

struct growth *growth_open(const struct growth_opts *opts, char *err, size_t errlen)
{
	struct growth *g = calloc(1, sizeof(*g));
	struct sym_options so = { .demangle = 1 };

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->opts = *opts;
	for (size_t i = 0; i < GROWTH_MAX_PIDS; i++)
		g->pidfds[i] = -1;
	if (opts->npids > GROWTH_MAX_PIDS) {
		snprintf(err, errlen, "at most %d processes can be chosen", GROWTH_MAX_PIDS);
		goto err;
	}
	if (!g->opts.copies_per_sec)
		g->opts.copies_per_sec = GROWTH_COPIES_PER_SEC;
	if (preflight_check(false, err, errlen) < 0)
		goto err;
	preflight_libbpf_quiet();
	so.debuginfod = opts->debuginfod;
	so.max_module_bytes = opts->symbol_cache;
	g->sym = sym_new(&so);
	g->unw = sym_unwinder_new();
	g->builder = stack_builder_new();
	g->pend_req = prof_new(PROF_UNIT_SAMPLES);
	g->pend_bytes = prof_new(PROF_UNIT_BYTES);
	if (!g->sym || !g->unw || !g->builder || !g->pend_req || !g->pend_bytes) {
		snprintf(err, errlen, "out of memory");
		goto err;
	}
	if (load(g, err, errlen) < 0)
		goto err;
	return g;
err:
	growth_close(g);
	return NULL;
}

int growth_poll(struct growth *g, int timeout_ms)
{
	int rc = ring_poll(g->rb, timeout_ms, &g->until);

	return rc < 0 ? rc : g->rc;
}

int growth_poll_fd(const struct growth *g)
{
	return ring_reader_epoll_fd(g->rb);
}

/* Forgets what was cached for the processes that exec'd or exited. */
static void forget_gone(struct growth *g)
{
	for (size_t i = 0; i < g->ngone; i++) {
		sym_proc_forget(g->sym, g->gone[i]);
		sym_unwind_forget(g->unw, g->gone[i]);
		stack_builder_forget_tgid(g->builder, (uint32_t)g->gone[i]);
	}
	g->ngone = 0;
}

int growth_drain(struct growth *g, struct prof_profile *requests, struct prof_profile *bytes)
{
	struct prof_profile *r = prof_new(PROF_UNIT_SAMPLES), *b = prof_new(PROF_UNIT_BYTES);
	int rc = 0;

	if (!r || !b) {
		prof_free(r);
		prof_free(b);
		return -ENOMEM;
	}
	if (requests)
		rc = prof_merge(requests, g->pend_req);
	if (!rc && bytes)
		rc = prof_merge(bytes, g->pend_bytes);
	/* The builder lets go of the pending profiles before they go. */
	stack_builder_next_epoch(g->builder);
	sym_window_begin(g->sym);
	prof_free(g->pend_req);
	prof_free(g->pend_bytes);
	g->pend_req = r;
	g->pend_bytes = b;
	forget_gone(g);
	return rc;
}

void growth_stop(struct growth *g)
{
	if (!g || g->stopped || !g->skel)
		return;
	growth_bpf__detach(g->skel);
	g->stopped = true;
	/* (nothing adds to it now: all of it, whatever the deadline) */
	g->until = UINT64_MAX;
	if (g->rb)
		ring_reader_consume(g->rb);
}

bool growth_alive(const struct growth *g)
{
	for (size_t i = 0; i < g->opts.npids; i++) {
		if (g->pidfds[i] >= 0 ? syscall(SYS_pidfd_send_signal, g->pidfds[i], 0, NULL, 0) == 0
				      : kill(g->opts.pids[i], 0) == 0)
			return true;
	}
	return false;
}

void growth_stats(const struct growth *g, struct growth_stats *st)
{
	uint64_t c[HEARTH_GROW_CNT_MAX];

	memset(st, 0, sizeof(*st));
	st->unwound = g->unwound;
	st->lost = g->lost;
	preflight_percpu_sum(bpf_map__fd(g->skel->maps.counters), HEARTH_GROW_CNT_MAX, c);
	st->brk = c[HEARTH_GROW_CNT_BRK];
	st->mmap = c[HEARTH_GROW_CNT_MMAP];
	st->mremap = c[HEARTH_GROW_CNT_MREMAP];
	st->bytes = c[HEARTH_GROW_CNT_BYTES];
	st->no_copy = c[HEARTH_GROW_CNT_NO_COPY];
	st->drop_events = c[HEARTH_GROW_CNT_DROP_EVENTS];
	st->requests = st->brk + st->mmap + st->mremap;
}

void growth_close(struct growth *g)
{
	if (!g)
		return;
	growth_stop(g);
	for (size_t i = 0; i < GROWTH_MAX_PIDS; i++)
		if (g->pidfds[i] >= 0)
			close(g->pidfds[i]);
	ring_reader_free(g->rb);
	growth_bpf__destroy(g->skel);
	stack_builder_free(g->builder);
	sym_unwinder_free(g->unw);
	sym_free(g->sym);
	prof_free(g->pend_req);
	prof_free(g->pend_bytes);
	free(g->gone);
	free(g);
}
