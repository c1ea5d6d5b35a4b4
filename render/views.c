/* SPDX-License-Identifier: MIT */
/* The views' life cycle, their table of panes, the toolbar row, input,
 * dump and live updates. The panes themselves are in render/sandwich_pane.c,
 * render/calltree_pane.c and render/diff_pane.c, their models beside them
 * (render/sandwich_model.c, calltree_model.c, diff_model.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/filter.h"
#include "render/palette.h"
#include "render/panes.h"
#include "render/ui_internal.h"

#define S(ui, v) RD_S(ui, v)

struct rd_views *rd_views_new(void)
{
	struct rd_views *v = calloc(1, sizeof(*v));

	if (v) {
		v->dopt = rd_diff_opts_default();
		v->ct_side = -1;
	}
	return v;
}

void rd_views_free(struct rd_views *v)
{
	if (!v)
		return;
	rd_live_free(v->live);
	rd_views_sandwich_clear(v);
	rd_views_calltree_clear(v);
	for (int s = 0; s < 2; s++) {
		rd_model_free(v->side_m[s]);
		rd_boxes_free(&v->side_boxes[s]);
	}
	rd_model_free(v->own_m);
	prof_free(v->own_p);
	rd_model_free(v->live_m);
	prof_free(v->live_p);
	prof_diff_free(v->diff);
	free(v->dt);
	prof_free(v->before);
	prof_free(v->after);
	free(v);
}

/* Replaces *@p (owned) with its copy without lines (render/lines.h),
 * when it has some. 0 or -ENOMEM. */
static int strip_lines(struct prof_profile **p)
{
	struct prof_profile *m;
	int rc = rd_lines_strip(*p, &m);

	if (rc == 0 && m) {
		prof_free(*p);
		*p = m;
	}
	return rc;
}

int rd_views_set_diff(struct rd_views *v, struct prof_profile *before,
		      struct prof_profile *after, struct rd_model **m,
		      char *err, size_t errlen)
{
	int rc;

	v->before = before;
	v->after = after;
	/* Without lines first, so that the union has one node per function
	 * on a path: the model then draws the diff's own tree (its node ids
	 * are the diff's). */
	if (strip_lines(&v->before) < 0 || strip_lines(&v->after) < 0) {
		snprintf(err, errlen, "out of memory while comparing the profiles");
		return -ENOMEM;
	}
	before = v->before;
	after = v->after;
	rc = prof_diff_build(before, after, &v->diff);
	if (rc == -EINVAL) {
		snprintf(err, errlen, "the two profiles are in different units "
			 "(samples, nanoseconds or bytes) and cannot be compared");
		return rc;
	}
	if (rc < 0 || !(v->own_m = rd_model_new(prof_diff_tree(v->diff))) ||
	    rd_diff_answer(v->diff, v->own_m->answer, sizeof(v->own_m->answer)) < 0) {
		snprintf(err, errlen, "out of memory while comparing the profiles");
		return -ENOMEM;
	}
	v->own_m->ncards = 0;
	v->dt_sort = RD_DT_CHANGE;
	*m = v->own_m;
	return 0;
}

int rd_views_set_live(struct rd_views *v, struct rd_live *live,
		      struct prof_profile *first, uint64_t from_ns,
		      uint64_t to_ns, struct rd_model **m)
{
	v->live = live;
	rd_live_shown(live, from_ns, to_ns);
	v->live_p = first;
	v->live_m = rd_model_new(first);
	if (!v->live_m)
		return -ENOMEM;
	*m = v->live_m;
	return 0;
}

/* rd_pane_ops.attach: @ui has the views as its panes already. */
static int views_start(void *ctx, struct rd_ui *ui, rd_live_wake_fn wake,
		       void *wake_arg)
{
	struct rd_views *v = ctx;

	v->ui = ui;
	if (v->diff)
		ui->avail = 0; /* the filters would renumber the diff's nodes */
	if (v->live)
		return rd_live_start(v->live, wake, wake_arg);
	return 0;
}

/* rd_pane_ops.detach. */
static void views_stop(void *ctx)
{
	struct rd_views *v = ctx;

	if (v->live)
		rd_live_stop(v->live);
	v->ui = NULL;
}

