/* SPDX-License-Identifier: MIT */
/*
 * Faulting in, on a helper thread, the fresh memory a big parse is about
 * to write: the queued stacks just ahead of the parser, then the node
 * array that prof_build() will fill. On this kind of machine the kernel's
 * page faults are a fifth of a load's CPU; asked for in long stretches
 * (MADV_POPULATE_WRITE) on the other core, they cost the parser nothing.
 * The helper never writes the arrays itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "folded_impl.h"
#include "profile_impl.h"

#define PAGE ((uintptr_t)4096)
#define OUT_AHEAD ((size_t)16 << 20) /* bytes of stacks ahead of the parser */
#define STEP ((size_t)2 << 20)       /* bytes per request */

#ifdef MADV_POPULATE_WRITE
/* Faults in the pages under @base[lo..hi) (bytes); 0 or -1. */
static int populate(char *base, size_t lo, size_t hi)
{
	uintptr_t a = (uintptr_t)(base + lo) & ~(PAGE - 1);
	uintptr_t b = (uintptr_t)(base + hi);

	return madvise((void *)a, b - a, MADV_POPULATE_WRITE);
}

/* One step of work: @done bytes of @base faulted in so far, up to @want
 * (at most @cap). Returns 1 when it did some, 0 when there was none, -1
 * when the kernel refused. */
static int step(char *base, size_t *done, size_t want, size_t cap)
{
	size_t to;

	if (cap < want)
		want = cap;
	if (want <= *done)
		return 0;
	to = *done + STEP < want ? *done + STEP : want;
	if (populate(base, *done, to) < 0)
		return -1;
	*done = to;
	return 1;
}

static void *ahead_run(void *arg)
{
	struct parse_ahead *a = arg;
	/* The parser fills a stretch of STEP bytes in about a millisecond. */
	const struct timespec nap = { 0, 1000000 };

	while (!atomic_load_explicit(&a->done, memory_order_relaxed)) {
		size_t used = atomic_load_explicit(&a->out_used, memory_order_relaxed);
		size_t nodes = atomic_load_explicit(&a->nodes_want, memory_order_relaxed);
		int r = step(a->out, &a->out_done, used + OUT_AHEAD, a->out_cap);

		if (r == 0)
			r = step(a->nodes, &a->nodes_done, nodes, a->nodes_cap);
		if (r < 0)
			break;
		if (r == 0)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

int folded_ahead_start(struct parse_ahead *a, void *out, size_t out_cap,
		       void *nodes, size_t nodes_cap)
{
	a->out = out;
	a->out_cap = out_cap;
	a->nodes = nodes;
	a->nodes_cap = nodes_cap;
	a->out_done = a->nodes_done = 0;
	atomic_init(&a->out_used, 0);
	atomic_init(&a->nodes_want, 0);
	atomic_init(&a->done, 0);
	a->running = pthread_create(&a->th, NULL, ahead_run, a) == 0;
	return a->running ? 0 : -EAGAIN;
}

void folded_ahead_stop(struct parse_ahead *a)
{
	if (!a->running)
		return;
	atomic_store(&a->done, 1);
	pthread_join(a->th, NULL);
	a->running = 0;
}
#else
int folded_ahead_start(struct parse_ahead *a, void *out, size_t out_cap,
		       void *nodes, size_t nodes_cap)
{
	(void)out;
	(void)out_cap;
	(void)nodes;
	(void)nodes_cap;
	a->running = 0;
	a->out_done = a->nodes_done = 0;
	return -ENOSYS;
}

void folded_ahead_stop(struct parse_ahead *a)
{
	(void)a;
}
#endif
