/* SPDX-License-Identifier: MIT */
/*
 * The profile's interned strings and frames, and the order frames sort
 * in (prof_sort()'s, by their folded spelling): each distinct string and
 * frame is stored once and named by a small id, so stacks are arrays of
 * ids and comparing frames is comparing integers. Both indexes are
 * open-addressing tables of ids (struct id_table, profile_impl.h); the
 * strings live in an arena of chunks that never move.
 */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"

#define STR_CHUNK_SIZE (64u * 1024u)

/* ---- hashing ------------------------------------------------------------ */

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = prof_mix64(h ^ w);
	}
	if (i < len) {
		uint64_t w = 0;

		memcpy(&w, s + i, len - i);
		h = prof_mix64(h ^ w ^ 0x9e3779b97f4a7c15ull);
	}
	return h;
}

static uint64_t hash_frame(const struct prof_frame *f)
{
	uint64_t a = ((uint64_t)f->name << 32) | f->module;
	uint64_t b = ((uint64_t)f->file << 32) | f->line;
	uint64_t c = (uint64_t)f->kind | (uint64_t)f->cls << 8 |
		     (uint64_t)f->lang << 16;

	return prof_mix64(prof_mix64(prof_mix64(a) ^ b) ^ c);
}

static int frame_equal(const struct prof_frame *a, const struct prof_frame *b)
{
	return a->name == b->name && a->module == b->module &&
	       a->file == b->file && a->line == b->line &&
	       a->kind == b->kind && a->cls == b->cls && a->lang == b->lang;
}

/* ---- the generic index ---------------------------------------------------- */

#define SLOT_ID(s) ((uint32_t)(s))
#define SLOT_HASH(s) ((uint32_t)((s) >> 32))

/* Makes room so that @extra more ids fit under a 1/2 load factor.
 * Returns 0 or -ENOMEM. */
static int table_reserve(struct id_table *t, uint32_t extra)
{
	uint64_t need = (uint64_t)t->used + extra;
	uint64_t cap = t->cap ? t->cap : MIN_TABLE;
	uint64_t *slots;

	while (cap < need * 2)
		cap *= 2;
	if (cap == t->cap)
		return 0;
	if ((uint64_t)UINT32_MAX < cap)
		return -ENOMEM;
	slots = prof_big_calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->cap; i++) {
		uint64_t sl = t->slots[i], j;

		if (!sl)
			continue;
		j = SLOT_HASH(sl) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = sl;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = (uint32_t)cap;
	return 0;
}

/* Stores @id with hash @h; room must have been reserved. */
static void table_insert(struct id_table *t, uint32_t id, uint64_t h)
{
	uint32_t mask = t->cap - 1, j = (uint32_t)h & mask;

	while (t->slots[j])
		j = (j + 1) & mask;
	t->slots[j] = (uint64_t)(uint32_t)h << 32 | id;
	t->used++;
}

/* ---- strings ---------------------------------------------------------------- */

