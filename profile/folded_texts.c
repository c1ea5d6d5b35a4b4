/* SPDX-License-Identifier: MIT */
/*
 * The folded reader's table of frame texts: each distinct text of a parse
 * maps to its frame. Big files make one lookup per frame text (15 M in a
 * 170 MiB file) at random in this table, so it is kept small: 16-byte
 * slots, most texts (up to INLINE_MAX bytes) held whole in their slot and
 * compared there, the others compared against an arena of their bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded_impl.h"
#include "profile_impl.h"

/* The table grows past this load (parts of 16): 4 MiB hold 200,000
 * texts, which this machine's caches keep. */
#define LOAD_MAX 13u

/* Bytes 8 to 11 of a text of at most 12 bytes from its second word, and
 * back. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define INLINE_X(w1) ((uint32_t)((w1) >> 32))
#define INLINE_W1(x) ((uint64_t)(x) << 32)
#else
#define INLINE_X(w1) ((uint32_t)(w1))
#define INLINE_W1(x) ((uint64_t)(x))
#endif

/* ---- hashing ---------------------------------------------------------- */

/* The @n bytes at @s, or the 8 there, zero-padded. */
static uint64_t load_upto8(const char *s, size_t n)
{
	uint64_t w = 0;

	memcpy(&w, s, n < 8 ? n : 8);
	return w;
}

void folded_token_hash_long(struct token *t, const char *end, int process)
{
	const char *s = t->s;
	size_t len = t->len, room = (size_t)(end - s);
	uint64_t w0 = load_upto8(s, room), w1, h;

	w1 = 8 < room ? load_upto8(s + 8, room - 8) : 0;
	w0 = folded_low_bytes(w0, len);
	w1 = len <= 8 ? 0 : folded_low_bytes(w1, len - 8);
	t->w0 = w0;
	t->w1 = w1;
	h = folded_mum(w0 ^ FOLDED_SEED0, w1 ^ FOLDED_SEED1);
	for (size_t i = 16; i < len; i += 8)
		h = folded_mum(h ^ folded_low_bytes(load_upto8(s + i, room - i),
						    len - i),
			       FOLDED_SEED2);
	if (process)
		h = folded_mum(h ^ FOLDED_SEED0, FOLDED_SEED2);
	t->hash = folded_hash_fold(h);
}

/* ---- frames ----------------------------------------------------------- */

/* Interns one frame's text in the profile; returns its id or UINT32_MAX
 * on ENOMEM. */
static uint32_t intern_frame(struct parse_ctx *c, const char *s, size_t len,
			     int process)
{
	struct prof_frame f = { 0 };

	if (process) {
		f.kind = PROF_KIND_PROCESS;
	} else if (folded_ends_with(s, len, KERNEL_SUFFIX)) {
		f.kind = PROF_KIND_KERNEL;
		len -= SUFFIX_LEN;
	} else if (folded_ends_with(s, len, INLINE_SUFFIX)) {
		f.kind = PROF_KIND_INLINE;
		len -= SUFFIX_LEN;
	}
	f.name = prof_intern(c->p, s, len);
	if (f.name == UINT32_MAX)
		return UINT32_MAX;
	return prof_frame_intern(c->p, &f);
}

/* The frame of a text not in the table: interned in the profile, or in
 * a deferred parse the next local id. UINT32_MAX on ENOMEM. */
static uint32_t new_frame(struct parse_ctx *c, const struct token *t,
			  int process)
{
	if (!c->deferred)
		return intern_frame(c, t->s, t->len, process);
	if (UINT32_MAX - 1 <= c->nlocal)
		return UINT32_MAX;
	if (c->nlocal == c->local_cap) {
		size_t cap = c->local_cap ? c->local_cap * 2 : 1024;
		struct local_text *l = realloc(c->local, cap * sizeof(*l));

		if (!l)
			return UINT32_MAX;
		c->local = l;
		c->local_cap = cap;
	}
	c->local[c->nlocal++] = (struct local_text){ *t, process };
	return (uint32_t)c->nlocal;
}

/* ---- the table -------------------------------------------------------- */

/* Where a slot's text starts its probe: its hash. */
static uint32_t slot_hash(const struct text_slot *sl)
{
	return (sl->frame & SLOT_INLINE) ? folded_hash2(sl->w, INLINE_W1(sl->x)) :
					   sl->x;
}

