/* SPDX-License-Identifier: MIT */
/* The call tree pane: the table of render/calltree.h drawn in the graph
 * area, its rows opened by clicks, its search stepped from the bar, and
 * its open rows kept across live updates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/calltree.h"
#include "render/format.h"
#include "render/palette.h"
#include "render/panes.h"
#include "render/ui_internal.h"

static void drop_keep(struct rd_views *v)
{
	for (size_t i = 0; i < v->nct_keep; i++)
		free(v->ct_keep[i]);
	free(v->ct_keep);
	v->ct_keep = NULL;
	v->nct_keep = 0;
}

void rd_views_calltree_clear(struct rd_views *v)
{
	rd_calltree_free(&v->ct);
	v->ct_of = NULL;
	rd_model_free(v->ct_swm);
	v->ct_swm = NULL;
	rd_sandwich_free(&v->ct_sw);
	v->ct_side = -1;
	drop_keep(v);
}

/* The names from the top to node @id of @p, '\x1f' apart, malloc'd. */
static char *joined_path(const struct prof_profile *p, uint32_t id)
{
	const char *path[RD_PATH_MAX];
	int n = rd_views_name_path(p, id, path);
	size_t len = 1, o = 0;
	char *s;

	for (int i = 0; i < n; i++)
		len += strlen(path[i]) + 1;
	if (!n || !(s = malloc(len)))
		return NULL;
	for (int i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "%s%s", i ? "\x1f" : "", path[i]);
	return s;
}

void rd_views_calltree_keep(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);
	const struct rd_model *m = v->ct_of;
	int side = v->ct_side;
	char name[256];
	size_t n = 0;

	snprintf(name, sizeof(name), "%s", v->ct_name);
	drop_keep(v);
	for (uint32_t i = 1; m && i < m->tree.n; i++)
		n += v->ct.open[i];
	v->ct_keep = n ? calloc(n, sizeof(*v->ct_keep)) : NULL;
	for (uint32_t i = 1; v->ct_keep && i < m->tree.n; i++)
		if (v->ct.open[i] &&
		    (v->ct_keep[v->nct_keep] = joined_path(m->p, rd_tree_id(&m->tree, i))))
			v->nct_keep++;
	{
		char **keep = v->ct_keep;
		size_t nk = v->nct_keep;

		v->ct_keep = NULL;
		v->nct_keep = 0;
		rd_views_calltree_clear(v);
		v->ct_keep = keep;
		v->nct_keep = nk;
	}
	/* The callers or callees tree is built again on the new data. */
	v->ct_side = side;
	snprintf(v->ct_name, sizeof(v->ct_name), "%s", name);
}

/* Builds the callers/callees tree of ct_name on the data shown, or falls
 * back to the whole profile when the function is gone. */
static void ct_side_tree(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);

	if (v->ct_side < 0 || v->ct_swm)
		return;
	if (rd_sandwich_build(ui->m->p, NULL, v->ct_name, &v->ct_sw) < 0 ||
	    !(v->ct_swm = rd_model_new(v->ct_side ? v->ct_sw.callees : v->ct_sw.callers))) {
		rd_sandwich_free(&v->ct_sw);
		v->ct_side = -1;
	}
}

/* Reopens the rows remembered by rd_views_calltree_keep() that exist in
 * the new data. */
static int reopen(struct rd_views *v, const struct rd_model *m)
{
	for (size_t k = 0; k < v->nct_keep; k++) {
		const char *path[RD_PATH_MAX];
		char *s = v->ct_keep[k];
		int n = 0;
		uint32_t id;

		for (char *p = s; n < RD_PATH_MAX; n++) {
			char *e = strchr(p, '\x1f');

			path[n] = p;
			if (!e) {
				n++;
				break;
			}
			*e = '\0';
			p = e + 1;
		}
		id = rd_views_find_path(m->p, path, n);
		if (id)
			v->ct.open[rd_tree_pre(&m->tree, id)] = 1;
	}
	drop_keep(v);
	return rd_calltree_refresh(&v->ct);
}

