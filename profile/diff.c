/* SPDX-License-Identifier: MIT */
/*
 * Diff arithmetic: the union tree of two profiles, changes of share, the
 * two-proportion test, and functions ranked by change. Pure computation.
 */
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Z95 1.959963984540054 /* two-sided 95% quantile of N(0, 1) */

struct prof_diff {
	struct prof_profile *tree;
	struct prof_diff_values *vals; /* per tree node */
	uint32_t nvals;
	uint64_t total_before, total_after;
};

double prof_round2(double x)
{
	return round(x * 100.0) / 100.0;
}

static double share(uint64_t v, uint64_t total)
{
	return total ? prof_round2(100.0 * (double)v / (double)total) : 0.0;
}

struct prof_delta prof_delta_share(uint64_t vb, uint64_t tb, uint64_t va,
				   uint64_t ta)
{
	struct prof_delta d = { .kind = PROF_DELTA_NEUTRAL };
	double x;

	d.p_before = share(vb, tb);
	d.p_after = share(va, ta);
	if (tb == 0 || ta == 0 || (vb == 0 && va == 0))
		return d;
	if (vb == 0) {
		d.kind = PROF_DELTA_ADDED;
		d.delta = 100.0;
		return d;
	}
	if (va == 0) {
		d.kind = PROF_DELTA_REMOVED;
		d.delta = -100.0;
		return d;
	}
	d.kind = PROF_DELTA_CHANGED;
	if (d.p_before == 0.0) {
		d.delta = 0.0 < d.p_after ? 100.0 : 0.0;
		return d;
	}
	x = 100.0 * (d.p_after - d.p_before) / d.p_before;
	if (x < -100.0)
		x = -100.0;
	if (100.0 < x)
		x = 100.0;
	d.delta = prof_round2(x);
	return d;
}

int prof_signif_test(uint64_t xb, uint64_t nb, uint64_t xa, uint64_t na,
		     struct prof_signif *out)
{
	double p1, p2, pool, se_pool, se;

	memset(out, 0, sizeof(*out));
	if (nb < xb || na < xa)
		return -EINVAL;
	if (nb == 0 || na == 0)
		return 0;
	out->valid = 1;
	p1 = (double)xb / (double)nb;
	p2 = (double)xa / (double)na;
	pool = ((double)xb + (double)xa) / ((double)nb + (double)na);
	se_pool = sqrt(pool * (1.0 - pool) * (1.0 / (double)nb + 1.0 / (double)na));
	se = sqrt(p1 * (1.0 - p1) / (double)nb + p2 * (1.0 - p2) / (double)na);
	out->change = 100.0 * (p2 - p1);
	out->ci_low = 100.0 * (p2 - p1 - Z95 * se);
	out->ci_high = 100.0 * (p2 - p1 + Z95 * se);
	if (0.0 < se_pool) {
		out->z = (p2 - p1) / se_pool;
		out->significant = Z95 <= fabs(out->z);
	}
	return 0;
}

/* ---- the union tree ---------------------------------------------------------- */

/* Maps every frame of @src to a frame of d->tree; a malloc'd array or
 * NULL when out of memory. */
static uint32_t *map_frames(struct prof_diff *d, const struct prof_profile *src)
{
	uint32_t nf = prof_frame_count(src);
	uint32_t *fmap = calloc(nf, sizeof(*fmap));

	for (uint32_t f = 1; fmap && f < nf; f++) {
		const struct prof_frame *sf = prof_frame_get(src, f);
		struct prof_frame df = *sf;

		df.name = prof_intern_cstr(d->tree, prof_str(src, sf->name));
		df.module = prof_intern_cstr(d->tree, prof_str(src, sf->module));
		df.file = prof_intern_cstr(d->tree, prof_str(src, sf->file));
		if (df.name == UINT32_MAX || df.module == UINT32_MAX ||
		    df.file == UINT32_MAX ||
		    (fmap[f] = prof_frame_intern(d->tree, &df)) == UINT32_MAX) {
			free(fmap);
			return NULL;
		}
	}
	return fmap;
}

/* One pending node of the merge: a tree node and the matching node of
 * each side (0 = absent, except at the roots). */
struct triple {
	uint32_t t, b, a;
};

struct merge {
	struct prof_diff *d;
	const struct prof_profile *before, *after;
	uint32_t *fmap_b, *fmap_a;
	uint32_t *mark; /* tree frame -> before child (0 = none), one step */
	struct triple *stack;
	size_t n, cap;
};

static int push(struct merge *m, uint32_t t, uint32_t b, uint32_t a)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		struct triple *s = realloc(m->stack, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		m->stack = s;
		m->cap = cap;
	}
	m->stack[m->n++] = (struct triple){ t, b, a };
	return 0;
}

/* Appends tree child @frame of @t for the side nodes @b / @a (0 = absent)
 * with their values, and queues it. */
