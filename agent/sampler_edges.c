/* SPDX-License-Identifier: MIT */
/*
 * Waits at a capture's edges. The sampler counts a wait when it ends,
 * from where it began, and sees where it began only if that was after
 * the start: a wait begun before the start is lost, and one still going
 * at the end is never counted. Both can be a large part of a short
 * capture, and a thread asleep through the whole capture (a hung one)
 * is not seen at all.
 *
 * At the start, a task iterator's pass gives each chosen thread off its
 * CPU a start in offcpu_start as of now, and notes it with its stacks,
 * of kind HEARTH_OFF_CPU_EDGE, unless the sampler already holds one: the
 * sampler then counts its wait from now when it ends, and the drain
 * gives it the stacks noted here. At the end, once the sampler is
 * stopped, a second pass adds every wait still open in offcpu_start up
 * to the stop, with the stacks the thread has then; a start still of
 * kind HEARTH_OFF_CPU_EDGE means the thread never ran in between: it
 * was blocked the whole snapshot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/sampler_impl.h"
#include "agent/thread_iter.h"
#include "bpf/sampler.h"
#include "bpf/sampler.skel.h"

#define BLOCKED_MARK "(blocked the whole snapshot)"

/* A thread off its CPU at the start, with its stacks. */
struct edge_thread {
	uint32_t tgid, tid;
	bool involuntary; /* runnable: waiting for a CPU */
	char comm[HEARTH_THREAD_COMM], tcomm[HEARTH_THREAD_COMM];
	uint32_t nk, nu;
	uint64_t kips[HEARTH_THREAD_DEPTH];
	uint64_t uips[HEARTH_THREAD_DEPTH];
};

struct sampler_edges {
	struct thread_iter *it;
	struct edge_thread *t; /* sorted by tid */
	size_t n, cap;
	uint64_t t0, t1;
	struct prof_profile *out; /* the end's pass: where its waits go */
	struct sampler *s;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void sampler_edges_free(struct sampler_edges *e)
{
	if (!e)
		return;
	thread_iter_close(e->it);
	free(e->t);
	free(e);
}

/* @r's stacks into @t: the kernel's as the iterator read them, the
 * user's unwound from the copy (and the copy dropped). */
static void take_stacks(struct sampler *s, const struct hearth_thread *r, const uint8_t *stack,
			struct edge_thread *t)
{
	struct sym_stack_copy copy = {
		.regs = { r->ip, r->sp, r->bp }, .data = stack, .size = r->size,
	};
	int complete = 0, n = 0;

	t->tgid = r->tgid;
	t->tid = r->tid;
	t->involuntary = r->state == HEARTH_THREAD_RUNNABLE;
	memcpy(t->comm, r->comm, sizeof(t->comm));
	memcpy(t->tcomm, r->tcomm, sizeof(t->tcomm));
	t->comm[sizeof(t->comm) - 1] = t->tcomm[sizeof(t->tcomm) - 1] = '\0';
	t->nk = r->nk < HEARTH_THREAD_DEPTH ? r->nk : HEARTH_THREAD_DEPTH;
	memcpy(t->kips, r->kips, t->nk * sizeof(*t->kips));
	if (r->size)
		n = sym_unwind(s->unw, (pid_t)r->tgid, (pid_t)r->tid, &copy, t->uips,
			       HEARTH_THREAD_DEPTH, &complete);
	t->nu = n > 0 ? (uint32_t)n : 0;
}

/* The start's pass: each thread off its CPU that the iterator gave a
 * start as of e->t0 (the sampler did not see it go off its CPU) is
 * noted with its stacks. */
static int note_start(const struct hearth_thread *r, const uint8_t *stack, void *arg)
{
	struct sampler_edges *e = arg;
	struct sampler *s = e->s;

	if (r->noted == HEARTH_THREAD_NOTE_FULL) {
		/* offcpu_start is full: its wait is lost, and counted. */
		s->edge_full++;
		return 0;
	}
	if (r->noted != HEARTH_THREAD_NOTED)
		return 0;
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;
		struct edge_thread *t = realloc(e->t, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		e->t = t;
		e->cap = cap;
	}
	take_stacks(s, r, stack, &e->t[e->n++]);
	return 0;
}

static int cmp_tid(const void *a, const void *b)
{
	uint32_t x = ((const struct edge_thread *)a)->tid, y = ((const struct edge_thread *)b)->tid;

	return (x > y) - (x < y);
}

static struct edge_thread *find(const struct sampler_edges *e, uint32_t tid)
{
	struct edge_thread key = { .tid = tid };