static int row_h(const struct rd_ui *ui)
{
	return ui->text.line_h[RD_FONT_NORMAL] + RD_S(ui, 5);
}

/* Brings the table up to date with the model shown and the search. */
static int ct_sync(struct rd_ui *ui, size_t visible)
{
	struct rd_views *v = rd_views_of(ui);
	const struct rd_model *m;

	ct_side_tree(ui);
	m = v->ct_side >= 0 && v->ct_swm ? v->ct_swm : ui->m;
	if (v->ct_of != m || v->ct_base != ui->base || v->ct_filter != ui->filter) {
		rd_calltree_free(&v->ct);
		if (rd_calltree_init(&v->ct, m) < 0)
			return -ENOMEM;
		v->ct_of = m;
		v->ct_base = ui->base;
		v->ct_filter = ui->filter;
		if (v->nct_keep) {
			if (reopen(v, m) < 0)
				return -ENOMEM;
		} else if (v->ct_side >= 0 && m->tree.n > 1 &&
			   rd_calltree_toggle(&v->ct, 1) < 0) {
			return -ENOMEM;
		}
	}
	if (strcmp(v->ct.query, ui->query)) {
		if (rd_calltree_search(&v->ct, ui->query, visible) < 0)
			return -ENOMEM;
		ui->scroll = (int)v->ct.scroll * row_h(ui);
	}
	return 0;
}

/* Text fitted into @w at (x, y), or ending at x + w when @right;
 * returns the width drawn. */
static int cell(struct rd_ui *ui, int x, int y, int w, uint32_t color,
		const char *s, int right)
{
	char fit[512];
	size_t n = rd_text_fit(&ui->text, RD_FONT_NORMAL, s, w, 0, fit, sizeof(fit));
	int tw = n ? ui->text.measure(ui->text.ctx, RD_FONT_NORMAL, fit, n) : 0;

	rd_list_text(&ui->list, right ? x + w - tw : x, y, w, RD_FONT_NORMAL, color, fit, n);
	return tw;
}

/* The row's name, and the lines merged into its node after it, dimmed. */
static void name_cell(struct rd_ui *ui, const struct rd_model *m, uint32_t id,
		      const char *name, int x, int y, int w, uint32_t color)
{
	int used = cell(ui, x, y, w, color, name, 0) + RD_S(ui, 10);
	char at[160];

	if (used < w && rd_lines_text(&m->lines, m->p, id, 0, at, sizeof(at))[0])
		cell(ui, x + used, y, w - used, RD_COL_DIM, at, 0);
}