int rd_views_attach(struct rd_views *v, struct rd_ui *ui,
		    rd_live_wake_fn wake, void *wake_arg)
{
	struct rd_panes p = rd_views_panes(v);

	return rd_ui_attach(ui, &p, wake, wake_arg);
}

void rd_views_detach(struct rd_views *v)
{
	if (v->ui)
		rd_ui_detach(v->ui); /* calls views_stop */
	else
		views_stop(v);
}

/* ---- the toolbar row -------------------------------------------------- */

static int tw(const struct rd_ui *ui, const char *s)
{
	return ui->text.measure(ui->text.ctx, RD_FONT_NORMAL, s, strlen(s));
}

int rd_views_text_at(struct rd_ui *ui, int x, int y, int w, int font,
		     uint32_t color, const char *s)
{
	char buf[1024];
	size_t n;

	if (w < 1)
		return 0;
	n = rd_text_fit(&ui->text, font, s, w, 0, buf, sizeof(buf));
	rd_list_text(&ui->list, x, y, w, font, color, buf, n);
	return n ? ui->text.measure(ui->text.ctx, font, buf, n) : 0;
}

static int vbutton(struct rd_ui *ui, int x, int y, int h, int id,
		   const char *label, int on)
{
	int w = tw(ui, label) + S(ui, 16);

	rd_list_rect(&ui->list, x, y, w, h, on ? RD_COL_ON : RD_COL_PANEL);
	rd_list_outline(&ui->list, x, y, w, h, RD_COL_LINE);
	rd_views_text_at(ui, x + S(ui, 8), y + (h - ui->text.line_h[0]) / 2, w,
			 RD_FONT_NORMAL, RD_COL_TEXT, label);
	rd_ui_zone(ui, RD_Z_VIEW_BUTTON, (uint32_t)id, x, y, w, h);
	return x + w + S(ui, 6);
}

static int views_bar(struct rd_ui *ui, int y)
{
	struct rd_views *v = rd_views_of(ui);
	int h = ui->text.line_h[RD_FONT_NORMAL] + S(ui, 10), x = S(ui, 8);
	int ty = y + (h - ui->text.line_h[0]) / 2;
	char line[320];

	x = vbutton(ui, x, y, h, RD_VB_SANDWICH, v->pane == RD_PANE_SANDWICH ?
		    "\xe2\x86\x90 Back" : "Sandwich (s)", v->pane == RD_PANE_SANDWICH);
	x = vbutton(ui, x, y, h, RD_VB_CALLTREE, "Call tree", v->pane == RD_PANE_CALLTREE);
	if (v->diff) {
		x = vbutton(ui, x, y, h, RD_VB_SIDE, "Side by side", v->pane == RD_PANE_SIDE);
		x = vbutton(ui, x, y, h, RD_VB_PALETTE, v->dopt.palette ?
			    "Colours: colour-blind" : "Colours: red/blue", 0);
		x = vbutton(ui, x, y, h, RD_VB_ABSOLUTE, v->dopt.absolute ?
			    "Change: absolute" : "Change: relative", v->dopt.absolute);
		x = vbutton(ui, x, y, h, RD_VB_NOISE, "Hide noise", v->dopt.noise_filter);
		x += rd_diff_legend(&ui->list, &ui->text, (struct rd_rect){ x + S(ui, 6), y,
				    S(ui, 330), h }, v->dopt.palette) + S(ui, 18);
	}
	if (v->live) {
		x = vbutton(ui, x, y, h, RD_VB_PAUSE, rd_live_paused(v->live) ?
			    "Resume" : "Pause", rd_live_paused(v->live));
		rd_live_status(v->live, line, sizeof(line));
		x += rd_views_text_at(ui, x + S(ui, 4), ty, ui->w - x - S(ui, 12),
				      RD_FONT_NORMAL, RD_COL_DIM, line) + S(ui, 16);
	}
	if (v->pane == RD_PANE_CALLTREE && v->ct.searching) {
		rd_calltree_status(&v->ct, line, sizeof(line));
		x += rd_views_text_at(ui, x + S(ui, 4), ty, S(ui, 120), RD_FONT_BOLD,
				      RD_COL_MATCH, line) + S(ui, 12);
		x = vbutton(ui, x, y, h, RD_VB_CT_PREV, "\xe2\x97\x80", 0);
		x = vbutton(ui, x, y, h, RD_VB_CT_NEXT, "\xe2\x96\xb6", 0);
	}
	if (v->pane == RD_PANE_CALLTREE && v->ct_side >= 0)
		x = vbutton(ui, x, y, h, RD_VB_CT_WHOLE, "Whole profile", 0);
	if (v->pane == RD_PANE_SANDWICH)
		snprintf(line, sizeof(line), "Sandwich of %.200s: its callers above, what it "
			 "calls below \xc2\xb7 Esc goes back", v->sw_name);
	else
		snprintf(line, sizeof(line), "%s", v->notice);
	if (line[0])
		rd_views_text_at(ui, x + S(ui, 4), ty, ui->w - x - S(ui, 12),
				 RD_FONT_NORMAL, 0x9A6700, line);
	return y + h + S(ui, 8);
}

