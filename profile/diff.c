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

/* Copies @src's nodes into d->tree; @side 0 = before, 1 = after. The node
 * map is kept in *@map_out for filling the per-side values. */
static int add_side(struct prof_diff *d, const struct prof_profile *src,
		    uint32_t **map_out)
{
	uint32_t nf = prof_frame_count(src), nn = prof_node_count(src);
	uint32_t *fmap = calloc(nf, sizeof(*fmap));
	uint32_t *nmap = calloc(nn, sizeof(*nmap));
	int ret = -ENOMEM;

	if (!fmap || !nmap)
		goto out;
	for (uint32_t f = 1; f < nf; f++) {
		const struct prof_frame *sf = prof_frame_get(src, f);
		struct prof_frame df = *sf;

		df.name = prof_intern_cstr(d->tree, prof_str(src, sf->name));
		df.module = prof_intern_cstr(d->tree, prof_str(src, sf->module));
		df.file = prof_intern_cstr(d->tree, prof_str(src, sf->file));
		if (df.name == UINT32_MAX || df.module == UINT32_MAX ||
		    df.file == UINT32_MAX)
			goto out;
		fmap[f] = prof_frame_intern(d->tree, &df);
		if (fmap[f] == UINT32_MAX)
			goto out;
	}
	for (uint32_t i = 0; i < nn; i++) {
		const struct prof_node *sn = prof_node_get(src, i);
		uint32_t t = i ? prof_child_get(d->tree, nmap[sn->parent],
						fmap[sn->frame]) : 0;

		if (t == UINT32_MAX)
			goto out;
		nmap[i] = t;
		prof_node_add(d->tree, t, sn->total, sn->self);
	}
	*map_out = nmap;
	nmap = NULL;
	ret = 0;
out:
	free(fmap);
	free(nmap);
	return ret;
}

static void fill_side(struct prof_diff *d, const struct prof_profile *src,
		      const uint32_t *map, int after)
{
	for (uint32_t i = 0; i < prof_node_count(src); i++) {
		const struct prof_node *sn = prof_node_get(src, i);
		struct prof_diff_values *v = &d->vals[map[i]];

		if (after) {
			v->after_total += sn->total;
			v->after_self += sn->self;
		} else {
			v->before_total += sn->total;
			v->before_self += sn->self;
		}
	}
}

int prof_diff_build(const struct prof_profile *before,
		    const struct prof_profile *after, struct prof_diff **out)
{
	const struct prof_meta *mb = prof_meta_const(before);
	const struct prof_meta *ma = prof_meta_const(after);
	uint32_t *map_b = NULL, *map_a = NULL;
	struct prof_diff *d;
	int ret = -ENOMEM;

	*out = NULL;
	if (mb->unit != ma->unit)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->tree = prof_new(mb->unit);
	if (!d->tree)
		goto err;
	*prof_meta(d->tree) = *ma;
	if (add_side(d, before, &map_b) < 0 || add_side(d, after, &map_a) < 0)
		goto err;
	d->nvals = prof_node_count(d->tree);
	d->vals = calloc(d->nvals, sizeof(*d->vals));
	if (!d->vals)
		goto err;
	fill_side(d, before, map_b, 0);
	fill_side(d, after, map_a, 1);
	d->total_before = prof_total(before);
	d->total_after = prof_total(after);
	free(map_b);
	free(map_a);
	*out = d;
	return 0;
err:
	free(map_b);
	free(map_a);
	prof_diff_free(d);
	return ret;
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
