/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks written the way flamegraph.pl reads them: one line per
 * stack with self > 0, frames joined by ';', the count after a space.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "folded_meta.h"
#include "profile_impl.h"

struct write_ctx {
	FILE *out;
	unsigned flags;
};

static int write_stack(const struct prof_profile *p, const uint32_t *frames,
		       size_t n, uint64_t value, void *arg)
{
	struct write_ctx *w = arg;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = prof_frame_get(p, frames[i]);

		if (i)
			fputc(';', w->out);
		fputs(prof_str(p, f->name), w->out);
		if (f->kind == PROF_KIND_KERNEL)
			fputs(KERNEL_SUFFIX, w->out);
		else if (f->kind == PROF_KIND_INLINE &&
			 (w->flags & PROF_FOLDED_ANNOTATE))
			fputs(INLINE_SUFFIX, w->out);
	}
	fprintf(w->out, " %llu\n", (unsigned long long)value);
	return ferror(w->out) ? -EIO : 0;
}

/* Folded text only shows a frame's name and its kernel (and, annotated,
 * inline) mark, so frames that differ in other fields (line, module) are
 * merged into one spelled frame before writing; otherwise equal lines
 * would repeat. */
struct spell_ctx {
	struct prof_profile *dst;
	uint32_t *map; /* source frame id -> spelled frame id, 0 = not yet */
	uint32_t *stack;
	size_t cap;
	unsigned flags;
};

/* Interns @name as folded text can carry it: ';' becomes ':', line ends
 * become spaces, an empty name "[unknown]". */
static uint32_t spelled_name(struct prof_profile *dst, const char *name)
{
	size_t len;
	char *copy;
	uint32_t id;

	/* A leading byte order mark would be skipped when read back. */
	while (strncmp(name, UTF8_BOM, 3) == 0)
		name += 3;
	len = strlen(name);
	if (len == 0)
		return prof_intern_cstr(dst, "[unknown]");
	if (strcspn(name, ";\n\r") == len)
		return prof_intern(dst, name, len);
	copy = strdup(name);
	if (!copy)
		return UINT32_MAX;
	for (char *q = copy; *q; q++) {
		if (*q == ';')
			*q = ':';
		else if (*q == '\n' || *q == '\r')
			*q = ' ';
	}
	id = prof_intern(dst, copy, len);
	free(copy);
	return id;
}

static uint32_t spelled_frame(struct spell_ctx *c, const struct prof_profile *p,
			      uint32_t id)
{
	const struct prof_frame *f = prof_frame_get(p, id);
	struct prof_frame s = { 0 };

	if (c->map[id])
		return c->map[id];
	s.name = spelled_name(c->dst, prof_str(p, f->name));
	if (s.name == UINT32_MAX)
		return UINT32_MAX;
	if (f->kind == PROF_KIND_KERNEL ||
	    (f->kind == PROF_KIND_INLINE && (c->flags & PROF_FOLDED_ANNOTATE)))
		s.kind = f->kind;
	/* A name that already ends in "_[k]" reads back as that kernel
	 * frame: make it one, so the two merge here as they will there. */
	if (s.kind != PROF_KIND_KERNEL) {
		const char *t = prof_str(c->dst, s.name);
		size_t len = strlen(t);

		if (prof_ends_with(t, len, KERNEL_SUFFIX)) {
			s.kind = PROF_KIND_KERNEL;
			s.name = prof_intern(c->dst, t, len - SUFFIX_LEN);
			if (s.name == UINT32_MAX)
				return UINT32_MAX;
		}
	}
	c->map[id] = prof_frame_intern(c->dst, &s);
	return c->map[id];
}

