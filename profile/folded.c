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
 * are bound by memory latency, so the first pass splits a line 16 bytes
 * at a time (folded_split.c), hashes its texts and asks for their slots
 * in a small table (folded_texts.c), and looks them up only after the
 * next line is split. A text of 1 MiB or more is read by two threads that
 * share its lines as they go (folded_halves.c, joined in folded_join.c);
 * where the machine has a third core, a
 * helper faults in the memory the parse and prof_build() will write
 * (folded_ahead.c). The writer is in folded_write.c.
 */
#include "folded.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Asks for huge pages under the 2 MiB-aligned part of @a[0..size): the
 * stacks are read in random order when sorted, and with 4 KiB pages each
 * read would add a TLB miss. A hint only. */
static void want_huge(void *a, size_t size)
{
	uintptr_t lo = ((uintptr_t)a + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)a + size) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (HUGE_PAGE * 2 <= size && lo < hi)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/* ---- lines ---------------------------------------------------------------- */

/* Makes room for @n tokens in @j; 0 or -ENOMEM. */
static int job_room(struct line_job *j, size_t n)
{
	if (n <= j->tok_cap)
		return 0;
	return prof_grow_how((void **)&j->tok, &j->tok_cap, n, sizeof(*j->tok), 0);
}

/* How many bytes the line at @s (in a buffer ending at @stop) has in
 * common with the stack of the line before, @prev, from the start. */
static size_t shared_bytes(const struct line_job *prev, const char *s,
			   const char *stop)
{
	size_t m = 0, lim = (size_t)(stop - s);

	if (prev->len < lim)
		lim = prev->len;
	while (m + 8 <= lim) {
		uint64_t a, b;

		memcpy(&a, s + m, 8);
		memcpy(&b, prev->s + m, 8);
		if (a != b)
			break;
		m += 8;
	}
	while (m < lim && s[m] == prev->s[m])
		m++;
	return m;
}

/* Fills token @i of @j, the text @s[at..end), hashes it and asks for its
 * slot. */
