/* SPDX-License-Identifier: MIT */
/* The graph pane (boxes and labels), the tooltip and the top table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "render/format.h"
#include "render/palette.h"
#include "render/ui_internal.h"

#define S(ui, v) RD_S(ui, v)

static double pct_of(const struct rd_ui *ui, uint64_t v)
{
	return ui->m->total ? 100.0 * (double)v / (double)ui->m->total : 0;
}

/* Only my code: the time of removed frames, kept as self of their nearest
 * kept caller, is hatched at the right end of that caller's box. */
static void hatch(struct rd_ui *ui, const struct rd_box *b, uint32_t c)
{
	uint64_t h;
	int w, step = S(ui, 4);

	if (!ui->filt.hidden || b->last >= ui->filt.nhidden ||
	    (b->flags & RD_BOX_SMALL) || !b->value)
		return;
	h = ui->filt.hidden[b->last];
	w = (int)((double)h / (double)b->value * b->fw + 0.5);
	if (h == 0 || w < 2)
		return;
	if (w > b->w)
		w = b->w;
	for (int x = b->x + b->w - w; x < b->x + b->w - 1; x += step)
		rd_list_rect(&ui->list, x, b->y, 1, b->h - 1, rd_mix(c, 0x000000, 0.35));
}

static void draw_box(struct rd_ui *ui, const struct rd_box *b, int pad)
{
	uint32_t c = rd_ui_box_color(ui, b);
	int thin = b->flags & RD_BOX_THIN;
	int w = thin ? b->w : b->w - 1;
	char label[512], fit[512];
	size_t n;
	int x;

	rd_list_rect(&ui->list, b->x, b->y, w > 0 ? w : 1, b->h - 1, c);
	hatch(ui, b, c);
	if (!(b->flags & RD_BOX_LABEL) || b->w - 2 * pad < 1)
		return;
	rd_ui_box_label(ui, b, label, sizeof(label));
	n = rd_text_fit(&ui->text, RD_FONT_NORMAL, label, b->w - 2 * pad,
			ui->keep_end, fit, sizeof(fit));
	/* Right-aligned labels keep the end of long names. */
	x = b->x + pad;
	if (ui->keep_end && n)
		x = b->x + b->w - pad -
		    ui->text.measure(ui->text.ctx, RD_FONT_NORMAL, fit, n);
	rd_list_text(&ui->list, x,
		     b->y + (b->h - 1 - ui->text.line_h[RD_FONT_NORMAL]) / 2,
		     b->w - 2 * pad, RD_FONT_NORMAL,
		     (c >> 16 & 0xff) + (c >> 8 & 0xff) + (c & 0xff) < 300 ?
		     0xFFFFFF : RD_COL_TEXT, fit, n);
}

int rd_ui_graph(struct rd_ui *ui)
{
	struct rd_flame_opts o = {
		.area = ui->graph,
		.row_h = ui->text.line_h[RD_FONT_NORMAL] + S(ui, 5),
		.icicle = ui->icicle,
		.unfold = ui->unfold,
		.focus = ui->focus,
		.scroll = ui->scroll,
		.bucket = ui->bucket,
		.min_px = 0.5,
	};
	const struct rd_box *sel = NULL;
	int err, pad = S(ui, 3);

	rd_list_rect(&ui->list, ui->graph.x, ui->graph.y, ui->graph.w,
		     ui->graph.h, 0xFFFFFF);
	err = rd_flame_layout(&ui->m->tree, &o, &ui->boxes);
	if (err == -EINVAL && ui->focus) {
		ui->focus = 0;
		o.focus = 0;
		err = rd_flame_layout(&ui->m->tree, &o, &ui->boxes);
	}
	if (err == -ENOMEM)
		return err;
	/* Do not scroll past the deepest row. */
	if (ui->scroll > (int)ui->boxes.max_depth * o.row_h)
		ui->scroll = (int)ui->boxes.max_depth * o.row_h;
	for (size_t i = 0; i < ui->boxes.n; i++)
		draw_box(ui, &ui->boxes.v[i], pad);
	if (ui->selected) {
		long i = rd_flame_find(&ui->boxes, ui->m->p, ui->selected);

		sel = i < 0 ? NULL : &ui->boxes.v[i];
	}
	if (sel) {
		rd_list_outline(&ui->list, sel->x, sel->y, sel->w, sel->h - 1,
				RD_COL_ACCENT);
		rd_list_outline(&ui->list, sel->x + 1, sel->y + 1, sel->w - 2,
				sel->h - 3, RD_COL_ACCENT);
	}
	if (!ui->m->total)
		rd_list_text(&ui->list, ui->graph.x + S(ui, 12),
			     ui->graph.y + S(ui, 12), ui->graph.w, RD_FONT_NORMAL,
			     RD_COL_DIM, "This profile holds no samples.", 30);
	return 0;
}

