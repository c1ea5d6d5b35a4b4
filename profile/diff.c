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
#include <sys/mman.h>

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

/* Classifies the change from @vb to @va (raw values) and, when both are
 * present, sets Δ = clamp(100·(after − before)/before, −100, 100) rounded,
 * where @before and @after are the quantities compared (shares or values).
 * A @before of 0 with a frame present before gives +100 if @after > 0. */
static struct prof_delta delta_of(struct prof_delta d, uint64_t vb, uint64_t va,
				  double before, double after)
{
	double x;

	if (vb == 0 && va == 0)
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
	if (before == 0.0) {
		d.delta = 0.0 < after ? 100.0 : 0.0;
		return d;
	}
	x = 100.0 * (after - before) / before;
	if (x < -100.0)
		x = -100.0;
	if (100.0 < x)
		x = 100.0;
	d.delta = prof_round2(x);
	return d;
}

struct prof_delta prof_delta_share(uint64_t vb, uint64_t tb, uint64_t va,
				   uint64_t ta)
{
	struct prof_delta d = { .kind = PROF_DELTA_NEUTRAL };

	d.p_before = share(vb, tb);
	d.p_after = share(va, ta);
	if (tb == 0 || ta == 0)
		return d;
	return delta_of(d, vb, va, d.p_before, d.p_after);
}

