/* SPDX-License-Identifier: MIT */
/*
 * Reading folded stacks the way flamegraph.pl reads them: the count is the
 * text after the line's last space, the stack before it is split on ';'.
 * Frame names may hold spaces (C++ signatures do).
 *
 * The text is cut into parts at line ends, one a thread (the caller says
 * how many). A part maps each distinct frame text to a number of its own
 * through a table that holds a text's first 56 bytes in its slot, so a
 * lookup reads one cache line; a line's texts are hashed and their slots
 * asked for while the line before is looked up, so the cache misses of a
 * big table overlap. Each line becomes a record of text numbers. Then the
 * parts' texts are interned in text order (the profile's frames get the
 * ids one pass would give them), the records renumbered, and the tree
 * built: sorted, each node once (prof_build), or stack by stack.
 */
#include "folded.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify.h"
#include "folded_meta.h"
#include "profile_impl.h"

#define INLINE_WORDS 7u
#define INLINE_BYTES (8u * INLINE_WORDS)
#define PROC 0x80000000u /* a text number's process-row bit */
#define PARTS_MAX 64u
#define WINDOW ((size_t)1 << 20) /* bytes of a file read at a time */

/* A distinct text of a part: its copy in the part's arena. */
struct text {
	size_t at;
	uint32_t len, proc;
};

/* A table slot: the text's hash, its number + 1 (0 = empty) with PROC,
 * and its first INLINE_BYTES bytes, zero-padded (a text holds no NUL, so
 * the padding tells a short text's length). */
struct slot {
	uint32_t hash, id;
	uint64_t w[INLINE_WORDS];
};

/* A frame text of a line in flight. */
struct token {
	const char *s;
	uint32_t len, hash;
	uint64_t w[INLINE_WORDS];
};

/* A prepared line: its tokens (@n), its count. */
struct line {
	struct token *tok;
	size_t n;
	uint32_t cap;
	uint64_t count;
};

/* One part of the text, read by one thread into records from rec[word]:
 * the bytes [from, to) of a buffer, or of a file (@fd, from offset @pos
 * to @pos_end, read a window at a time into @buf). */
struct part {
	const char *from, *to, *end; /* end: of the bytes that may be read */
	int fd;
	uint64_t pos, pos_end;
	char *buf;
	size_t buf_cap;
	int procs;
	char *arena; /* the texts' bytes */
	size_t arena_len;
	uint32_t arena_cap;
	struct slot *slots;
	size_t cap, used;
	struct text *texts;
	uint32_t ntexts, texts_cap;
	uint32_t *rec, *map; /* map: text number + 1 -> frame */
	size_t word, first_word;
	uint64_t *at; /* prof_item_at() of each stack */
	size_t nat;
	uint32_t at_cap;
	size_t lines;
	int err;
	const char *what; /* with -EINVAL */
	struct line ln[2];
};

/* ---- hashing ------------------------------------------------------------ */

static uint64_t mum(uint64_t a, uint64_t b)
{
	__extension__ unsigned __int128 m = (unsigned __int128)a * b;

	return (uint64_t)m ^ (uint64_t)(m >> 64);
}

/* The @n (1 to 8) bytes at @s as a word, zero-padded, reading nothing at
 * or past @end. */
static uint64_t load(const char *s, size_t n, const char *end)
{
	uint64_t w = 0;

	if (8 <= end - s) {
		memcpy(&w, s, 8);
		if (n < 8)
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			w &= ~0ull << (64 - 8 * n);
#else
			w &= (1ull << (8 * n)) - 1;
#endif
		return w;
	}
	memcpy(&w, s, n);
	return w;
}