static inline void take_token(struct parse_ctx *c, struct line_job *j,
			      size_t i, const char *s, size_t at, size_t end)
{
	struct token *t = &j->tok[i];

	t->s = s + at;
	t->len = end - at;
	j->arena |= LONG_MAX_LEN < t->len;
	folded_token_hash(t, c->end, i == 0 && c->first_is_process);
	folded_text_prefetch(c, t);
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

/* Checks the end of the line @s[0..len) and reads its count into @j:
 * the stack's length (where the separator is) goes to *@stack. 1 when
 * the line holds a stack, 0 for a blank line, or -EINVAL. */
static int line_count(struct parse_ctx *c, struct line_job *j, const char *s,
		      size_t len, size_t *stack)
{
	const char *sp;
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
	err = parse_count(sp + 1, len - (size_t)(sp + 1 - s), &j->count);
	if (err == -ERANGE)
		return fail(c, "has a count too large for 64 bits");
	if (err)
		return fail(c, "has a count that is not a decimal integer");
	*stack = (size_t)(sp - s);
	return 1;
}

/* Prepares the line at @s (in a buffer ending at @stop) after the line
 * @prev, whose frames end at c->scan.semi[0..prev->n): splits it from
 * the first frame it does not share with @prev, checks it, reads its
 * count, hashes its frames and asks for their slots. Its length goes to
 * *@linelen. 1 when it holds a stack, 0 for a blank line, or a negative
 * errno. */
static int prepare_line(struct parse_ctx *c, struct line_job *j,
			const struct line_job *prev, const char *s,
			const char *stop, size_t *linelen)
{
	struct line_scan *ls = &c->scan;
	size_t m = prev->n ? shared_bytes(prev, s, stop) : 0, k = 0, at, n, len;
	int ret;

	/* Frames whose text and ';' the two lines share are @prev's. */
	while (k < prev->n && ls->semi[k] < m)
		k++;
	if (k + 1 == prev->n && m == prev->len && s + m < stop && s[m] == ';')
		k++;
	at = k ? ls->semi[k - 1] + 1 : 0;
	ls->n = k;
	if (folded_scan_line(s, stop, at, ls, linelen) < 0)
		return -ENOMEM;
	ret = line_count(c, j, s, *linelen, &len);
	if (ret <= 0)
		return ret;
	if (ls->nul)
		return fail(c, "has a NUL byte");
	/* The ';' are all before the separator: the count has none. */
	n = ls->n + 1;
	if (job_room(j, n) < 0)
		return -ENOMEM;
	j->arena = 0;
	if (prev->n == n && len == prev->len && len <= m) {
		/* The same stack as the line before. */
		k = n;
	} else {
		ls->semi[n - 1] = len;
		for (size_t i = k; i < n; at = ls->semi[i++] + 1) {
			if (ls->semi[i] == at)
				return fail(c, "has an empty frame");
			take_token(c, j, i, s, at, ls->semi[i]);
		}
	}
	j->s = s;
	j->len = len;
	j->n = n;
	j->k = k;
	return 1;
}

/* Asks for the arena bytes the lookups of the prepared line @j will
 * compare (its slots were asked for a line ago). */
FOLDED_PREFETCH void prefetch_line_bytes(const struct parse_ctx *c,
					 const struct line_job *j)
{
	if (!j->arena)
		return;
	for (size_t i = j->k; i < j->n; i++)
		if (LONG_MAX_LEN < j->tok[i].len)
			folded_text_prefetch_bytes(c, &j->tok[i]);
}

/* Looks up the frames of the prepared line @j and queues its stack; the
 * frames it shares with the line before are that line's, queued last.
 * Its slots and arena bytes were asked for a line and two lines ago.
 * 0 or -ENOMEM (c->lineno is then @j's). */
static int resolve_line(struct parse_ctx *c, const struct line_job *j)
{
	int proc = c->first_is_process;
	size_t n = j->n, k = j->k;
	uint32_t *o;

	if (UINT32_MAX < n || folded_out_room(c, 3 + n) < 0) {
		c->lineno = j->lineno;
		return -ENOMEM;
	}
	o = c->out + c->nout;
	if (k)
		memcpy(o + 3, c->out + c->last + 3, k * sizeof(*o));
	for (size_t i = k; i < n; i++) {
		uint32_t f = folded_text_lookup(c, &j->tok[i], i == 0 && proc);

		if (f == UINT32_MAX) {
			c->lineno = j->lineno;
			return -ENOMEM;
		}
		o[3 + i] = f;
	}
	o[0] = (uint32_t)n;
	o[1] = (uint32_t)j->count;
	o[2] = (uint32_t)(j->count >> 32);
	c->last = c->nout;
	c->nout += 3 + n;
	c->nlines++;
	if (c->ahead && c->nlines % 256 == 0) {
		/* A stack of n frames makes at most n nodes and, once the
		 * tree is big, rarely fewer than half as many. */
		size_t frames = c->nout - 3 * c->nlines;

		atomic_store_explicit(&c->ahead->out_used, c->nout * sizeof(*c->out),
				      memory_order_relaxed);
		atomic_store_explicit(&c->ahead->nodes_want,
				      frames / 2 * sizeof(struct prof_node),
				      memory_order_relaxed);
	}
	return 0;
}

/* The job @back lines before the one being prepared. */
static struct line_job *job_back(struct parse_ctx *c, unsigned back)
{
	return &c->job[(c->cur + FOLDED_JOBS - back) % FOLDED_JOBS];
}

/* Looks up the oldest pending line; 0 or -ENOMEM. */
static int resolve_oldest(struct parse_ctx *c)
{
	return resolve_line(c, job_back(c, c->pending--));
}

/* Looks up every pending line; 0 or -ENOMEM. */
static int resolve_all(struct parse_ctx *c)
{
	while (c->pending)
		if (resolve_oldest(c) < 0)
			return -ENOMEM;
	return 0;
}

/* Parses the lines of @buf[pos..stop) into @c; 0 or a negative errno
 * (c->lineno is then the bad line's). Each line is split and hashed, and
 * its slots asked for; a line later the arena bytes its slots point to
 * are asked for; FOLDED_JOBS - 1 lines after it was prepared it is
 * looked up: the lines' work in between hides the cache misses. */
int folded_parse_lines(struct parse_ctx *c, const char *buf, size_t pos,
		       size_t stop)
{
	while (pos < stop) {
		struct line_job *j = &c->job[c->cur];
		size_t len;
		int ret;

		c->lineno++;
		ret = prepare_line(c, j, job_back(c, 1), buf + pos, buf + stop, &len);
		if (ret < 0) {
			/* The lines before a bad one are kept. */
			size_t at = c->lineno;

			if (resolve_all(c) < 0)
				return -ENOMEM;
			c->lineno = at;
			return ret;
		}
		pos += len + 1;
		if (ret == 0)
			continue;
		j->lineno = c->lineno;
		if (c->pending)
			prefetch_line_bytes(c, job_back(c, 1));
		if (c->pending == FOLDED_JOBS - 1 && resolve_oldest(c) < 0)
			return -ENOMEM;
		c->pending++;
		c->cur = (c->cur + 1) % FOLDED_JOBS;
	}
	return resolve_all(c);
}

void folded_ctx_free(struct parse_ctx *c)
{
	folded_scan_free(&c->scan);
	for (unsigned i = 0; i < FOLDED_JOBS; i++)
		free(c->job[i].tok);
	free(c->texts);
	free(c->longs);
	free(c->arena);
	free(c->out);
	free(c->spare);
	free(c->local);
	prof_ranks_free(c->ranks);
}

/* Texts from this size on that make a new tree are parsed with a helper
 * faulting in memory ahead (folded_ahead.c), when asked for. */
#define AHEAD_MIN ((size_t)4 << 20)

/* Starts the helper for a parse of @len bytes into @c's empty profile:
 * room for the nodes of a tree that big is reserved first (the helper
 * faults in only what the stacks so far surely need). 1 when it runs. */
static int ahead_start(struct parse_ctx *c, struct parse_ahead *a, size_t len)
{
	struct prof_profile *p = c->p;

	if (len < AHEAD_MIN || !c->out || prof_node_count(p) != 1 ||
	    prof_nodes_room(p, len / 16) < 0)
		return 0;
	if (folded_ahead_start(a, c->out, c->out_cap * sizeof(*c->out), p->nodes,
			       (size_t)p->node_cap * sizeof(*p->nodes)) < 0)
		return 0;
	c->ahead = a;
	return 1;
}

/* Stops the helper and tells the profile how many nodes' pages it
 * faulted in. */
static void ahead_stop(struct parse_ctx *c)
{
	folded_ahead_stop(c->ahead);
	c->p->nodes_faulted = (uint32_t)(c->ahead->nodes_done /
					 sizeof(struct prof_node));
	c->ahead = NULL;
}

/* The spare memory of @c cut to what prof_build() uses of it (the rest
 * goes back at once, as the tree's nodes are about to take their room):
 * c->spare and c->spare_cap, both 0 when it is too small. */
static void lend_spare(struct parse_ctx *c)
{
	size_t need = prof_build_scratch_bytes(c->nlines);
	uint32_t *s;

	if (!c->spare)
		return;
	if (c->spare_cap * sizeof(*c->spare) < need) {
		free(c->spare);
		c->spare = NULL;
		c->spare_cap = 0;
		return;
	}
	s = realloc(c->spare, need);
	if (s) {
		c->spare = s;
		c->spare_cap = need / sizeof(*s);
	}
}

int folded_parse_with(struct prof_profile *p, const char *buf, size_t len,
		      int first_is_process, int in_order, int helper,
		      struct folded_how *how, char *err, size_t errlen)
{
	struct parse_ctx c = {
		.p = p,
		.end = buf + len,
		.first_is_process = first_is_process,
		.err = err,
		.errlen = errlen,
	};
	struct parse_ahead ahead;
	size_t pos = 0;
	int ret, added, helped;

	if (err && errlen)
		err[0] = '\0';
	/* A UTF-8 byte order mark is not part of the first frame. */
	if (3 <= len && memcmp(buf, UTF8_BOM, 3) == 0)
		pos = 3;
	out_reserve(&c, len);
	helped = helper && ahead_start(&c, &ahead, len);
	ret = folded_texts_init(&c);
	if (ret == 0)
		ret = folded_parse_text(&c, buf, pos, len, how);
	if (helped)
		ahead_stop(&c);
	/* The texts are known: make room for the tree. */
	free(c.texts);
	free(c.longs);
	free(c.arena);
	free(c.local);
	c.texts = NULL;
	c.longs = NULL;
	c.arena = NULL;
	c.local = NULL;
	c.nlocal = c.local_cap = 0;
	/* The lines before a bad one are kept. An empty tree is built from
	 * the sorted stacks (prof_build), others by lookups. */
	added = -ENOMEM;
	lend_spare(&c);
	if (prof_node_count(p) == 1) {
		struct prof_scratch lend = {
			c.spare, c.spare_cap * sizeof(*c.spare), c.ranks
		};

		added = prof_build(p, c.out, c.nout, c.nlines, in_order, &lend);
		c.ranks = NULL; /* prof_build() took them */
	}
	/* Not lent (the profile had a tree): done with before the stacks
	 * are added below, which write the profile the ranking reads. */
	prof_ranks_free(c.ranks);
	c.ranks = NULL;
	if (added == -ENOMEM)
		added = add_queued(&c);
	if (added < 0 && ret == 0)
		ret = added;
	prof_nodes_release_unused(p);
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory at line %zu", c.lineno);
	folded_ctx_free(&c);
	return ret;
}

/* 1 when a helper thread would find a core of its own beside the two
 * that parse a big text. */
static int helper_has_core(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return 2 < n;
}

static int parse_all(struct prof_profile *p, const char *buf, size_t len,
		     int first_is_process, int in_order, char *err,
		     size_t errlen)
{
	return folded_parse_with(p, buf, len, first_is_process, in_order,
				 helper_has_core(), NULL, err, errlen);
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