void rd_views_draw_box(struct rd_ui *ui, const struct rd_box *b,
		       const char *label, uint32_t c)
{
	int thin = b->flags & RD_BOX_THIN, w = thin ? b->w : b->w - 1, pad = S(ui, 3);

	if (b->flags & RD_BOX_ANCESTOR)
		c = rd_mix(c, RD_COL_BG, 0.35);
	else if (thin)
		c = rd_mix(c, RD_COL_BG, 0.25);
	rd_list_rect(&ui->list, b->x, b->y, w > 0 ? w : 1, b->h - 1, c);
	if (!(b->flags & RD_BOX_LABEL) || b->w - 2 * pad < 1)
		return;
	rd_views_text_at(ui, b->x + pad, b->y + (b->h - 1 - ui->text.line_h[RD_FONT_NORMAL]) / 2,
			 b->w - 2 * pad, RD_FONT_NORMAL,
			 (c >> 16 & 0xff) + (c >> 8 & 0xff) + (c & 0xff) < 300 ?
			 0xFFFFFF : RD_COL_TEXT, label);
}

/* ---- panes and colours -------------------------------------------------- */

static int views_graph(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);

	switch (v->pane) {
	case RD_PANE_SANDWICH:
		ui->boxes.n = 0;
		return rd_views_sandwich_graph(ui);
	case RD_PANE_CALLTREE:
		ui->boxes.n = 0;
		return rd_views_calltree_graph(ui);
	case RD_PANE_SIDE:
		return rd_views_side_graph(ui);
	default:
		return rd_ui_graph(ui);
	}
}

void rd_views_row_sandwich(struct rd_ui *ui, int x, int y, int h, int kind,
			   uint32_t arg)
{
	static const char *label = "\xe2\x87\x85"; /* up and down arrows */
	int w = tw(ui, label) + S(ui, 8);

	rd_list_rect(&ui->list, x - w, y + S(ui, 1), w, h - S(ui, 2), RD_COL_PANEL);
	rd_list_outline(&ui->list, x - w, y + S(ui, 1), w, h - S(ui, 2), RD_COL_LINE);
	rd_views_text_at(ui, x - w + S(ui, 4), y + (h - ui->text.line_h[0]) / 2, w,
			 RD_FONT_NORMAL, RD_COL_ACCENT, label);
	rd_ui_zone(ui, kind, arg, x - w, y, w, h);
}

/* A sandwich button on each row of the window's top table, at the end of
 * its name column (the table's two value columns are 120 px each). */
static void table_buttons(struct rd_ui *ui)
{
	size_t n = ui->nzones;
	int right = ui->table.x + ui->table.w - 2 * S(ui, 120) - S(ui, 2);

	for (size_t i = 0; i < n; i++) {
		const struct rd_zone z = ui->zones[i];

		if (z.kind == RD_Z_TABLE_ROW)
			rd_views_row_sandwich(ui, right, z.r.y, z.r.h, RD_Z_TT_SANDWICH, z.arg);
	}
}

static int views_tooltip(struct rd_ui *ui)
{
	struct rd_views *v = rd_views_of(ui);

	/* Called after the window's table: a diff's table replaces it; the
	 * window's rows get a sandwich button. */
	if (ui->show_table && rd_views_diff_on(ui)) {
		if (rd_views_diff_table(ui) < 0)
			ui->oom = 1;
	} else if (ui->show_table) {
		table_buttons(ui);
	}

	if (v->pane == RD_PANE_SANDWICH)
		return rd_views_sandwich_tooltip(ui);
	if (v->pane == RD_PANE_CALLTREE)
		return 1;
	if (v->pane == RD_PANE_SIDE)
		return rd_views_side_tooltip(ui);
	return 0;
}