/* Fills @t's words and hash (a process row's hashed apart). */
static void token_hash(struct token *t, const char *end, int proc)
{
	uint64_t h = 0xa0761d6478bd642full ^ t->len ^ (proc ? 0x9e3779b9ull : 0);
	size_t i = 0;

	for (unsigned k = 0; k < INLINE_WORDS; k++, i += 8) {
		t->w[k] = i < t->len ? load(t->s + i, t->len - i < 8 ? t->len - i : 8, end) : 0;
		if (i < t->len)
			h = mum(h ^ t->w[k], 0xe7037ed1a0b428dbull);
	}
	for (; i < t->len; i += 8)
		h = mum(h ^ load(t->s + i, t->len - i < 8 ? t->len - i : 8, end),
			0x8ebc6af09c88c6e3ull);
	t->hash = (uint32_t)h ^ (uint32_t)(h >> 32);
}

/* ---- the table of texts ---------------------------------------------- */

/* Its number + 1 with PROC, or 0 when the part has not met it. */
static uint32_t text_find(const struct part *c, const struct token *t,
			  uint32_t proc)
{
	size_t mask = c->cap - 1;

	for (size_t j = t->hash & mask;; j = (j + 1) & mask) {
		const struct slot *s = &c->slots[j];
		const struct text *x;

		if (!s->id)
			return 0;
		if (s->hash != t->hash || (s->id & PROC) != proc ||
		    memcmp(s->w, t->w, sizeof(s->w)) != 0)
			continue;
		if (t->len < INLINE_BYTES)
			return s->id;
		x = &c->texts[(s->id & ~PROC) - 1];
		if (x->len == t->len && memcmp(c->arena + x->at + INLINE_BYTES,
					       t->s + INLINE_BYTES,
					       t->len - INLINE_BYTES) == 0)
			return s->id;
	}
}

static void slot_put(struct slot *slots, size_t cap, const struct slot *s)
{
	size_t j = s->hash & (cap - 1);

	while (slots[j].id)
		j = (j + 1) & (cap - 1);
	slots[j] = *s;
}

/* Doubles the table. 0 or -ENOMEM. */
static int table_grow(struct part *c)
{
	size_t cap = c->cap ? c->cap * 2 : 1024;
	struct slot *s = prof_big_calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i].id)
			slot_put(s, cap, &c->slots[i]);
	free(c->slots);
	c->slots = s;
	c->cap = cap;
	return 0;
}

/* The text @t's number + 1 with PROC, new when the part has not met it;
 * 0 when out of memory. */
static uint32_t text_get(struct part *c, const struct token *t, uint32_t proc)
{
	uint32_t id = text_find(c, t, proc);
	struct slot s = { t->hash, 0, { 0 } };

	if (id)
		return id;
	if ((c->used + 1) * 2 > c->cap && table_grow(c) < 0)
		return 0;
	if (PROC - 1 <= c->ntexts ||
	    prof_grow_how((void **)&c->texts, &c->texts_cap, c->ntexts + 1,
			  sizeof(*c->texts), 0) < 0 ||
	    prof_grow_how((void **)&c->arena, &c->arena_cap, c->arena_len + t->len, 1, 0) < 0)
		return 0;
	memcpy(c->arena + c->arena_len, t->s, t->len);
	c->texts[c->ntexts++] = (struct text){ c->arena_len, t->len, proc };
	c->arena_len += t->len;
	s.id = (uint32_t)c->ntexts | proc;
	memcpy(s.w, t->w, sizeof(s.w));
	slot_put(c->slots, c->cap, &s);
	c->used++;
	return s.id;
}

/* ---- lines ------------------------------------------------------------ */

static int fail(struct part *c, const char *what)
{
	c->what = what;
	c->err = -EINVAL;
	return -EINVAL;
}

static int is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* Reads the count after the line's last space into @l; the stack's
 * length goes to *@stack. 1, 0 for a blank line or a comment (a line
 * that starts with '#' and ends in no count, as flamegraph.pl skips it),
 * or -EINVAL. */
