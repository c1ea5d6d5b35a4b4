/* SPDX-License-Identifier: MIT */
/* A diff's panes: before and after side by side above the merged diff,
 * and the diff's top table over the window's. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_view.h"
#include "render/format.h"
#include "render/palette.h"
#include "render/panes.h"
#include "render/ui_internal.h"

/* ---- side by side: before and after beside the merged diff --------------- */

/* The models of the two sides, built on first use. */
static int side_models(struct rd_views *v)
{
	for (int s = 0; s < 2; s++)
		if (!v->side_m[s] && !(v->side_m[s] = rd_model_new(s ? v->after : v->before)))
			return -ENOMEM;
	return 0;
}

/* The graph (0 before, 1 after, 2 merged) and box under (x, y). */
static const struct rd_box *side_hit(const struct rd_ui *ui, int x, int y,
				     int *which)
{
	const struct rd_box *b;

	for (int s = 0; s < 2; s++)
		if ((b = rd_flame_hit(&rd_views_of(ui)->side_boxes[s], x, y))) {
			*which = s;
			return b;
		}
	*which = 2;
	return rd_flame_hit(&ui->boxes, x, y);
}

static const struct prof_profile *side_profile(const struct rd_ui *ui, int which)
{
	return which == 2 ? ui->m->p : rd_views_of(ui)->side_m[which]->p;
}

/* Outlines, in graph @which, the box with the same path as the hovered one. */
static void side_link(struct rd_ui *ui, int which, const char **path, int n)
{
	const struct rd_boxes *bx = which == 2 ? &ui->boxes : &rd_views_of(ui)->side_boxes[which];
	const struct prof_profile *p = side_profile(ui, which);
	uint32_t node = n ? rd_views_find_path(p, path, n) : 0;
	long i = node ? rd_flame_find(bx, p, node) : -1;

	if (i >= 0)
		rd_list_outline(&ui->list, bx->v[i].x, bx->v[i].y, bx->v[i].w,
				bx->v[i].h - 1, RD_COL_ACCENT);
}

static void side_one(struct rd_ui *ui, int s, struct rd_rect area,
		     const char **fpath, int nf)
{
	struct rd_views *v = rd_views_of(ui);
	const struct rd_model *m = v->side_m[s];
	struct rd_flame_opts o = {
		.area = area, .row_h = ui->text.line_h[RD_FONT_NORMAL] + RD_S(ui, 5),
		.icicle = ui->icicle, .unfold = ui->unfold, .min_px = 0.5,
	};
	char label[600];

	o.focus = nf ? rd_views_find_path(m->p, fpath, nf) : 0;
	v->side_area[s] = area;
	rd_list_rect(&ui->list, area.x, area.y, area.w, area.h, 0xFFFFFF);
	if (rd_flame_layout(&m->tree, &o, &v->side_boxes[s]) == -ENOMEM) {
		ui->oom = 1;
		return;
	}
	for (size_t i = 0; i < v->side_boxes[s].n; i++) {
		const struct rd_box *b = &v->side_boxes[s].v[i];
		const struct prof_node *n = prof_node_get(m->p, b->last);
		const struct prof_frame *f = prof_frame_get(m->p, n->frame);
		uint32_t c = b->node == 0 ? 0xE4E1DA : (b->flags & RD_BOX_SMALL) ? 0xCDD0D4 :
			     rd_frame_color(rd_frame_class(f), prof_str(m->p, f->name));

		if (b->flags & RD_BOX_SMALL)
			snprintf(label, sizeof(label), "%u small functions", b->count);
		else
			snprintf(label, sizeof(label), "%s", b->node ? prof_str(m->p, f->name) : "all");
		rd_views_draw_box(ui, b, label, c);
	}
	rd_views_text_at(ui, area.x + RD_S(ui, 6), ui->icicle ? area.y + area.h -
			 ui->text.line_h[RD_FONT_BOLD] - RD_S(ui, 4) : area.y + RD_S(ui, 4),
			 area.w / 2, RD_FONT_BOLD, RD_COL_DIM, s ? "After" : "Before");
}

int rd_views_side_graph(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);
	struct rd_rect g = ui->graph;
	const char *fpath[RD_PATH_MAX], *hpath[RD_PATH_MAX];
	int gap = RD_S(ui, 8), lw = (g.w - gap) / 2, rh = (g.h - gap) / 2, nf, nh = 0, which;
	const struct rd_box *hb;
	int rc;

	if (side_models(v) < 0)
		return -ENOMEM;
	ui->graph = (struct rd_rect){ g.x, g.y, lw, g.h };
	if ((rc = rd_ui_graph(ui)) < 0)
		return rc;
	nf = rd_views_name_path(ui->m->p, ui->focus, fpath);
	side_one(ui, 0, (struct rd_rect){ g.x + lw + gap, g.y, g.w - lw - gap, rh }, fpath, nf);
	side_one(ui, 1, (struct rd_rect){ g.x + lw + gap, g.y + rh + gap, g.w - lw - gap,
					  g.h - rh - gap }, fpath, nf);
	/* Linked hover: the same path is outlined in the other graphs. */
	if (ui->mouse_in && (hb = side_hit(ui, ui->mouse_x, ui->mouse_y, &which)) &&
	    !(hb->flags & RD_BOX_SMALL))
		nh = rd_views_name_path(side_profile(ui, which), hb->last, hpath);
	for (int w = 0; nh && w < 3; w++)
		if (w != which)
			side_link(ui, w, hpath, nh);
	ui->graph = g; /* the window places the table beside the whole area */
	return ui->oom ? -ENOMEM : 0;
}

