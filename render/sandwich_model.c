/* SPDX-License-Identifier: MIT */
/* The sandwich model (render/sandwich.h): a function's callers (inverted)
 * and callees, merged from everywhere it appears, recursion counted once.
 * Its pane is render/sandwich_pane.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/sandwich.h"

struct sw {
	const struct prof_profile *p;
	const struct prof_diff *d;
	struct rd_sandwich *out;
	uint8_t *is_f;     /* per source frame: has the function's name */
	uint32_t *fmap[2]; /* per source frame: frame in callers / callees */
	uint32_t root[2];  /* the function's top-level node in each output */
	uint32_t vcap[2];
	struct {           /* pending subtree copy: source node, output node */
		uint32_t src, dst;
	} *stack;
	size_t cap;
};

void rd_sandwich_free(struct rd_sandwich *s)
{
	prof_free(s->callers);
	prof_free(s->callees);
	free(s->callers_v);
	free(s->callees_v);
	memset(s, 0, sizeof(*s));
}

/* The frame in output @side for source frame @f, interned on first use.
 * UINT32_MAX when out of memory. */
static uint32_t map_frame(struct sw *c, int side, uint32_t f)
{
	struct prof_profile *o = side ? c->out->callees : c->out->callers;
	const struct prof_frame *sf;
	struct prof_frame df;

	if (c->fmap[side][f])
		return c->fmap[side][f];
	sf = prof_frame_get(c->p, f);
	df = *sf;
	df.name = prof_intern_cstr(o, prof_str(c->p, sf->name));
	df.module = prof_intern_cstr(o, prof_str(c->p, sf->module));
	df.file = prof_intern_cstr(o, prof_str(c->p, sf->file));
	if (df.name == UINT32_MAX || df.module == UINT32_MAX || df.file == UINT32_MAX)
		return UINT32_MAX;
	return c->fmap[side][f] = prof_frame_intern(o, &df);
}

/* The child of @parent for source frame @f in output @side, and its diff
 * values slot grown to cover it. UINT32_MAX when out of memory. */
static uint32_t child(struct sw *c, int side, uint32_t parent, uint32_t f)
{
	struct prof_profile *o = side ? c->out->callees : c->out->callers;
	struct prof_diff_values **v = side ? &c->out->callees_v : &c->out->callers_v;
	uint32_t fr = map_frame(c, side, f), id;

	if (fr == UINT32_MAX)
		return UINT32_MAX;
	id = prof_child_get(o, parent, fr);
	if (id == UINT32_MAX || !c->d || id < c->vcap[side])
		return id;
	{
		uint32_t cap = c->vcap[side] ? c->vcap[side] * 2 : 256;
		struct prof_diff_values *nv;

		while (cap <= id)
			cap *= 2;
		nv = realloc(*v, cap * sizeof(*nv));
		if (!nv)
			return UINT32_MAX;
		memset(nv + c->vcap[side], 0, (cap - c->vcap[side]) * sizeof(*nv));
		*v = nv;
		c->vcap[side] = cap;
	}
	return id;
}

enum { V_TOTAL = 1, V_SELF = 2, V_TOTAL_AS_SELF = 4 };

/* Adds source node @src's per-side values to output node @dst, as @how
 * says. */
static void add_vals(struct sw *c, int side, uint32_t dst, uint32_t src,
		     unsigned how)
{
	struct prof_diff_values *v, s;

	if (!c->d)
		return;
	v = &(side ? c->out->callees_v : c->out->callers_v)[dst];
	s = prof_diff_values(c->d, src);
	if (how & V_TOTAL) {
		v->before_total += s.before_total;
		v->after_total += s.after_total;
	}
	if (how & V_SELF) {
		v->before_self += s.before_self;
		v->after_self += s.after_self;
	}
	if (how & V_TOTAL_AS_SELF) {
		v->before_self += s.before_total;
		v->after_self += s.after_total;
	}
}

/* Callers of occurrence @n: its ancestors, nearest first, under the
 * function's node, each with n's total. */
static int add_callers(struct sw *c, uint32_t n)
{
	struct prof_profile *o = c->out->callers;
	const struct prof_node *sn = prof_node_get(c->p, n);
	uint64_t v = sn->total;
	uint32_t cur = c->root[0], a = sn->parent;

	prof_node_add(o, 0, v, 0);
	prof_node_add(o, cur, v, 0);
	add_vals(c, 0, 0, n, V_TOTAL);
	add_vals(c, 0, cur, n, V_TOTAL);
	for (; a; a = prof_node_get(c->p, a)->parent) {
		cur = child(c, 0, cur, prof_node_get(c->p, a)->frame);
		if (cur == UINT32_MAX)
			return -ENOMEM;
		prof_node_add(o, cur, v, 0);
		add_vals(c, 0, cur, n, V_TOTAL);
	}
	/* The outermost caller (or the function itself at the top) is where
	 * the value ends: its self. */
	prof_node_add(o, cur, 0, v);
	add_vals(c, 0, cur, n, V_TOTAL_AS_SELF);
	return 0;
}

