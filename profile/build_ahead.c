/* SPDX-License-Identifier: MIT */
/*
 * Faulting in the node array ahead of prof_build() (build.c).
 *
 * On big loads most of making nodes is the kernel handing out fresh pages
 * for them. A helper thread asks for the pages (MADV_POPULATE_WRITE) ahead
 * of the builder, on the other core: during the sort it starts on the
 * first ones, then it keeps at most AHEAD nodes ahead of the count the
 * builder publishes. It never writes the array itself; the pages it
 * faulted in past the last node are given back when the build ends.
 * Builders on both cores ask for their own pages (build_populate()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "profile_impl.h"
#include "sort_impl.h"

#define AHEAD ((size_t)1 << 22)   /* nodes: 128 MiB of them */
#define STEP ((size_t)1 << 16)    /* nodes per request */
#define HELP_MIN ((size_t)1 << 17) /* smaller loads go without */

#ifdef MADV_POPULATE_WRITE
static int populate(char *base, size_t size, size_t lo, size_t hi)
{
	uintptr_t page = 4096, a = (uintptr_t)(base + lo * size) & ~(page - 1);
	uintptr_t b = (uintptr_t)(base + hi * size);

	return madvise((void *)a, b - a, MADV_POPULATE_WRITE);
}

int build_populate(struct prof_profile *p, size_t lo, size_t hi)
{
	if (hi <= lo)
		return 0;
	return populate((char *)p->nodes, sizeof(struct prof_node), lo, hi) < 0
		       ? -errno
		       : 0;
}

static void *populate_ahead(void *arg)
{
	struct build_ahead *h = arg;
	size_t at = h->from;
	/* The builder makes about 40 nodes a microsecond: a millisecond's nap
	 * costs little of the AHEAD nodes' lead, and few wake-ups. */
	const struct timespec nap = { 0, 1000000 };

	while (at < h->cap && !atomic_load_explicit(&h->done, memory_order_relaxed)) {
		size_t made = atomic_load_explicit(&h->made, memory_order_relaxed);
		size_t to = at + STEP < h->cap ? at + STEP : h->cap;
		size_t lead = atomic_load_explicit(&h->first_done, memory_order_relaxed)
				      ? AHEAD : h->lead_first;

		if (made + lead < to) {
			nanosleep(&nap, NULL);
			continue;
		}
		if (populate(h->nodes, sizeof(struct prof_node), at, to) < 0)
			break;
		at = to;
		atomic_store_explicit(&h->at, at, memory_order_relaxed);
	}
	return NULL;
}

/* Gives back the whole pages of @base's entries [@lo, @hi) (of @size
 * bytes each), which hold no data. */
static void release(char *base, size_t size, size_t lo, size_t hi)
{
	uintptr_t page = 4096;
	uintptr_t a = ((uintptr_t)(base + lo * size) + page - 1) & ~(page - 1);
	uintptr_t b = (uintptr_t)(base + hi * size) & ~(page - 1);

	if (a < b)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

size_t build_ahead_stop(struct build_ahead *h, struct prof_profile *p)
{
	size_t at;

	if (!h->running)
		return 0;
	atomic_store(&h->done, 1);
	pthread_join(h->th, NULL);
	h->running = 0;
	at = atomic_load(&h->at);
	if (p->nodes_faulted < at)
		p->nodes_faulted = (uint32_t)at;
	return at;
}

void prof_nodes_release_unused(struct prof_profile *p)
{
	if (p->nnodes < p->nodes_faulted && p->nodes_faulted <= p->node_cap)
		release((char *)p->nodes, sizeof(struct prof_node), p->nnodes,
			p->nodes_faulted);
	p->nodes_faulted = 0;
}

int build_ahead_start(struct build_ahead *h, struct prof_profile *p,
		      size_t cap)
{
	h->running = 0;
	atomic_init(&h->first_done, 0);
	if (cap < HELP_MIN)
		return 0;
	h->nodes = (char *)p->nodes;
	/* Pages faulted in already (by the parser's helper) are skipped. */
	h->from = p->nnodes < p->nodes_faulted ? p->nodes_faulted : p->nnodes;
	if (cap <= h->from)
		return 0;
	h->cap = cap;
	/* During the sort's first step the other core is free: the helper
	 * goes on up to half the most nodes there can be. */
	h->lead_first = (cap - p->nnodes) / 2 < AHEAD ? AHEAD : (cap - p->nnodes) / 2;
	atomic_init(&h->at, h->from);
	atomic_init(&h->made, p->nnodes);
	atomic_init(&h->done, 0);
	h->running = pthread_create(&h->th, NULL, populate_ahead, h) == 0;
	return h->running;
}
#else
int build_populate(struct prof_profile *p, size_t lo, size_t hi)
{
	(void)p;
	(void)lo;
	(void)hi;
	return -ENOSYS;
}

int build_ahead_start(struct build_ahead *h, struct prof_profile *p,
		      size_t cap)
{
	(void)p;
	(void)cap;
	h->running = 0;
	atomic_init(&h->first_done, 0);
	return 0;
}

size_t build_ahead_stop(struct build_ahead *h, struct prof_profile *p)
{
	(void)h;
	(void)p;
	return 0;
}

void prof_nodes_release_unused(struct prof_profile *p)
{
	p->nodes_faulted = 0;
}
#endif
