/* SPDX-License-Identifier: MIT */
/* The window's layout: answer, cards, toolbar, legend, breadcrumb, graph,
 * tooltip and the top table, as draw commands and zones. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/palette.h"
#include "render/ui_internal.h"

#define S(ui, v) RD_S(ui, v)

void rd_ui_zone(struct rd_ui *ui, int kind, uint32_t arg, int x, int y,
		int w, int h)
{
	if (ui->nzones == ui->zcap) {
		size_t cap = ui->zcap ? ui->zcap * 2 : 128;
		struct rd_zone *z = realloc(ui->zones, cap * sizeof(*z));

		if (!z) {
			ui->oom = 1;
			return;
		}
		ui->zones = z;
		ui->zcap = cap;
	}
	ui->zones[ui->nzones++] = (struct rd_zone){ kind, arg, { x, y, w, h } };
}

static int tw(const struct rd_ui *ui, int font, const char *s)
{
	return ui->text.measure(ui->text.ctx, font, s, strlen(s));
}

/* Text fitted into @w pixels. Returns the width used. */
static int text(struct rd_ui *ui, int x, int y, int w, int font,
		uint32_t color, const char *s)
{
	char buf[1024];
	size_t n = rd_text_fit(&ui->text, font, s, w, 0, buf, sizeof(buf));

	rd_list_text(&ui->list, x, y, w, font, color, buf, n);
	return n ? tw(ui, font, buf) : 0;
}

static double share(const struct rd_ui *ui, uint64_t v)
{
	return ui->m->total ? 100.0 * (double)v / (double)ui->m->total : 0;
}

static const char *frame_name(const struct rd_ui *ui, uint32_t frame)
{
	const struct prof_frame *f = prof_frame_get(ui->m->p, frame);

	return f ? prof_str(ui->m->p, f->name) : "";
}

/* "file.c:42", the lines merged into card @c's function, the module, or
 * "" into @buf. */
static const char *where(const struct rd_model *m, const struct rd_card *c,
			 char *buf, size_t n)
{
	const struct prof_frame *f = prof_frame_get(m->p, m->fns[c->fn].frame);

	buf[0] = '\0';
	if (!f)
		return buf;
	if (c->at[0])
		snprintf(buf, n, "%s", c->at);
	else if (f->file && f->line)
		snprintf(buf, n, "%s:%u", prof_str(m->p, f->file), f->line);
	else if (f->file)
		snprintf(buf, n, "%s", prof_str(m->p, f->file));
	else if (f->module)
		snprintf(buf, n, "%s", prof_str(m->p, f->module));
	return buf;
}

static int lay_cards(struct rd_ui *ui, int y)
{
	int pad = S(ui, 8), gap = S(ui, 8), lh = ui->text.line_h[RD_FONT_NORMAL];
	int cw = (ui->w - 2 * pad - 2 * gap) / 3, ch = 2 * lh + S(ui, 12);

	const struct rd_model *m = ui->base;

	for (int i = 0; i < m->ncards; i++) {
		const struct rd_card *c = &m->cards[i];
		const struct rd_fn *fn = &m->fns[c->fn];
		const struct prof_frame *f = prof_frame_get(m->p, fn->frame);
		int x = pad + i * (cw + gap), used;
		char pct[16], loc[256], line[320];

		rd_list_rect(&ui->list, x, y, cw, ch, RD_COL_PANEL);
		rd_list_rect(&ui->list, x, y, S(ui, 4), ch,
			     rd_class_color(rd_frame_class(f)));
		rd_fmt_pct(pct, sizeof(pct), c->pct);
		used = text(ui, x + S(ui, 10), y + S(ui, 5), cw - S(ui, 14),
			    RD_FONT_BOLD, RD_COL_TEXT, pct);
		text(ui, x + S(ui, 18) + used, y + S(ui, 5),
		     cw - S(ui, 22) - used, RD_FONT_NORMAL, RD_COL_TEXT,
		     rd_model_fn_name(m, c->fn));
		where(m, c, loc, sizeof(loc));
		snprintf(line, sizeof(line), "%s%s%s%s%s", loc, loc[0] ? " \xc2\xb7 " : "",
			 f && f->lang ? rd_lang_name(f->lang) : "",
			 f && f->lang ? " \xc2\xb7 " : "", rd_class_name(rd_frame_class(f)));
		text(ui, x + S(ui, 10), y + S(ui, 7) + lh, cw - S(ui, 14),
		     RD_FONT_NORMAL, RD_COL_DIM, line);
		rd_ui_zone(ui, RD_Z_CARD, c->fn, x, y, cw, ch);
	}
	return m->ncards ? y + ch + S(ui, 8) : y;
}

