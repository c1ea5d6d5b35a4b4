/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks, read and written the way flamegraph.pl reads them: the
 * count is the text after the line's last space, the stack before it is
 * split on ';'. Frame names may hold spaces (C++ signatures do).
 */
#include "folded.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"

#define KERNEL_SUFFIX "_[k]"
#define INLINE_SUFFIX "_[i]"
#define SUFFIX_LEN 4
#define UTF8_BOM "\xef\xbb\xbf"

/* One distinct frame text seen by this parse: its hash, length (with
 * FLAG_PROCESS when it is a process row), the frame it interned as
 * (0 = empty slot) and where its bytes sit in the parse's own arena.
 * Looking a text up here costs one 16-byte slot and one compare in a
 * small arena, where prof_intern() + prof_frame_intern() cost two tables
 * and the entries behind them: the cache misses that dominate big files. */
#define FLAG_PROCESS 0x80000000u

struct text_slot {
	uint32_t hash;
	uint32_t len; /* | FLAG_PROCESS */
	uint32_t frame;
	uint32_t off;
};

/* One frame's text in the current or the last line. */
struct token {
	const char *s;
	size_t len;
	uint32_t hash;
};

struct parse_ctx {
	struct prof_profile *p;
	uint32_t *frames; /* this line's frame ids (the last line's beyond) */
	struct token *tok, *prev; /* this line's and the last line's texts */
	size_t prev_n;
	uint32_t cap;
	struct text_slot *texts;
	size_t ntexts, texts_cap;
	char *arena; /* the distinct texts, back to back */
	size_t arena_len, arena_cap;
	/* Parsed lines, added to the tree after the text is read: per line
	 * its frame count, its count's two halves, then its frame ids.
	 * Reading first and building after keeps the text table in the
	 * cache instead of fighting the tree's tables for it. */
	uint32_t *out;
	size_t nout, out_cap, nlines;
	int first_is_process;
	char *err;
	size_t errlen;
	size_t lineno;
};

static int fail(struct parse_ctx *c, const char *what)
{
	if (c->err && c->errlen)
		snprintf(c->err, c->errlen, "line %zu %s", c->lineno, what);
	return -EINVAL;
}

/* Parses the decimal count @s[0..len). Returns 0, or -EINVAL (not a
 * decimal integer) or -ERANGE (does not fit 64 bits). */
static int parse_count(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d;

		if (s[i] < '0' || '9' < s[i])
			return -EINVAL;
		d = (unsigned)(s[i] - '0');
		if ((UINT64_MAX - d) / 10 < v)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
	return SUFFIX_LEN < len &&
	       memcmp(s + len - SUFFIX_LEN, suffix, SUFFIX_LEN) == 0;
}

/* Interns one frame's text in the profile; returns its id or UINT32_MAX
 * on ENOMEM. */
static uint32_t intern_frame(struct parse_ctx *c, const char *s, size_t len,
			     int process)
{
	struct prof_frame f = { 0 };

	if (process) {
		f.kind = PROF_KIND_PROCESS;
	} else if (ends_with(s, len, KERNEL_SUFFIX)) {
		f.kind = PROF_KIND_KERNEL;
		len -= SUFFIX_LEN;
	} else if (ends_with(s, len, INLINE_SUFFIX)) {
		f.kind = PROF_KIND_INLINE;
		len -= SUFFIX_LEN;
	}
	f.name = prof_intern(c->p, s, len);
	if (f.name == UINT32_MAX)
		return UINT32_MAX;
	return prof_frame_intern(c->p, &f);
}

static uint32_t text_hash(const char *s, size_t len, int process)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len ^ (process ? FLAG_PROCESS : 0);
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < len) {
		uint64_t w = 0;

		memcpy(&w, s + i, len - i);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h ^ (h >> 32));
}

/* Doubles the text table; 0 or -ENOMEM. */
static int texts_grow(struct parse_ctx *c)
{
	size_t cap = c->texts_cap ? c->texts_cap * 2 : 4096;
	struct text_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < c->texts_cap; i++) {
		size_t j;

		if (!c->texts[i].frame)
			continue;
		for (j = c->texts[i].hash & (cap - 1); t[j].frame;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = c->texts[i];
	}
	free(c->texts);
	c->texts = t;
	c->texts_cap = cap;
	return 0;
}

/* Remembers text @s[0..len) in the arena; its offset, or UINT32_MAX when
 * it does not fit (the text is then looked up in the profile each time). */
static uint32_t arena_add(struct parse_ctx *c, const char *s, size_t len)
{
	size_t off = c->arena_len;

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
	memcpy(c->arena + off, s, len);
	c->arena_len += len;
	return (uint32_t)off;
}

