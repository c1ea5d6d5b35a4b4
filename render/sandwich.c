/* SPDX-License-Identifier: MIT */
/* A function's callers (inverted) and callees, merged from everywhere it
 * appears, recursion counted once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/palette.h"
#include "render/sandwich.h"
#include "render/ui_internal.h"
#include "render/views.h"

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

/* ---- the sandwich pane of the window ------------------------------------ */

static uint32_t top_node(const struct rd_model *m)
{
	return prof_node_get(m->p, 0)->child;
}

void rd_views_sandwich_clear(struct rd_views *v)
{
	for (int s = 0; s < 2; s++) {
		rd_model_free(v->sw_m[s]);
		v->sw_m[s] = NULL;
		rd_boxes_free(&v->sw_boxes[s]);
	}
	rd_sandwich_free(&v->sw);
}

int rd_views_sandwich(struct rd_ui *ui, const char *name)
{
	struct rd_views *v = ui->views;
	const struct prof_diff *d = rd_views_diff_on(ui) ? v->diff : NULL;
	struct rd_model *m[2] = { NULL, NULL };
	struct rd_sandwich sw;
	char copy[256];
	int rc;

	snprintf(copy, sizeof(copy), "%s", name);
	rc = rd_sandwich_build(ui->m->p, d, copy, &sw);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	m[0] = rd_model_new(sw.callers);
	m[1] = rd_model_new(sw.callees);
	if (!m[0] || !m[1]) {
		rd_model_free(m[0]);
		rd_model_free(m[1]);
		rd_sandwich_free(&sw);
		return -ENOMEM;
	}
	rd_views_sandwich_clear(v);
	v->sw = sw;
	for (int s = 0; s < 2; s++) {
		v->sw_m[s] = m[s];
		v->sw_focus[s] = top_node(m[s]);
	}
	if (v->pane != RD_PANE_SANDWICH) {
		v->back = v->pane;
		v->back_focus = ui->focus;
	}
	v->pane = RD_PANE_SANDWICH;
	snprintf(v->sw_name, sizeof(v->sw_name), "%s", copy);
	return 1;
}

static char *sw_label(const struct rd_model *m, const struct rd_box *b,
		      char *buf, size_t n)
{
	const char *a = prof_str(m->p, prof_frame_get(m->p, prof_node_get(m->p, b->node)->frame)->name);
	const char *z = prof_str(m->p, prof_frame_get(m->p, prof_node_get(m->p, b->last)->frame)->name);

	if (b->flags & RD_BOX_SMALL)
		snprintf(buf, n, "%u small functions", b->count);
	else if (b->flags & RD_BOX_CHAIN)
		snprintf(buf, n, "(%u) %s \xe2\x80\xa6 %s", b->count, a, z);
	else
		snprintf(buf, n, "%s", a);
	return buf;
}

static uint32_t sw_color(const struct rd_ui *ui, int s, const struct rd_box *b)
{
	const struct rd_views *v = ui->views;
	const struct rd_model *m = v->sw_m[s];
	const struct prof_frame *f;

	if (b->flags & RD_BOX_SMALL)
		return 0xCDD0D4;
	if (v->sw.callers_v) {
		const struct prof_diff_values *dv = s ? v->sw.callees_v : v->sw.callers_v;
		struct rd_diff_shade sh = rd_diff_shade(dv[b->node].before_total,
			v->sw.total_before, dv[b->node].after_total, v->sw.total_after,
			prof_meta_const(m->p)->unit, &v->dopt);

		return rd_diff_color(sh.shown, v->dopt.palette);
	}
	f = prof_frame_get(m->p, prof_node_get(m->p, b->last)->frame);
	return rd_frame_color(rd_frame_class(f), prof_str(m->p, f->name));
}

static struct rd_rect half_area(const struct rd_ui *ui, int s)
{
	const struct rd_rect *g = &ui->graph;
	int gap = RD_S(ui, 6), half = (g->h - gap) / 2;

	if (s == 0)
		return (struct rd_rect){ g->x, g->y, g->w, half };
	return (struct rd_rect){ g->x, g->y + half + gap, g->w, g->h - half - gap };
}

int rd_views_sandwich_graph(struct rd_ui *ui)
{
	struct rd_views *v = ui->views;
	const struct rd_rect *g = &ui->graph;
	int row = ui->text.line_h[RD_FONT_NORMAL] + RD_S(ui, 5);
	char label[600];

	rd_list_rect(&ui->list, g->x, g->y, g->w, g->h, 0xFFFFFF);
	for (int s = 0; s < 2; s++) {
		/* The root row ("all") is scrolled out: the function is the
		 * first row of each half, callers going up, callees down. */
		struct rd_flame_opts o = {
			.area = half_area(ui, s), .row_h = row, .icicle = s,
			.unfold = ui->unfold, .focus = v->sw_focus[s], .scroll = row,
			.min_px = 0.5,
		};
		int rc = rd_flame_layout(&v->sw_m[s]->tree, &o, &v->sw_boxes[s]);

		if (rc == -EINVAL && v->sw_focus[s] != top_node(v->sw_m[s])) {
			o.focus = v->sw_focus[s] = top_node(v->sw_m[s]);
			rc = rd_flame_layout(&v->sw_m[s]->tree, &o, &v->sw_boxes[s]);
		}
		if (rc == -ENOMEM)
			return rc;
		for (size_t i = 0; i < v->sw_boxes[s].n; i++) {
			const struct rd_box *b = &v->sw_boxes[s].v[i];

			rd_views_draw_box(ui, b, sw_label(v->sw_m[s], b, label, sizeof(label)),
					  sw_color(ui, s, b));
		}
	}
	rd_list_rect(&ui->list, g->x, half_area(ui, 1).y - RD_S(ui, 4), g->w, 2, RD_COL_LINE);
	return 0;
}

