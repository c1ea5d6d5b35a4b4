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
	if (right <= left && fw >= 0.5) {
		/* Half a pixel or more is drawn as at least one pixel. */
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

static void lay(struct ctx *c, uint32_t i, uint32_t depth, double fx,
		double fw);

/* Lays out the children of preorder node @last, from @fx, one row up. */
static void lay_children(struct ctx *c, uint32_t last, uint32_t depth,
			 double fx)
{
	const struct rd_tree *t = c->t;
	const struct rd_tnode *v = t->v;
	uint32_t nsmall = 0, first_small = 0;
	uint64_t small_val = 0;
	double x = fx;

	if (beyond(c->o, depth))
		return;
	for (uint32_t k = t->kid_off[last]; k < t->kid_off[last + 1] && !c->err; k++) {
		uint64_t tot = t->kid_total[k];
		double w = (double)tot * c->scale;

		if (c->base && tot * 1000 < c->base) {
			if (!nsmall)
				first_small = t->kid[k];
			nsmall++;
			small_val += tot;
		} else {
			if (w >= c->o->min_px)
				lay(c, t->kid[k], depth, x, w);
			x += w;
		}
	}
	if (nsmall == 1) {
		double w = (double)small_val * c->scale;

		if (w >= c->o->min_px)
			lay(c, first_small, depth, x, w);
	} else if (nsmall > 1) {
		double w = (double)small_val * c->scale;

		if (w >= c->o->min_px)
			emit(c, v[last].id, v[last].id, nsmall, depth, x, w,
			     RD_BOX_SMALL, small_val);
	}
}

static void lay(struct ctx *c, uint32_t i, uint32_t depth, double fx,
		double fw)
{
	const struct rd_tnode *v = c->t->v;
	uint32_t last = i, count = 1;

	if (!c->o->unfold && foldable(c->p, v[i].id)) {
		/* The only child is last + 1 when it spans the whole subtree. */
		while (v[last].size > 1 && v[last + 1].size == v[last].size - 1 &&
		       v[last + 1].total * 100 > v[last].total * 99 &&
		       foldable(c->p, v[last + 1].id)) {
			last++;
			count++;
		}
	}
	emit(c, v[i].id, v[last].id, count, depth, fx, fw,
	     count > 1 ? RD_BOX_CHAIN : 0, v[i].total);
	lay_children(c, last, depth + 1, fx);
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
	fi = t->pre[o->focus];
	if (t->v[fi].total == 0)
		return 0;
	/* The path root..parent of the focus, drawn full width. */
	for (uint32_t a = fi; a != 0 && np < 4096;) {
		a = t->v[a].parent;
		path[np++] = a;
	}
	for (size_t i = np; i-- > 0; depth++)
		emit(&c, t->v[path[i]].id, t->v[path[i]].id, 1, depth, 0,
		     o->area.w, RD_BOX_ANCESTOR, t->v[path[i]].total);
	c.scale = (double)o->area.w / (double)t->v[fi].total;
	c.base = o->unfold ? 0 : t->v[fi].total;
	lay(&c, fi, depth, 0, o->area.w);
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