static void ct_row(struct rd_ui *ui, size_t i, int y, int cn, int cv, int cb)
{
	struct rd_views *v = rd_views_of(ui);
	const struct rd_model *m = v->ct_of;
	const struct rd_ct_row *r = &v->ct.rows[i];
	const struct rd_tree *t = &m->tree;
	uint32_t id = rd_tree_id(t, r->pre);
	uint64_t total = rd_tree_total(t, r->pre), self = rd_tree_self(t, r->pre);
	const struct rd_rect *g = &ui->graph;
	enum prof_unit u = prof_meta_const(m->p)->unit;
	int rh = row_h(ui), ind = RD_S(ui, 14) * (int)r->depth, x = g->x + RD_S(ui, 6);
	int cur = v->ct.nmatch && v->ct.matches[v->ct.cur] == r->pre;
	const struct prof_frame *f = prof_frame_get(m->p, prof_node_get(m->p, id)->frame);
	char val[32], pct[16], s[64];
	double tot = ui->m->total ? (double)ui->m->total : 1;

	if (cur)
		rd_list_rect(&ui->list, g->x, y, g->w, rh, RD_COL_ON);
	else if (i % 2)
		rd_list_rect(&ui->list, g->x, y, g->w, rh, 0xF4F5F7);
	cell(ui, x + ind, y + RD_S(ui, 2), RD_S(ui, 14), RD_COL_DIM,
	     r->leaf ? "" : r->open ? "\xe2\x96\xbe" : "\xe2\x96\xb8", 0);
	/* The mark: the change of a diff's node, else the class. */
	rd_list_rect(&ui->list, x + ind + RD_S(ui, 14), y + RD_S(ui, 4), RD_S(ui, 4),
		     rh - RD_S(ui, 8), rd_views_diff_on(ui) && m == ui->m ?
		     rd_diff_color(rd_diff_node_shade(v->diff, id, &v->dopt).shown,
				   v->dopt.palette) : rd_class_color(rd_frame_class(f)));
	name_cell(ui, m, id, rd_model_fn_name(m, rd_tree_fn(t, r->pre)),
		  x + ind + RD_S(ui, 22), y + RD_S(ui, 2), cn - ind - RD_S(ui, 28),
		  cur ? RD_COL_MATCH : RD_COL_TEXT);
	if (rd_views_diff_on(ui) && m == ui->m) {
		/* A diff: the total's share before and after. */
		struct prof_delta d = prof_diff_node_delta(v->diff, id, 0);

		snprintf(s, sizeof(s), "%.2f%%", d.p_before);
		cell(ui, g->x + cn, y + RD_S(ui, 2), cv - RD_S(ui, 8), RD_COL_TEXT, s, 1);
		snprintf(s, sizeof(s), "%.2f%%", d.p_after);
		cell(ui, g->x + cn + cv, y + RD_S(ui, 2), cv - RD_S(ui, 8), RD_COL_TEXT, s, 1);
	} else {
		snprintf(s, sizeof(s), "%s  %s", rd_fmt_value(val, sizeof(val), total, u),
			 rd_fmt_pct(pct, sizeof(pct), 100.0 * (double)total / tot));
		cell(ui, g->x + cn, y + RD_S(ui, 2), cv - RD_S(ui, 8), RD_COL_TEXT, s, 1);
		snprintf(s, sizeof(s), "%s  %s", rd_fmt_value(val, sizeof(val), self, u),
			 rd_fmt_pct(pct, sizeof(pct), 100.0 * (double)self / tot));
		cell(ui, g->x + cn + cv, y + RD_S(ui, 2), cv - RD_S(ui, 8), RD_COL_TEXT, s, 1);
	}
	rd_ui_zone(ui, RD_Z_CT_ROW, (uint32_t)i, g->x, y, cn, rh);
	x = g->x + cn + 2 * cv + RD_S(ui, 4);
	cell(ui, x, y + RD_S(ui, 2), cb / 2, RD_COL_ACCENT, "\xe2\x86\x91 callers", 0);
	rd_ui_zone(ui, RD_Z_CT_CALLERS, (uint32_t)i, x, y, cb / 2, rh);
	cell(ui, x + cb / 2, y + RD_S(ui, 2), cb / 2, RD_COL_ACCENT, "\xe2\x86\x93 callees", 0);
	rd_ui_zone(ui, RD_Z_CT_CALLEES, (uint32_t)i, x + cb / 2, y, cb / 2, rh);
}