int rd_views_side_tooltip(struct rd_ui *ui)
{
	const struct rd_box *b;
	const struct prof_profile *p;
	char lines[4][256], val[32], pct[16];
	uint64_t tot;
	int which;

	if (!ui->mouse_in || !(b = side_hit(ui, ui->mouse_x, ui->mouse_y, &which)) ||
	    which == 2)
		return 0;
	ui->tip = (struct rd_rect){ 0, 0, 0, 0 };
	p = side_profile(ui, which);
	tot = prof_total(p);
	rd_list_outline(&ui->list, b->x, b->y, b->w, b->h - 1, RD_COL_TEXT);
	snprintf(lines[0], 256, "%s", b->node ? prof_str(p, prof_frame_get(p,
		 prof_node_get(p, b->last)->frame)->name) : "all");
	snprintf(lines[1], 256, "%s: %s (%s)", which ? "After" : "Before",
		 rd_fmt_value(val, sizeof(val), b->value, prof_meta_const(p)->unit),
		 rd_fmt_pct(pct, sizeof(pct), tot ? 100.0 * (double)b->value / (double)tot : 0));
	rd_ui_tip_box(ui, lines, 2);
	return 1;
}

int rd_views_side_click(struct rd_ui *ui, int x, int y)
{
	const char *path[RD_PATH_MAX];
	const struct rd_box *b;
	int which, n;

	if (!(b = side_hit(ui, x, y, &which)) || which == 2)
		return -1;
	n = rd_views_name_path(side_profile(ui, which), b->node, path);
	ui->focus = ui->selected = n ? rd_views_find_path(ui->m->p, path, n) : 0;
	return 1;
}

void rd_views_side_dump(const struct rd_ui *ui, FILE *out)
{
	for (int s = 0; s < 2; s++) {
		const struct rd_boxes *bx = &rd_views_of(ui)->side_boxes[s];
		const struct prof_profile *p = rd_views_of(ui)->side_m[s] ? rd_views_of(ui)->side_m[s]->p : NULL;

		for (size_t i = 0; p && i < bx->n; i++)
			fprintf(out, "sidebox %s %d %d %d %d %s\n", s ? "after" : "before",
				bx->v[i].x, bx->v[i].y, bx->v[i].w, bx->v[i].h,
				bx->v[i].node ? prof_str(p, prof_frame_get(p,
				prof_node_get(p, bx->v[i].node)->frame)->name) : "all");
	}
}

/* ---- the top table of a diff ------------------------------------------------ */

static double pct(uint64_t v, uint64_t t)
{
	return t ? 100.0 * (double)v / (double)t : 0;
}

static int dt_cmp(const void *a, const void *b, void *arg)
{
	const struct rd_views *v = arg;
	const struct prof_diff_fn *x = a, *y = b;
	const struct prof_profile *t = prof_diff_tree_const(v->diff);
	uint64_t tb = prof_diff_total_before(v->diff), ta = prof_diff_total_after(v->diff);
	double kx = 0, ky = 0;

	switch (v->dt_sort) {
	case RD_DT_BEFORE: kx = pct(x->total_before, tb); ky = pct(y->total_before, tb); break;
	case RD_DT_AFTER: kx = pct(x->total_after, ta); ky = pct(y->total_after, ta); break;
	case RD_DT_CHANGE: kx = fabs(x->change); ky = fabs(y->change); break;
	default: break;
	}
	if (kx != ky)
		return kx < ky ? 1 : -1;
	return strcmp(prof_str(t, x->name), prof_str(t, y->name));
}

/* Ranks the functions once, then keeps them in the chosen order. */
static int dt_ready(struct rd_views *v)
{
	if (!v->dt && prof_diff_rank(v->diff, PROF_RANK_TOTAL, &v->dt, &v->ndt) < 0)
		return -ENOMEM;
	return 0;
}

static void dt_cell(struct rd_ui *ui, int x, int y, int w, int font, uint32_t c,
		    const char *s, int right)
{
	char fit[512];
	size_t n = rd_text_fit(&ui->text, font, s, w, 0, fit, sizeof(fit));
	int tw = n ? ui->text.measure(ui->text.ctx, font, fit, n) : 0;

	rd_list_text(&ui->list, right ? x + w - tw : x, y, w, font, c, fit, n);
}