static int line_count(struct part *c, struct line *l, const char *s,
		      size_t len, size_t *stack)
{
	size_t sp = len;

	while (len && is_blank(s[len - 1]))
		len--;
	if (len == 0)
		return 0;
	for (sp = len; sp && s[sp - 1] != ' ' && s[sp - 1] != '\t'; sp--)
		;
	if (sp == 0 || sp == len)
		return s[0] == '#' ? 0 : fail(c, sp ? "has a count that is not a decimal integer" :
					      "has no sample count after the stack");
	l->count = 0;
	for (size_t i = sp; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (9 < d)
			return s[0] == '#' ? 0 :
			       fail(c, "has a count that is not a decimal integer");
		if ((UINT64_MAX - d) / 10 < l->count)
			return fail(c, "has a count too large for 64 bits");
		l->count = l->count * 10 + d;
	}
	*stack = sp - 1;
	return 1;
}

/* Splits the line @s[0..len) into @l: checks it, reads its count, hashes
 * its frame texts and asks for their slots. 1 when it holds a stack, 0
 * for a blank line, or a negative errno. */
static int line_prepare(struct part *c, struct line *l, const char *s,
			size_t len)
{
	size_t stack, at = 0;
	int ret = line_count(c, l, s, len, &stack);

	if (ret <= 0)
		return ret;
	if (memchr(s, '\0', stack))
		return fail(c, "has a NUL byte");
	for (l->n = 0; at <= stack; l->n++) {
		const char *semi = memchr(s + at, ';', stack - at);
		size_t e = semi ? (size_t)(semi - s) : stack;
		struct token *t;

		if (e == at)
			return fail(c, "has an empty frame");
		if (prof_grow_how((void **)&l->tok, &l->cap, l->n + 1, sizeof(*t), 0) < 0)
			return c->err = -ENOMEM;
		t = &l->tok[l->n];
		t->s = s + at;
		t->len = (uint32_t)(e - at);
		if (UINT32_MAX / 2 < e - at)
			return fail(c, "has a frame longer than 2 GiB");
		token_hash(t, c->end, l->n == 0 && c->procs);
		if (c->cap)
			__builtin_prefetch(&c->slots[t->hash & (c->cap - 1)]);
		at = e + 1;
	}
	return 1;
}

/* Looks up the frame texts of the prepared line @l and writes its
 * record. 0 or -ENOMEM. */
static int line_resolve(struct part *c, const struct line *l)
{
	uint32_t *o = c->rec + c->word;

	if (prof_grow_how((void **)&c->at, &c->at_cap, c->nat + 1, sizeof(*c->at), 0) < 0)
		return c->err = -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		uint32_t proc = i == 0 && c->procs ? PROC : 0;

		if (!c->cap && table_grow(c) < 0)
			return c->err = -ENOMEM;
		if (!(o[3 + i] = text_get(c, &l->tok[i], proc)))
			return c->err = -ENOMEM;
	}
	o[0] = (uint32_t)l->n;
	o[1] = (uint32_t)l->count;
	o[2] = (uint32_t)(l->count >> 32);
	c->at[c->nat++] = prof_item_at(c->word, (uint32_t)l->n);
	c->word += 3 + l->n;
	return 0;
}

/* The next window of part @c's text, whole lines from [*@s, *@stop):
 * the rest of a buffer at once, or of a file the next bytes read into
 * c->buf after the part of a line the window before left (at its
 * start). 1 when there is one, 0 at the part's end, or -1 (c->err set:
 * -EAGAIN when the file ended early, -EIO, -ENOMEM). */
