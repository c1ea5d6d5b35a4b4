/* SPDX-License-Identifier: MIT */
/* Flame graph geometry: nodes to rectangles, with folding and zoom. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/flame.h"

struct ctx {
	const struct rd_tree *t;
	const struct prof_profile *p;
	const struct rd_flame_opts *o;
	struct rd_boxes *out;
	double scale;        /* pixels per unit of value */
	uint64_t base;       /* total of the focus; 0: never merge */
	uint32_t bucket_of;  /* preorder index whose small children only are
			      * laid out (opts.bucket), else UINT32_MAX */
	uint64_t bucket_total; /* that node's total */
	int err;
};

void rd_boxes_free(struct rd_boxes *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static int row_y(const struct rd_flame_opts *o, uint32_t depth)
{
	long d = (long)depth * o->row_h;

	if (o->icicle)
		return (int)(o->area.y + d - o->scroll);
	return (int)(o->area.y + o->area.h - d - o->row_h + o->scroll);
}

/* 1 when rows at @depth and deeper are all outside the area. */
static int beyond(const struct rd_flame_opts *o, uint32_t depth)
{
	int y = row_y(o, depth);

	if (o->icicle)
		return y >= o->area.y + o->area.h;
	return y + o->row_h <= o->area.y;
}

static int foldable(const struct prof_profile *p, uint32_t id)
{
	const struct prof_node *n = prof_node_get(p, id);
	const struct prof_frame *f;

	if (id == 0 || !n)
		return 0;
	f = prof_frame_get(p, n->frame);
	return f && f->kind != PROF_KIND_PROCESS && f->kind != PROF_KIND_THREAD;
}

static void emit(struct ctx *c, uint32_t node, uint32_t last, uint32_t count,
		 uint32_t depth, double fx, double fw, uint32_t flags,
		 uint64_t value)
{
	const struct rd_flame_opts *o = c->o;
	struct rd_boxes *b = c->out;
	struct rd_box *x;
	long left, right;
	int y = row_y(o, depth);

	if (depth > b->max_depth)
		b->max_depth = depth;
	if (y + o->row_h <= o->area.y || y >= o->area.y + o->area.h)
		return;
	left = o->area.x + lround(fx);
	right = o->area.x + lround(fx + fw);
	if (left < o->area.x)
		left = o->area.x;
	if (right > o->area.x + o->area.w)
		right = o->area.x + o->area.w;
	if (right <= left && fw >= o->min_px) {
		/* A box kept by the threshold (half a pixel in the window)
		 * is at least one pixel wide. */
		if (right < o->area.x + o->area.w)
			right = left + 1;
		else
			left = right - 1;
	}
	if (right <= left)
		return;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct rd_box *v = realloc(b->v, cap * sizeof(*v));

		if (!v) {
			c->err = -ENOMEM;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	x = &b->v[b->n++];
	x->x = (int32_t)left;
	x->w = (int32_t)(right - left);
	x->y = y;
	x->h = o->row_h;
	x->fx = fx;
	x->fw = fw;
	x->node = node;
	x->last = last;
	x->count = count;
	x->depth = depth;
	x->value = value;
	if (fw <= 10.0)
		flags |= RD_BOX_THIN;
	if (fw >= 20.0)
		flags |= RD_BOX_LABEL;
	x->flags = flags;
}

/* Work for the layout loop: a node to lay out, or (count > 0) the bucket of
 * count small children of node i. An explicit stack, not recursion, so a
 * stack 200,000 frames deep lays out like a shallow one. */
struct item {
	uint32_t i, depth, count;
	double fx, fw;
	uint64_t value;
};

struct work {
	struct item *v;
	size_t n, cap;
};

static int push(struct work *w, struct item it)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct item *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = it;
	return 0;
}

/* Queues the children of preorder node @last (row @depth, from @fx) so
 * they pop in order: the large ones, then the small one or the bucket. */
static int queue_children(struct ctx *c, struct work *w, uint32_t last,
			  uint32_t depth, double fx)
{
	struct rd_kids ks;
	size_t base = w->n;
	uint32_t nsmall = 0, first_small = 0;
	uint64_t small_val = 0;
	double x = fx, sw;

	if (beyond(c->o, depth))
		return 0;
	for (rd_kids_start(&ks, c->t, last); rd_kids_next(&ks);) {
		uint32_t k = ks.at;
		uint64_t tot = ks.total;
		double wd = (double)tot * c->scale;

		if (last == c->bucket_of && tot * 1000 >= c->bucket_total)
			continue; /* an opened bucket shows only the small ones */
		if (c->base && tot * 1000 < c->base) {
			if (!nsmall)
				first_small = k;
			nsmall++;
			small_val += tot;
			continue;
		}
		if (wd >= c->o->min_px &&
		    push(w, (struct item){ k, depth, 0, x, wd, tot }) < 0)
			return -ENOMEM;
		x += wd;
	}
	sw = (double)small_val * c->scale;
	if (nsmall && sw >= c->o->min_px &&
	    push(w, (struct item){ nsmall == 1 ? first_small : last, depth,
				   nsmall == 1 ? 0 : nsmall, x, sw, small_val }) < 0)
		return -ENOMEM;
	for (size_t a = base, b = w->n; a + 1 < b; a++, b--) {
		struct item tmp = w->v[a];

		w->v[a] = w->v[b - 1];
		w->v[b - 1] = tmp;
	}
	return 0;
}

/* The last node of the chain starting at preorder node @i: while the only
 * child (i + 1 spanning the whole subtree) holds more than 99%. */
static uint32_t chain_end(struct ctx *c, uint32_t i, uint32_t *count)
{
	const struct rd_tree *t = c->t;
	uint32_t last = i;

	*count = 1;
	if (c->o->unfold || !foldable(c->p, rd_tree_id(t, i)))
		return i;
	while (rd_tree_only_child(t, last) &&
	       rd_tree_total(t, last + 1) * 100 > rd_tree_total(t, last) * 99 &&
	       foldable(c->p, rd_tree_id(t, last + 1))) {
		last++;
		(*count)++;
	}
	return last;
}

static void lay(struct ctx *c, uint32_t root, uint32_t depth, double fw)
{
	const struct rd_tree *t = c->t;
	struct work w = { 0 };

	if (push(&w, (struct item){ root, depth, 0, 0, fw, rd_tree_total(t, root) }) < 0)
		c->err = -ENOMEM;
	while (w.n && !c->err) {
		struct item it = w.v[--w.n];
		uint32_t last, count;

		if (it.count) {
			emit(c, rd_tree_id(t, it.i), rd_tree_id(t, it.i), it.count, it.depth, it.fx,
			     it.fw, RD_BOX_SMALL, it.value);
			continue;
		}
		last = chain_end(c, it.i, &count);
		emit(c, rd_tree_id(t, it.i), rd_tree_id(t, last), count, it.depth,
		     it.fx, it.fw, count > 1 ? RD_BOX_CHAIN : 0,
		     rd_tree_total(t, it.i));
		if (queue_children(c, &w, last, it.depth + 1, it.fx) < 0)
			c->err = -ENOMEM;
	}
	free(w.v);
}

int rd_flame_layout(const struct rd_tree *t,
		    const struct rd_flame_opts *o, struct rd_boxes *out)
{
	struct ctx c = { .t = t, .p = t->p, .o = o, .out = out };
	uint32_t path[4096], depth = 0, fi;
	size_t np = 0;

	out->n = 0;
	out->max_depth = 0;
	if (o->focus >= prof_node_count(t->p) || o->area.w <= 0 ||
	    o->area.h <= 0 || o->row_h <= 0 || t->n == 0)
		return -EINVAL;
	fi = rd_tree_pre(t, o->focus);
	if (rd_tree_total(t, fi) == 0)
		return 0;
	/* The path root..parent of the focus, drawn full width. */
	for (uint32_t a = fi; a != 0 && np < 4096;) {
		a = rd_tree_parent(t, a);
		path[np++] = a;
	}
	for (size_t i = np; i-- > 0; depth++)
		emit(&c, rd_tree_id(t, path[i]), rd_tree_id(t, path[i]), 1, depth,
		     0, o->area.w, RD_BOX_ANCESTOR, rd_tree_total(t, path[i]));
	c.scale = (double)o->area.w / (double)rd_tree_total(t, fi);
	c.base = o->unfold ? 0 : rd_tree_total(t, fi);
	c.bucket_of = UINT32_MAX;
	if (o->bucket) {
		uint64_t sum = 0;
		struct rd_kids ks;

		for (rd_kids_start(&ks, t, fi); rd_kids_next(&ks);)
			if (ks.total * 1000 < rd_tree_total(t, fi))
				sum += ks.total;
		if (sum) {
			c.bucket_of = fi;
			c.bucket_total = rd_tree_total(t, fi);
			c.scale = (double)o->area.w / (double)sum;
			c.base = o->unfold ? 0 : sum;
		}
	}
	lay(&c, fi, depth, o->area.w);
	return c.err;
}

const struct rd_box *rd_flame_hit(const struct rd_boxes *b, int x, int y)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct rd_box *r = &b->v[i];

		if (x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h)
			return r;
	}
	return NULL;
}

long rd_flame_find(const struct rd_boxes *b, const struct prof_profile *p,
		   uint32_t node)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct rd_box *r = &b->v[i];

		if (r->flags & RD_BOX_SMALL)
			continue;
		if (r->node == node || r->last == node)
			return (long)i;
		if (r->flags & RD_BOX_CHAIN) {
			for (uint32_t a = r->last; a != r->node && a != 0;) {
				a = prof_node_get(p, a)->parent;
				if (a == node)
					return (long)i;
			}
		}
	}
	return -1;
}