#define TIP_MAX 14

/* Tooltip lines for box @b into @lines (TIP_MAX of 256 bytes). */
static int tip_lines(const struct rd_ui *ui, const struct rd_box *b,
		     char lines[][256])
{
	enum prof_unit u = prof_meta_const(ui->m->p)->unit;
	const struct prof_node *n = prof_node_get(ui->m->p, b->last);
	const struct prof_frame *f = prof_frame_get(ui->m->p, n->frame);
	char v[32], p[16], cnt[32];
	int k = 0;

	rd_ui_box_label(ui, b, lines[k++], 256);
	if (b->flags & RD_BOX_SMALL) {
		snprintf(lines[k++], 256, "%u functions, each under 0.1%% of this view",
			 b->count);
		snprintf(lines[k++], 256, "Total: %s (%s)", rd_fmt_value(v, sizeof(v), b->value, u),
			 rd_fmt_pct(p, sizeof(p), pct_of(ui, b->value)));
		snprintf(lines[k++], 256, "Click to open them; Escape closes");
		return k;
	}
	if (b->flags & RD_BOX_CHAIN)
		snprintf(lines[k++], 256, "%u frames folded, down to %s", b->count,
			 prof_str(ui->m->p, f->name));
	if (f && (f->module || f->file)) {
		const char *mod = prof_str(ui->m->p, f->module);
		char at[200];

		/* A function's lines merged into this box: each one's share. */
		if (rd_lines_text(&ui->m->lines, ui->m->p, b->last, 1, at, sizeof(at))[0])
			snprintf(lines[k++], 256, "%s%s%s", mod, *mod ? "  " : "", at);
		else if (f->file && f->line)
			snprintf(lines[k++], 256, "%s%s%s:%u", mod, *mod ? "  " : "",
				 prof_str(ui->m->p, f->file), f->line);
		else
			snprintf(lines[k++], 256, "%s", mod);
	}
	if (b->node && f && f->lang)
		snprintf(lines[k++], 256, "%s \xc2\xb7 %s", rd_class_name(rd_frame_class(f)),
			 rd_lang_name(f->lang));
	else if (b->node)
		snprintf(lines[k++], 256, "%s", rd_class_name(rd_frame_class(f)));
	snprintf(lines[k++], 256, "Total: %s (%s)", rd_fmt_value(v, sizeof(v), b->value, u),
		 rd_fmt_pct(p, sizeof(p), pct_of(ui, b->value)));
	snprintf(lines[k++], 256, "Self: %s (%s)", rd_fmt_value(v, sizeof(v), n->self, u),
		 rd_fmt_pct(p, sizeof(p), pct_of(ui, n->self)));
	if (u == PROF_UNIT_SAMPLES)
		snprintf(lines[k++], 256, "Samples: %s",
			 rd_fmt_count(cnt, sizeof(cnt), b->value));
	if (ui->filt.hidden && b->last < ui->filt.nhidden && ui->filt.hidden[b->last])
		snprintf(lines[k++], 256, "Hatched: %s (%s) in code it called that is not yours",
			 rd_fmt_value(v, sizeof(v), ui->filt.hidden[b->last], u),
			 rd_fmt_pct(p, sizeof(p), pct_of(ui, ui->filt.hidden[b->last])));
	if (RD_PANE(ui, tip_lines))
		k += ui->panes.ops->tip_lines(ui, b, lines + k, TIP_MAX - k);
	return k;
}