	return e->n ? bsearch(&key, e->t, e->n, sizeof(*e->t), cmp_tid) : NULL;
}

int sampler_edges_begin(struct sampler *s, uint64_t *t0_ns, char *err, size_t errlen)
{
	struct thread_iter_opts o = {
		.pids_fd = s->opts.npids ? bpf_map__fd(s->skel->maps.pids) : -1,
		.comm = s->opts.comm,
		.exclude_tgid = s->opts.exclude_tgid,
		.stack_bytes = s->opts.stack_bytes,
		.offcpu_start_fd = bpf_map__fd(s->skel->maps.offcpu_start),
	};
	struct sampler_edges *e = calloc(1, sizeof(*e));
	int rc;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!s->opts.off_cpu) {
		free(e);
		snprintf(err, errlen, "the waits at a capture's edges need off-CPU sampling");
		return -EINVAL;
	}
	e->s = s;
	e->it = thread_iter_open(&o, err, errlen);
	if (!e->it) {
		free(e);
		return -EPERM;
	}
	e->t0 = mono_ns();
	/* The sampler has run since it was attached: a wait begun before
	 * t0 counts from t0, a sample taken before it not at all. */
	__atomic_store_n(&s->skel->bss->capture_from, e->t0, __ATOMIC_SEQ_CST);
	thread_iter_note_edges(e->it, e->t0, s->skel->bss->active);
	rc = thread_iter_run(e->it, note_start, e);
	s->stats.edge_pass_ns += mono_ns() - e->t0;
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the threads (%s)", strerror(-rc));
		sampler_edges_free(e);
		return rc;
	}
	if (e->n)
		qsort(e->t, e->n, sizeof(*e->t), cmp_tid);
	s->edges = e;
	*t0_ns = e->t0;
	return 0;
}

/* Adds @ns of thread @t's wait to @p, as the sampler's stacks are built
 * (the process row without its pid unless @pid_row). */
static int add_wait(struct sampler *s, struct prof_profile *p, const struct edge_thread *t,
		    const char *comm, const char *tcomm, uint64_t ns, const char *mark,
		    const struct stack_waker *waker, bool pid_row)
{
	struct stack_input in = {
		.tgid = t->tgid, .tid = t->tid, .comm = comm, .tcomm = tcomm,
		.uips = t->uips, .nu = t->nu, .kips = t->kips, .nk = s->opts.kernel_stacks ? t->nk : 0,
		.off_cpu = true, .involuntary = t->involuntary,
		.per_thread = s->opts.per_thread, .pid_row = pid_row, .mark = mark,
		.waker = waker,
	};

	if (s->nexclude && sampler_excluded(s, comm))
		return 0;
	return stack_builder_add(s->builder, s->sym, p, &in, ns);
}

int sampler_edge_add(struct sampler *s, struct prof_profile *p, uint32_t tgid,
		     uint32_t tid, const struct hearth_value *val,
		     const struct stack_waker *waker)
{
	const struct edge_thread *t = s->edges ? find(s->edges, tid) : NULL;
	struct edge_thread none = { .tgid = tgid, .tid = tid };

	/* Not noted (it cannot be: only the start's pass makes such a
	 * start): its time still counts, under its thread. */
	return add_wait(s, p, t ? t : &none, val->comm, val->tcomm, val->ns, NULL, waker,
			s->opts.pid_rows);
}

void sampler_edges_close(struct sampler *s, uint64_t t1_ns)
{
	if (s->edges)
		__atomic_store_n(&s->skel->bss->capture_until, t1_ns, __ATOMIC_SEQ_CST);
}

/* The end's pass: each wait still open, up to the stop. */
static int note_end(const struct hearth_thread *r, const uint8_t *stack, void *arg)
{
	struct sampler_edges *e = arg;
	struct sampler *s = e->s;
	struct hearth_offcpu_start st;
	struct edge_thread now, *then;
	uint32_t tid = r->tid;
	bool whole;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.offcpu_start), &tid, &st) ||
	    !(st.ts < e->t1))
		return 0;
	whole = st.kind == HEARTH_OFF_CPU_EDGE;
	then = whole ? find(e, tid) : NULL;
	take_stacks(s, r, stack, &now);
	/* A thread asleep since the start has the stacks noted then (the
	 * pass did not read them again), as has one that ran since the
	 * stop (it has none now). */
	if ((r->unmoved || r->state == HEARTH_THREAD_RUNNING) && then)
		now = *then;
	now.involuntary = st.kind == HEARTH_OFF_CPU_INVOLUNTARY || (then && then->involuntary);
	if (whole)
		s->stats.blocked_whole++;
	s->stats.offcpu_ns += e->t1 - st.ts;
	pid_set_add(&s->seen, r->tgid);
	return add_wait(s, e->out, &now, r->comm, r->tcomm, e->t1 - st.ts,
			whole ? BLOCKED_MARK : NULL, NULL, s->opts.pid_rows);
}