/* A toolbar button; returns its right edge. */
static int button(struct rd_ui *ui, int x, int y, int h, enum rd_button b,
		  const char *label, int on)
{
	int w = tw(ui, RD_FONT_NORMAL, label) + S(ui, 16);

	rd_list_rect(&ui->list, x, y, w, h, on ? RD_COL_ON : RD_COL_PANEL);
	rd_list_outline(&ui->list, x, y, w, h, RD_COL_LINE);
	text(ui, x + S(ui, 8), y + (h - ui->text.line_h[0]) / 2, w,
	     RD_FONT_NORMAL, RD_COL_TEXT, label);
	rd_ui_zone(ui, RD_Z_BUTTON, b, x, y, w, h);
	return x + w;
}

static void status_text(struct rd_ui *ui)
{
	char pct[16];

	ui->status[0] = '\0';
	if (!ui->m->searching)
		return;
	rd_fmt_pct(pct, sizeof(pct), share(ui, ui->m->match_value));
	snprintf(ui->status, sizeof(ui->status), "%u match%s \xc2\xb7 %s of the total",
		 ui->m->match_boxes, ui->m->match_boxes == 1 ? "" : "es", pct);
}

static int lay_toolbar(struct rd_ui *ui, int y)
{
	int h = ui->text.line_h[RD_FONT_NORMAL] + S(ui, 10), gap = S(ui, 6);
	int x = S(ui, 8), sw = S(ui, 260);

	x = button(ui, x, y, h, RD_BTN_MODE, ui->icicle ? "Icicle" : "Flame", 0) + gap;
	x = button(ui, x, y, h, RD_BTN_COLOR, ui->by_value ? "Colour: value" :
		   "Colour: owner", 0) + gap;
	x = button(ui, x, y, h, RD_BTN_UNFOLD, "Show every frame", ui->unfold) + gap;
	x = button(ui, x, y, h, RD_BTN_ALIGN, ui->keep_end ? "Labels: right" :
		   "Labels: left", 0) + gap;
	if (ui->avail & 1)
		x = button(ui, x, y, h, RD_BTN_MYCODE, "Only my code",
			   ui->filter & RD_FILTER_YOURS) + gap;
	if (ui->avail & 2)
		x = button(ui, x, y, h, RD_BTN_THREADS, "Merge threads",
			   ui->filter & RD_FILTER_THREADS) + gap;
	x = button(ui, x, y, h, RD_BTN_TABLE, "Top table", ui->show_table) + gap;
	x = button(ui, x, y, h, RD_BTN_RESET, "Reset", 0) + S(ui, 16);
	if (x + sw > ui->w - S(ui, 8)) {
		/* Narrow window: the search box goes on a row of its own. */
		x = S(ui, 8);
		y += h + S(ui, 6);
	}
	rd_list_rect(&ui->list, x, y, sw, h, 0xFFFFFF);
	rd_list_outline(&ui->list, x, y, sw, h, ui->typing ? RD_COL_ACCENT : RD_COL_LINE);
	if (ui->typing)
		rd_list_outline(&ui->list, x + 1, y + 1, sw - 2, h - 2, RD_COL_ACCENT);
	if (ui->query[0] || ui->typing) {
		char q[300];

		snprintf(q, sizeof(q), "%s%s", ui->query, ui->typing ? "|" : "");
		text(ui, x + S(ui, 6), y + (h - ui->text.line_h[0]) / 2,
		     sw - S(ui, 12), RD_FONT_NORMAL, RD_COL_TEXT, q);
	} else {
		text(ui, x + S(ui, 6), y + (h - ui->text.line_h[0]) / 2,
		     sw - S(ui, 12), RD_FONT_NORMAL, RD_COL_DIM,
		     "/  Search functions (a,b: regex or fuzzy)");
	}
	rd_ui_zone(ui, RD_Z_SEARCH, 0, x, y, sw, h);
	status_text(ui);
	if (ui->status[0])
		text(ui, x + sw + S(ui, 10), y + (h - ui->text.line_h[0]) / 2,
		     ui->w - x - sw - S(ui, 18), RD_FONT_BOLD, RD_COL_MATCH,
		     ui->status);
	return y + h + S(ui, 8);
}