void rd_ui_tip_box(struct rd_ui *ui, char (*lines)[256], int k)
{
	int w = 0, lh = ui->text.line_h[RD_FONT_NORMAL] + S(ui, 2), x, y, h;

	for (int i = 0; i < k; i++) {
		int lw = ui->text.measure(ui->text.ctx, i ? RD_FONT_NORMAL : RD_FONT_BOLD,
					  lines[i], strlen(lines[i]));
		if (lw > w)
			w = lw;
	}
	if (w > ui->w / 2)
		w = ui->w / 2;
	w += S(ui, 16);
	h = k * lh + S(ui, 10);
	x = ui->mouse_x + S(ui, 14);
	y = ui->mouse_y + S(ui, 18);
	if (x + w > ui->w)
		x = ui->mouse_x - w - S(ui, 6);
	if (y + h > ui->h)
		y = ui->mouse_y - h - S(ui, 6);
	x = x < 0 ? 0 : x;
	y = y < 0 ? 0 : y;
	ui->tip = (struct rd_rect){ x, y, w, h };
	rd_list_rect(&ui->list, x + 2, y + 2, w, h, 0xC8C8C8);
	rd_list_rect(&ui->list, x, y, w, h, RD_COL_TIP_BG);
	rd_list_outline(&ui->list, x, y, w, h, RD_COL_LINE);
	for (int i = 0; i < k; i++) {
		char fit[300];
		size_t n = rd_text_fit(&ui->text, i ? RD_FONT_NORMAL : RD_FONT_BOLD,
				       lines[i], w - S(ui, 16), 0, fit, sizeof(fit));

		rd_list_text(&ui->list, x + S(ui, 8), y + S(ui, 5) + i * lh,
			     w - S(ui, 16), i ? RD_FONT_NORMAL : RD_FONT_BOLD,
			     RD_COL_TEXT, fit, n);
	}
}

void rd_ui_tooltip(struct rd_ui *ui)
{
	const struct rd_box *b;
	char lines[TIP_MAX][256];

	ui->tip = (struct rd_rect){ 0, 0, 0, 0 };
	if (!ui->mouse_in || ui->dragging ||
	    !(b = rd_flame_hit(&ui->boxes, ui->mouse_x, ui->mouse_y)))
		return;
	rd_list_outline(&ui->list, b->x, b->y, b->w, b->h - 1, RD_COL_TEXT);
	rd_ui_tip_box(ui, lines, tip_lines(ui, b, lines));
}

static void cell(struct rd_ui *ui, int x, int y, int w, int font,
		 uint32_t color, const char *s, int right)
{
	char fit[512];
	size_t n = rd_text_fit(&ui->text, font, s, w, 0, fit, sizeof(fit));
	int tw = n ? ui->text.measure(ui->text.ctx, font, fit, n) : 0;

	rd_list_text(&ui->list, right ? x + w - tw : x, y, w, font, color, fit, n);
}

static void table_head(struct rd_ui *ui, int y, int rh, int cn, int cv)
{
	static const char *const names[] = { "Total", "Self", "Function" };
	const struct rd_rect *t = &ui->table;
	int xs[3] = { t->x + cn + cv, t->x + cn, t->x };
	int ws[3] = { cv, cv, cn };
	char label[32];

	rd_list_rect(&ui->list, t->x, y, t->w, rh, RD_COL_PANEL);
	for (int i = 0; i < 3; i++) {
		snprintf(label, sizeof(label), "%s%s", names[i],
			 (int)ui->sort == i ? " \xe2\x96\xbc" : "");
		cell(ui, xs[i] + S(ui, 6), y + S(ui, 2), ws[i] - S(ui, 12),
		     RD_FONT_BOLD, RD_COL_TEXT, label, i < 2);
		rd_ui_zone(ui, RD_Z_TABLE_HEAD, (uint32_t)i, xs[i], y, ws[i], rh);
	}
}

