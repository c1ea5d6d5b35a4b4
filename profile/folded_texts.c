/* SPDX-License-Identifier: MIT */
/*
 * The folded reader's tables of frame texts: each distinct text of a parse
 * maps to its frame. Big files make one lookup per frame text (15 M in a
 * 170 MiB file) at random in these tables, so a lookup reads one cache
 * line where it can: texts of up to INLINE_MAX bytes (process rows too)
 * are held whole in 16-byte slots, texts of up to LONG_MAX_LEN bytes in
 * the 32-byte slots of a second table; longer ones are compared against
 * an arena of their bytes. Lookups that find their text are inline
 * (folded_text_lookup()); this file makes and grows the tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded_impl.h"
#include "profile_impl.h"

/* The table grows past this load (parts of 16). Measured on 200,000
 * texts, the text pass took a tenth more time at up to half full (8,
 * an 8 MiB table) than at up to a quarter (4, 16 MiB), though the
 * smaller table should keep better in the caches; at 13/16, most of a
 * lookup's instructions went to probing. */
#define LOAD_MAX 4u

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

/* Masks of a text's first n bytes in its two words (memory order). */
const uint64_t folded_keep[17][2] = {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	{ 0x0000000000000000ull, 0x0000000000000000ull },
	{ 0xff00000000000000ull, 0x0000000000000000ull },
	{ 0xffff000000000000ull, 0x0000000000000000ull },
	{ 0xffffff0000000000ull, 0x0000000000000000ull },
	{ 0xffffffff00000000ull, 0x0000000000000000ull },
	{ 0xffffffffff000000ull, 0x0000000000000000ull },
	{ 0xffffffffffff0000ull, 0x0000000000000000ull },
	{ 0xffffffffffffff00ull, 0x0000000000000000ull },
	{ 0xffffffffffffffffull, 0x0000000000000000ull },
	{ 0xffffffffffffffffull, 0xff00000000000000ull },
	{ 0xffffffffffffffffull, 0xffff000000000000ull },
	{ 0xffffffffffffffffull, 0xffffff0000000000ull },
	{ 0xffffffffffffffffull, 0xffffffff00000000ull },
	{ 0xffffffffffffffffull, 0xffffffffff000000ull },
	{ 0xffffffffffffffffull, 0xffffffffffff0000ull },
	{ 0xffffffffffffffffull, 0xffffffffffffff00ull },
	{ 0xffffffffffffffffull, 0xffffffffffffffffull },
#else
	{ 0x0000000000000000ull, 0x0000000000000000ull },
	{ 0x00000000000000ffull, 0x0000000000000000ull },
	{ 0x000000000000ffffull, 0x0000000000000000ull },
	{ 0x0000000000ffffffull, 0x0000000000000000ull },
	{ 0x00000000ffffffffull, 0x0000000000000000ull },
	{ 0x000000ffffffffffull, 0x0000000000000000ull },
	{ 0x0000ffffffffffffull, 0x0000000000000000ull },
	{ 0x00ffffffffffffffull, 0x0000000000000000ull },
	{ 0xffffffffffffffffull, 0x0000000000000000ull },
	{ 0xffffffffffffffffull, 0x00000000000000ffull },
	{ 0xffffffffffffffffull, 0x000000000000ffffull },
	{ 0xffffffffffffffffull, 0x0000000000ffffffull },
	{ 0xffffffffffffffffull, 0x00000000ffffffffull },
	{ 0xffffffffffffffffull, 0x000000ffffffffffull },
	{ 0xffffffffffffffffull, 0x0000ffffffffffffull },
	{ 0xffffffffffffffffull, 0x00ffffffffffffffull },
	{ 0xffffffffffffffffull, 0xffffffffffffffffull },
#endif
};

const uint32_t folded_keep4[5] = {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	0x00000000u, 0xff000000u, 0xffff0000u, 0xffffff00u, 0xffffffffu,
#else
	0x00000000u, 0x000000ffu, 0x0000ffffu, 0x00ffffffu, 0xffffffffu,
#endif
};

/* The @n bytes at @s, or the 8 there, zero-padded (a fixed-size load
 * but at the buffer's end). */