void rd_ui_langs_text(const struct rd_ui *ui, char *line, size_t len)
{
	char pct[16];
	size_t o;

	line[0] = '\0';
	for (unsigned l = 1; l < PROF_LANG_COUNT; l++) {
		if (!ui->base->lang_self[l])
			continue;
		rd_fmt_pct(pct, sizeof(pct), share(ui, ui->base->lang_self[l]));
		o = strlen(line);
		snprintf(line + o, len - o, "%s%s %s", o ? " \xc2\xb7 " : "",
			 rd_lang_name(l), pct);
	}
}

static int lay_legend(struct rd_ui *ui, int y)
{
	static const unsigned order[] = {
		PROF_CLASS_YOURS, PROF_CLASS_LIBRARY, PROF_CLASS_RUNTIME,
		PROF_CLASS_SYSTEM, PROF_CLASS_WAITING, PROF_CLASS_UNKNOWN,
	};
	int lh = ui->text.line_h[RD_FONT_NORMAL], x = S(ui, 8), sq = S(ui, 12);
	char line[160], pct[16];

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		unsigned c = order[i];
		int faded = ui->faded >> c & 1u, w;

		if (!ui->base->class_self[c])
			continue;
		rd_fmt_pct(pct, sizeof(pct), share(ui, ui->base->class_self[c]));
		snprintf(line, sizeof(line), "%s %s", rd_class_name(c), pct);
		w = sq + S(ui, 6) + tw(ui, RD_FONT_NORMAL, line);
		rd_list_rect(&ui->list, x, y + (lh - sq) / 2, sq, sq,
			     faded ? rd_mix(rd_class_color(c), RD_COL_BG, 0.78) :
			     rd_class_color(c));
		text(ui, x + sq + S(ui, 6), y, w, RD_FONT_NORMAL,
		     faded ? 0xA8ACB2 : RD_COL_TEXT, line);
		rd_ui_zone(ui, RD_Z_LEGEND, c, x, y, w, lh);
		x += w + S(ui, 16);
	}
	/* Languages, right-aligned. */
	rd_ui_langs_text(ui, line, sizeof(line));
	if (line[0]) {
		int w = tw(ui, RD_FONT_NORMAL, line);

		if (ui->w - S(ui, 8) - w > x)
			text(ui, ui->w - S(ui, 8) - w, y, w, RD_FONT_NORMAL,
			     RD_COL_DIM, line);
	}
	return y + lh + S(ui, 6);
}