int rd_views_diff_on(const struct rd_ui *ui)
{
	const struct rd_views *v = rd_views_of(ui);

	return v && v->diff && ui->m == v->own_m;
}

int rd_views_tip_lines(const struct rd_ui *ui, const struct rd_box *b,
		       char (*lines)[256], int max)
{
	int k = 0;

	if (b->flags & RD_BOX_SMALL || b->node == 0)
		return 0;
	if (rd_views_diff_on(ui))
		k = rd_diff_tip(rd_views_of(ui)->diff, b->node, &rd_views_of(ui)->dopt, lines, max);
	if (k < max)
		snprintf(lines[k++], 256, "s: its callers and callees (sandwich)");
	return k;
}

static int views_box_color(const struct rd_ui *ui, const struct rd_box *b,
			   uint32_t *color)
{
	const struct rd_views *v = rd_views_of(ui);

	if (!rd_views_diff_on(ui) || (b->flags & RD_BOX_SMALL))
		return 0; /* "N small functions" stay the window's grey */
	*color = rd_diff_color(rd_diff_node_shade(v->diff, b->node, &v->dopt).shown,
			       v->dopt.palette);
	return 1;
}

/* ---- input --------------------------------------------------------------- */

/* The node the user means: the keyboard selection, the box under the
 * mouse, the zoomed box; 0 when none. */
static uint32_t chosen_node(const struct rd_ui *ui)
{
	const struct rd_box *b;

	if (ui->selected)
		return ui->selected;
	if (ui->mouse_in && (b = rd_flame_hit(&ui->boxes, ui->mouse_x, ui->mouse_y)) &&
	    !(b->flags & RD_BOX_SMALL))
		return b->last;
	return ui->focus;
}

static int open_sandwich_here(struct rd_ui *ui)
{
	uint32_t node = chosen_node(ui), idx;
	const char *name;

	if (node) {
		name = rd_model_fn_name(ui->m, rd_model_node_fn(ui->m, node));
	} else {
		if (!rd_model_sorted(ui->m, RD_SORT_SELF, 0, ui->table_idx))
			return 0;
		idx = ui->table_idx[0];
		name = rd_model_fn_name(ui->m, idx);
	}
	return rd_views_sandwich(ui, name) < 0 ? (ui->oom = 1) : 1;
}

static int press(struct rd_ui *ui, uint32_t id)
{
	struct rd_views *v = rd_views_of(ui);

	switch (id) {
	case RD_VB_SANDWICH:
		if (v->pane == RD_PANE_SANDWICH)
			return rd_views_sandwich_leave(ui);
		return open_sandwich_here(ui);
	case RD_VB_CALLTREE:
		v->pane = v->pane == RD_PANE_CALLTREE ? RD_PANE_GRAPH : RD_PANE_CALLTREE;
		ui->scroll = 0;
		return 1;
	case RD_VB_SIDE:
		v->pane = v->pane == RD_PANE_SIDE ? RD_PANE_GRAPH : RD_PANE_SIDE;
		return 1;
	case RD_VB_PALETTE: v->dopt.palette = !v->dopt.palette; return 1;
	case RD_VB_ABSOLUTE: v->dopt.absolute = !v->dopt.absolute; return 1;
	case RD_VB_NOISE: v->dopt.noise_filter = !v->dopt.noise_filter; return 1;
	case RD_VB_PAUSE:
		if (v->live)
			rd_live_pause(v->live, !rd_live_paused(v->live));
		return 1;
	case RD_VB_CT_PREV:
	case RD_VB_CT_NEXT:
		return rd_views_calltree_step(ui, id == RD_VB_CT_NEXT ? 1 : -1);
	case RD_VB_CT_WHOLE:
		v->ct_side = -1;
		return 1;
	default:
		return 0;
	}
}

