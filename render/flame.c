/* SPDX-License-Identifier: MIT */
/* Flame graph geometry: nodes to rectangles, with folding and zoom. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/flame.h"

struct ctx {
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

static void lay(struct ctx *c, uint32_t id, uint32_t depth, double fx,
		double fw);

/* Lays out the children of @last, starting at @fx, one row up. */
static void lay_children(struct ctx *c, uint32_t last, uint32_t depth,
			 double fx)
{
	const struct prof_node *n = prof_node_get(c->p, last);
	uint32_t nsmall = 0, first_small = 0;
	uint64_t small_val = 0;
	double x = fx;

	if (!n || beyond(c->o, depth))
		return;
	for (uint32_t ch = n->child; ch && !c->err;) {
		const struct prof_node *cn = prof_node_get(c->p, ch);
		double w = (double)cn->total * c->scale;

		if (c->base && cn->total * 1000 < c->base) {
			if (!nsmall)
				first_small = ch;
			nsmall++;
			small_val += cn->total;
		} else {
			if (w >= c->o->min_px)
				lay(c, ch, depth, x, w);
			x += w;
		}
		ch = cn->sibling;
	}
	if (nsmall == 1) {
		double w = (double)small_val * c->scale;

		if (w >= c->o->min_px)
			lay(c, first_small, depth, x, w);
	} else if (nsmall > 1) {
		double w = (double)small_val * c->scale;

		if (w >= c->o->min_px)
			emit(c, last, last, nsmall, depth, x, w, RD_BOX_SMALL,
			     small_val);
	}
}

static void lay(struct ctx *c, uint32_t id, uint32_t depth, double fx,
		double fw)
{
	const struct prof_node *n = prof_node_get(c->p, id);
	uint32_t last = id, count = 1;

	if (!n)
		return;
	if (!c->o->unfold && foldable(c->p, id)) {
		for (;;) {
			const struct prof_node *ln = prof_node_get(c->p, last);
			const struct prof_node *ch;

			if (!ln->child)
				break;
			ch = prof_node_get(c->p, ln->child);
			if (ch->sibling || !foldable(c->p, ln->child) ||
			    !(ch->total * 100 > ln->total * 99))
				break;
			last = ln->child;
			count++;
		}
	}
	emit(c, id, last, count, depth, fx, fw, count > 1 ? RD_BOX_CHAIN : 0,
	     n->total);
	lay_children(c, last, depth + 1, fx);
}

int rd_flame_layout(const struct prof_profile *p,
		    const struct rd_flame_opts *o, struct rd_boxes *out)
{
	struct ctx c = { .p = p, .o = o, .out = out };
	const struct prof_node *f = prof_node_get(p, o->focus);
	uint32_t path[4096], depth = 0;
	size_t np = 0;

	out->n = 0;
	out->max_depth = 0;
	if (!f || o->area.w <= 0 || o->area.h <= 0 || o->row_h <= 0)
		return -EINVAL;
	if (f->total == 0)
		return 0;
	/* The path root..parent of the focus, drawn full width. */
	for (uint32_t a = o->focus; a != 0 && np < 4096;) {
		a = prof_node_get(p, a)->parent;
		path[np++] = a;
	}
	for (size_t i = np; i-- > 0; depth++) {
		const struct prof_node *an = prof_node_get(p, path[i]);

		emit(&c, path[i], path[i], 1, depth, 0, o->area.w,
		     RD_BOX_ANCESTOR, an->total);
	}
	c.scale = (double)o->area.w / (double)f->total;
	c.base = o->unfold ? 0 : f->total;
	lay(&c, o->focus, depth, 0, o->area.w);
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
