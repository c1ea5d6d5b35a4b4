/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks, read and written the way flamegraph.pl reads them: the
 * count is the text after the line's last space, the stack before it is
 * split on ';'. Frame names may hold spaces (C++ signatures do).
 *
 * Reading is two passes. The first splits each line into frame texts and
 * maps each text to its frame through a table of its own, keeping every
 * line's frame ids; the second hands them to prof_build(), which sorts the
 * stacks and makes each node once, in order, without lookups. Big files
 * are bound by memory latency, so the first pass hashes a line's texts,
 * prefetches their slots, and only then looks them up; a slot holds a
 * text's first 16 bytes, so most lookups touch one cache line. A big
 * text's first pass runs in two halves on two threads (folded_halves.c).
 * The writer is in folded_write.c.
 */
#include "folded.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "folded_impl.h"
#include "profile_impl.h"

#define HUGE_PAGE ((size_t)2 << 20)

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

/* ---- splitting and hashing --------------------------------------------- */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FIRST_BYTES(w, n) ((n) ? (w) & ~(~0ull >> (8 * (n))) : 0)
#else
#define FIRST_BYTES(w, n) ((n) ? (w) & (~0ull >> (64 - 8 * (n))) : 0)
#endif

/* The 8 bytes at @s, or those before @end zero-padded. */
static uint64_t load8(const char *s, const char *end)
{
	uint64_t w = 0;

	memcpy(&w, s, (size_t)(end - s) < 8 ? (size_t)(end - s) : 8);
	return w;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
/* Index of the first ';' in the 8 bytes @w (memory order), 8 if none. */
static unsigned semicolon_at(uint64_t w)
{
	for (unsigned i = 0; i < 8; i++) {
		unsigned char b;

		memcpy(&b, (const char *)&w + i, 1);
		if (b == ';')
			return i;
	}
	return 8;
}
#else
/* Index of the first ';' in the 8 bytes @w (memory order), 8 if none:
 * a byte equal to ';' turns into a zero byte, and the lowest zero byte's
 * top bit is the lowest bit set (bytes above it may be misread). */
static unsigned semicolon_at(uint64_t w)
{
	uint64_t x = w ^ 0x3b3b3b3b3b3b3b3bull;
	uint64_t t = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;

	return t ? (unsigned)__builtin_ctzll(t) / 8 : 8;
}
#endif

static uint64_t mix_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

/* Reads the frame text at @s, which ends at the first ';' or at @lim,
 * eight bytes at a time: its length, hash and first 16 bytes go to @t.
 * @process marks a process row (hashed apart). */
static void next_token(const struct parse_ctx *c, const char *s,
		       const char *lim, int process, struct token *t)
{
	uint64_t h = 0x9e3779b97f4a7c15ull, w;
	const char *q = s;
	size_t i = 0;

	t->head[0] = t->head[1] = 0;
	for (;; i++, q += 8) {
		size_t left = (size_t)(lim - q);
		unsigned j;

		if (left == 0)
			break;
		if (8 <= c->end - q)
			memcpy(&w, q, 8);
		else
			w = load8(q, c->end);
		j = semicolon_at(w);
		if (left < j)
			j = (unsigned)left;
		if (j < 8) {
			w = FIRST_BYTES(w, j);
			if (i < 2)
				t->head[i] = w;
			if (j)
				h = mix_word(h ^ 0xc4ceb9fe1a85ec53ull, w);
			q += j;
			break;
		}
		if (i < 2)
			t->head[i] = w;
		h = mix_word(h, w);
	}
	t->s = s;
	t->len = (size_t)(q - s);
	h ^= t->len ^ (process ? 0x5bd1e9955bd1e995ull : 0);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	t->hash = (uint32_t)(h ^ (h >> 32));
}

/* ---- the text table ----------------------------------------------------- */

/* Asks for huge pages under the 2 MiB-aligned part of @a[0..size): the
 * stacks and the text table are read in random order, and with 4 KiB
 * pages each read would add a TLB miss. A hint only. */
static void want_huge(void *a, size_t size)
{
	uintptr_t lo = ((uintptr_t)a + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)a + size) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (HUGE_PAGE * 2 <= size && lo < hi)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/* The first slot to try for @hash in a table of @cap slots: always the
 * first of a pair, so the first two tries read one cache line. */
static size_t text_home(uint32_t hash, size_t cap)
{
	return hash & (cap - 1) & ~(size_t)1;
}

/* A zeroed table of @n slots; a big one asks for huge pages, since its
 * accesses are random and 4 KiB pages would add a TLB miss to each. */
static struct text_slot *texts_alloc(size_t n)
{
	size_t size = n * sizeof(struct text_slot);
	struct text_slot *t;

	if (size < HUGE_PAGE * 2)
		return calloc(n, sizeof(*t));
	t = aligned_alloc(HUGE_PAGE, size);
	if (t) {
		(void)madvise(t, size, MADV_HUGEPAGE);
		memset(t, 0, size);
	}
	return t;
}

/* Doubles the text table; 0 or -ENOMEM. */
static int texts_grow(struct parse_ctx *c)
{
	size_t cap = c->texts_cap ? c->texts_cap * 2 : 4096;
	struct text_slot *t = texts_alloc(cap);

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < c->texts_cap; i++) {
		size_t j;

		if (!c->texts[i].frame)
			continue;
		for (j = text_home(c->texts[i].hash, cap); t[j].frame;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = c->texts[i];
	}
	free(c->texts);
	c->texts = t;
	c->texts_cap = cap;
	return 0;
}

/* Keeps the bytes of @t past HEAD in the arena; their offset, or
 * UINT32_MAX when they do not fit (the text is then not remembered). */
static uint32_t arena_add(struct parse_ctx *c, const struct token *t)
{
	size_t off = c->arena_len, len = t->len - HEAD;

	if (t->len <= HEAD)
		return 0;
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
	memcpy(c->arena + off, t->s + HEAD, len);
	c->arena_len += len;
	return (uint32_t)off;
}

static int slot_holds(const struct parse_ctx *c, const struct text_slot *sl,
		      const struct token *t, uint32_t key)
{
	return sl->hash == t->hash && sl->len == key &&
	       sl->head[0] == t->head[0] && sl->head[1] == t->head[1] &&
	       (t->len <= HEAD ||
		memcmp(c->arena + sl->off, t->s + HEAD, t->len - HEAD) == 0);
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

/* The frame of token @t (@process: the line's process row); UINT32_MAX on
 * ENOMEM. */
uint32_t folded_text_frame(struct parse_ctx *c, const struct token *t,
			   int process)
{
	uint32_t key, id, off;
	size_t j, mask;

	if (FLAG_PROCESS <= t->len)
		return new_frame(c, t, process);
	key = (uint32_t)t->len | (process ? FLAG_PROCESS : 0);
	if (c->texts_cap) {
		mask = c->texts_cap - 1;
		for (j = text_home(t->hash, c->texts_cap); c->texts[j].frame;
		     j = (j + 1) & mask)
			if (slot_holds(c, &c->texts[j], t, key))
				return c->texts[j].frame;
	}
	id = new_frame(c, t, process);
	if (id == UINT32_MAX)
		return UINT32_MAX;
	if (c->texts_cap <= 2 * (c->ntexts + 1) && texts_grow(c) < 0)
		return UINT32_MAX;
	off = arena_add(c, t);
	if (off == UINT32_MAX)
		return id;
	mask = c->texts_cap - 1;
	for (j = text_home(t->hash, c->texts_cap); c->texts[j].frame;
	     j = (j + 1) & mask)
		;
	c->texts[j] = (struct text_slot){ t->hash, key, id, off,
					  { t->head[0], t->head[1] } };
	c->ntexts++;
	return id;
}

/* ---- lines ---------------------------------------------------------------- */

/* Doubles the room for one line's frames; 0 or -ENOMEM. */
static int grow_frames(struct parse_ctx *c)
{
	size_t cap = c->cap ? c->cap * 2 : 64;
	uint32_t *f;
	struct token *t;
	size_t *e;

	if (UINT32_MAX < cap)
		return -ENOMEM;
	if (!(f = realloc(c->frames, cap * sizeof(*f))))
		return -ENOMEM;
	c->frames = f;
	if (!(t = realloc(c->tok, cap * sizeof(*t))))
		return -ENOMEM;
	c->tok = t;
	if (!(e = realloc(c->ends, cap * sizeof(*e))))
		return -ENOMEM;
	c->ends = e;
	if (!(e = realloc(c->prev_ends, cap * sizeof(*e))))
		return -ENOMEM;
	c->prev_ends = e;
	c->cap = cap;
	return 0;
}

/* How many leading frames the stack @s[0..len) shares with the last
 * line's: those whose text and following ';' are a common prefix (or
 * all of them when the stacks are equal). Their ids stay in c->frames. */
static size_t shared_frames(const struct parse_ctx *c, const char *s,
			    size_t len)
{
	size_t m = 0, lim = len < c->prev_len ? len : c->prev_len, k = 0;

	if (!c->prev_n)
		return 0;
	while (m + 8 <= lim) {
		uint64_t a, b;

		memcpy(&a, s + m, 8);
		memcpy(&b, c->prev + m, 8);
		if (a != b)
			break;
		m += 8;
	}
	while (m < lim && s[m] == c->prev[m])
		m++;
	if (m == len && len == c->prev_len)
		return c->prev_n;
	while (k < c->prev_n && c->prev_ends[k] < m)
		k++;
	return k;
}

/* Splits the stack @s[0..len) and finds its frames' ids in c->frames;
 * returns the frame count, or a negative errno. The frames it shares
 * with the last line are taken as they are; the others are hashed and
 * their slots prefetched first, so the lookups' misses overlap. */
static long parse_stack(struct parse_ctx *c, const char *s, size_t len)
{
	size_t k = shared_frames(c, s, len), n = k, at;
	size_t *e;

	if (k && k == c->prev_n && len == c->prev_len) {
		memcpy(c->ends, c->prev_ends, k * sizeof(*c->ends));
		at = len + 1;
	} else {
		if (k)
			memcpy(c->ends, c->prev_ends, k * sizeof(*c->ends));
		at = k ? c->prev_ends[k - 1] + 1 : 0;
	}
	while (at <= len) {
		struct token *t;

		if (n == c->cap && grow_frames(c) < 0)
			return -ENOMEM;
		t = &c->tok[n];
		next_token(c, s + at, s + len, n == 0 && c->first_is_process, t);
		if (t->len == 0)
			return fail(c, "has an empty frame");
		if (c->texts_cap)
			__builtin_prefetch(&c->texts[text_home(t->hash, c->texts_cap)]);
		at += t->len;
		c->ends[n++] = at++;
	}
	for (size_t i = k; i < n; i++) {
		c->frames[i] = folded_text_frame(c, &c->tok[i],
					  i == 0 && c->first_is_process);
		if (c->frames[i] == UINT32_MAX)
			return -ENOMEM;
	}
	e = c->prev_ends;
	c->prev_ends = c->ends;
	c->ends = e;
	c->prev = s;
	c->prev_len = len;
	c->prev_n = n;
	return (long)n;
}

/* Makes room for @words more words of queued stacks; 0 or -ENOMEM. */
int folded_out_room(struct parse_ctx *c, size_t words)
{
	size_t need = c->nout + words;
	uint32_t *o;

	if (need < c->nout)
		return -ENOMEM;
	if (c->out_cap < need) {
		size_t cap = c->out_cap ? c->out_cap : 1 << 16;

		while (cap < need)
			cap *= 2;
		if (SIZE_MAX / sizeof(*o) < cap ||
		    !(o = realloc(c->out, cap * sizeof(*o))))
			return -ENOMEM;
		want_huge(o, cap * sizeof(*o));
		c->out = o;
		c->out_cap = cap;
	}
	return 0;
}

/* Queues the stack in c->frames[0..n) with @count; 0 or -ENOMEM. */
static int queue_stack(struct parse_ctx *c, size_t n, uint64_t count)
{
	uint32_t *o;

	if (UINT32_MAX < n || folded_out_room(c, 3 + n) < 0)
		return -ENOMEM;
	o = c->out + c->nout;
	o[0] = (uint32_t)n;
	o[1] = (uint32_t)count;
	o[2] = (uint32_t)(count >> 32);
	memcpy(o + 3, c->frames, n * sizeof(*o));
	c->nout += 3 + n;
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

/* Reserves room for the stacks of @len bytes of text at once: a frame
 * takes at least 2 bytes ("f;"), a line at least 4 ("f 1\n"), so its
 * record of 3 + n words fits in len / 2 + 3 * (len / 4 + 1) words. Only
 * the part written is ever faulted in; it is read in random order when
 * sorted, so it asks for huge pages (no growth, which would move it and
 * split them). Without the room, the array grows as lines come. */
static void out_reserve(struct parse_ctx *c, size_t len)
{
	size_t words = len / 2 + 3 * (len / 4 + 1), size;

	if (len < HUGE_PAGE || SIZE_MAX / sizeof(*c->out) / 2 < words)
		return;
	size = (words * sizeof(*c->out) + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	c->out = aligned_alloc(HUGE_PAGE, size);
	if (!c->out)
		return;
	want_huge(c->out, size);
	c->out_cap = size / sizeof(*c->out);
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

/* Parses the lines of @buf[pos..stop) into @c; 0 or a negative errno
 * (c->lineno is then the bad line's). */
int folded_parse_lines(struct parse_ctx *c, const char *buf, size_t pos,
		       size_t stop)
{
	while (pos < stop) {
		const char *nl = memchr(buf + pos, '\n', stop - pos);
		size_t end = nl ? (size_t)(nl - buf) : stop;
		int ret;

		c->lineno++;
		ret = parse_line(c, buf + pos, end - pos);
		if (ret < 0)
			return ret;
		pos = end + 1;
	}
	return 0;
}

void folded_ctx_free(struct parse_ctx *c)
{
	free(c->frames);
	free(c->tok);
	free(c->ends);
	free(c->prev_ends);
	free(c->texts);
	free(c->arena);
	free(c->out);
	free(c->local);
}

static int parse_all(struct prof_profile *p, const char *buf, size_t len,
		     int first_is_process, int in_order, char *err,
		     size_t errlen)
{
	struct parse_ctx c = {
		.p = p,
		.end = buf + len,
		.first_is_process = first_is_process,
		.err = err,
		.errlen = errlen,
	};
	size_t pos = 0;
	int ret, added;

	if (err && errlen)
		err[0] = '\0';
	/* A UTF-8 byte order mark is not part of the first frame. */
	if (3 <= len && memcmp(buf, UTF8_BOM, 3) == 0)
		pos = 3;
	out_reserve(&c, len);
	ret = folded_parse_text(&c, buf, pos, len);
	/* The texts are known: make room for the tree. */
	free(c.texts);
	free(c.arena);
	c.texts = NULL;
	c.arena = NULL;
	/* The lines before a bad one are kept. An empty tree is built from
	 * the sorted stacks (prof_build), others by lookups. */
	added = -ENOMEM;
	if (prof_node_count(p) == 1)
		added = prof_build(p, c.out, c.nout, c.nlines, in_order);
	if (added == -ENOMEM)
		added = add_queued(&c);
	if (added < 0 && ret == 0)
		ret = added;
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory at line %zu", c.lineno);
	folded_ctx_free(&c);
	return ret;
}

int prof_folded_parse(struct prof_profile *p, const char *buf, size_t len,
		      int first_is_process, char *err, size_t errlen)
{
	return parse_all(p, buf, len, first_is_process, 0, err, errlen);
}

int prof_folded_parse_sorted(struct prof_profile *p, const char *buf,
			     size_t len, int first_is_process, char *err,
			     size_t errlen)
{
	return parse_all(p, buf, len, first_is_process, 1, err, errlen);
}