static int part_window(struct part *c, const char **s, const char **stop)
{
	size_t keep = 0, got;

	if (c->fd < 0) {
		*s = c->from;
		*stop = c->to;
		c->from = c->to;
		return *s < *stop;
	}
	if (c->from < c->to) { /* a line's start, left by the window before */
		keep = (size_t)(c->to - c->from);
		memmove(c->buf, c->from, keep);
	}
	if (c->pos == c->pos_end) { /* the file's last line, without its end */
		*s = c->buf;
		*stop = c->end = c->buf + keep;
		c->from = c->to;
		return keep != 0;
	}
	if (c->buf_cap - keep < WINDOW / 2) {
		char *b = realloc(c->buf, c->buf_cap * 2 + WINDOW);

		if (!b)
			return c->err = -ENOMEM, -1;
		c->buf = b;
		c->buf_cap = c->buf_cap * 2 + WINDOW;
	}
	got = c->buf_cap - keep;
	if (c->pos_end - c->pos < got)
		got = (size_t)(c->pos_end - c->pos);
	for (size_t n = 0; n < got;) {
		ssize_t r = pread(c->fd, c->buf + keep + n, got - n, (off_t)(c->pos + n));

		if (r <= 0 && !(r < 0 && errno == EINTR))
			return c->err = r == 0 ? -EAGAIN : -EIO, -1;
		n += r < 0 ? 0 : (size_t)r;
	}
	c->pos += got;
	*s = c->buf;
	*stop = c->end = c->buf + keep + got;
	if (c->pos < c->pos_end) {
		/* Whole lines only: the last line's start waits for more. */
		const char *nl = memrchr(*s, '\n', (size_t)(*stop - *s));

		c->from = nl ? nl + 1 : *s;
		c->to = *stop;
		*stop = c->from;
	} else {
		c->from = c->to = *stop;
	}
	return 1;
}

/* Reads the lines of part @arg. Each line is prepared, then looked up
 * while the next is prepared; a bad line stops the part after the lines
 * before it. */
static void *part_read(void *arg)
{
	struct part *c = arg;
	const char *s, *stop;
	int pending = 0, cur = 0;

	while (!c->err && part_window(c, &s, &stop) > 0) {
		while (s < stop) {
			const char *nl = memchr(s, '\n', (size_t)(stop - s));
			size_t len = nl ? (size_t)(nl - s) : (size_t)(stop - s);
			int ret;

			c->lines++;
			ret = line_prepare(c, &c->ln[cur], s, len);
			if (pending && line_resolve(c, &c->ln[!cur]) < 0)
				return NULL;
			pending = ret > 0;
			if (ret < 0)
				return NULL;
			if (pending)
				cur = !cur;
			s += len + 1;
		}
		/* The window's bytes may move: its last line is looked up. */
		if (pending && line_resolve(c, &c->ln[!cur]) < 0)
			return NULL;
		pending = 0;
	}
	return NULL;
}

/* ---- the parts joined --------------------------------------------------- */

/* The frame of text @x (its bytes at @s), interned in @p with what
 * hearth's line for it in @fm says, or what its name suggests;
 * UINT32_MAX on ENOMEM. */
static uint32_t text_frame(struct prof_profile *p, const struct text *x,
			   const char *s, const struct folded_meta *fm)
{
	const struct meta_frame *mf = x->proc ? NULL : folded_meta_find(fm, s, x->len);
	struct prof_frame f = { 0 };
	size_t len = x->len;

	if (x->proc) {
		f.kind = PROF_KIND_PROCESS;
	} else if (prof_ends_with(s, len, KERNEL_SUFFIX)) {
		f.kind = PROF_KIND_KERNEL;
		len -= SUFFIX_LEN;
	} else if (prof_ends_with(s, len, INLINE_SUFFIX)) {
		f.kind = PROF_KIND_INLINE;
		len -= SUFFIX_LEN;
	}
	f.name = prof_intern(p, s, len);
	if (f.name == UINT32_MAX)
		return UINT32_MAX;
	if (mf) {
		if (mf->kind == PROF_KIND_THREAD && f.kind == PROF_KIND_USER)
			f.kind = PROF_KIND_THREAD;
		f.cls = mf->cls < PROF_CLASS_COUNT ? mf->cls : 0;
		f.lang = mf->lang < PROF_LANG_COUNT ? mf->lang : 0;
		f.line = mf->line;
		f.module = prof_intern_cstr(p, mf->module);
		f.file = prof_intern_cstr(p, mf->file);
		if (f.module == UINT32_MAX || f.file == UINT32_MAX)
			return UINT32_MAX;
	}
	prof_guess_frame(p, &f);
	return prof_frame_intern(p, &f);
}