/* Grows the table (doubling it); 0 or -ENOMEM. */
static int texts_grow(struct parse_ctx *c)
{
	size_t cap = c->texts_cap ? c->texts_cap * 2 : 4096;
	struct text_slot *t = prof_big_calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < c->texts_cap; i++) {
		size_t j;

		if (!c->texts[i].frame)
			continue;
		for (j = slot_hash(&c->texts[i]) & (cap - 1); t[j].frame;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = c->texts[i];
	}
	free(c->texts);
	c->texts = t;
	c->texts_cap = cap;
	return 0;
}

/* Keeps the bytes of @t in the arena; their offset, or UINT32_MAX when
 * they do not fit (the text is then not remembered). */
static uint32_t arena_add(struct parse_ctx *c, const struct token *t)
{
	size_t off = c->arena_len, len = t->len;

	if ((size_t)UINT32_MAX - off <= len)
		return UINT32_MAX;
	if (c->arena_cap - off < len) {
		size_t cap = c->arena_cap ? c->arena_cap : 1 << 16;
		char *a;

		while (cap - off < len)
			cap *= 2;
		if (!(a = realloc(c->arena, cap)))
			return UINT32_MAX;
		c->arena = a;
		c->arena_cap = cap;
	}
	memcpy(c->arena + off, t->s, len);
	c->arena_len += len;
	return (uint32_t)off;
}

/* The slot that holds token @t with @id (SLOT_ID at most) in @c's table;
 * 0 when it cannot be kept (arena full). */
static int make_slot(struct parse_ctx *c, const struct token *t, int inl,
		     uint32_t key, uint32_t id, struct text_slot *sl)
{
	uint32_t off;

	if (inl) {
		*sl = (struct text_slot){ id | SLOT_INLINE, INLINE_X(t->w1), t->w0 };
		return 1;
	}
	off = arena_add(c, t);
	if (off == UINT32_MAX)
		return 0;
	*sl = (struct text_slot){ id | SLOT_ARENA, t->hash,
				  (uint64_t)key << 32 | off };
	return 1;
}

void folded_text_prefetch_bytes(const struct parse_ctx *c,
				 const struct token *t, int process)
{
	uint64_t w = (uint64_t)((uint32_t)t->len | (process ? FLAG_PROCESS : 0)) << 32;
	const struct text_slot *T = c->texts;
	size_t j, mask = c->texts_cap - 1;
	uint32_t f;

	if (!c->texts_cap || FLAG_PROCESS <= t->len)
		return;
	for (j = t->hash & mask; (f = T[j].frame) != 0; j = (j + 1) & mask) {
		if ((f & SLOT_ARENA) && T[j].x == t->hash &&
		    (T[j].w & 0xffffffff00000000ull) == w) {
			__builtin_prefetch(c->arena + (uint32_t)T[j].w);
			return;
		}
	}
}

uint32_t folded_text_frame(struct parse_ctx *c, const struct token *t,
			   int process)
{
	int inl = t->len <= INLINE_MAX && !process;
	uint32_t key = (uint32_t)t->len | (process ? FLAG_PROCESS : 0), id, f;
	const struct text_slot *T = c->texts;
	struct text_slot sl;
	size_t j, mask = c->texts_cap - 1;

	if (FLAG_PROCESS <= t->len)
		return new_frame(c, t, process);
	if (c->texts_cap && inl) {
		uint32_t x = INLINE_X(t->w1);

		for (j = t->hash & mask; (f = T[j].frame) != 0; j = (j + 1) & mask)
			if ((f & SLOT_INLINE) && T[j].w == t->w0 && T[j].x == x)
				return f & SLOT_ID;
	} else if (c->texts_cap) {
		uint64_t w = (uint64_t)key << 32;

		for (j = t->hash & mask; (f = T[j].frame) != 0; j = (j + 1) & mask)
			if ((f & SLOT_ARENA) && T[j].x == t->hash &&
			    (T[j].w & 0xffffffff00000000ull) == w &&
			    memcmp(c->arena + (uint32_t)T[j].w, t->s, t->len) == 0)
				return f & SLOT_ID;
	}
	id = new_frame(c, t, process);
	if (id == UINT32_MAX || SLOT_ID < id)
		return id;
	if (c->texts_cap / 16 * LOAD_MAX < c->ntexts + 1 && texts_grow(c) < 0)
		return UINT32_MAX;
	if (!make_slot(c, t, inl, key, id, &sl))
		return id;
	mask = c->texts_cap - 1;
	for (j = t->hash & mask; c->texts[j].frame; j = (j + 1) & mask)
		;
	c->texts[j] = sl;
	c->ntexts++;
	return id;
}
