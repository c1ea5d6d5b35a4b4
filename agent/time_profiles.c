/* SPDX-License-Identifier: MIT */
/* The profiles of the questions of time (time_profiles.h). */
#include <errno.h>
#include <stdlib.h>

#include "agent/time_profiles.h"
#include "profile/waits.h"

static uint64_t to_ns(const struct prof_profile *src, const uint32_t *frames, size_t n,
		      uint64_t value, void *arg)
{
	(void)src;
	(void)frames;
	(void)n;
	return value * *(const uint64_t *)arg;
}

/* The wall profile of @on and @off into @dst. */
static int wall(struct prof_profile *dst, const struct prof_profile *on, uint32_t hz,
		const struct prof_profile *off)
{
	/* cpu-clock fires every 1e9/hz ns of a CPU's time, exactly: each
	 * sample stands for that long. */
	uint64_t period = 1000000000ULL / (hz ? hz : 99);
	int rc = prof_merge(dst, off);

	return rc ? rc : prof_merge_mapped(dst, on, to_ns, &period);
}

struct even {
	uint64_t *total; /* per frame of src: its thread rows' total */
	uint64_t width;
};

static uint64_t evened(const struct prof_profile *src, const uint32_t *frames, size_t n,
		       uint64_t value, void *arg)
{
	const struct even *e = arg;
	const struct prof_frame *f = n > 1 ? prof_frame_get(src, frames[1]) : NULL;
	uint64_t total = f && f->kind == PROF_KIND_THREAD ? e->total[frames[1]] : 0;

	if (!total)
		return value;
	return (uint64_t)(((unsigned __int128)value * e->width + total / 2) / total);
}

int time_profile_even_threads(struct prof_profile *dst, const struct prof_profile *src,
			      uint64_t width)
{
	const struct prof_node *nd = prof_nodes(src);
	struct even e = { .width = width };
	int rc;

	e.total = calloc(prof_frame_count(src), sizeof(*e.total));
	if (!e.total)
		return -ENOMEM;
	/* Thread rows sit right under a process row. */
	for (uint32_t i = 1; i < prof_node_count(src); i++) {
		const struct prof_frame *f = prof_frame_get(src, nd[i].frame);
		const struct prof_frame *up = prof_frame_get(src, nd[nd[i].parent].frame);

		if (f && f->kind == PROF_KIND_THREAD && nd[i].parent && up &&
		    up->kind == PROF_KIND_PROCESS)
			e.total[nd[i].frame] += nd[i].total;
	}
	rc = prof_merge_mapped(dst, src, evened, &e);
	free(e.total);
	return rc;
}

struct prof_profile *time_profile_new(unsigned question, const struct prof_profile *on,
				      uint32_t hz, const struct prof_profile *off,
				      uint64_t duration_ns, int *err)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS), *w = NULL;
	struct prof_meta *m;
	int rc = -EINVAL;

	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	if (question == PROF_Q_LOCKS) {
		rc = prof_keep_lock_waits(p, off);
	} else if (question == PROF_Q_WALL && on) {
		rc = wall(p, on, hz, off);
	} else if (question == PROF_Q_THREADS && on) {
		w = prof_new(PROF_UNIT_NANOSECONDS);
		rc = !w ? -ENOMEM : wall(w, on, hz, off);
		if (!rc)
			rc = time_profile_even_threads(p, w, duration_ns);
		prof_free(w);
	}
	if (rc) {
		prof_free(p);
		*err = rc;
		return NULL;
	}
	m = prof_meta(p);
	m->duration_ns = duration_ns;
	m->question = question;
	m->off_cpu = question == PROF_Q_LOCKS;
	m->drops = prof_meta_const(off)->drops + (on ? prof_meta_const(on)->drops : 0);
	m->start_ns = prof_meta_const(off)->start_ns;
	return p;
}