/* Renumbers part @arg's records from its texts to the profile's frames. */
static void *part_renumber(void *arg)
{
	struct part *c = arg;

	for (size_t w = c->first_word; w < c->word; w += 3 + c->rec[w])
		for (uint32_t i = 0; i < c->rec[w]; i++)
			c->rec[w + 3 + i] = c->map[c->rec[w + 3 + i] & ~PROC];
	return NULL;
}

/* Sets the parts' records: each from where the one before may end. A
 * line of n frames takes 2n + 2 bytes or more (2n + 1 without its line
 * end), for n + 3 words: a part of b bytes takes b + 4 words at most. */
static void parts_rec(struct part *c, unsigned n, uint32_t *rec, int procs)
{
	size_t word = 0;

	for (unsigned i = 0; i < n; i++) {
		c[i].rec = rec;
		c[i].word = c[i].first_word = word;
		c[i].procs = procs;
		word += (c[i].fd < 0 ? (size_t)(c[i].to - c[i].from) :
				       (size_t)(c[i].pos_end - c[i].pos)) + 4;
	}
}

/* Cuts @buf[from..len) into @n parts at line ends. */
static void cut_parts(struct part *c, unsigned n, const char *buf, size_t from,
		      size_t len)
{
	const char *s = buf + from, *end = buf + len;

	for (unsigned i = 0; i < n; i++) {
		const char *to = i + 1 == n ? end : s + (size_t)(end - s) / (n - i);
		const char *nl = to < end ? memchr(to, '\n', (size_t)(end - to)) : NULL;

		if (i + 1 < n)
			to = nl ? nl + 1 : end;
		c[i] = (struct part){ .from = s, .to = to, .end = end, .fd = -1 };
		s = to;
	}
}

/* The offset after the first line end at or past @at in @fd (before
 * @end), or @end. */
static uint64_t next_line(int fd, uint64_t at, uint64_t end)
{
	char b[4096];

	while (at < end) {
		ssize_t r = pread(fd, b, end - at < sizeof(b) ? (size_t)(end - at) : sizeof(b),
				  (off_t)at);
		const char *nl = r > 0 ? memchr(b, '\n', (size_t)r) : NULL;

		if (r <= 0)
			return end; /* the part reading it says what went wrong */
		if (nl)
			return at + (uint64_t)(nl - b) + 1;
		at += (uint64_t)r;
	}
	return end;
}

/* Cuts the file @fd's bytes [from, end) into @n parts at line ends. */
static void cut_file(struct part *c, unsigned n, int fd, uint64_t from,
		     uint64_t end)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t to = i + 1 == n ? end : next_line(fd, from + (end - from) / (n - i), end);

		c[i] = (struct part){ .fd = fd, .pos = from, .pos_end = to };
		from = to;
	}
}

/* Interns the texts of the parts up to the first that failed, in text
 * order, into @p. Returns how many parts are kept (their lines up to the
 * failure), or -ENOMEM. */
static int join_texts(struct prof_profile *p, struct part *c, unsigned n,
		      const struct folded_meta *fm)
{
	unsigned k;

	for (k = 0; k < n; k++) {
		c[k].map = malloc((c[k].ntexts + 1) * sizeof(*c[k].map));
		if (!c[k].map)
			return -ENOMEM;
		for (size_t i = 0; i < c[k].ntexts; i++)
			if ((c[k].map[i + 1] = text_frame(p, &c[k].texts[i],
							  c[k].arena + c[k].texts[i].at, fm)) ==
			    UINT32_MAX)
				return -ENOMEM;
		if (c[k].err)
			return (int)k + 1;
	}
	return (int)n;
}

/* Adds the kept parts' stacks to @p: built at once when @p has no node
 * (siblings in sorted order with @sorted), else one by one in text
 * order. 0 or -ENOMEM. */