int rd_views_calltree_graph(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);
	const struct rd_rect *g = &ui->graph;
	int rh = row_h(ui), cv = RD_S(ui, 130), cb = RD_S(ui, 150);
	int cn = g->w - 2 * cv - cb - RD_S(ui, 8), y = g->y;
	size_t visible = g->h > rh ? (size_t)((g->h - rh) / rh) : 1;

	v->ct_visible = visible;
	if (ct_sync(ui, visible) < 0)
		return -ENOMEM;
	v->ct.scroll = ui->scroll > 0 ? (size_t)(ui->scroll / rh) : 0;
	if (v->ct.scroll >= v->ct.nrows)
		v->ct.scroll = v->ct.nrows ? v->ct.nrows - 1 : 0;
	ui->scroll = (int)v->ct.scroll * rh;
	rd_list_rect(&ui->list, g->x, g->y, g->w, g->h, 0xFFFFFF);
	rd_list_rect(&ui->list, g->x, y, g->w, rh, RD_COL_PANEL);
	cell(ui, g->x + RD_S(ui, 6), y + RD_S(ui, 2), cn, RD_COL_TEXT,
	     v->ct_side < 0 ? "Call tree" : v->ct_side ? "Callees of" : "Callers of", 0);
	if (v->ct_side >= 0)
		cell(ui, g->x + RD_S(ui, 90), y + RD_S(ui, 2), cn - RD_S(ui, 90),
		     RD_COL_TEXT, v->ct_name, 0);
	{
		int diff = rd_views_diff_on(ui) && v->ct_side < 0;

		cell(ui, g->x + cn, y + RD_S(ui, 2), cv - RD_S(ui, 8), RD_COL_TEXT,
		     diff ? "Total before" : "Total", 1);
		cell(ui, g->x + cn + cv, y + RD_S(ui, 2), cv - RD_S(ui, 8), RD_COL_TEXT,
		     diff ? "Total after" : "Self", 1);
	}
	y += rh;
	for (size_t i = v->ct.scroll; i < v->ct.nrows && y + rh <= g->y + g->h; i++, y += rh)
		ct_row(ui, i, y, cn, cv, cb);
	return 0;
}

int rd_views_calltree_step(struct rd_ui *ui, int dir)
{
	struct rd_views *v = rd_views_of(ui);
	int rc = rd_calltree_step(&v->ct, dir, v->ct_visible);

	if (rc == -ENOMEM)
		ui->oom = 1;
	ui->scroll = (int)v->ct.scroll * row_h(ui);
	return rc == 0;
}

int rd_views_calltree_click(struct rd_ui *ui, int kind, uint32_t arg)
{
	struct rd_views *v = rd_views_of(ui);
	const struct rd_model *m = v->ct_of;
	char name[256];
	int side = kind == RD_Z_CT_CALLEES;

	if (!m || arg >= v->ct.nrows)
		return 0;
	if (kind == RD_Z_CT_ROW) {
		if (rd_calltree_toggle(&v->ct, v->ct.rows[arg].pre) < 0)
			ui->oom = 1;
		return 1;
	}
	snprintf(name, sizeof(name), "%s",
		 rd_model_fn_name(m, rd_tree_fn(&m->tree, v->ct.rows[arg].pre)));
	rd_views_calltree_clear(v);
	if (rd_sandwich_build(ui->m->p, NULL, name, &v->ct_sw) < 0 ||
	    !(v->ct_swm = rd_model_new(side ? v->ct_sw.callees : v->ct_sw.callers))) {
		rd_views_calltree_clear(v);
		return 1;
	}
	v->ct_side = side;
	snprintf(v->ct_name, sizeof(v->ct_name), "%s", name);
	ui->scroll = 0;
	return 1;
}

void rd_views_calltree_dump(const struct rd_ui *ui, FILE *out)
{
	const struct rd_views *v = rd_views_of(ui);
	char st[64];

	fprintf(out, "ctstatus %s\n", rd_calltree_status(&v->ct, st, sizeof(st)));
	fprintf(out, "cttree %s %s\n", v->ct_side < 0 ? "whole" : v->ct_side ? "callees" : "callers",
		v->ct_side < 0 ? "" : v->ct_name);
	for (size_t i = v->ct.scroll; v->ct_of && i < v->ct.nrows &&
	     i < v->ct.scroll + v->ct_visible; i++) {
		const struct rd_ct_row *r = &v->ct.rows[i];

		fprintf(out, "ctrow %zu %u %u %d %s\n", i, r->depth, r->open,
			v->ct.nmatch && v->ct.matches[v->ct.cur] == r->pre,
			rd_model_fn_name(v->ct_of, rd_tree_fn(&v->ct_of->tree, r->pre)));
	}
}