struct prof_delta prof_delta_abs(uint64_t vb, uint64_t va)
{
	return delta_of((struct prof_delta){ .kind = PROF_DELTA_NEUTRAL }, vb, va,
			(double)vb, (double)va);
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

/* The union tree is built depth first, one family at a time. A pending
 * union node carries the first child of its before node and of its after
 * node; merging it reads both families through their sibling links (each
 * node once, its frame already mapped to a union frame: every frame is
 * mapped once, beforehand), appends the union of the two families with
 * their values, and queues the children with more below, first child on
 * top. A tree made in depth-first order, as the folded loader makes them,
 * is so read in the order it lies in memory; later siblings, which can
 * lie anywhere, are asked for when queued, so those misses overlap with
 * the work. Nothing is looked up by hash per node: a call chain (one
 * child on each side) is compared directly, a small family pairwise, a
 * wide one through marks per union frame. */

#define SMALL 8 /* families of up to this many before children: no marks */
#define HUGE_PAGE ((size_t)2 << 20)

/* An array of @n elements of @size bytes, uninitialised; from 256 KiB on
 * in huge pages (on a virtual machine a TLB miss costs more than the
 * cache miss, and faulting in 4 KiB pages more than writing them). Free
 * with free(). NULL when out of memory. */
static void *big_alloc(size_t n, size_t size)
{
	size_t bytes;
	void *a;

	if (n == 0 || SIZE_MAX / 2 / size < n)
		return n ? NULL : malloc(1);
	bytes = n * size;
	if (bytes < HUGE_PAGE / 8)
		return malloc(bytes);
	bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	a = aligned_alloc(HUGE_PAGE, bytes);
	if (a)
		(void)madvise(a, bytes, MADV_HUGEPAGE);
	return a;
}

/* Interns string @id of @src into @t through the cache @smap (per source
 * string: union id + 1, 0 = not yet). UINT32_MAX when out of memory. */
static uint32_t map_str(struct prof_profile *t, const struct prof_profile *src,
			uint32_t *smap, uint32_t id)
{
	uint32_t s;

	if (id == 0)
		return 0;
	if (smap[id])
		return smap[id] - 1;
	s = prof_intern(t, prof_str(src, id), prof_str_len(src, id));
	if (s != UINT32_MAX)
		smap[id] = s + 1;
	return s;
}

/* Maps every frame of @src to a frame of @t; a malloc'd array or NULL
 * when out of memory. *@same says whether every frame kept its id (as
 * the first profile mapped into an empty tree does). */
static uint32_t *map_frames(struct prof_profile *t, const struct prof_profile *src,
			    int *same)
{
	uint32_t nf = prof_frame_count(src);
	uint32_t *fmap = big_alloc(nf, sizeof(*fmap));
	uint32_t *smap = calloc(prof_str_count(src), sizeof(*smap));

	*same = 1;
	if (fmap)
		fmap[0] = 0;
	for (uint32_t f = 1; fmap && smap && f < nf; f++) {
		const struct prof_frame *sf = prof_frame_get(src, f);
		struct prof_frame df = *sf;

		df.name = map_str(t, src, smap, sf->name);
		df.module = map_str(t, src, smap, sf->module);
		df.file = map_str(t, src, smap, sf->file);
		if (df.name == UINT32_MAX || df.module == UINT32_MAX ||
		    df.file == UINT32_MAX ||
		    (fmap[f] = prof_frame_intern(t, &df)) == UINT32_MAX) {
			free(fmap);
			fmap = NULL;
		} else if (fmap[f] != f) {
			*same = 0;
		}
	}
	if (!smap) {
		free(fmap);
		fmap = NULL;
	}
	free(smap);
	return fmap;
}

/* A child of one side, read for merging. */
struct kid {
	uint64_t total, self;
	uint32_t frame; /* in the union tree */
	uint32_t child; /* its first child in the side's profile, 0 = none */
};

/* One side: its profile, its frame map and one family read from it. */
struct side {
	const struct prof_profile *p;
	uint32_t *fmap;
	int same; /* fmap is the identity: no lookups */
	struct kid *fam;
	uint32_t n, cap;
};

/* The kid for node @nd of @s. */
static inline struct kid side_kid(const struct side *s,
				  const struct prof_node *nd)
{
	return (struct kid){ nd->total, nd->self,
			     s->same ? nd->frame : s->fmap[nd->frame],
			     nd->child };
}

/* Reads the family that starts with node @first of @s into s->fam.
 * Returns 0 or -ENOMEM. */
static int side_read(struct side *s, uint32_t first)
{
	s->n = 0;
	for (uint32_t c = first; c; ) {
		const struct prof_node *nd = prof_node_get(s->p, c);

		if (s->n == s->cap) {
			uint32_t cap = s->cap ? s->cap * 2 : 64;
			struct kid *f = cap < s->cap ? NULL :
				realloc(s->fam, cap * sizeof(*f));

			if (!f)
				return -ENOMEM;
			s->fam = f;
			s->cap = cap;
		}
		s->fam[s->n++] = side_kid(s, nd);
		c = nd->sibling;
	}
	return 0;
}

/* One pending union node and the first child of its node on each side. */
struct pending {
	uint32_t t, b, a;
};

struct merge {
	struct prof_diff *d;
	struct side b, a;
	struct pending *stack;
	size_t n, cap;
	uint32_t *mark; /* union frame -> before kid + 1 (0 = none), one step */
};

/* The kid of a side that lacks the path: no values, no children. */
static const struct kid NO_KID;

/* Appends union child @frame of @t for the side kids @kb / @ka (NO_KID
 * when absent) with their values, and queues it; room on the stack was
 * made by merge_step(). */
static inline int merge_child(struct merge *m, uint32_t t, uint32_t frame,
			      const struct kid *kb, const struct kid *ka)
{
	uint32_t c = prof_child_append(m->d->tree, t, frame);

	if (c == UINT32_MAX)
		return -ENOMEM;
	m->d->vals[c] = (struct prof_diff_values){ kb->total, kb->self,
						   ka->total, ka->self };
	prof_node_add(m->d->tree, c, kb->total + ka->total, kb->self + ka->self);
	m->stack[m->n++] = (struct pending){ c, kb->child, ka->child };
	return 0;
}

/* Merges the families read when before's has at most SMALL children:
 * each after child looks for its match among those. */
static int merge_small(struct merge *m, uint32_t t)
{
	const struct kid *kb = m->b.fam, *ka = m->a.fam;
	unsigned used = 0;
	int ret = 0;

	for (uint32_t k = 0; k < m->a.n && !ret; k++) {
		const struct kid *match = &NO_KID;

		for (uint32_t j = 0; j < m->b.n; j++)
			if (kb[j].frame == ka[k].frame) {
				match = &kb[j];
				used |= 1u << j;
				break;
			}
		ret = merge_child(m, t, ka[k].frame, match, &ka[k]);
	}
	for (uint32_t j = 0; j < m->b.n && !ret; j++)
		if (!(used & 1u << j))
			ret = merge_child(m, t, kb[j].frame, &kb[j], &NO_KID);
	return ret;
}

/* Grows the stack to hold @more more pending nodes. 0 or -ENOMEM. */
static int stack_grow(struct merge *m, size_t more)
{
	size_t cap = m->cap ? m->cap : 1024;
	struct pending *st;

	while (cap - m->n < more)
		cap *= 2;
	st = realloc(m->stack, cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	m->stack = st;
	m->cap = cap;
	return 0;
}

/* Makes room for @more pending nodes. Returns 0 or -ENOMEM. */
static inline int stack_room(struct merge *m, size_t more)
{
	return more <= m->cap - m->n ? 0 : stack_grow(m, more);
}

/* merge_step() for the most common case, a call chain: each side has at
 * most one child. Returns 1 when it was not that case, else 0 or
 * -ENOMEM. */
static int merge_chain(struct merge *m, struct pending x)
{
	const struct prof_node *nb = x.b ? prof_node_get(m->b.p, x.b) : NULL;
	const struct prof_node *na = x.a ? prof_node_get(m->a.p, x.a) : NULL;
	struct kid kb = NO_KID, ka = NO_KID;
	int ret = 0;

	if ((nb && nb->sibling) || (na && na->sibling))
		return 1;
	if (stack_room(m, 2) < 0)
		return -ENOMEM;
	if (nb)
		kb = side_kid(&m->b, nb);
	if (na)
		ka = side_kid(&m->a, na);
	if (nb && na && kb.frame == ka.frame)
		return merge_child(m, x.t, ka.frame, &kb, &ka);
	if (na)
		ret = merge_child(m, x.t, ka.frame, &NO_KID, &ka);
	if (nb && !ret)
		ret = merge_child(m, x.t, kb.frame, &kb, &NO_KID);
	return ret;
}

/* Merges the children of union node @t: each frame once, with the
 * matching child of each side; after's order first, then what only
 * before has. */
static int merge_step(struct merge *m, struct pending x)
{
	const struct kid *kb, *ka;
	uint32_t k, t = x.t;
	int ret = merge_chain(m, x);

	if (ret <= 0)
		return ret;
	if (side_read(&m->b, x.b) < 0 || side_read(&m->a, x.a) < 0 ||
	    stack_room(m, (size_t)m->b.n + m->a.n) < 0)
		return -ENOMEM;
	if (m->b.n <= SMALL)
		return merge_small(m, t);
	kb = m->b.fam;
	ka = m->a.fam;
	for (k = 0; k < m->b.n; k++)
		m->mark[kb[k].frame] = k + 1;
	for (k = 0, ret = 0; k < m->a.n && !ret; k++) {
		uint32_t f = ka[k].frame, j = m->mark[f];

		m->mark[f] = 0;
		ret = merge_child(m, t, f, j ? &kb[j - 1] : &NO_KID, &ka[k]);
	}
	for (k = 0; k < m->b.n; k++) {
		uint32_t f = kb[k].frame;

		if (m->mark[f] && !ret)
			ret = merge_child(m, t, f, &kb[k], &NO_KID);
		m->mark[f] = 0;
	}
	return ret;
}

/* The walk reads a tree made in depth-first order about in id order: the
 * frame map entry of node @node + AHEAD (a random place in a map larger
 * than the L2 cache) is asked for now, so it is there when that node
 * comes. Inline: a function doing nothing but prefetches may be dropped
 * whole by interprocedural analysis (GCC 12 does). */
#define AHEAD 8

static inline __attribute__((always_inline)) void
side_ahead(const struct side *s, uint32_t node)
{
	const struct prof_node *nd;

	if (s->same || node == 0)
		return;
	nd = prof_node_get(s->p, node + AHEAD);
	if (nd)
		__builtin_prefetch(&s->fmap[nd->frame]);
}

static int merge_walk(struct merge *m)
{
	int ret = 0;

	while (m->n && !ret) {
		size_t n0 = m->n - 1;
		struct pending x = m->stack[n0];

		m->n = n0;
		side_ahead(&m->b, x.b);
		side_ahead(&m->a, x.a);
		ret = merge_step(m, x);
		/* Visit the children first to last (in a tree made in depth
		 * first order, that reads its nodes in order): reverse what
		 * was pushed, and ask for the nodes of all but the first,
		 * which comes next. Inline: a function doing nothing but
		 * prefetches may be dropped whole by interprocedural analysis
		 * (GCC 12 does). */
		for (size_t i = n0, j = m->n; i + 1 < j; i++, j--) {
			struct pending tmp = m->stack[i];

			m->stack[i] = m->stack[j - 1];
			m->stack[j - 1] = tmp;
		}
		for (size_t i = n0; i + 1 < m->n; i++) {
			if (m->stack[i].b)
				__builtin_prefetch(prof_node_get(m->b.p, m->stack[i].b));
			if (m->stack[i].a)
				__builtin_prefetch(prof_node_get(m->a.p, m->stack[i].a));
		}
	}
	return ret;
}

static int merge_trees(struct prof_diff *d, const struct prof_profile *before,
		       const struct prof_profile *after)
{
	size_t most = (size_t)prof_node_count(before) + prof_node_count(after);
	struct merge m = {
		.d = d, .b.p = before, .a.p = after,
	};
	int ret = -ENOMEM;

	m.b.fmap = map_frames(d->tree, before, &m.b.same);
	m.a.fmap = map_frames(d->tree, after, &m.a.same);
	if (!m.b.fmap || !m.a.fmap)
		goto out;
	m.mark = calloc(prof_frame_count(d->tree), sizeof(*m.mark));
	d->vals = big_alloc(most, sizeof(*d->vals));
	if (!m.mark || !d->vals || stack_room(&m, 1) < 0)
		goto out;
	d->vals[0] = (struct prof_diff_values){
		prof_total(before), prof_node_get(before, 0)->self,
		prof_total(after), prof_node_get(after, 0)->self,
	};
	prof_node_add(d->tree, 0, prof_total(before) + prof_total(after),
		      d->vals[0].before_self + d->vals[0].after_self);
	m.stack[m.n++] = (struct pending){ 0, prof_node_get(before, 0)->child,
					   prof_node_get(after, 0)->child };
	ret = merge_walk(&m);
	d->nvals = prof_node_count(d->tree);
out:
	free(m.b.fmap);
	free(m.a.fmap);
	free(m.b.fam);
	free(m.a.fam);
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