static int add_stacks(struct prof_profile *p, struct part *c, unsigned kept,
		      const uint32_t *rec, int sorted)
{
	struct prof_item *items;
	size_t n = 0;
	int ret;

	if (prof_node_count(p) != 1) {
		for (unsigned k = 0; k < kept; k++)
			for (size_t w = c[k].first_word; w < c[k].word; w += 3 + rec[w])
				if (prof_add_stack(p, rec + w + 3, rec[w],
						   (uint64_t)rec[w + 2] << 32 | rec[w + 1]) ==
				    UINT32_MAX)
					return -ENOMEM;
		return 0;
	}
	for (unsigned k = 0; k < kept; k++)
		n += c[k].nat;
	if (!(items = malloc((n ? n : 1) * sizeof(*items))))
		return -ENOMEM;
	n = 0;
	for (unsigned k = 0; k < kept; k++)
		for (size_t i = 0; i < c[k].nat; i++)
			items[n++].at = c[k].at[i];
	ret = prof_build(p, rec, items, n, sorted);
	free(items);
	return ret;
}

/* The error of the first part that failed, line numbered in the text
 * (whose first @skipped lines no part read). */
static int report(struct part *c, unsigned kept, size_t skipped, char *err,
		  size_t errlen)
{
	size_t line = skipped;

	for (unsigned k = 0; k < kept; k++) {
		line += c[k].lines;
		if (!c[k].err)
			continue;
		if (!err || !errlen)
			return c[k].err;
		if (c[k].err == -EINVAL)
			snprintf(err, errlen, "line %zu %s", line, c[k].what);
		else if (c[k].err == -EAGAIN)
			snprintf(err, errlen, "it changed while it was read");
		else if (c[k].err == -EIO)
			snprintf(err, errlen, "it cannot be read: input/output error");
		else
			snprintf(err, errlen, "out of memory at line %zu", line);
		return c[k].err;
	}
	return 0;
}

/* Reads the parts @c[0..n) (cut) into @p, with hearth's lines @fm. 0 or
 * a negative errno. */
static int read_parts(struct prof_profile *p, struct part *c, unsigned n,
		      size_t words, const struct prof_folded_opts *o,
		      const struct folded_meta *fm, char *err, size_t errlen)
{
	uint32_t *rec = malloc(words * sizeof(*rec));
	int ret = -ENOMEM, kept;

	if (!rec)
		goto out;
	prof_want_huge(rec, words * sizeof(*rec));
	parts_rec(c, n, rec, o->first_is_process);
	prof_run_parts(part_read, c, sizeof(*c), n);
	for (unsigned k = 0; k < n; k++) {
		free(c[k].slots);
		free(c[k].buf);
		c[k].slots = NULL;
		c[k].buf = NULL;
	}
	kept = join_texts(p, c, n, fm);
	if (kept < 0)
		goto out;
	prof_run_parts(part_renumber, c, sizeof(*c), (unsigned)kept);
	ret = add_stacks(p, c, (unsigned)kept, rec, o->sorted);
	if (ret == 0)
		ret = report(c, (unsigned)kept, fm->lines, err, errlen);
out:
	if (ret == -ENOMEM && err && errlen && !err[0])
		snprintf(err, errlen, "out of memory");
	for (unsigned k = 0; k < n; k++) {
		free(c[k].slots);
		free(c[k].buf);
		free(c[k].texts);
		free(c[k].arena);
		free(c[k].map);
		free(c[k].at);
		free(c[k].ln[0].tok);
		free(c[k].ln[1].tok);
	}
	free(rec);
	return ret;
}

static unsigned parts_for(const struct prof_folded_opts *o)
{
	return o->threads < 1 ? 1 : o->threads < PARTS_MAX ? o->threads : PARTS_MAX;
}

/* The capture's metadata of hearth's profile line, if it had one. */
static void take_meta(struct prof_profile *p, const struct folded_meta *fm)
{
	if (fm->has_profile)
		*prof_meta(p) = fm->meta;
}