static int merge_child(struct merge *m, uint32_t t, uint32_t frame,
		       uint32_t b, uint32_t a)
{
	const struct prof_node *nb = b ? prof_node_get(m->before, b) : NULL;
	const struct prof_node *na = a ? prof_node_get(m->after, a) : NULL;
	uint32_t c = prof_child_append(m->d->tree, t, frame);
	struct prof_diff_values *v;

	if (c == UINT32_MAX)
		return -ENOMEM;
	v = &m->d->vals[c];
	v->before_total = nb ? nb->total : 0;
	v->before_self = nb ? nb->self : 0;
	v->after_total = na ? na->total : 0;
	v->after_self = na ? na->self : 0;
	prof_node_add(m->d->tree, c, v->before_total + v->after_total,
		      v->before_self + v->after_self);
	return push(m, c, b, a);
}

/* Merges the children of one pending triple: each frame once, with the
 * matching child of each side. */
static int merge_step(struct merge *m, struct triple x)
{
	const struct prof_profile *B = m->before, *A = m->after;
	uint32_t c;
	int ret = 0;

	if (x.b)
		for (c = prof_node_get(B, x.b == UINT32_MAX ? 0 : x.b)->child; c;
		     c = prof_node_get(B, c)->sibling)
			m->mark[m->fmap_b[prof_node_get(B, c)->frame]] = c;
	if (x.a) {
		for (c = prof_node_get(A, x.a == UINT32_MAX ? 0 : x.a)->child;
		     c && !ret; c = prof_node_get(A, c)->sibling) {
			uint32_t f = m->fmap_a[prof_node_get(A, c)->frame];
			uint32_t b = m->mark[f];

			m->mark[f] = 0;
			ret = merge_child(m, x.t, f, b, c);
		}
	}
	if (x.b) {
		for (c = prof_node_get(B, x.b == UINT32_MAX ? 0 : x.b)->child; c;
		     c = prof_node_get(B, c)->sibling) {
			uint32_t f = m->fmap_b[prof_node_get(B, c)->frame];

			if (m->mark[f] && !ret)
				ret = merge_child(m, x.t, f, c, 0);
			m->mark[f] = 0;
		}
	}
	return ret;
}

/* Builds the union tree by walking both trees together: no lookups, each
 * node appended once. The roots are passed as UINT32_MAX (present). */
static int merge_trees(struct prof_diff *d, const struct prof_profile *before,
		       const struct prof_profile *after)
{
	struct merge m = { .d = d, .before = before, .after = after };
	int ret = -ENOMEM;

	m.fmap_b = map_frames(d, before);
	m.fmap_a = map_frames(d, after);
	if (!m.fmap_b || !m.fmap_a)
		goto out;
	m.mark = calloc(prof_frame_count(d->tree), sizeof(*m.mark));
	d->vals = calloc((size_t)prof_node_count(before) + prof_node_count(after),
			 sizeof(*d->vals));
	if (!m.mark || !d->vals || push(&m, 0, UINT32_MAX, UINT32_MAX) < 0)
		goto out;
	d->vals[0] = (struct prof_diff_values){
		prof_total(before), prof_node_get(before, 0)->self,
		prof_total(after), prof_node_get(after, 0)->self,
	};
	prof_node_add(d->tree, 0, prof_total(before) + prof_total(after),
		      d->vals[0].before_self + d->vals[0].after_self);
	ret = 0;
	while (m.n && !ret)
		ret = merge_step(&m, m.stack[--m.n]);
	d->nvals = prof_node_count(d->tree);
out:
	free(m.fmap_b);
	free(m.fmap_a);
	free(m.mark);
	free(m.stack);
	return ret;
}

int prof_diff_build(const struct prof_profile *before,
		    const struct prof_profile *after, struct prof_diff **out)
{
	const struct prof_meta *mb = prof_meta_const(before);
	const struct prof_meta *ma = prof_meta_const(after);
	struct prof_diff *d;

	*out = NULL;
	if (mb->unit != ma->unit)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->tree = prof_new(mb->unit);
	if (!d->tree || merge_trees(d, before, after) < 0) {
		prof_diff_free(d);
		return -ENOMEM;
	}
	*prof_meta(d->tree) = *ma;
	d->total_before = prof_total(before);
	d->total_after = prof_total(after);
	*out = d;
	return 0;
}

void prof_diff_free(struct prof_diff *d)
{
	if (!d)
		return;
	prof_free(d->tree);
	free(d->vals);
	free(d);
}

struct prof_profile *prof_diff_tree(struct prof_diff *d)
{
	return d->tree;
}

const struct prof_profile *prof_diff_tree_const(const struct prof_diff *d)
{
	return d->tree;
}

struct prof_diff_values prof_diff_values(const struct prof_diff *d,
					 uint32_t node)
{
	struct prof_diff_values zero = { 0 };

	return node < d->nvals ? d->vals[node] : zero;
}

uint64_t prof_diff_total_before(const struct prof_diff *d)
{
	return d->total_before;
}

uint64_t prof_diff_total_after(const struct prof_diff *d)
{
	return d->total_after;
}

