/* SPDX-License-Identifier: MIT */
/* Derived profiles: only your code, threads merged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render/filter.h"

struct ctx {
	const struct prof_profile *src;
	unsigned flags;
	struct rd_filtered *out;
	uint32_t *map;  /* src frame -> dst frame, UINT32_MAX = not yet */
	uint32_t *path; /* kept frames of the current stack */
	size_t cap;
	int err;
};

void rd_filtered_free(struct rd_filtered *f)
{
	prof_free(f->p);
	free(f->hidden);
	memset(f, 0, sizeof(*f));
}

unsigned rd_filter_available(const struct prof_profile *p)
{
	unsigned r = 0;

	for (uint32_t id = 1; id < prof_frame_count(p); id++) {
		const struct prof_frame *f = prof_frame_get(p, id);

		if (f->cls == PROF_CLASS_YOURS)
			r |= 1;
		if (f->kind == PROF_KIND_THREAD)
			r |= 2;
	}
	return r;
}

static int keep(const struct ctx *c, const struct prof_frame *f)
{
	if (f->kind == PROF_KIND_THREAD)
		return !(c->flags & RD_FILTER_THREADS);
	if (f->kind == PROF_KIND_PROCESS)
		return 1;
	return !(c->flags & RD_FILTER_YOURS) || f->cls == PROF_CLASS_YOURS;
}

/* The frame @id of src, interned in the derived profile. */
static uint32_t copy_frame(struct ctx *c, uint32_t id)
{
	const struct prof_frame *f = prof_frame_get(c->src, id);
	struct prof_frame g = *f;

	if (c->map[id] != UINT32_MAX)
		return c->map[id];
	g.name = prof_intern_cstr(c->out->p, prof_str(c->src, f->name));
	g.module = prof_intern_cstr(c->out->p, prof_str(c->src, f->module));
	g.file = prof_intern_cstr(c->out->p, prof_str(c->src, f->file));
	if (g.name == UINT32_MAX || g.module == UINT32_MAX || g.file == UINT32_MAX)
		return UINT32_MAX;
	return c->map[id] = prof_frame_intern(c->out->p, &g);
}

static int hide(struct ctx *c, uint32_t node, uint64_t value)
{
	struct rd_filtered *o = c->out;

	if (node >= o->nhidden) {
		uint32_t n = o->nhidden ? o->nhidden : 1024;
		uint64_t *h;

		while (n <= node)
			n *= 2;
		h = realloc(o->hidden, n * sizeof(*h));
		if (!h)
			return -ENOMEM;
		memset(h + o->nhidden, 0, (n - o->nhidden) * sizeof(*h));
		o->hidden = h;
		o->nhidden = n;
	}
	o->hidden[node] += value;
	return 0;
}

static int add(const struct prof_profile *p, const uint32_t *frames,
	       size_t n, uint64_t value, void *arg)
{
	struct ctx *c = arg;
	size_t k = 0;
	uint32_t leaf;

	(void)p;
	if (n > c->cap) {
		uint32_t *v = realloc(c->path, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->path = v;
		c->cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		if (!keep(c, prof_frame_get(c->src, frames[i])))
			continue;
		if ((c->path[k++] = copy_frame(c, frames[i])) == UINT32_MAX)
			return -ENOMEM;
	}
	leaf = prof_add_stack(c->out->p, c->path, k, value);
	if (leaf == UINT32_MAX)
		return -ENOMEM;
	if (n && (k == 0 || !keep(c, prof_frame_get(c->src, frames[n - 1]))))
		return hide(c, leaf, value);
	return 0;
}

int rd_filter(const struct prof_profile *src, unsigned flags,
	      struct rd_filtered *out)
{
	struct ctx c = { .src = src, .flags = flags, .out = out };
	uint32_t nfr = prof_frame_count(src);
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->p = prof_new(prof_meta_const(src)->unit);
	c.map = malloc((nfr ? nfr : 1) * sizeof(*c.map));
	if (!out->p || !c.map)
		goto out;
	memset(c.map, 0xff, nfr * sizeof(*c.map));
	*prof_meta(out->p) = *prof_meta_const(src);
	rc = prof_walk_stacks(src, add, &c);
	if (rc == 0)
		rc = prof_sort(out->p);
out:
	free(c.map);
	free(c.path);
	if (rc < 0)
		rd_filtered_free(out);
	return rc < 0 ? rc : 0;
}