int sampler_edges_end(struct sampler *s, struct prof_profile *offcpu, uint64_t t1_ns)
{
	struct sampler_edges *e = s->edges;
	uint64_t t0 = mono_ns();
	int rc;

	if (!e)
		return -EINVAL;
	e->t1 = t1_ns;
	e->out = offcpu;
	thread_iter_skip_unmoved(e->it);
	rc = thread_iter_run(e->it, note_end, e);
	e->out = NULL;
	s->stats.edge_pass_ns += mono_ns() - t0;
	return rc < 0 ? rc : 0;
}

/* A pass of sampler_open_waits(). */
struct open_pass {
	struct sampler *s;
	const struct sampler_open_req *q;
	struct prof_profile *out;
	uint64_t whole; /* threads asleep the whole span */
};

/* One chosen thread: its wait still going, when it began in the span or
 * before. */
static int note_open(const struct hearth_thread *r, const uint8_t *stack, void *arg)
{
	struct open_pass *o = arg;
	struct hearth_offcpu_start st;
	struct edge_thread now;
	uint32_t tid = r->tid;
	bool seen, whole;

	if (r->state == HEARTH_THREAD_RUNNING || (o->q->comm && strcmp(r->comm, o->q->comm)))
		return 0;
	seen = !bpf_map_lookup_elem(bpf_map__fd(o->s->skel->maps.offcpu_start), &tid, &st);
	/* Not seen going off its CPU: asleep since before the sampler began
	 * (a thread new and not run yet is runnable: not a wait). */
	if (seen ? !(st.ts < o->q->to_ns) : r->state != HEARTH_THREAD_BLOCKED)
		return 0;
	whole = !seen || !(o->q->from_ns < st.ts);
	take_stacks(o->s, r, stack, &now);
	now.involuntary = seen ? st.kind == HEARTH_OFF_CPU_INVOLUNTARY
			       : r->state == HEARTH_THREAD_RUNNABLE;
	o->whole += whole;
	return add_wait(o->s, o->out, &now, r->comm, r->tcomm,
			o->q->to_ns - (whole ? o->q->from_ns : st.ts),
			whole ? BLOCKED_MARK : NULL, NULL, false);
}

/* A pid filter map for the thread iterator holding @q's pids, or -1 (and
 * *@rc set when that failed) when there are none. */
static int open_pids(const struct sampler_open_req *q, int *rc)
{
	uint8_t one = 1;
	int fd;

	*rc = 0;
	if (!q->npids)
		return -1;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "pids", sizeof(uint32_t), sizeof(one),
			    SAMPLER_MAX_PIDS, NULL);
	if (fd < 0) {
		*rc = -errno;
		return -1;
	}
	for (size_t i = 0; i < q->npids && i < SAMPLER_MAX_PIDS; i++)
		if (bpf_map_update_elem(fd, &q->pids[i], &one, BPF_ANY)) {
			*rc = -errno;
			close(fd);
			return -1;
		}
	return fd;
}

int sampler_open_waits(struct sampler *s, struct prof_profile *offcpu,
		       const struct sampler_open_req *q, uint64_t *whole, char *err,
		       size_t errlen)
{
	struct open_pass o = { .s = s, .q = q, .out = offcpu };
	struct thread_iter_opts io = {
		.comm = q->comm, .exclude_tgid = s->opts.exclude_tgid,
		.stack_bytes = s->opts.stack_bytes, .offcpu_start_fd = -1,
	};
	struct thread_iter *it;
	int rc;

	*whole = 0;
	if (!s->opts.off_cpu || !(q->from_ns < q->to_ns)) {
		snprintf(err, errlen, "the waits still going need off-CPU sampling and a span");
		return -EINVAL;
	}
	io.pids_fd = open_pids(q, &rc);
	if (rc) {
		snprintf(err, errlen, "cannot make the thread iterator's pid filter (%s)",
			 strerror(-rc));
		return rc;
	}
	it = thread_iter_open(&io, err, errlen);
	if (io.pids_fd >= 0)
		close(io.pids_fd); /* the iterator holds its own reference */
	if (!it)
		return -EPERM;
	rc = thread_iter_run(it, note_open, &o);
	thread_iter_close(it);
	if (rc < 0)
		snprintf(err, errlen, "cannot read the threads (%s)", strerror(-rc));
	*whole = o.whole;
	return rc < 0 ? rc : 0;
}