static int push(struct sw *c, size_t *sp, uint32_t src, uint32_t dst)
{
	if (*sp == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		void *s = realloc(c->stack, cap * sizeof(*c->stack));

		if (!s)
			return -ENOMEM;
		c->stack = s;
		c->cap = cap;
	}
	c->stack[*sp].src = src;
	c->stack[(*sp)++].dst = dst;
	return 0;
}

/* Callees of occurrence @n: its subtree merged under the function's node. */
static int add_callees(struct sw *c, uint32_t n)
{
	struct prof_profile *o = c->out->callees;
	const struct prof_node *sn = prof_node_get(c->p, n);
	size_t sp = 0;

	prof_node_add(o, 0, sn->total, 0);
	prof_node_add(o, c->root[1], sn->total, sn->self);
	add_vals(c, 1, 0, n, V_TOTAL);
	add_vals(c, 1, c->root[1], n, V_TOTAL | V_SELF);
	if (push(c, &sp, n, c->root[1]) < 0)
		return -ENOMEM;
	while (sp) {
		uint32_t src = c->stack[sp - 1].src, dst = c->stack[sp - 1].dst;

		sp--;
		for (uint32_t k = prof_node_get(c->p, src)->child; k;
		     k = prof_node_get(c->p, k)->sibling) {
			const struct prof_node *kn = prof_node_get(c->p, k);
			uint32_t d = child(c, 1, dst, kn->frame);

			if (d == UINT32_MAX || push(c, &sp, k, d) < 0)
				return -ENOMEM;
			prof_node_add(o, d, kn->total, kn->self);
			add_vals(c, 1, d, k, V_TOTAL | V_SELF);
		}
	}
	return 0;
}

/* Visits every node depth first; each outermost occurrence of the
 * function adds its callers and callees. */
static int walk(struct sw *c)
{
	uint32_t node = prof_node_get(c->p, 0)->child, active = 0;
	int rc = 0;

	while (node && !rc) {
		const struct prof_node *n = prof_node_get(c->p, node);

		if (c->is_f[n->frame] && active++ == 0) {
			rc = add_callers(c, node);
			if (!rc)
				rc = add_callees(c, node);
		}
		if (n->child) {
			node = n->child;
			continue;
		}
		for (;;) {
			const struct prof_node *m = prof_node_get(c->p, node);

			if (c->is_f[m->frame])
				active--;
			if (m->sibling) {
				node = m->sibling;
				break;
			}
			node = m->parent;
			if (!node)
				break;
		}
	}
	return rc;
}

/* Marks the frames named @name; returns the first, 0 when none. */
static uint32_t mark_frames(struct sw *c, const char *name)
{
	uint32_t nf = prof_frame_count(c->p), first = 0;

	for (uint32_t f = 1; f < nf; f++) {
		const struct prof_frame *fr = prof_frame_get(c->p, f);

		if (fr->kind == PROF_KIND_PROCESS || fr->kind == PROF_KIND_THREAD)
			continue;
		if (!strcmp(prof_str(c->p, fr->name), name)) {
			c->is_f[f] = 1;
			if (!first)
				first = f;
		}
	}
	return first;
}

int rd_sandwich_build(const struct prof_profile *p, const struct prof_diff *d,
		      const char *name, struct rd_sandwich *out)
{
	struct sw c = { .p = p, .d = d, .out = out };
	uint32_t nf = prof_frame_count(p), first;
	enum prof_unit u = prof_meta_const(p)->unit;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	c.is_f = calloc(nf, 1);
	c.fmap[0] = calloc(nf, sizeof(uint32_t));
	c.fmap[1] = calloc(nf, sizeof(uint32_t));
	out->callers = prof_new(u);
	out->callees = prof_new(u);
	if (!c.is_f || !c.fmap[0] || !c.fmap[1] || !out->callers || !out->callees)
		goto out;
	first = mark_frames(&c, name);
	if (!first) {
		rc = -ENOENT;
		goto out;
	}
	*prof_meta(out->callers) = *prof_meta_const(p);
	*prof_meta(out->callees) = *prof_meta_const(p);
	if ((c.root[0] = child(&c, 0, 0, first)) == UINT32_MAX ||
	    (c.root[1] = child(&c, 1, 0, first)) == UINT32_MAX)
		goto out;
	rc = walk(&c);
	if (!rc) {
		out->total = prof_total(out->callees);
		out->total_before = d ? prof_diff_total_before(d) : 0;
		out->total_after = d ? prof_diff_total_after(d) : 0;
	}
out:
	free(c.is_f);
	free(c.fmap[0]);
	free(c.fmap[1]);
	free(c.stack);
	if (rc)
		rd_sandwich_free(out);
	return rc;
}
