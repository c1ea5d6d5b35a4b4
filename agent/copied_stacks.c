/* SPDX-License-Identifier: MIT */
/*
 * Samples that arrive with a copy of the user stack: unwound with DWARF
 * CFI, spliced with the frame-pointer walk when the copy was too short,
 * symbolized at once (the process may be gone by the next drain), and the
 * bytes dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/sampler_impl.h"
#include "agent/ring_reader.h"
#include "bpf/sampler.h"
#include "bpf/sampler.skel.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Unwinds @e into @out; returns the number of user frames. */
static size_t unwind_event(struct sampler *s, const struct hearth_stack_event *e,
			   uint64_t *out, size_t max)
{
	uint64_t pcs[HEARTH_STACK_DEPTH];
	struct sym_stack_copy copy = {
		.regs = { e->regs.ip, e->regs.sp, e->regs.bp },
		.data = e->data,
		.size = e->size < sizeof(e->data) ? e->size : sizeof(e->data),
	};
	size_t nf = e->nu < HEARTH_STACK_DEPTH ? e->nu : HEARTH_STACK_DEPTH;
	uint64_t t0 = mono_ns();
	int complete = 0;
	/* Rules shared by module first: a libdw session per process costs
	 * tens of MiB for a compiler's libraries. */
	int n = sym_unwind_shared(s->sym, (pid_t)e->tgid, &copy, pcs, HEARTH_STACK_DEPTH,
				  &complete);
	size_t len;

	if (n == -ESRCH && s->pm) {
		/* Gone while its copy waited: its mappings came at its exit. */
		ring_reader_consume(s->rb_procs);
		n = sym_unwind_shared(s->sym, (pid_t)e->tgid, &copy, pcs, HEARTH_STACK_DEPTH,
				      &complete);
	}

	if (n == -EAGAIN)
		n = sym_unwind(s->unw, (pid_t)e->tgid, (pid_t)e->pid, &copy, pcs,
			       HEARTH_STACK_DEPTH, &complete);

	s->stats.unwind_ns += mono_ns() - t0;
	if (complete)
		s->stats.unwind_complete++;
	/* The process could not be read: keep the FP walk. */
	if (n <= 0) {
		for (len = 0; len < nf && len < max; len++)
			out[len] = e->fp_ips[len];
		return len;
	}
	if (complete) {
		for (len = 0; len < (size_t)n && len < max; len++)
			out[len] = pcs[len];
		return len;
	}
	return sym_unwind_splice(pcs, (size_t)n, (const uint64_t *)e->fp_ips, nf, out, max);
}

/* Starts a new generation of remembered unwinds: the kernel forgets every
 * signature (so each is copied again), the current generation becomes the
 * old one. */
static void rotate_sigs(struct sampler *s)
{
	int fd = bpf_map__fd(s->skel->maps.sig_seen);
	struct hearth_sig next;
	struct sig_cache *old = s->sigs_old;

	while (bpf_map_get_next_key(fd, NULL, &next) == 0)
		bpf_map_delete_elem(fd, &next);
	s->sigs_old = s->sigs;
	s->sigs = old;
	sig_cache_clear(s->sigs);
}

const uint64_t *sampler_sig_unwind(const struct sampler *s,
				   const struct hearth_sig *sig, size_t *n)
{
	const uint64_t *pcs;

	if (!s->sigs)
		return NULL;
	pcs = sig_cache_get(s->sigs, sig, n);
	return pcs ? pcs : sig_cache_get(s->sigs_old, sig, n);
}

/* Remembers the unwind of an off-CPU wait for its signature; only then is
 * the kernel told it may stop copying that signature. (An unwind that
 * stopped early is remembered too: the same signature would stop at the
 * same place again.) */
static void remember(struct sampler *s, const struct hearth_sig *sig,
		     const uint64_t *pcs, size_t n)
{
	uint8_t one = 1;
	int rc;

	if (!sig->tgid || !s->sigs)
		return;
	rc = sig_cache_put(s->sigs, sig, pcs, n);
	if (rc == -ENOSPC) {
		rotate_sigs(s);
		rc = sig_cache_put(s->sigs, sig, pcs, n);
	}
	if (rc == 0)
		bpf_map_update_elem(bpf_map__fd(s->skel->maps.sig_seen), sig, &one, BPF_ANY);
}

int sampler_take_copy(struct sampler *s, const void *data, size_t len)
{
	const struct hearth_stack_event *e = data;
	uint64_t uips[HEARTH_STACK_DEPTH];
	bool off;
	struct stack_input in = { 0 };
	struct prof_profile *p;
	struct sampler_py_buf py;
	struct sampler_waker_buf waker;

	if (len < sizeof(*e))
		return 0;
	off = e->kind != HEARTH_ON_CPU;
	p = off ? s->pend_off : s->pend_on;
	if (!p)
		return 0;
	in.tgid = e->tgid;
	in.tid = e->pid;
	in.comm = e->comm;
	in.tcomm = e->tcomm;
	in.uips = uips;
	in.nu = unwind_event(s, e, uips, HEARTH_STACK_DEPTH);
	remember(s, &e->sig, uips, in.nu);
	if (off)
		s->stats.offcpu_ns += e->value;
	pid_set_add(&s->seen, e->tgid);
	if (s->nexclude && sampler_excluded(s, e->comm))
		return 0;
	sampler_py_input(s, e->py, e->tgid, &in, &py);
	in.kips = (const uint64_t *)e->kips;
	in.nk = e->nk < HEARTH_STACK_DEPTH ? e->nk : HEARTH_STACK_DEPTH;
	in.off_cpu = off;
	in.involuntary = e->kind == HEARTH_OFF_CPU_INVOLUNTARY;
	/* Its waker's stacks are still in their side's maps: the copy is
	 * taken before the drain that clears them. */
	if (off)
		in.waker = sampler_waker_input(s, &e->waker, e->tgid, e->comm, false, &waker);
	in.per_thread = s->opts.per_thread;
	in.pid_row = s->opts.pid_rows;
	/* A process samples the same few stacks again and again: each is
	 * symbolized once and remembered across drains. */
	return stack_builder_add_memo(s->builder, s->sym, p, &in, e->value) < 0 ? -ENOMEM : 0;
}

int sampler_take_pending(struct sampler *s, struct prof_profile *oncpu,
			 struct prof_profile *offcpu)
{
	struct prof_profile **pend[2] = { &s->pend_on, &s->pend_off };
	struct prof_profile *dst[2] = { oncpu, offcpu };

	for (int i = 0; i < 2; i++) {
		struct prof_profile *fresh;

		if (!*pend[i])
			continue;
		if (dst[i] && prof_merge(dst[i], *pend[i]) < 0)
			return -ENOMEM;
		fresh = prof_new(prof_meta(*pend[i])->unit);
		if (!fresh)
			return -ENOMEM;
		prof_free(*pend[i]);
		*pend[i] = fresh;
	}
	return 0;
}