static int views_click(struct rd_ui *ui, int x, int y)
{
	struct rd_views *v = rd_views_of(ui);
	const struct rd_rect *g = &ui->graph;

	for (size_t i = ui->nzones; i-- > 0;) {
		const struct rd_zone *z = &ui->zones[i];

		if (z->kind < RD_Z_VIEW_BUTTON || x < z->r.x || x >= z->r.x + z->r.w ||
		    y < z->r.y || y >= z->r.y + z->r.h)
			continue;
		ui->typing = 0;
		if (z->kind == RD_Z_VIEW_BUTTON)
			return press(ui, z->arg);
		if (z->kind == RD_Z_DT_HEAD || z->kind == RD_Z_DT_ROW ||
		    z->kind == RD_Z_DT_SANDWICH)
			return rd_views_diff_table_click(ui, z->kind, z->arg);
		if (z->kind == RD_Z_TT_SANDWICH)
			return rd_views_sandwich(ui, rd_model_fn_name(ui->m, z->arg)) < 0 ?
			       (ui->oom = 1) : 1;
		return rd_views_calltree_click(ui, z->kind, z->arg);
	}
	if (v->pane == RD_PANE_SIDE)
		return rd_views_side_click(ui, x, y);
	if (x < g->x || x >= g->x + g->w || y < g->y || y >= g->y + g->h)
		return -1;
	if (v->pane == RD_PANE_SANDWICH)
		return rd_views_sandwich_click(ui, x, y);
	return -1;
}

static int views_motion(struct rd_ui *ui)
{
	/* The panes' hover tooltips follow the mouse; the divider drag stays
	 * the window's. */
	return rd_views_of(ui)->pane != RD_PANE_GRAPH && !ui->dragging;
}

static int views_key(struct rd_ui *ui, int key)
{
	struct rd_views *v = rd_views_of(ui);

	if (v->pane == RD_PANE_SANDWICH && key == RD_KEY_ESCAPE)
		return rd_views_sandwich_escape(ui);
	if (v->pane == RD_PANE_SANDWICH)
		return 0;
	if (v->pane == RD_PANE_CALLTREE && key == RD_KEY_ENTER)
		return rd_views_calltree_step(ui, 1);
	if (v->pane == RD_PANE_CALLTREE && key == RD_KEY_ESCAPE) {
		v->pane = RD_PANE_GRAPH;
		return 1;
	}
	return -1;
}

static int views_text(struct rd_ui *ui, const char *utf8)
{
	struct rd_views *v = rd_views_of(ui);

	if (!strcmp(utf8, "s")) {
		if (v->pane == RD_PANE_SANDWICH)
			return rd_views_sandwich_here(ui);
		return open_sandwich_here(ui);
	}
	if (!strcmp(utf8, " ") && v->live) {
		rd_live_pause(v->live, !rd_live_paused(v->live));
		return 1;
	}
	return 0;
}

/* ---- dump ------------------------------------------------------------------ */

static void views_dump(const struct rd_ui *ui, FILE *out)
{
	static const char *const panes[] = { "graph", "sandwich", "calltree", "side" };
	struct rd_views *v = rd_views_of(ui);
	char line[320];

	fprintf(out, "view %s\n", panes[v->pane]);
	fprintf(out, "vnotice %s\n", v->notice);
	if (v->diff)
		fprintf(out, "diff palette %d absolute %d noise %d\n", v->dopt.palette,
			v->dopt.absolute, v->dopt.noise_filter);
	if (v->pane == RD_PANE_SANDWICH)
		rd_views_sandwich_dump(ui, out);
	if (v->pane == RD_PANE_CALLTREE)
		rd_views_calltree_dump(ui, out);
	if (v->pane == RD_PANE_SIDE)
		rd_views_side_dump(ui, out);
	if (v->live) {
		if (v->live_pending) {
			v->live_latency_ms = (double)(rd_live_mono_ns() - v->live_arrived_ns) / 1e6;
			v->live_pending = 0;
		}
		fprintf(out, "live updates %llu latency_ms %.2f paused %d\n",
			(unsigned long long)v->live_updates, v->live_latency_ms,
			rd_live_paused(v->live));
		fprintf(out, "livestatus %s\n", rd_live_status(v->live, line, sizeof(line)));
	}
}

/* ---- live updates --------------------------------------------------------- */