/* The frame of token @t (@process: the line's process row); UINT32_MAX on
 * ENOMEM. */
static uint32_t text_frame(struct parse_ctx *c, const struct token *t,
			   int process)
{
	uint32_t key, id, off;
	size_t j, mask;

	if (FLAG_PROCESS <= t->len)
		return intern_frame(c, t->s, t->len, process);
	key = (uint32_t)t->len | (process ? FLAG_PROCESS : 0);
	if (c->texts_cap) {
		mask = c->texts_cap - 1;
		for (j = t->hash & mask; c->texts[j].frame; j = (j + 1) & mask)
			if (c->texts[j].hash == t->hash &&
			    c->texts[j].len == key &&
			    memcmp(c->arena + c->texts[j].off, t->s, t->len) == 0)
				return c->texts[j].frame;
	}
	id = intern_frame(c, t->s, t->len, process);
	if (id == UINT32_MAX)
		return UINT32_MAX;
	if (c->texts_cap <= 2 * (c->ntexts + 1) && texts_grow(c) < 0)
		return UINT32_MAX;
	off = arena_add(c, t->s, t->len);
	if (off == UINT32_MAX)
		return id;
	mask = c->texts_cap - 1;
	for (j = t->hash & mask; c->texts[j].frame; j = (j + 1) & mask)
		;
	c->texts[j] = (struct text_slot){ t->hash, key, id, off };
	c->ntexts++;
	return id;
}

/* Doubles the room for one line's frames; 0 or -ENOMEM. */
static int grow_frames(struct parse_ctx *c)
{
	uint32_t cap = c->cap ? c->cap * 2 : 64;
	uint32_t *f = realloc(c->frames, cap * sizeof(*f));
	struct token *t;

	if (!f)
		return -ENOMEM;
	c->frames = f;
	t = realloc(c->tok, cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	c->tok = t;
	t = realloc(c->prev, cap * sizeof(*t));
	if (!t)
		return -ENOMEM;
	c->prev = t;
	c->cap = cap;
	return 0;
}

/* Splits the stack @s[0..len) into c->tok; returns the frame count, or a
 * negative errno. Hashes the texts the last line did not have at the same
 * place and prefetches their slots, so the lookups' misses overlap. */
static long split_stack(struct parse_ctx *c, const char *s, size_t len)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= len; i++) {
		struct token *t;

		if (i < len && s[i] != ';')
			continue;
		if (i == start)
			return fail(c, "has an empty frame");
		if (n == c->cap && grow_frames(c) < 0)
			return -ENOMEM;
		t = &c->tok[n];
		t->s = s + start;
		t->len = i - start;
		t->hash = 0;
		/* Sorted input repeats the last line's frames: same text at
		 * the same position is the same frame, no hashing needed. */
		if (!(n < c->prev_n && c->prev[n].len == t->len &&
		      memcmp(c->prev[n].s, t->s, t->len) == 0)) {
			t->hash = text_hash(t->s, t->len,
					    n == 0 && c->first_is_process) | 1;
			if (c->texts_cap)
				__builtin_prefetch(&c->texts[t->hash &
							     (c->texts_cap - 1)]);
		}
		n++;
		start = i + 1;
	}
	return (long)n;
}

/* Parses the stack @s[0..len) into c->frames; returns the frame count, or
 * a negative errno. */
static long parse_stack(struct parse_ctx *c, const char *s, size_t len)
{
	long n = split_stack(c, s, len);
	struct token *t;

	if (n < 0)
		return n;
	for (long i = 0; i < n; i++) {
		/* hash 0: the last line's frame at this place. */
		if (!c->tok[i].hash)
			continue;
		c->frames[i] = text_frame(c, &c->tok[i],
					  i == 0 && c->first_is_process);
		if (c->frames[i] == UINT32_MAX)
			return -ENOMEM;
	}
	t = c->prev;
	c->prev = c->tok;
	c->tok = t;
	c->prev_n = (size_t)n;
	return n;
}

/* Queues the stack in c->frames[0..n) with @count; 0 or -ENOMEM. */
static int queue_stack(struct parse_ctx *c, size_t n, uint64_t count)
{
	size_t need = c->nout + 3 + n;
	uint32_t *o;

	if (UINT32_MAX < n)
		return -ENOMEM;
	if (c->out_cap < need) {
		size_t cap = c->out_cap ? c->out_cap : 1 << 16;

		while (cap < need)
			cap *= 2;
		if (SIZE_MAX / sizeof(*o) < cap ||
		    !(o = realloc(c->out, cap * sizeof(*o))))
			return -ENOMEM;
		c->out = o;
		c->out_cap = cap;
	}
	o = c->out + c->nout;
	o[0] = (uint32_t)n;
	o[1] = (uint32_t)count;
	o[2] = (uint32_t)(count >> 32);
	memcpy(o + 3, c->frames, n * sizeof(*o));
	c->nout = need;
	c->nlines++;
	return 0;
}

