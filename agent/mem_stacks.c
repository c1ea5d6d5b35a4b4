/* SPDX-License-Identifier: MIT */
/* Sampled allocations kept by stack, weighed (mem_stacks.h). */
#include "agent/mem_stacks.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void mem_weight(uint64_t size, double mean, double *bytes, double *objects)
{
	double p;

	*bytes = *objects = 0;
	if (!size)
		return;
	p = mean > 0 ? -expm1(-(double)size / mean) : 1.0;
	if (p <= 0)
		p = 1.0;
	*bytes = (double)size / p;
	*objects = 1.0 / p;
}

double mem_intervals(uint64_t *out, size_t n, uint64_t mean)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		double q = ((double)i + 0.5) / (double)n;

		out[i] = (uint64_t)ceil(-(double)mean * log1p(-q));
		if (!out[i])
			out[i] = 1;
		sum += (double)out[i];
	}
	return n ? sum / (double)n : (double)mean;
}

void mem_stacks_init(struct mem_stacks *m, double mean, bool per_thread,
		     bool keep_samples)
{
	memset(m, 0, sizeof(*m));
	m->mean = mean;
	m->per_thread = per_thread;
	m->keep_samples = keep_samples;
}

static uint64_t stack_hash(uint32_t tgid, uint32_t tid, const uint64_t *ips, uint32_t n)
{
	uint64_t h = 14695981039346656037ULL ^ ((uint64_t)tgid << 32 | tid);

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ ips[i]) * 1099511628211ULL;
	return h ^ n;
}

static int grow(void **a, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*a, c * size);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = c;
	return 0;
}

/* Rebuilds the slots for twice the stacks. 0 or -ENOMEM. */
static int rehash(struct mem_stacks *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 256;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		size_t j = m->stacks[i].hash & (n - 1);

		m->stacks[i].next = s[j];
		s[j] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = s;
	m->nslots = n;
	return 0;
}

static bool same(const struct mem_stacks *m, const struct mem_stack *s, uint64_t h,
		 uint32_t tgid, uint32_t tid, const uint64_t *ips, uint32_t n)
{
	return s->hash == h && s->tgid == tgid && s->tid == tid && s->nu == n &&
	       !memcmp(m->ips + s->at, ips, n * sizeof(*ips));
}

/* The index of @e's stack, added when new; -ENOMEM. */
static long stack_of(struct mem_stacks *m, const struct hearth_mem_event *e)
{
	uint32_t n = e->nu < HEARTH_MEM_DEPTH ? e->nu : HEARTH_MEM_DEPTH;
	uint32_t tid = m->per_thread ? e->tid : 0;
	const uint64_t *ips = (const uint64_t *)e->ips;
	uint64_t h = stack_hash(e->tgid, tid, ips, n);
	struct mem_stack *s;

	if (m->nslots)
		for (uint32_t i = m->slots[h & (m->nslots - 1)]; i; i = m->stacks[i - 1].next)
			if (same(m, &m->stacks[i - 1], h, e->tgid, tid, ips, n))
				return i - 1;
	if (m->n >= UINT32_MAX - 1 || grow((void **)&m->stacks, &m->cap, m->n + 1, sizeof(*s)) ||
	    grow((void **)&m->ips, &m->capips, m->nips + n, sizeof(*m->ips)))
		return -ENOMEM;
	if (m->n + 1 > m->nslots / 2 && rehash(m) < 0)
		return -ENOMEM;
	s = &m->stacks[m->n];
	memset(s, 0, sizeof(*s));
	s->tgid = e->tgid;
	s->tid = tid;
	memcpy(s->comm, e->comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	memcpy(s->tcomm, e->tcomm, sizeof(s->tcomm));
	s->tcomm[sizeof(s->tcomm) - 1] = '\0';
	s->nu = n;
	s->at = m->nips;
	s->hash = h;
	memcpy(m->ips + m->nips, ips, n * sizeof(*ips));
	m->nips += n;
	s->next = m->slots[h & (m->nslots - 1)];
	m->slots[h & (m->nslots - 1)] = (uint32_t)m->n + 1;
	return (long)m->n++;
}

int mem_stacks_add(struct mem_stacks *m, const struct hearth_mem_event *e)
{
	long i = stack_of(m, e);
	double b, o;

	if (i < 0)
		return (int)i;
	mem_weight(e->size, m->mean, &b, &o);
	m->stacks[i].bytes += b;
	m->stacks[i].objects += o;
	if (!m->keep_samples)
		return 0;
	if (grow((void **)&m->samples, &m->capsamples, m->nsamples + 1, sizeof(*m->samples)))
		return -ENOMEM;
	m->samples[m->nsamples++] = (struct mem_sample){
		.seq = e->seq, .size = e->size, .stack = (uint32_t)i,
	};
	return 0;
}

int mem_stacks_take(struct mem_stacks *m, mem_stack_fn fn, void *arg)
{
	for (size_t i = 0; i < m->n; i++) {
		struct mem_stack *s = &m->stacks[i];
		double b = floor(s->bytes + 0.5), o = floor(s->objects + 0.5);
		int rc;

		if (b < 1)
			continue;
		rc = fn(arg, s, m->ips + s->at, (uint64_t)b, (uint64_t)o);
		if (rc)
			return rc;
		s->bytes -= b;
		s->objects -= o;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Whether @seq is in the sorted @live[0..n). */
static bool is_live(const uint64_t *live, size_t n, uint64_t seq)
{
	return n && bsearch(&seq, live, n, sizeof(*live), cmp_u64);
}

int mem_stacks_held(struct mem_stacks *m, const uint64_t *live, size_t n,
		    mem_stack_fn fn, void *arg)
{
	uint64_t *sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
	size_t kept = 0;
	int rc = 0;

	if (n && !sorted)
		return -ENOMEM;
	if (n)
		memcpy(sorted, live, n * sizeof(*sorted));
	if (n)
		qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (size_t i = 0; i < m->n; i++)
		m->stacks[i].held_bytes = m->stacks[i].held_objects = 0;
	for (size_t i = 0; i < m->nsamples; i++) {
		struct mem_sample *x = &m->samples[i];
		double b, o;

		if (!is_live(sorted, n, x->seq)) {
			if (x->passes++ == 0)
				m->samples[kept++] = *x;
			continue;
		}
		x->passes = 0;
		mem_weight(x->size, m->mean, &b, &o);
		m->stacks[x->stack].held_bytes += b;
		m->stacks[x->stack].held_objects += o;
		m->samples[kept++] = *x;
	}
	m->nsamples = kept;
	free(sorted);
	for (size_t i = 0; i < m->n && !rc; i++) {
		const struct mem_stack *s = &m->stacks[i];
		double b = floor(s->held_bytes + 0.5), o = floor(s->held_objects + 0.5);

		if (b >= 1)
			rc = fn(arg, s, m->ips + s->at, (uint64_t)b, (uint64_t)o);
	}
	return rc;
}

void mem_stacks_free(struct mem_stacks *m)
{
	free(m->stacks);
	free(m->slots);
	free(m->ips);
	free(m->samples);
	mem_stacks_init(m, m->mean, m->per_thread, m->keep_samples);
}
