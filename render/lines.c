/* SPDX-License-Identifier: MIT */
/* One box per function: a function's frames at several lines and inline
 * sites merged into one, the lines kept beside. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/lines.h"

/* 1 when some frame of @p has a line or is an inlined one: only then can
 * two frames be one function at different places. */
static int carries_lines(const struct prof_profile *p)
{
	uint32_t nf = prof_frame_count(p);

	for (uint32_t i = 1; i < nf; i++) {
		const struct prof_frame *f = prof_frame_get(p, i);

		if (f->line || f->kind == PROF_KIND_INLINE)
			return 1;
	}
	return 0;
}

static uint32_t copy_str(struct prof_profile *out, const struct prof_profile *p,
			 uint32_t id)
{
	return id ? prof_intern(out, prof_str(p, id), prof_str_len(p, id)) : 0;
}

/* Interns in @out every frame of @p without its line, an inlined one as
 * a plain one, into @fmap (frame of @p -> frame of @out). 0 or -ENOMEM. */
static int plain_frames(const struct prof_profile *p, struct prof_profile *out,
			uint32_t *fmap)
{
	uint32_t nf = prof_frame_count(p);

	fmap[0] = 0;
	for (uint32_t i = 1; i < nf; i++) {
		struct prof_frame g = *prof_frame_get(p, i);

		g.name = copy_str(out, p, g.name);
		g.module = copy_str(out, p, g.module);
		g.file = copy_str(out, p, g.file);
		if (g.name == UINT32_MAX || g.module == UINT32_MAX || g.file == UINT32_MAX)
			return -ENOMEM;
		g.line = 0;
		if (g.kind == PROF_KIND_INLINE)
			g.kind = PROF_KIND_USER;
		if ((fmap[i] = prof_frame_intern(out, &g)) == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct rd_line *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorts the lines by node and line and adds up repeats. */
static void settle(struct rd_lines *l)
{
	size_t o = 0;

	qsort(l->v, l->n, sizeof(*l->v), cmp_line);
	for (size_t i = 0; i < l->n; i++) {
		if (o && l->v[o - 1].node == l->v[i].node && l->v[o - 1].line == l->v[i].line)
			l->v[o - 1].value += l->v[i].value;
		else
			l->v[o++] = l->v[i];
	}
	l->n = o;
}

/* Copies the tree of @p into @out through @fmap, merging the siblings
 * that land on one frame, and notes each source line in @l. Parents have
 * smaller ids than their children (profile.h), so one pass in id order
 * finds every parent already copied. 0 or -ENOMEM. */
static int merge_nodes(const struct prof_profile *p, struct prof_profile *out,
		       const uint32_t *fmap, struct rd_lines *l)
{
	const struct prof_node *nd = prof_nodes(p);
	uint32_t nn = prof_node_count(p), *nmap = malloc((size_t)nn * sizeof(*nmap));
	size_t cap = 0;
	int rc = -ENOMEM;

	if (!nmap)
		return -ENOMEM;
	nmap[0] = 0;
	if (prof_node_add(out, 0, nd[0].total, nd[0].self) < 0)
		goto out;
	for (uint32_t i = 1; i < nn; i++) {
		uint32_t line = prof_frame_get(p, nd[i].frame)->line;
		uint32_t m = prof_child_get(out, nmap[nd[i].parent], fmap[nd[i].frame]);

		if (m == UINT32_MAX || prof_node_add(out, m, nd[i].total, nd[i].self) < 0)
			goto out;
		nmap[i] = m;
		if (!line)
			continue;
		if (l->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct rd_line *nv = realloc(l->v, nc * sizeof(*nv));

			if (!nv)
				goto out;
			l->v = nv;
			cap = nc;
		}
		l->v[l->n++] = (struct rd_line){ m, line, nd[i].total };
	}
	settle(l);
	rc = 0;
out:
	free(nmap);
	return rc;
}

/* rd_lines_merge(), and with @always rd_lines_strip(); @lines may then
 * be NULL. */
static int merge(const struct prof_profile *p, struct prof_profile **out,
		 struct rd_lines *lines, int always)
{
	uint32_t nf = prof_frame_count(p), *fmap = NULL;
	struct rd_lines none = { 0 }; /* where lines nobody keeps go */
	struct prof_profile *o;
	int rc = -ENOMEM;

	*out = NULL;
	if (lines)
		*lines = none;
	if (!carries_lines(p))
		return 0;
	if (!(o = prof_new(prof_meta_const(p)->unit)) ||
	    !(fmap = malloc((size_t)nf * sizeof(*fmap))))
		goto fail;
	*prof_meta(o) = *prof_meta_const(p);
	if (plain_frames(p, o, fmap) < 0)
		goto fail;
	if (prof_frame_count(o) == nf && !always) { /* no two are one function */
		rc = 0;
		goto fail;
	}
	if (merge_nodes(p, o, fmap, lines ? lines : &none) < 0)
		goto fail;
	rd_lines_free(&none);
	free(fmap);
	*out = o;
	return 0;
fail:
	free(fmap);
	prof_free(o);
	rd_lines_free(lines ? lines : &none);
	return rc;
}

int rd_lines_merge(const struct prof_profile *p, struct prof_profile **out,
		   struct rd_lines *lines)
{
	return merge(p, out, lines, 0);
}

int rd_lines_strip(const struct prof_profile *p, struct prof_profile **out)
{
	return merge(p, out, NULL, 1);
}

void rd_lines_free(struct rd_lines *l)
{
	free(l->v);
	*l = (struct rd_lines){ 0 };
}

size_t rd_lines_of(const struct rd_lines *l, uint32_t node,
		   const struct rd_line **first)
{
	size_t lo = 0, hi = l->n, end;

	*first = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->v[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < l->n && l->v[end].node == node; end++)
		;
	if (end > lo)
		*first = &l->v[lo];
	return end - lo;
}

/* Appends to @buf (size @n, @o used) as printf would, keeping it
 * terminated; returns the new length, or @n when it did not fit (then
 * @buf is cut back to @o). */
static size_t put(char *buf, size_t n, size_t o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t put(char *buf, size_t n, size_t o, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (o >= n)
		return n;
	va_start(ap, fmt);
	w = vsnprintf(buf + o, n - o, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= n - o) {
		buf[o] = '\0';
		return n;
	}
	return o + (size_t)w;
}

/* "file:" (or "line " without a file) into @buf; returns the length. */
static size_t put_file(char *buf, size_t n, const struct prof_profile *p,
		       uint32_t frame)
{
	const struct prof_frame *f = prof_frame_get(p, frame);
	size_t o = f && f->file ? put(buf, n, 0, "%s:", prof_str(p, f->file)) :
		   put(buf, n, 0, "line ");

	return o < n ? o : 0;
}

/* Ascending distinct lines @v[0..k) as "10, 12-14" after @buf[0..o);
 * ", ..." when the rest does not fit. */
static void put_ranges(char *buf, size_t n, size_t o, const uint32_t *v,
		       size_t k)
{
	for (size_t i = 0; i < k;) {
		size_t j = i, w;

		while (j + 1 < k && v[j + 1] == v[j] + 1)
			j++;
		w = j > i ? put(buf, n, o, "%s%u-%u", i ? ", " : "", v[i], v[j]) :
		    put(buf, n, o, "%s%u", i ? ", " : "", v[i]);
		if (w == n) {
			put(buf, n, o, ", \xe2\x80\xa6");
			return;
		}
		o = w;
		i = j + 1;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct lines of @v[0..k) of @l, ascending, written by line. */
static void by_line(char *buf, size_t n, size_t o, uint32_t *v, size_t k)
{
	size_t u = 0;

	qsort(v, k, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < k; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	put_ranges(buf, n, o, v, u);
}

/* Largest share first: each step takes the largest line below the last
 * taken in (value descending, line ascending) order. */
static void by_share(char *buf, size_t n, size_t o, const struct rd_line *v,
		     size_t k, uint64_t total)
{
	const struct rd_line *last = NULL;
	char pct[16];

	for (size_t taken = 0; taken < k; taken++) {
		const struct rd_line *best = NULL;
		size_t w;

		for (size_t i = 0; i < k; i++) {
			const struct rd_line *c = &v[i];

			if (last && (c->value > last->value ||
				     (c->value == last->value && c->line <= last->line)))
				continue;
			if (!best || c->value > best->value ||
			    (c->value == best->value && c->line < best->line))
				best = c;
		}
		rd_fmt_pct(pct, sizeof(pct), total ? 100.0 * (double)best->value /
			   (double)total : 0);
		w = put(buf, n, o, "%s%u (%s)", taken ? ", " : "", best->line, pct);
		if (w == n) {
			put(buf, n, o, ", \xe2\x80\xa6");
			return;
		}
		o = w;
		last = best;
	}
}

char *rd_lines_text(const struct rd_lines *l, const struct prof_profile *p,
		    uint32_t node, int shares, char *buf, size_t n)
{
	const struct rd_line *v;
	const struct prof_node *nd = prof_node_get(p, node);
	size_t k = rd_lines_of(l, node, &v), o;
	uint32_t small[64], *lines;

	if (!n)
		return buf;
	buf[0] = '\0';
	if (!k || !nd)
		return buf;
	o = put_file(buf, n, p, nd->frame);
	if (shares) {
		by_share(buf, n, o, v, k, nd->total);
		return buf;
	}
	lines = k <= 64 ? small : malloc(k * sizeof(*lines));
	if (!lines) {
		buf[0] = '\0';
		return buf;
	}
	for (size_t i = 0; i < k; i++)
		lines[i] = v[i].line;
	by_line(buf, n, o, lines, k);
	if (lines != small)
		free(lines);
	return buf;
}

char *rd_lines_frame_text(const struct rd_lines *l,
			  const struct prof_profile *p, uint32_t frame,
			  char *buf, size_t n)
{
	uint32_t *lines = NULL;
	size_t k = 0, cap = 0;

	if (!n)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		const struct prof_node *nd = prof_node_get(p, l->v[i].node);

		if (!nd || nd->frame != frame)
			continue;
		if (k == cap) {
			uint32_t *nl = realloc(lines, (cap ? 2 * cap : 16) * sizeof(*nl));

			if (!nl) {
				free(lines);
				return buf;
			}
			lines = nl;
			cap = cap ? 2 * cap : 16;
		}
		lines[k++] = l->v[i].line;
	}
	if (k)
		by_line(buf, n, put_file(buf, n, p, frame), lines, k);
	free(lines);
	return buf;
}