static int lay_crumbs(struct rd_ui *ui, int y)
{
	uint32_t path[64];
	size_t np = 0;
	int x = S(ui, 8), lh = ui->text.line_h[RD_FONT_NORMAL];
	const struct prof_node *f = prof_node_get(ui->m->p, ui->focus);
	char tail[128], pct[16];

	for (uint32_t a = ui->focus; np < 64; a = prof_node_get(ui->m->p, a)->parent) {
		path[np++] = a;
		if (a == 0)
			break;
	}
	for (size_t i = np; i-- > 0;) {
		const char *name = path[i] ? frame_name(ui, prof_node_get(ui->m->p, path[i])->frame) : "all";
		int w = text(ui, x, y, ui->w / 4, RD_FONT_NORMAL,
			     i || ui->bucket ? RD_COL_ACCENT : RD_COL_TEXT, name);

		rd_ui_zone(ui, RD_Z_CRUMB, path[i], x, y, w, lh);
		x += w;
		if (i) {
			x += S(ui, 4);
			x += text(ui, x, y, S(ui, 20), RD_FONT_NORMAL, RD_COL_DIM, "\xe2\x80\xba");
			x += S(ui, 4);
		}
		if (x > ui->w - S(ui, 200))
			break;
	}
	if (ui->bucket) {
		const struct rd_tree *t = &ui->m->tree;
		uint32_t fi = rd_tree_pre(t, ui->focus), n = 0;
		struct rd_kids ks;

		for (rd_kids_start(&ks, t, fi); rd_kids_next(&ks);)
			n += ks.total * 1000 < rd_tree_total(t, fi);
		snprintf(tail, sizeof(tail), "%u small functions", n);
		x += S(ui, 4);
		x += text(ui, x, y, S(ui, 20), RD_FONT_NORMAL, RD_COL_DIM, "\xe2\x80\xba");
		x += S(ui, 4);
		x += text(ui, x, y, S(ui, 200), RD_FONT_NORMAL, RD_COL_TEXT, tail);
	}
	if (f && ui->focus) {
		rd_fmt_pct(pct, sizeof(pct), share(ui, f->total));
		snprintf(tail, sizeof(tail), "   %s of the total \xc2\xb7 Esc zooms out", pct);
		text(ui, x, y, ui->w - x - S(ui, 8), RD_FONT_NORMAL, RD_COL_DIM, tail);
	} else {
		text(ui, x + S(ui, 12), y, ui->w - x - S(ui, 20), RD_FONT_NORMAL,
		     RD_COL_DIM, "click a box to zoom \xc2\xb7 / to search \xc2\xb7 arrows move \xc2\xb7 Enter zooms");
	}
	return y + lh + S(ui, 4);
}

int rd_ui_layout(struct rd_ui *ui, int w, int h, double scale)
{
	int y, pad, tbl = 0;

	ui->w = w;
	ui->h = h;
	ui->scale = scale > 0 ? scale : 1;
	ui->nzones = 0;
	ui->oom = 0;
	if (ui->search_dirty)
		rd_ui_set_query(ui, ui->query);
	rd_list_clear(&ui->list);
	pad = S(ui, 8);
	rd_list_rect(&ui->list, 0, 0, w, h, RD_COL_BG);
	y = pad;
	text(ui, pad, y, w - 2 * pad, RD_FONT_TITLE, RD_COL_TEXT, ui->base->answer);
	y += ui->text.line_h[RD_FONT_TITLE] + S(ui, 8);
	y = lay_cards(ui, y);
	if (ui->base->notice[0]) {
		text(ui, pad, y, w - 2 * pad, RD_FONT_NORMAL, 0x9A6700, ui->base->notice);
		y += ui->text.line_h[RD_FONT_NORMAL] + S(ui, 6);
	}
	y = lay_toolbar(ui, y);
	if (RD_PANE(ui, bar))
		y = ui->panes.ops->bar(ui, y);
	y = lay_legend(ui, y);
	y = lay_crumbs(ui, y);
	if (ui->show_table) {
		int min = S(ui, 200), max = w - S(ui, 320);

		if (!ui->table_w)
			ui->table_w = w * 2 / 5;
		tbl = ui->table_w < min ? min : ui->table_w;
		if (tbl > max)
			tbl = max > min ? max : min;
		ui->table_w = tbl;
	}
	ui->graph = (struct rd_rect){ pad, y, w - 2 * pad - (tbl ? tbl + S(ui, 8) : 0),
				      h - y - pad };
	ui->table = (struct rd_rect){ w - pad - tbl, y, tbl, h - y - pad };
	if (ui->graph.w < 1 || ui->graph.h < 1)
		ui->graph = (struct rd_rect){ pad, y, 1, 1 };
	if ((RD_PANE(ui, graph) ? ui->panes.ops->graph(ui) : rd_ui_graph(ui)) < 0)
		return -ENOMEM;
	if (tbl) {
		rd_ui_zone(ui, RD_Z_DIVIDER, 0, ui->graph.x + ui->graph.w, y,
			 S(ui, 8), ui->graph.h);
		rd_list_rect(&ui->list, ui->graph.x + ui->graph.w + S(ui, 3), y,
			     S(ui, 2), ui->graph.h, RD_COL_LINE);
		rd_ui_table(ui);
	}
	if (!(RD_PANE(ui, tooltip) && ui->panes.ops->tooltip(ui)))
		rd_ui_tooltip(ui);
	return ui->oom || ui->list.oom ? -ENOMEM : 0;
}