/* Adds the queued stacks one by one; 0 or -ENOMEM. */
static int add_each(struct parse_ctx *c)
{
	for (size_t i = 0; i < c->nout;) {
		const uint32_t *o = c->out + i;
		uint64_t count = (uint64_t)o[2] << 32 | o[1];

		if (prof_add_stack(c->p, o + 3, o[0], count) == UINT32_MAX)
			return -ENOMEM;
		i += 3 + (size_t)o[0];
	}
	return 0;
}

/* Adds the queued stacks to the profile: first every path, then every
 * count in one pass over the tree, so a path's existing nodes are only
 * looked up, not written (each write was a cache miss). Falls back to one
 * stack at a time without memory for the leaves. 0 or -ENOMEM. */
static int add_queued(struct parse_ctx *c)
{
	uint32_t *leaves = malloc((c->nlines ? c->nlines : 1) * sizeof(*leaves));
	uint64_t *values = malloc((c->nlines ? c->nlines : 1) * sizeof(*values));
	size_t k = 0;
	int ret = 0;

	if (!leaves || !values) {
		free(leaves);
		free(values);
		return add_each(c);
	}
	for (size_t i = 0; i < c->nout; k++) {
		const uint32_t *o = c->out + i;

		leaves[k] = prof_path_get(c->p, o + 3, o[0]);
		if (leaves[k] == UINT32_MAX) {
			ret = -ENOMEM;
			break;
		}
		values[k] = (uint64_t)o[2] << 32 | o[1];
		i += 3 + (size_t)o[0];
	}
	/* The parsed text is no longer needed: make room for the pass. */
	free(c->out);
	c->out = NULL;
	c->nout = 0;
	prof_add_values(c->p, leaves, values, k);
	free(leaves);
	free(values);
	return ret;
}

static int is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

static int parse_line(struct parse_ctx *c, const char *s, size_t len)
{
	const char *sp;
	uint64_t count;
	long n;
	int err;

	while (len && is_blank(s[len - 1]))
		len--;
	if (len == 0)
		return 0;
	for (sp = s + len; s < sp && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
		;
	if (sp == s)
		return fail(c, "has no sample count after the stack");
	sp--; /* the separator */
	err = parse_count(sp + 1, len - (size_t)(sp + 1 - s), &count);
	if (err == -ERANGE)
		return fail(c, "has a count too large for 64 bits");
	if (err)
		return fail(c, "has a count that is not a decimal integer");
	if (memchr(s, '\0', len))
		return fail(c, "has a NUL byte");
	n = parse_stack(c, s, (size_t)(sp - s));
	if (n < 0)
		return (int)n;
	return queue_stack(c, (size_t)n, count);
}

int prof_folded_parse(struct prof_profile *p, const char *buf, size_t len,
		      int first_is_process, char *err, size_t errlen)
{
	struct parse_ctx c = {
		.p = p,
		.first_is_process = first_is_process,
		.err = err,
		.errlen = errlen,
	};
	size_t pos = 0;
	int ret = 0, added;

	if (err && errlen)
		err[0] = '\0';
	/* A UTF-8 byte order mark is not part of the first frame. */
	if (3 <= len && memcmp(buf, UTF8_BOM, 3) == 0)
		pos = 3;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;

		c.lineno++;
		ret = parse_line(&c, buf + pos, end - pos);
		if (ret < 0)
			break;
		pos = end + 1;
	}
	/* The lines before a bad one are kept. */
	added = add_queued(&c);
	if (added < 0 && ret == 0)
		ret = added;
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory at line %zu", c.lineno);
	free(c.frames);
	free(c.tok);
	free(c.prev);
	free(c.texts);
	free(c.arena);
	free(c.out);
	return ret;
}

/* ---- writer ------------------------------------------------------------------- */

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

		if (ends_with(t, len, KERNEL_SUFFIX)) {
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
		     ends_with(name, strlen(name), KERNEL_SUFFIX)) ||
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

int prof_folded_write(struct prof_profile *p, FILE *out, unsigned flags)
{
	struct write_ctx w = { .out = out, .flags = flags };
	struct spell_ctx c = { .flags = flags };
	struct prof_profile *src = p;
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
	ret = prof_walk_stacks(src, write_stack, &w);
	if (ret < 0) {
		ret = ret == -ENOMEM ? ret : -EIO;
		goto out;
	}
	ret = fflush(out) != 0 || ferror(out) ? -EIO : 0;
out:
	free(c.stack);
	free(c.map);
	prof_free(c.dst);
	return ret;
}