static const struct rd_box *sw_hit(const struct rd_ui *ui, int x, int y, int *side)
{
	for (int s = 0; s < 2; s++) {
		const struct rd_box *b = rd_flame_hit(&ui->views->sw_boxes[s], x, y);

		if (b) {
			*side = s;
			return b;
		}
	}
	return NULL;
}

int rd_views_sandwich_tooltip(struct rd_ui *ui)
{
	struct rd_views *v = ui->views;
	const struct rd_model *m;
	const struct prof_node *n;
	const struct rd_box *b;
	enum prof_unit u;
	char lines[8][256], val[32], pct[16];
	int s = 0, k = 0;

	ui->tip = (struct rd_rect){ 0, 0, 0, 0 };
	if (!ui->mouse_in || !(b = sw_hit(ui, ui->mouse_x, ui->mouse_y, &s)))
		return 1;
	m = v->sw_m[s];
	n = prof_node_get(m->p, b->last);
	u = prof_meta_const(m->p)->unit;
	rd_list_outline(&ui->list, b->x, b->y, b->w, b->h - 1, RD_COL_TEXT);
	sw_label(m, b, lines[k++], 256);
	snprintf(lines[k++], 256, s ? "called by %.200s" : "on the way to %.200s", v->sw_name);
	snprintf(lines[k++], 256, "Total: %s (%s of everything)",
		 rd_fmt_value(val, sizeof(val), b->value, u),
		 rd_fmt_pct(pct, sizeof(pct), ui->m->total ? 100.0 * (double)b->value /
			    (double)ui->m->total : 0));
	if (s == 1)
		snprintf(lines[k++], 256, "Self: %s", rd_fmt_value(val, sizeof(val), n->self, u));
	if (v->sw.callers_v && !(b->flags & RD_BOX_SMALL))
		k += rd_diff_tip_values(&(s ? v->sw.callees_v : v->sw.callers_v)[b->node],
					v->sw.total_before, v->sw.total_after, u, &v->dopt,
					lines + k, 8 - k);
	rd_ui_tip_box(ui, lines, k);
	return 1;
}

int rd_views_sandwich_click(struct rd_ui *ui, int x, int y)
{
	struct rd_views *v = ui->views;
	const struct rd_box *b;
	uint32_t top;
	int s = 0;

	if (!(b = sw_hit(ui, x, y, &s)))
		return 0;
	top = top_node(v->sw_m[s]);
	if (b->node == 0)
		v->sw_focus[s] = top;
	else if (b->node == v->sw_focus[s] && b->node != top && !(b->flags & RD_BOX_SMALL))
		v->sw_focus[s] = prof_node_get(v->sw_m[s]->p, b->node)->parent;
	else
		v->sw_focus[s] = b->node;
	return 1;
}

int rd_views_sandwich_leave(struct rd_ui *ui)
{
	struct rd_views *v = ui->views;

	v->pane = v->back == RD_PANE_SANDWICH ? RD_PANE_GRAPH : v->back;
	ui->focus = v->back_focus < ui->m->nnodes ? v->back_focus : 0;
	ui->selected = ui->focus;
	rd_views_sandwich_clear(v);
	return 1;
}

int rd_views_sandwich_escape(struct rd_ui *ui)
{
	struct rd_views *v = ui->views;
	int zoomed = 0;

	for (int s = 0; s < 2; s++) {
		zoomed |= v->sw_focus[s] != top_node(v->sw_m[s]);
		v->sw_focus[s] = top_node(v->sw_m[s]);
	}
	return zoomed ? 1 : rd_views_sandwich_leave(ui);
}

int rd_views_sandwich_here(struct rd_ui *ui)
{
	const struct rd_box *b;
	char name[256];
	int s = 0, rc;

	if (!ui->mouse_in || !(b = sw_hit(ui, ui->mouse_x, ui->mouse_y, &s)) ||
	    (b->flags & RD_BOX_SMALL) || b->node == 0)
		return 0;
	snprintf(name, sizeof(name), "%s", prof_str(ui->views->sw_m[s]->p,
		 prof_frame_get(ui->views->sw_m[s]->p,
				prof_node_get(ui->views->sw_m[s]->p, b->last)->frame)->name));
	rc = rd_views_sandwich(ui, name);
	if (rc < 0)
		ui->oom = 1;
	return rc > 0;
}

void rd_views_sandwich_refresh(struct rd_ui *ui)
{
	struct rd_views *v = ui->views;
	char name[256];
	int rc;

	if (v->pane != RD_PANE_SANDWICH)
		return;
	snprintf(name, sizeof(name), "%s", v->sw_name);
	v->back_focus = ui->focus;
	rc = rd_views_sandwich(ui, name);
	if (rc <= 0) {
		rd_views_sandwich_leave(ui);
		snprintf(v->notice, sizeof(v->notice), "%.180s is not in the latest data; "
			 "the sandwich closed.", name);
	}
}

void rd_views_sandwich_dump(const struct rd_ui *ui, FILE *out)
{
	const struct rd_views *v = ui->views;
	char label[600];

	fprintf(out, "sandwich %s\n", v->sw_name);
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < v->sw_boxes[s].n; i++) {
			const struct rd_box *b = &v->sw_boxes[s].v[i];

			fprintf(out, "sbox %s %d %d %d %d %06X %s\n", s ? "callees" : "callers",
				b->x, b->y, b->w, b->h, sw_color(ui, s, b),
				sw_label(v->sw_m[s], b, label, sizeof(label)));
		}
}