/* Copies @len bytes plus a NUL into the arena; NULL when out of memory. */
static const char *arena_copy(struct prof_profile *p, const char *s,
			      size_t len)
{
	struct str_chunk *c = p->chunks;
	char *dst;

	if (!c || c->cap - c->used < len + 1) {
		/* A big string (over a quarter chunk) gets its own chunk,
		 * linked behind the current one so the current one's free
		 * space is not wasted; otherwise a fresh chunk takes over. */
		int big = STR_CHUNK_SIZE / 4 < len + 1;
		size_t cap = big ? len + 1 : STR_CHUNK_SIZE;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		if (p->chunks && big) {
			c->next = p->chunks->next;
			p->chunks->next = c;
		} else {
			c->next = p->chunks;
			p->chunks = c;
		}
	}
	dst = c->data + c->used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

/* The id of the string @s[0..len) with hash @h, or 0 when not interned. */
static uint32_t str_find(const struct prof_profile *p, const char *s,
			 size_t len, uint64_t h)
{
	uint32_t mask = p->str_index.cap - 1, id;
	uint64_t sl;

	if (!p->str_index.cap)
		return 0;
	for (uint64_t j = h & mask; (sl = p->str_index.slots[j]) != 0;
	     j = (j + 1) & mask) {
		id = SLOT_ID(sl);
		if (SLOT_HASH(sl) == (uint32_t)h && p->str_len[id] == len &&
		    memcmp(p->strs[id], s, len) == 0)
			return id;
	}
	return 0;
}

/* Makes room for @extra more strings; 0 or -ENOMEM. */
static int str_room(struct prof_profile *p, size_t extra)
{
	/* The two parallel arrays share one capacity. */
	uint32_t c1 = p->str_cap, c2 = p->str_cap;

	if ((size_t)UINT32_MAX - 1 - p->nstr < extra ||
	    table_reserve(&p->str_index, (uint32_t)extra) < 0)
		return -ENOMEM;
	if (p->nstr + extra <= p->str_cap)
		return 0;
	if (prof_grow((void **)&p->strs, &c1, p->nstr + extra,
		      sizeof(*p->strs)) < 0 ||
	    prof_grow((void **)&p->str_len, &c2, p->nstr + extra,
		      sizeof(*p->str_len)) < 0)
		return -ENOMEM;
	p->str_cap = c1 < c2 ? c1 : c2;
	return 0;
}

/* Adds the string @s[0..len) with hash @h, not interned yet, room made
 * (str_room()); its id, or UINT32_MAX when out of memory. */
static uint32_t str_add(struct prof_profile *p, const char *s, size_t len,
			uint64_t h)
{
	const char *copy = arena_copy(p, s, len);
	uint32_t id;

	if (!copy)
		return UINT32_MAX;
	id = p->nstr++;
	p->strs[id] = copy;
	p->str_len[id] = (uint32_t)len;
	table_insert(&p->str_index, id, h);
	return id;
}

uint32_t prof_intern(struct prof_profile *p, const char *s, size_t len)
{
	uint64_t h;
	uint32_t id;

	if (len == 0)
		return 0;
	if ((size_t)UINT32_MAX <= len)
		return UINT32_MAX;
	h = hash_bytes(s, len);
	id = str_find(p, s, len, h);
	if (id)
		return id;
	if (str_room(p, 1) < 0)
		return UINT32_MAX;
	return str_add(p, s, len, h);
}

uint32_t prof_intern_cstr(struct prof_profile *p, const char *s)
{
	return s ? prof_intern(p, s, strlen(s)) : 0;
}

const char *prof_str(const struct prof_profile *p, uint32_t id)
{
	return id < p->nstr ? p->strs[id] : "";
}

size_t prof_str_len(const struct prof_profile *p, uint32_t id)
{
	return id < p->nstr ? p->str_len[id] : 0;
}

uint32_t prof_str_count(const struct prof_profile *p)
{
	return p->nstr;
}

/* ---- frames ------------------------------------------------------------------ */

/* The id of the frame @key with hash @h, or 0 when not interned. */
static uint32_t frame_find(const struct prof_profile *p,
			   const struct prof_frame *key, uint64_t h)
{
	uint32_t mask = p->frame_index.cap - 1, id;
	uint64_t sl;

	if (!p->frame_index.cap)
		return 0;
	for (uint64_t j = h & mask; (sl = p->frame_index.slots[j]) != 0;
	     j = (j + 1) & mask) {
		id = SLOT_ID(sl);
		if (SLOT_HASH(sl) == (uint32_t)h && frame_equal(&p->frames[id], key))
			return id;
	}
	return 0;
}

/* Makes room for @extra more frames; 0 or -ENOMEM. */
static int frame_room(struct prof_profile *p, size_t extra)
{
	if ((size_t)UINT32_MAX - 1 - p->nframes < extra ||
	    table_reserve(&p->frame_index, (uint32_t)extra) < 0 ||
	    prof_grow((void **)&p->frames, &p->frame_cap, p->nframes + extra,
		      sizeof(*p->frames)) < 0)
		return -ENOMEM;
	return 0;
}

/* Adds the frame @key with hash @h, not interned yet, room made. */
static uint32_t frame_add(struct prof_profile *p, const struct prof_frame *key,
			  uint64_t h)
{
	uint32_t id = p->nframes++;

	p->frames[id] = *key;
	table_insert(&p->frame_index, id, h);
	return id;
}

uint32_t prof_frame_intern(struct prof_profile *p, const struct prof_frame *f)
{
	struct prof_frame key = *f;
	uint64_t h;
	uint32_t id;

	key.pad = 0;
	h = hash_frame(&key);
	id = frame_find(p, &key, h);
	if (id)
		return id;
	if (frame_room(p, 1) < 0)
		return UINT32_MAX;
	return frame_add(p, &key, h);
}

const struct prof_frame *prof_frame_get(const struct prof_profile *p,
					uint32_t id)
{
	return id < p->nframes ? &p->frames[id] : NULL;
}

uint32_t prof_frame_count(const struct prof_profile *p)
{
	return p->nframes;
}

/* ---- frames in folded order ------------------------------------------------ */

int prof_spelled_at(const struct prof_profile *p, const struct prof_frame *f,
		      size_t i)
{
	size_t len = p->str_len[f->name];

	if (i < len)
		return (unsigned char)p->strs[f->name][i];
	i -= len;
	if (f->kind == PROF_KIND_KERNEL) {
		if (i < SUFFIX_LEN)
			return (unsigned char)KERNEL_SUFFIX[i];
		i -= SUFFIX_LEN;
	}
	return i == 0 ? ';' : -1;
}

int prof_frame_cmp(const struct prof_profile *p, uint32_t a, uint32_t b)
{
	const struct prof_frame *fa = &p->frames[a], *fb = &p->frames[b];
	size_t la = p->str_len[fa->name], lb = p->str_len[fb->name];
	size_t i = la < lb ? la : lb;
	int c = memcmp(p->strs[fa->name], p->strs[fb->name], i);

	for (; c == 0; i++) {
		int ca = prof_spelled_at(p, fa, i), cb = prof_spelled_at(p, fb, i);

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (ca < 0)
			break;
	}
	if (c == 0)
		c = strcmp(p->strs[fa->module], p->strs[fb->module]);
	if (c == 0)
		c = strcmp(p->strs[fa->file], p->strs[fb->file]);
	if (c)
		return c;
	if (fa->line != fb->line)
		return fa->line < fb->line ? -1 : 1;
	if (fa->kind != fb->kind)
		return fa->kind < fb->kind ? -1 : 1;
	if (fa->cls != fb->cls)
		return fa->cls < fb->cls ? -1 : 1;
	return (fa->lang > fb->lang) - (fa->lang < fb->lang);
}

uint32_t prof_frame_copy(struct prof_profile *dst,
			 const struct prof_profile *src, uint32_t frame)
{
	const struct prof_frame *sf;
	struct prof_frame df;
	uint32_t id;

	if (!(frame < src->nframes))
		return UINT32_MAX;
	sf = &src->frames[frame];
	df = *sf;
	df.name = prof_intern(dst, src->strs[sf->name], src->str_len[sf->name]);
	df.module = prof_intern(dst, src->strs[sf->module],
				src->str_len[sf->module]);
	df.file = prof_intern(dst, src->strs[sf->file], src->str_len[sf->file]);
	if (df.name == UINT32_MAX || df.module == UINT32_MAX ||
	    df.file == UINT32_MAX)
		return UINT32_MAX;
	id = prof_frame_intern(dst, &df);
	if (id != UINT32_MAX && prof_frame_place_as(dst, id, src, frame) < 0)
		return UINT32_MAX;
	return id;
}

/* ---- places: where frames were seen ------------------------------------ */

static uint64_t hash_mapping(const struct prof_mapping *m)
{
	uint64_t h = prof_mix64(m->start ^ prof_mix64(m->limit));

	h = prof_mix64(h ^ m->offset);
	return prof_mix64(h ^ ((uint64_t)m->file << 32 | m->build_id));
}

static int mapping_equal(const struct prof_mapping *a,
			 const struct prof_mapping *b)
{
	return a->start == b->start && a->limit == b->limit &&
	       a->offset == b->offset && a->file == b->file &&
	       a->build_id == b->build_id;
}

uint32_t prof_mapping_intern(struct prof_profile *p,
			     const struct prof_mapping *m)
{
	uint64_t h = hash_mapping(m), sl;
	uint32_t id, mask = p->mapping_index.cap - 1;

	if (!(m->file < p->nstr) || !(m->build_id < p->nstr))
		return UINT32_MAX;
	for (uint64_t j = h & mask; p->mapping_index.cap &&
	     (sl = p->mapping_index.slots[j]) != 0; j = (j + 1) & mask) {
		id = SLOT_ID(sl);
		if (SLOT_HASH(sl) == (uint32_t)h && mapping_equal(&p->mappings[id], m))
			return id;
	}
	if (!p->nmappings)
		p->nmappings = 1; /* id 0 stays unused */
	if ((size_t)UINT32_MAX - 1 <= p->nmappings ||
	    table_reserve(&p->mapping_index, 1) < 0 ||
	    prof_grow_how((void **)&p->mappings, &p->mapping_cap,
			  (uint64_t)p->nmappings + 1, sizeof(*p->mappings), 0) < 0)
		return UINT32_MAX;
	id = p->nmappings++;
	p->mappings[id] = *m;
	table_insert(&p->mapping_index, id, h);
	return id;
}

const struct prof_mapping *prof_mapping_get(const struct prof_profile *p,
					    uint32_t id)
{
	return 0 < id && id < p->nmappings ? &p->mappings[id] : NULL;
}

uint32_t prof_mapping_count(const struct prof_profile *p)
{
	return p->nmappings ? p->nmappings : 1;
}

int prof_frame_place(struct prof_profile *p, uint32_t frame,
		     uint32_t mapping, uint64_t addr)
{
	uint32_t cap = p->place_cap;

	if (!(frame < p->nframes) || !prof_mapping_get(p, mapping))
		return -EINVAL;
	if (!(frame < p->place_cap)) {
		if (prof_grow_how((void **)&p->places, &cap, (uint64_t)frame + 1,
				  sizeof(*p->places), 0) < 0)
			return -ENOMEM;
		memset(p->places + p->place_cap, 0,
		       (size_t)(cap - p->place_cap) * sizeof(*p->places));
		p->place_cap = cap;
	}
	if (!p->places[frame].mapping)
		p->places[frame] = (struct prof_place){ addr, mapping, 0 };
	return 0;
}

uint64_t prof_frame_addr(const struct prof_profile *p, uint32_t frame,
			 uint32_t *mapping)
{
	const struct prof_place *pl = frame < p->place_cap ? &p->places[frame] : NULL;

	if (mapping)
		*mapping = pl ? pl->mapping : 0;
	return pl ? pl->addr : 0;
}

int prof_frame_place_as(struct prof_profile *dst, uint32_t frame,
			const struct prof_profile *src, uint32_t src_frame)
{
	uint32_t sm;
	uint64_t addr = prof_frame_addr(src, src_frame, &sm);
	const struct prof_mapping *m = prof_mapping_get(src, sm);
	struct prof_mapping dm;
	uint32_t id;

	if (!m)
		return 0;
	dm = *m;
	dm.file = prof_intern(dst, src->strs[m->file], src->str_len[m->file]);
	dm.build_id = prof_intern(dst, src->strs[m->build_id],
				  src->str_len[m->build_id]);
	if (dm.file == UINT32_MAX || dm.build_id == UINT32_MAX ||
	    (id = prof_mapping_intern(dst, &dm)) == UINT32_MAX)
		return -ENOMEM;
	return prof_frame_place(dst, frame, id, addr);
}