int prof_folded_read(struct prof_profile *p, const char *buf, size_t len,
		     const struct prof_folded_opts *o, char *err,
		     size_t errlen)
{
	unsigned n = parts_for(o);
	size_t from = 3 <= len && memcmp(buf, UTF8_BOM, 3) == 0 ? 3 : 0, used;
	struct part *c = calloc(n, sizeof(*c));
	struct folded_meta fm = { 0 };
	int ret = -ENOMEM, done;

	if (err && errlen)
		err[0] = '\0';
	if (c && folded_meta_read(&fm, buf + from, len - from, 0, &used, &done) == 0) {
		from += used;
		take_meta(p, &fm);
		cut_parts(c, n, buf, from, len);
		ret = read_parts(p, c, n, len - from + 4 * (size_t)n, o, &fm, err, errlen);
	} else if (err && errlen) {
		snprintf(err, errlen, "out of memory");
	}
	folded_meta_free(&fm);
	free(c);
	return ret;
}

/* Reads the comment lines at @from in @fd (@len bytes in all) into @fm,
 * their length into *@used: a window at a time, doubled until the lines
 * end inside it. 0, -ENOMEM or -EIO. */
static int file_meta(int fd, uint64_t from, uint64_t len, struct folded_meta *fm,
		     size_t *used)
{
	size_t win = 64 * 1024;
	char first;
	int rc = 0, done = 0;

	*fm = (struct folded_meta){ 0 };
	*used = 0;
	if (from >= len || pread(fd, &first, 1, (off_t)from) != 1 || first != '#')
		return 0; /* the usual case: no comments, nothing more read */
	while (!done && rc == 0) {
		size_t want = len - from < win ? (size_t)(len - from) : win, got = 0;
		char *b = malloc(want);

		if (!b)
			return -ENOMEM;
		while (got < want) {
			ssize_t r = pread(fd, b + got, want - got, (off_t)(from + got));

			if (r <= 0 && !(r < 0 && errno == EINTR))
				break;
			got += r < 0 ? 0 : (size_t)r;
		}
		if (got < want)
			rc = -EIO; /* the parts say what went wrong */
		else
			rc = folded_meta_read(fm, b, got, from + got < len, used, &done);
		free(b);
		if (!done && rc == 0) {
			folded_meta_free(fm);
			win *= 2;
		}
	}
	return rc == -EIO ? 0 : rc;
}

int prof_folded_read_fd(struct prof_profile *p, int fd, uint64_t len,
			const struct prof_folded_opts *o, char *err,
			size_t errlen)
{
	unsigned n = parts_for(o);
	char bom[3];
	uint64_t from = pread(fd, bom, 3, 0) == 3 && memcmp(bom, UTF8_BOM, 3) == 0 ? 3 : 0;
	struct part *c = calloc(n, sizeof(*c));
	struct folded_meta fm = { 0 };
	size_t used = 0;
	int ret = -ENOMEM;

	if (err && errlen)
		err[0] = '\0';
	if (c && len <= SIZE_MAX / 2 && file_meta(fd, from, len, &fm, &used) == 0) {
		from += used;
		take_meta(p, &fm);
		cut_file(c, n, fd, from < len ? from : len, len);
		ret = read_parts(p, c, n, (size_t)(len - from) + 4 * (size_t)n, o, &fm,
				 err, errlen);
	} else if (err && errlen) {
		snprintf(err, errlen, "out of memory");
	}
	folded_meta_free(&fm);
	free(c);
	return ret;
}

int prof_folded_parse(struct prof_profile *p, const char *buf, size_t len,
		      int first_is_process, char *err, size_t errlen)
{
	const struct prof_folded_opts o = { first_is_process, 0, 1 };

	return prof_folded_read(p, buf, len, &o, err, errlen);
}

int prof_folded_parse_sorted(struct prof_profile *p, const char *buf,
			     size_t len, int first_is_process, char *err,
			     size_t errlen)
{
	const struct prof_folded_opts o = { first_is_process, 1, 1 };

	return prof_folded_read(p, buf, len, &o, err, errlen);
}