int rd_views_name_path(const struct prof_profile *p, uint32_t node,
		       const char **path)
{
	uint32_t ids[RD_PATH_MAX];
	int n = 0;

	for (uint32_t a = node; a; a = prof_node_get(p, a)->parent) {
		if (n == RD_PATH_MAX)
			return 0;
		ids[n++] = a;
	}
	for (int i = 0; i < n; i++)
		path[i] = prof_str(p, prof_frame_get(p, prof_node_get(p, ids[n - 1 - i])->frame)->name);
	return n;
}

/* Copies the @n strings of @path in place (the profile they point into
 * may go); returns 0 or -ENOMEM (then nothing is owned). */
static int own_path(const char **path, int n)
{
	for (int i = 0; i < n; i++) {
		if (!(path[i] = strdup(path[i]))) {
			while (i-- > 0)
				free((char *)path[i]);
			return -ENOMEM;
		}
	}
	return 0;
}

static void free_path(const char **path, int n)
{
	for (int i = 0; i < n; i++)
		free((char *)path[i]);
}

uint32_t rd_views_find_path(const struct prof_profile *p, const char **path,
			    int n)
{
	uint32_t node = 0;

	for (int i = 0; i < n; i++) {
		uint32_t c = prof_node_get(p, node)->child;

		while (c && strcmp(prof_str(p, prof_frame_get(p, prof_node_get(p, c)->frame)->name),
				   path[i]))
			c = prof_node_get(p, c)->sibling;
		if (!c)
			return 0;
		node = c;
	}
	return node;
}

int rd_views_update(struct rd_ui *ui)
{
	const char *fpath[RD_PATH_MAX], *spath[RD_PATH_MAX];
	struct rd_views *v = rd_views_of(ui);
	struct prof_profile *p, *old_p = v->live_p;
	struct rd_model *m, *old_m = v->live_m;
	uint64_t from, to, arrived;
	int nf, ns, scroll = ui->scroll;

	if (!v->live || !rd_live_take(v->live, &p, &m, &from, &to, &arrived))
		return 0;
	rd_views_calltree_keep(ui); /* before the models it points into go */
	nf = rd_views_name_path(ui->m->p, ui->focus, fpath);
	ns = rd_views_name_path(ui->m->p, ui->selected, spath);
	if (own_path(fpath, nf) < 0)
		nf = 0;
	if (own_path(spath, ns) < 0)
		ns = 0;
	v->live_p = p;
	v->live_m = m;
	ui->base = m;
	ui->avail = rd_filter_available(m->p);
	if (rd_ui_set_filter(ui, ui->filter & ui->avail) < 0) {
		/* Keep showing the old data. */
		ui->base = old_m;
		v->live_p = old_p;
		v->live_m = old_m;
		rd_model_free(m);
		prof_free(p);
		free_path(fpath, nf);
		free_path(spath, ns);
		return 0;
	}
	v->notice[0] = '\0';
	ui->focus = nf ? rd_views_find_path(ui->m->p, fpath, nf) : 0;
	if (nf && !ui->focus)
		snprintf(v->notice, sizeof(v->notice), "The zoomed frame %.160s is not in "
			 "the latest data; showing everything.", fpath[nf - 1]);
	ui->selected = ns ? rd_views_find_path(ui->m->p, spath, ns) : 0;
	free_path(fpath, nf);
	free_path(spath, ns);
	ui->scroll = scroll;
	rd_views_sandwich_refresh(ui);
	rd_live_discard(v->live, old_p, old_m);
	v->live_updates++;
	v->live_arrived_ns = arrived;
	v->live_pending = 1;
	return 1;
}

/* ---- the table the window is given --------------------------------------- */

static const struct rd_pane_ops views_ops = {
	.attach = views_start,
	.detach = views_stop,
	.bar = views_bar,
	.graph = views_graph,
	.tooltip = views_tooltip,
	.tip_lines = rd_views_tip_lines,
	.box_color = views_box_color,
	.click = views_click,
	.motion = views_motion,
	.key = views_key,
	.text = views_text,
	.dump = views_dump,
	.update = rd_views_update,
};

struct rd_panes rd_views_panes(struct rd_views *v)
{
	return (struct rd_panes){ .ops = v ? &views_ops : NULL, .ctx = v };
}