struct prof_delta prof_diff_node_delta(const struct prof_diff *d,
				       uint32_t node, int self)
{
	struct prof_diff_values v = prof_diff_values(d, node);

	return self ? prof_delta_share(v.before_self, d->total_before,
				       v.after_self, d->total_after)
		    : prof_delta_share(v.before_total, d->total_before,
				       v.after_total, d->total_after);
}

int prof_diff_node_signif(const struct prof_diff *d, uint32_t node, int self,
			  struct prof_signif *out)
{
	struct prof_diff_values v;

	if (d->nvals <= node)
		return -EINVAL;
	v = d->vals[node];
	return self ? prof_signif_test(v.before_self, d->total_before,
				       v.after_self, d->total_after, out)
		    : prof_signif_test(v.before_total, d->total_before,
				       v.after_total, d->total_after, out);
}

int prof_diff_node_real(const struct prof_diff *d, uint32_t node, int self,
			double threshold_pp)
{
	struct prof_delta dl = prof_diff_node_delta(d, node, self);
	struct prof_signif sg;

	if (d->nvals <= node || dl.kind == PROF_DELTA_NEUTRAL)
		return 0;
	if (prof_meta_const(d->tree)->unit == PROF_UNIT_SAMPLES)
		return prof_diff_node_signif(d, node, self, &sg) == 0 &&
		       sg.significant;
	return threshold_pp <= fabs(dl.p_after - dl.p_before);
}

/* ---- ranking -------------------------------------------------------------------- */

struct rank_ctx {
	const struct prof_diff *d;
	struct prof_diff_fn *fns; /* per name string id */
	uint32_t *active;         /* per name: ancestors with that name */
	uint8_t *seen;
};

/* Visits every node depth first, adding self always and total only for
 * the outermost node of a name on each path. */
static void rank_walk(struct rank_ctx *c)
{
	const struct prof_profile *t = c->d->tree;
	uint32_t node = prof_node_get(t, 0)->child;

	while (node) {
		const struct prof_node *n = prof_node_get(t, node);
		const struct prof_frame *f = prof_frame_get(t, n->frame);
		int row = f->kind == PROF_KIND_PROCESS || f->kind == PROF_KIND_THREAD;
		struct prof_diff_values v = c->d->vals[node];
		struct prof_diff_fn *fn = &c->fns[f->name];

		if (!row) {
			c->seen[f->name] = 1;
			fn->self_before += v.before_self;
			fn->self_after += v.after_self;
			if (c->active[f->name]++ == 0) {
				fn->total_before += v.before_total;
				fn->total_after += v.after_total;
			}
		}
		if (n->child) {
			node = n->child;
			continue;
		}
		/* Leave nodes until one has a next sibling. */
		for (;;) {
			const struct prof_node *m = prof_node_get(t, node);
			const struct prof_frame *g = prof_frame_get(t, m->frame);

			if (g->kind != PROF_KIND_PROCESS && g->kind != PROF_KIND_THREAD)
				c->active[g->name]--;
			if (m->sibling) {
				node = m->sibling;
				break;
			}
			node = m->parent;
			if (!node)
				break;
		}
	}
}

static double fn_change(const struct prof_diff_fn *f)
{
	return fabs(f->change);
}

static int cmp_fn(const void *a, const void *b, void *arg)
{
	const struct prof_diff_fn *x = a, *y = b;
	const struct prof_profile *t = arg;
	double cx = fn_change(x), cy = fn_change(y);

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(prof_str(t, x->name), prof_str(t, y->name));
}

int prof_diff_rank(const struct prof_diff *d, enum prof_rank_by by,
		   struct prof_diff_fn **out, size_t *n)
{
	uint32_t ns = prof_str_count(d->tree);
	struct rank_ctx c = { .d = d };
	size_t k = 0;
	int ret = -ENOMEM;

	*out = NULL;
	*n = 0;
	c.fns = calloc(ns, sizeof(*c.fns));
	c.active = calloc(ns, sizeof(*c.active));
	c.seen = calloc(ns, 1);
	if (!c.fns || !c.active || !c.seen)
		goto done;
	rank_walk(&c);
	for (uint32_t s = 0; s < ns; s++) {
		struct prof_diff_fn *f = &c.fns[s];
		const struct prof_delta *r;

		if (!c.seen[s])
			continue;
		f->name = s;
		f->self_delta = prof_delta_share(f->self_before, d->total_before,
						 f->self_after, d->total_after);
		f->total_delta = prof_delta_share(f->total_before, d->total_before,
						  f->total_after, d->total_after);
		r = by == PROF_RANK_SELF ? &f->self_delta : &f->total_delta;
		f->change = prof_round2(r->p_after - r->p_before);
		c.fns[k++] = *f;
	}
	if (k)
		qsort_r(c.fns, k, sizeof(*c.fns), cmp_fn, d->tree);
	*out = c.fns;
	*n = k;
	c.fns = NULL;
	ret = 0;
done:
	free(c.fns);
	free(c.active);
	free(c.seen);
	return ret;
}
