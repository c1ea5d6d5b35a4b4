/* SPDX-License-Identifier: MIT */
/*
 * Sorting sibling lists by how frames read in folded text, so equal names
 * sit together and every writer's output is deterministic.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"

/* Byte @i of a frame's folded spelling: name, "_[k]" for kernel frames,
 * then ';'. Returns -1 past the end. */
static int spelled_at(const struct prof_profile *p, const struct prof_frame *f,
		      size_t i)
{
	size_t len = p->str_len[f->name];

	if (i < len)
		return (unsigned char)p->strs[f->name][i];
	i -= len;
	if (f->kind == PROF_KIND_KERNEL) {
		if (i < 4)
			return (unsigned char)"_[k]"[i];
		i -= 4;
	}
	return i == 0 ? ';' : -1;
}

/* Compares two frames' folded spellings bytewise, so sorted siblings give
 * folded lines in the order of LC_ALL=C sort. */
static int spelled_cmp(const struct prof_profile *p,
		       const struct prof_frame *fa, const struct prof_frame *fb)
{
	size_t la = p->str_len[fa->name], lb = p->str_len[fb->name];
	size_t i = la < lb ? la : lb;
	int c = memcmp(p->strs[fa->name], p->strs[fb->name], i);

	if (c)
		return c;
	for (;; i++) {
		int ca = spelled_at(p, fa, i), cb = spelled_at(p, fb, i);

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (ca < 0)
			return 0;
	}
}

static int frame_cmp(const struct prof_profile *p, uint32_t a, uint32_t b)
{
	const struct prof_frame *fa = &p->frames[a], *fb = &p->frames[b];
	int c;

	if (a == b)
		return 0;
	c = spelled_cmp(p, fa, fb);
	if (c)
		return c;
	c = strcmp(p->strs[fa->module], p->strs[fb->module]);
	if (c)
		return c;
	c = strcmp(p->strs[fa->file], p->strs[fb->file]);
	if (c)
		return c;
	if (fa->line != fb->line)
		return fa->line < fb->line ? -1 : 1;
	if (fa->kind != fb->kind)
		return fa->kind < fb->kind ? -1 : 1;
	if (fa->cls != fb->cls)
		return fa->cls < fb->cls ? -1 : 1;
	if (fa->lang != fb->lang)
		return fa->lang < fb->lang ? -1 : 1;
	return 0;
}

static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct prof_profile *p = arg;
	uint32_t na = *(const uint32_t *)a, nb = *(const uint32_t *)b;

	return frame_cmp(p, p->nodes[na].frame, p->nodes[nb].frame);
}

/* Sorts the children of @parent using @buf (room for all of them). */
static void sort_children(struct prof_profile *p, uint32_t parent,
			  uint32_t *buf)
{
	uint32_t n = 0, c, i;
	int ordered = 1;

	for (c = p->nodes[parent].child; c; c = p->nodes[c].sibling) {
		if (n && frame_cmp(p, p->nodes[buf[n - 1]].frame,
				   p->nodes[c].frame) > 0)
			ordered = 0;
		buf[n++] = c;
	}
	if (ordered)
		return;
	qsort_r(buf, n, sizeof(*buf), node_cmp, p);
	p->nodes[parent].child = buf[0];
	for (i = 0; i + 1 < n; i++)
		p->nodes[buf[i]].sibling = buf[i + 1];
	p->nodes[buf[n - 1]].sibling = 0;
	p->last_child[parent] = buf[n - 1];
}

int prof_sort(struct prof_profile *p)
{
	uint32_t *buf;

	if (p->sorted)
		return 0;
	buf = malloc((size_t)p->nnodes * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nnodes; i++)
		if (p->nodes[i].child)
			sort_children(p, i, buf);
	free(buf);
	p->sorted = 1;
	return 0;
}