void rd_ui_table(struct rd_ui *ui)
{
	const struct rd_rect *t = &ui->table;
	enum prof_unit u = prof_meta_const(ui->m->p)->unit;
	int rh = ui->text.line_h[RD_FONT_NORMAL] + S(ui, 5);
	int bh = ui->text.line_h[RD_FONT_NORMAL] + S(ui, 10);
	int cv = S(ui, 120), cn = t->w - 2 * cv, y = t->y, x;
	char v[32], p[16], s[64];

	rd_list_rect(&ui->list, t->x, t->y, t->w, t->h, 0xFFFFFF);
	x = t->x;
	{
		const char *l = ui->yours_only ? "Showing: your code" : "Showing: everything";
		int w = ui->text.measure(ui->text.ctx, RD_FONT_NORMAL, l, strlen(l)) + S(ui, 16);

		rd_list_rect(&ui->list, x, y, w, bh, RD_COL_PANEL);
		rd_list_outline(&ui->list, x, y, w, bh, RD_COL_LINE);
		cell(ui, x + S(ui, 8), y + (bh - ui->text.line_h[0]) / 2, w,
		     RD_FONT_NORMAL, RD_COL_TEXT, l, 0);
		rd_ui_zone(ui, RD_Z_BUTTON, RD_BTN_YOURS, x, y, w, bh);
	}
	y += bh + S(ui, 6);
	table_head(ui, y, rh, cn, cv);
	y += rh;
	ui->table_n = rd_model_sorted(ui->m, ui->sort, ui->yours_only, ui->table_idx);
	if (ui->table_scroll > 0 && (size_t)ui->table_scroll >= ui->table_n)
		ui->table_scroll = ui->table_n ? (int)ui->table_n - 1 : 0;
	for (size_t i = (size_t)ui->table_scroll; i < ui->table_n; i++) {
		const struct rd_fn *f = &ui->m->fns[ui->table_idx[i]];

		if (y + rh > t->y + t->h)
			break;
		if (i % 2)
			rd_list_rect(&ui->list, t->x, y, t->w, rh, 0xF4F5F7);
		rd_list_rect(&ui->list, t->x + S(ui, 1), y + S(ui, 3), S(ui, 3),
			     rh - S(ui, 6), rd_class_color(rd_frame_class(
				     prof_frame_get(ui->m->p, f->frame))));
		cell(ui, t->x + S(ui, 6), y + S(ui, 2), cn - S(ui, 12), RD_FONT_NORMAL,
		     RD_COL_TEXT, rd_model_fn_name(ui->m, ui->table_idx[i]), 0);
		snprintf(s, sizeof(s), "%s  %s", rd_fmt_value(v, sizeof(v), f->self, u),
			 rd_fmt_pct(p, sizeof(p), pct_of(ui, f->self)));
		cell(ui, t->x + cn + S(ui, 6), y + S(ui, 2), cv - S(ui, 12),
		     RD_FONT_NORMAL, RD_COL_TEXT, s, 1);
		snprintf(s, sizeof(s), "%s  %s", rd_fmt_value(v, sizeof(v), f->total, u),
			 rd_fmt_pct(p, sizeof(p), pct_of(ui, f->total)));
		cell(ui, t->x + cn + cv + S(ui, 6), y + S(ui, 2), cv - S(ui, 12),
		     RD_FONT_NORMAL, RD_COL_TEXT, s, 1);
		rd_ui_zone(ui, RD_Z_TABLE_ROW, ui->table_idx[i], t->x, y, t->w, rh);
		y += rh;
	}
}