static inline uint64_t load_upto8(const char *s, size_t n)
{
	uint64_t w = 0;

	if (8 <= n)
		memcpy(&w, s, 8);
	else
		memcpy(&w, s, n);
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

/* The frame a text @s[0..len) stands for (@process: a process row): its
 * name without the kernel or inline mark, and its kind. */
static struct prof_frame_text text_frame(const char *s, size_t len,
					 int process)
{
	struct prof_frame_text f = { s, len, 0 };

	if (process) {
		f.kind = PROF_KIND_PROCESS;
	} else if (folded_ends_with(s, len, KERNEL_SUFFIX)) {
		f.kind = PROF_KIND_KERNEL;
		f.len -= SUFFIX_LEN;
	} else if (folded_ends_with(s, len, INLINE_SUFFIX)) {
		f.kind = PROF_KIND_INLINE;
		f.len -= SUFFIX_LEN;
	}
	return f;
}

/* Interns one frame's text in the profile; returns its id or UINT32_MAX
 * on ENOMEM. */
static uint32_t intern_frame(struct parse_ctx *c, const char *s, size_t len,
			     int process)
{
	struct prof_frame_text t = text_frame(s, len, process);
	struct prof_frame f = { .kind = t.kind };

	f.name = prof_intern(c->p, t.name, t.len);
	if (f.name == UINT32_MAX)
		return UINT32_MAX;
	return prof_frame_intern(c->p, &f);
}

struct prof_frame_text folded_frame_text(const struct local_text *x)
{
	return text_frame(x->t.s, x->t.len, x->process);
}

int folded_ctx_forget(struct parse_ctx *c)
{
	free(c->texts);
	free(c->longs);
	free(c->arena);
	c->texts = NULL;
	c->longs = NULL;
	c->arena = NULL;
	c->ntexts = c->texts_cap = c->nlongs = c->longs_cap = 0;
	c->arena_len = c->arena_cap = 0;
	c->deferred = 0;
	c->nlocal = 0;
	/* The line before shares no frame with the next: its stack may have
	 * moved. */
	for (unsigned i = 0; i < FOLDED_JOBS; i++)
		c->job[i].n = 0;
	c->pending = 0;
	return folded_texts_init(c);
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

/* Where a slot's text starts its probe: its hash (folded_token_hash()). */
static uint32_t slot_hash(const struct text_slot *sl)
{
	if (!(sl->frame & SLOT_INLINE))
		return sl->x;
	return folded_hash16(sl->w, INLINE_W1(sl->x), (sl->frame & SLOT_PROC) != 0);
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
		for (j = folded_text_home(slot_hash(&c->texts[i]), cap); t[j].frame;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = c->texts[i];
	}
	free(c->texts);
	c->texts = t;
	c->texts_cap = cap;
	return 0;
}

/* Where a long slot's text starts its probe: its hash
 * (folded_token_hash()). */
static uint32_t long_hash(const struct long_slot *sl)
{
	struct token t = { .s = sl->text,
			   .len = strnlen(sl->text, LONG_MAX_LEN) };

	folded_token_hash_long(&t, sl->text + LONG_MAX_LEN,
			       (sl->frame & SLOT_PROC) != 0);
	return t.hash;
}

/* Grows the table of long texts (doubling it); 0 or -ENOMEM. */
static int longs_grow(struct parse_ctx *c)
{
	size_t cap = c->longs_cap ? c->longs_cap * 2 : 1024;
	struct long_slot *t = prof_big_calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < c->longs_cap; i++) {
		size_t j;

		if (!c->longs[i].frame)
			continue;
		for (j = folded_long_home(long_hash(&c->longs[i]), cap); t[j].frame;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = c->longs[i];
	}
	free(c->longs);
	c->longs = t;
	c->longs_cap = cap;
	return 0;
}

int folded_texts_init(struct parse_ctx *c)
{
	if (!c->texts_cap && texts_grow(c) < 0)
		return -ENOMEM;
	return c->longs_cap ? 0 : longs_grow(c);
}

/* Keeps token @t (@process: a process row) with @id in the table of long
 * texts; 0 or -ENOMEM. */
static int long_add(struct parse_ctx *c, const struct token *t, int process,
		    uint32_t id)
{
	struct long_slot sl = { id | (process ? SLOT_PROC : 0), { 0 } };
	size_t j, mask;

	if (c->longs_cap / 16 * LOAD_MAX < c->nlongs + 1 && longs_grow(c) < 0)
		return -ENOMEM;
	memcpy(sl.text, t->s, t->len);
	mask = c->longs_cap - 1;
	for (j = folded_long_home(t->hash, c->longs_cap); c->longs[j].frame;
	     j = (j + 1) & mask)
		;
	c->longs[j] = sl;
	c->nlongs++;
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

/* The slot that holds token @t (@process: a process row) with @id
 * (SLOT_ID at most) in @c's table; 0 when it cannot be kept (arena
 * full). */
static int make_slot(struct parse_ctx *c, const struct token *t, int inl,
		     int process, uint32_t key, uint32_t id,
		     struct text_slot *sl)
{
	uint32_t off;

	if (inl) {
		*sl = (struct text_slot){ id | SLOT_INLINE | (process ? SLOT_PROC : 0),
					  INLINE_X(t->w1), t->w0 };
		return 1;
	}
	off = arena_add(c, t);
	if (off == UINT32_MAX)
		return 0;
	*sl = (struct text_slot){ id | SLOT_ARENA, t->hash,
				  (uint64_t)key << 32 | off };
	return 1;
}

uint32_t folded_text_frame(struct parse_ctx *c, const struct token *t,
			   int process)
{
	int inl = t->len <= INLINE_MAX;
	uint32_t key = (uint32_t)t->len | (process ? FLAG_PROCESS : 0), id, f;
	struct text_slot sl;
	size_t j, mask;

	if (FLAG_PROCESS <= t->len)
		return new_frame(c, t, process);
	f = folded_text_find(c, t, process);
	if (f)
		return f;
	id = new_frame(c, t, process);
	if (id == UINT32_MAX || SLOT_ID < id)
		return id;
	if (INLINE_MAX < t->len && t->len <= LONG_MAX_LEN)
		return long_add(c, t, process, id) < 0 ? UINT32_MAX : id;
	if (c->texts_cap / 16 * LOAD_MAX < c->ntexts + 1 && texts_grow(c) < 0)
		return UINT32_MAX;
	if (!make_slot(c, t, inl, process, key, id, &sl))
		return id;
	mask = c->texts_cap - 1;
	for (j = folded_text_home(t->hash, c->texts_cap); c->texts[j].frame;
	     j = (j + 1) & mask)
		;
	c->texts[j] = sl;
	c->ntexts++;
	return id;
}
