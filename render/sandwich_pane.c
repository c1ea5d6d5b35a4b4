/* SPDX-License-Identifier: MIT */
/* The sandwich pane: a function's callers above and its callees below,
 * drawn from its model (render/sandwich.h), with zoom, tooltip and the
 * way back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/palette.h"
#include "render/panes.h"
#include "render/sandwich.h"
#include "render/ui_internal.h"

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
	struct rd_views *v = rd_views_of(ui);
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
	const struct rd_views *v = rd_views_of(ui);
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
	struct rd_views *v = rd_views_of(ui);
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
		const struct rd_box *b = rd_flame_hit(&rd_views_of(ui)->sw_boxes[s], x, y);

		if (b) {
			*side = s;
			return b;
		}
	}
	return NULL;
}

int rd_views_sandwich_tooltip(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);
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
	struct rd_views *v = rd_views_of(ui);
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
	struct rd_views *v = rd_views_of(ui);

	v->pane = v->back == RD_PANE_SANDWICH ? RD_PANE_GRAPH : v->back;
	ui->focus = v->back_focus < ui->m->nnodes ? v->back_focus : 0;
	ui->selected = ui->focus;
	rd_views_sandwich_clear(v);
	return 1;
}

int rd_views_sandwich_escape(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);
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
	snprintf(name, sizeof(name), "%s", prof_str(rd_views_of(ui)->sw_m[s]->p,
		 prof_frame_get(rd_views_of(ui)->sw_m[s]->p,
				prof_node_get(rd_views_of(ui)->sw_m[s]->p, b->last)->frame)->name));
	rc = rd_views_sandwich(ui, name);
	if (rc < 0)
		ui->oom = 1;
	return rc > 0;
}

void rd_views_sandwich_refresh(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);
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
	const struct rd_views *v = rd_views_of(ui);
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