static int spell_stack(const struct prof_profile *p, const uint32_t *frames,
		       size_t n, uint64_t value, void *arg)
{
	struct spell_ctx *c = arg;

	if (c->cap < n) {
		uint32_t *s = realloc(c->stack, n * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->stack = s;
		c->cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		c->stack[i] = spelled_frame(c, p, frames[i]);
		if (c->stack[i] == UINT32_MAX)
			return -ENOMEM;
	}
	if (prof_add_stack(c->dst, c->stack, n, value) == UINT32_MAX)
		return -ENOMEM;
	return 0;
}

/* 1 when @p (sorted) can be written as it is: every name is spelled
 * verbatim and no two siblings read the same in folded text. Siblings
 * that read the same sort next to each other, unless annotated inline
 * frames mix in, which then take the merging path. */
static int spelled_unique(const struct prof_profile *p, unsigned flags)
{
	for (uint32_t i = 1; i < prof_frame_count(p); i++) {
		const struct prof_frame *f = prof_frame_get(p, i);
		const char *name = prof_str(p, f->name);

		if (!*name || name[strcspn(name, ";\n\r")] ||
		    strlen(name) != prof_str_len(p, f->name) ||
		    strncmp(name, UTF8_BOM, 3) == 0 ||
		    (f->kind != PROF_KIND_KERNEL &&
		     prof_ends_with(name, strlen(name), KERNEL_SUFFIX)) ||
		    (f->kind == PROF_KIND_INLINE && (flags & PROF_FOLDED_ANNOTATE)))
			return 0;
	}
	for (uint32_t i = 0; i < prof_node_count(p); i++) {
		const struct prof_frame *prev = NULL;

		for (uint32_t c = prof_node_get(p, i)->child; c;
		     c = prof_node_get(p, c)->sibling) {
			const struct prof_frame *f =
				prof_frame_get(p, prof_node_get(p, c)->frame);

			if (prev && prev->name == f->name &&
			    (prev->kind == PROF_KIND_KERNEL) ==
				    (f->kind == PROF_KIND_KERNEL))
				return 0;
			prev = f;
		}
	}
	return 1;
}

/* For each frame of the spelled profile @c->dst, the frame of @p it
 * stands for: of those spelled the same, the one with the largest total
 * over its nodes. Returns the map (free it), or NULL on ENOMEM. */
static uint32_t *spelled_info(const struct prof_profile *p,
			      const struct spell_ctx *c)
{
	uint32_t nf = prof_frame_count(p), ns = prof_frame_count(c->dst);
	uint32_t *best = calloc(ns, sizeof(*best));
	uint64_t *w = calloc(nf, sizeof(*w)), *bw = calloc(ns, sizeof(*bw));
	const struct prof_node *nd = prof_nodes(p);

	if (best && w && bw) {
		for (uint32_t i = 1; i < prof_node_count(p); i++)
			w[nd[i].frame] = UINT64_MAX - w[nd[i].frame] < nd[i].total ?
					 UINT64_MAX : w[nd[i].frame] + nd[i].total;
		for (uint32_t f = 1; f < nf; f++) {
			uint32_t s = c->map[f];

			if (s && s < ns && (!best[s] || w[f] > bw[s])) {
				best[s] = f;
				bw[s] = w[f];
			}
		}
	} else {
		free(best);
		best = NULL;
	}
	free(w);
	free(bw);
	return best;
}

int prof_folded_write(struct prof_profile *p, FILE *out, unsigned flags)
{
	struct write_ctx w = { .out = out, .flags = flags };
	struct spell_ctx c = { .flags = flags };
	struct prof_profile *src = p;
	uint32_t *info = NULL;
	int ret = prof_sort(p);

	if (ret < 0)
		return ret;
	if (!spelled_unique(p, flags)) {
		ret = -ENOMEM;
		c.dst = prof_new(prof_meta_const(p)->unit);
		c.map = calloc(prof_frame_count(p), sizeof(*c.map));
		if (!c.dst || !c.map)
			goto out;
		ret = prof_walk_stacks(p, spell_stack, &c);
		if (ret < 0 || (ret = prof_sort(c.dst)) < 0)
			goto out;
		src = c.dst;
	}
	if (flags & PROF_FOLDED_META) {
		ret = -ENOMEM;
		if (src != p && !(info = spelled_info(p, &c)))
			goto out;
		ret = folded_meta_write(out, src, prof_meta_const(p), src != p ? p : NULL,
					info, (flags & PROF_FOLDED_ANNOTATE) != 0);
		if (ret < 0)
			goto out;
	}
	ret = prof_walk_stacks(src, write_stack, &w);
	if (ret < 0) {
		ret = ret == -ENOMEM ? ret : -EIO;
		goto out;
	}
	ret = fflush(out) != 0 || ferror(out) ? -EIO : 0;
out:
	free(info);
	free(c.stack);
	free(c.map);
	prof_free(c.dst);
	return ret;
}
