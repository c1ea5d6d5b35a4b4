/* SPDX-License-Identifier: MIT */
/*
 * Ranking frames (sort_frame_ranks): every frame numbered in prof_sort()
 * order, so paths can be sorted by integers. Frames are sorted by keys
 * of 8 bytes of their folded spelling, the next 8 bytes only for those
 * that agree so far. Each frame's spelling is noted first in a dense
 * array: a key then costs two reads (the note and the bytes), not four
 * (the frame, its name's length and address, the bytes), which matters
 * in the later rounds, where frames come in random order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"
#include "sort_impl.h"

/* A frame's folded spelling: its name's bytes, "_[k]" for a kernel
 * frame, then ';'. */
struct spelling {
	const char *s;
	uint32_t len; /* the name's */
	uint32_t kernel;
};

struct ranking {
	const struct prof_profile *p;
	const struct spelling *sp; /* by frame */
};

/* Byte @i of the spelling @sp, or -1 past its end. */
static int spelled_at(const struct spelling *sp, size_t i)
{
	if (i < sp->len)
		return (unsigned char)sp->s[i];
	i -= sp->len;
	if (sp->kernel) {
		if (i < 4)
			return (unsigned char)"_[k]"[i];
		i -= 4;
	}
	return i == 0 ? ';' : -1;
}

/* Bytes @at to @at + 7 of the spelling @sp, big-endian and zero-padded:
 * a smaller key means a smaller spelling from @at on. */
static uint64_t spelled_key(const struct spelling *sp, size_t at)
{
	uint64_t k = 0;

	if (at + 8 <= sp->len) {
		const unsigned char *s = (const unsigned char *)sp->s + at;

		for (size_t i = 0; i < 8; i++)
			k = k << 8 | s[i];
		return k;
	}
	for (size_t i = 0; i < 8; i++) {
		int c = spelled_at(sp, at + i);

		k = k << 8 | (uint64_t)(c < 0 ? 0 : c);
	}
	return k;
}

/* Frames in prof_sort() order, then by id: the spellings first, from
 * the notes; the frames themselves only when those agree. */
static int rank_cmp(const void *a, const void *b, void *arg)
{
	const struct ranking *r = arg;
	uint32_t fa = (uint32_t)((const struct kv *)a)->val;
	uint32_t fb = (uint32_t)((const struct kv *)b)->val;
	const struct spelling *x = &r->sp[fa], *y = &r->sp[fb];
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	for (size_t i = n; c == 0; i++) {
		int ca = spelled_at(x, i), cb = spelled_at(y, i);

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (ca < 0)
			break;
	}
	if (c == 0)
		c = sort_frame_cmp(r->p, fa, fb);
	if (c)
		return c;
	return fa < fb ? -1 : fa > fb;
}

/* Key rounds (8 bytes of spelling each) before ties go to the full
 * compare. */
#define RANK_ROUNDS 8u

/* Orders @a[0..n), frames whose spellings agree before byte 8 * @round
 * (their last key was @key): by the next 8 bytes and so on while the
 * spellings go on, then by rank_cmp(). @tmp has room for n. Frames
 * sharing a long prefix (namespaces, "fn_1234") are sorted by keys, not
 * by compares that each read two strings. */
static void rank_ties(const struct ranking *r, struct kv *a, struct kv *tmp,
		      size_t n, uint64_t key, unsigned round)
{
	/* A zero last byte: both spellings ended (they hold no zero byte). */
	if ((key & 0xff) == 0 || round == RANK_ROUNDS || n < 8) {
		qsort_r(a, n, sizeof(*a), rank_cmp, (void *)r);
		return;
	}
	/* A note is asked for 16 frames ahead, its bytes 8 ahead. */
	for (size_t i = 0; i < n; i++) {
		if (i + 16 < n)
			__builtin_prefetch(&r->sp[a[i + 16].val]);
		if (i + 8 < n)
			__builtin_prefetch(r->sp[a[i + 8].val].s + 8 * (size_t)round);
		a[i].key = spelled_key(&r->sp[a[i].val], 8 * (size_t)round);
	}
	sort_kv(a, tmp, n);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (1 < j - i)
			rank_ties(r, a + i, tmp, j - i, a[i].key, round + 1);
	}
}

/* Notes the spelling of each frame of @p in @sp. */
static void note_spellings(const struct prof_profile *p, struct spelling *sp)
{
	for (uint32_t f = 0; f < p->nframes; f++) {
		const struct prof_frame *fr = &p->frames[f];

		sp[f] = (struct spelling){ p->strs[fr->name], p->str_len[fr->name],
					   fr->kind == PROF_KIND_KERNEL };
	}
}

int sort_frame_ranks(const struct prof_profile *p, uint32_t *rank,
		     uint32_t *by_rank)
{
	size_t n = p->nframes - 1;
	struct kv *a = malloc((n ? n : 1) * sizeof(*a));
	struct kv *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	struct spelling *sp = malloc((size_t)p->nframes * sizeof(*sp));
	struct ranking r = { p, sp };

	if (!a || !tmp || !sp) {
		free(a);
		free(tmp);
		free(sp);
		return -ENOMEM;
	}
	note_spellings(p, sp);
	for (size_t i = 0; i < n; i++)
		a[i] = (struct kv){ spelled_key(&sp[i + 1], 0), i + 1 };
	sort_kv(a, tmp, n);
	/* Equal keys: the rest of the spellings tell, then the frames. */
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (1 < j - i)
			rank_ties(&r, a + i, tmp, j - i, a[i].key, 1);
	}
	rank[0] = 0;
	by_rank[0] = 0;
	for (size_t i = 0; i < n; i++) {
		rank[a[i].val] = (uint32_t)i + 1;
		by_rank[i + 1] = (uint32_t)a[i].val;
	}
	free(a);
	free(tmp);
	free(sp);
	return 0;
}
