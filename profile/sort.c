/* SPDX-License-Identifier: MIT */
/*
 * Sorting sibling lists by how frames read in folded text, so equal names
 * sit together and every writer's output is deterministic, and numbering
 * the frames in that order for prof_build() (build.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"
#include "sort_impl.h"

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
	if (!p->last_child_stale)
		p->last_child[parent] = buf[n - 1];
}

/* Relinks every sibling list in id order, which is the sorted order when
 * the ids follow the sorted tree's preorder. One pass down the nodes;
 * a parent comes before its children, so it is reset first. The last
 * children come out right. 0 or -ENOMEM. */
static int relink_by_id(struct prof_profile *p)
{
	struct prof_node *nd = p->nodes;
	uint32_t *last;

	if (prof_last_child_ready(p, p->nnodes, 0) < 0)
		return -ENOMEM;
	last = p->last_child;

	nd[0].child = 0;
	last[0] = 0;
	for (uint32_t id = 1; id < p->nnodes; id++) {
		uint32_t parent = nd[id].parent;

		nd[id].child = nd[id].sibling = 0;
		last[id] = 0;
		if (last[parent])
			nd[last[parent]].sibling = id;
		else
			nd[parent].child = id;
		last[parent] = id;
	}
	p->last_child_stale = 0;
	return 0;
}

int prof_sort(struct prof_profile *p)
{
	uint32_t *buf;

	if (p->sorted)
		return 0;
	if (p->pre_sorted) {
		if (relink_by_id(p) < 0)
			return -ENOMEM;
		p->sorted = 1;
		return 0;
	}
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

/* ---- ranks: frames numbered in sorted order ------------------------------ */

static void kv_insertion(struct kv *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct kv x = a[i];
		size_t j = i;

		for (; j && x.key < a[j - 1].key; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

void sort_kv(struct kv *a, struct kv *tmp, size_t n)
{
	size_t cnt[8][256];
	struct kv *src = a, *dst = tmp;

	if (n < 64) {
		kv_insertion(a, n);
		return;
	}
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < 8; d++)
			cnt[d][(a[i].key >> (8 * d)) & 0xff]++;
	for (unsigned d = 0; d < 8; d++) {
		size_t sum = 0, *c = cnt[d];
		struct kv *t;

		if (c[(a[0].key >> (8 * d)) & 0xff] == n)
			continue;
		for (unsigned b = 0; b < 256; b++) {
			size_t k = c[b];

			c[b] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i].key >> (8 * d)) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Bytes @at to @at + 7 of a frame's folded spelling, big-endian and
 * zero-padded: a smaller key means a smaller spelling from @at on. */
static uint64_t spelled_key(const struct prof_profile *p, uint32_t f,
			    size_t at)
{
	const struct prof_frame *fr = &p->frames[f];
	uint64_t k = 0;

	if (at + 8 <= p->str_len[fr->name]) {
		const unsigned char *s =
			(const unsigned char *)p->strs[fr->name] + at;

		for (size_t i = 0; i < 8; i++)
			k = k << 8 | s[i];
		return k;
	}
	for (size_t i = 0; i < 8; i++) {
		int c = spelled_at(p, fr, at + i);

		k = k << 8 | (uint64_t)(c < 0 ? 0 : c);
	}
	return k;
}

static int rank_cmp(const void *a, const void *b, void *arg)
{
	uint32_t fa = (uint32_t)((const struct kv *)a)->val;
	uint32_t fb = (uint32_t)((const struct kv *)b)->val;
	int c = frame_cmp(arg, fa, fb);

	if (c)
		return c;
	return fa < fb ? -1 : fa > fb;
}

/* Key rounds (8 bytes of spelling each) before ties go to the full
 * compare. */
#define RANK_ROUNDS 8u

/* Orders @a[0..n), frames whose spellings agree before byte 8 * @round
 * (their last key was @key), by frame_cmp(): by the next 8 bytes and so
 * on while the spellings go on, then by the full compare. @tmp has room
 * for n. Frames sharing a long prefix (namespaces, "fn_1234") are sorted
 * by keys, not by compares that each read two strings. */
static void rank_ties(const struct prof_profile *p, struct kv *a,
		      struct kv *tmp, size_t n, uint64_t key, unsigned round)
{
	/* A zero last byte: both spellings ended (they hold no zero byte). */
	if ((key & 0xff) == 0 || round == RANK_ROUNDS || n < 8) {
		qsort_r(a, n, sizeof(*a), rank_cmp, (void *)p);
		return;
	}
	for (size_t i = 0; i < n; i++)
		a[i].key = spelled_key(p, (uint32_t)a[i].val, 8 * (size_t)round);
	sort_kv(a, tmp, n);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (1 < j - i)
			rank_ties(p, a + i, tmp, j - i, a[i].key, round + 1);
	}
}

int sort_frame_ranks(const struct prof_profile *p, uint32_t *rank,
		     uint32_t *by_rank)
{
	size_t n = p->nframes - 1;
	struct kv *a = malloc((n ? n : 1) * sizeof(*a));
	struct kv *tmp = malloc((n ? n : 1) * sizeof(*tmp));

	if (!a || !tmp) {
		free(a);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (struct kv){ spelled_key(p, (uint32_t)i + 1, 0), i + 1 };
	sort_kv(a, tmp, n);
	/* Equal keys: the rest of the spellings tell, then the frames. */
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (1 < j - i)
			rank_ties(p, a + i, tmp, j - i, a[i].key, 1);
	}
	rank[0] = 0;
	by_rank[0] = 0;
	for (size_t i = 0; i < n; i++) {
		rank[a[i].val] = (uint32_t)i + 1;
		by_rank[i + 1] = (uint32_t)a[i].val;
	}
	free(a);
	free(tmp);
	return 0;
}