int rd_views_diff_table(struct rd_ui *ui)
{
	static const char *const heads[] = { "Function", "Baseline", "Comparison", "Diff" };
	struct rd_views *v = rd_views_of(ui);
	const struct rd_rect *t = &ui->table;
	const struct prof_profile *tree = prof_diff_tree_const(v->diff);
	uint64_t tb = prof_diff_total_before(v->diff), ta = prof_diff_total_after(v->diff);
	int rh = ui->text.line_h[RD_FONT_NORMAL] + RD_S(ui, 5), cv = RD_S(ui, 92);
	int cn = t->w - 3 * cv, y = t->y, pad = RD_S(ui, 6);
	int xs[4] = { t->x, t->x + cn, t->x + cn + cv, t->x + cn + 2 * cv };
	char s[64];

	if (dt_ready(v) < 0)
		return -ENOMEM;
	rd_list_rect(&ui->list, t->x, t->y, t->w, t->h, 0xFFFFFF);
	rd_list_rect(&ui->list, t->x, y, t->w, rh, RD_COL_PANEL);
	for (int i = 0; i < 4; i++) {
		snprintf(s, sizeof(s), "%s%s", heads[i], v->dt_sort == i ? " \xe2\x96\xbc" : "");
		dt_cell(ui, xs[i] + pad, y + RD_S(ui, 2), (i ? cv : cn) - 2 * pad, RD_FONT_BOLD,
			RD_COL_TEXT, s, i > 0);
		rd_ui_zone(ui, RD_Z_DT_HEAD, (uint32_t)i, xs[i], y, i ? cv : cn, rh);
	}
	y += rh;
	if (ui->table_scroll > 0 && (size_t)ui->table_scroll >= v->ndt)
		ui->table_scroll = v->ndt ? (int)v->ndt - 1 : 0;
	for (size_t i = ui->table_scroll > 0 ? (size_t)ui->table_scroll : 0;
	     i < v->ndt && y + rh <= t->y + t->h; i++, y += rh) {
		const struct prof_diff_fn *f = &v->dt[i];
		struct rd_diff_shade sh = rd_diff_shade(f->total_before, tb, f->total_after, ta,
							prof_meta_const(tree)->unit, &v->dopt);

		if (i % 2)
			rd_list_rect(&ui->list, t->x, y, t->w, rh, 0xF4F5F7);
		rd_list_rect(&ui->list, t->x + RD_S(ui, 1), y + RD_S(ui, 3), RD_S(ui, 4),
			     rh - RD_S(ui, 6), rd_diff_color(sh.shown, v->dopt.palette));
		dt_cell(ui, xs[0] + pad, y + RD_S(ui, 2), cn - 2 * pad, RD_FONT_NORMAL,
			RD_COL_TEXT, prof_str(tree, f->name), 0);
		snprintf(s, sizeof(s), "%.2f%%", pct(f->total_before, tb));
		dt_cell(ui, xs[1] + pad, y + RD_S(ui, 2), cv - 2 * pad, RD_FONT_NORMAL,
			RD_COL_TEXT, s, 1);
		snprintf(s, sizeof(s), "%.2f%%", pct(f->total_after, ta));
		dt_cell(ui, xs[2] + pad, y + RD_S(ui, 2), cv - 2 * pad, RD_FONT_NORMAL,
			RD_COL_TEXT, s, 1);
		snprintf(s, sizeof(s), "%s%.2f pp", f->change < 0 ? "\xe2\x88\x92" : "+",
			 fabs(f->change));
		dt_cell(ui, xs[3] + pad, y + RD_S(ui, 2), cv - 2 * pad, RD_FONT_NORMAL,
			sh.noise ? RD_COL_DIM : RD_COL_TEXT, s, 1);
		rd_ui_zone(ui, RD_Z_DT_ROW, (uint32_t)i, t->x, y, t->w, rh);
		rd_views_row_sandwich(ui, xs[1] - RD_S(ui, 2), y, rh, RD_Z_DT_SANDWICH,
				      (uint32_t)i);
	}
	return 0;
}

int rd_views_diff_table_click(struct rd_ui *ui, int kind, uint32_t arg)
{
	struct rd_views *v = rd_views_of(ui);
	char q[512];

	if (kind == RD_Z_DT_HEAD) {
		v->dt_sort = (int)arg;
		if (v->ndt)
			qsort_r(v->dt, v->ndt, sizeof(*v->dt), dt_cmp, v);
		ui->table_scroll = 0;
		return 1;
	}
	if (arg >= v->ndt)
		return 0;
	if (kind == RD_Z_DT_SANDWICH)
		return rd_views_sandwich(ui, prof_str(prof_diff_tree_const(v->diff),
						      v->dt[arg].name)) < 0 ? (ui->oom = 1) : 1;
	rd_model_exact_query(prof_str(prof_diff_tree_const(v->diff), v->dt[arg].name),
			     q, sizeof(q));
	return rd_ui_set_query(ui, q);
}
