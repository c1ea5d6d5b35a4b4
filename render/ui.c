/* SPDX-License-Identifier: MIT */
/* The viewer's state machine: clicks, keys, text, wheel, and the dump. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/palette.h"
#include "render/ui_internal.h"

int rd_ui_init(struct rd_ui *ui, struct rd_model *m, const struct rd_text *t)
{
	memset(ui, 0, sizeof(*ui));
	ui->m = m;
	ui->base = m;
	ui->avail = rd_filter_available(m->p);
	ui->text = *t;
	ui->table_idx = calloc(m->nfn ? m->nfn : 1, sizeof(*ui->table_idx));
	if (!ui->table_idx)
		return -ENOMEM;
	ui->scale = 1;
	return 0;
}

void rd_ui_release(struct rd_ui *ui)
{
	rd_list_free(&ui->list);
	rd_boxes_free(&ui->boxes);
	free(ui->zones);
	free(ui->table_idx);
	rd_model_free(ui->fm);
	rd_filtered_free(&ui->filt);
	memset(ui, 0, sizeof(*ui));
}

int rd_ui_attach(struct rd_ui *ui, const struct rd_panes *p,
		 void (*wake)(void *arg), void *wake_arg)
{
	int rc = 0;

	ui->panes = *p;
	if (RD_PANE(ui, attach) &&
	    (rc = ui->panes.ops->attach(ui->panes.ctx, ui, wake, wake_arg)) < 0)
		ui->panes = (struct rd_panes){ 0 };
	return rc;
}

void rd_ui_detach(struct rd_ui *ui)
{
	if (RD_PANE(ui, detach))
		ui->panes.ops->detach(ui->panes.ctx);
	ui->panes = (struct rd_panes){ 0 };
}

int rd_ui_update(struct rd_ui *ui)
{
	return RD_PANE(ui, update) ? ui->panes.ops->update(ui) : 0;
}

int rd_ui_set_filter(struct rd_ui *ui, unsigned flags)
{
	struct rd_filtered f = { 0 };
	struct rd_model *fm = NULL, *m = ui->base;
	uint32_t *idx;

	if (flags) {
		if (rd_filter(ui->base->p, flags, &f) < 0)
			return -ENOMEM;
		if (!(fm = rd_model_new(f.p))) {
			rd_filtered_free(&f);
			return -ENOMEM;
		}
		m = fm;
	}
	idx = realloc(ui->table_idx, (m->nfn ? m->nfn : 1) * sizeof(*idx));
	if (!idx) {
		rd_model_free(fm);
		rd_filtered_free(&f);
		return -ENOMEM;
	}
	ui->table_idx = idx;
	rd_model_free(ui->fm);
	rd_filtered_free(&ui->filt);
	ui->filt = f;
	ui->fm = fm;
	ui->m = m;
	ui->filter = flags;
	ui->focus = ui->selected = 0;
	ui->scroll = ui->table_scroll = 0;
	rd_ui_set_query(ui, ui->query);
	return 0;
}

static const char *node_name(const struct rd_ui *ui, uint32_t node)
{
	const struct prof_node *n = prof_node_get(ui->m->p, node);
	const struct prof_frame *f;

	if (node == 0 || !n)
		return "all";
	f = prof_frame_get(ui->m->p, n->frame);
	return f ? prof_str(ui->m->p, f->name) : "";
}

/* "runtime" or "system" when every frame of a folded chain is runtime or
 * system code (the start-up run every program begins with, a syscall
 * path), else NULL. */
static const char *chain_kind(const struct rd_ui *ui, const struct rd_box *b)
{
	int runtime = 0;

	for (uint32_t a = b->last;; a = prof_node_get(ui->m->p, a)->parent) {
		const struct prof_node *n = prof_node_get(ui->m->p, a);
		unsigned c = rd_frame_class(prof_frame_get(ui->m->p, n->frame));

		if (c != PROF_CLASS_RUNTIME && c != PROF_CLASS_SYSTEM)
			return NULL;
		runtime |= c == PROF_CLASS_RUNTIME;
		if (a == b->node || a == 0)
			return runtime ? "runtime" : "system";
	}
}

char *rd_ui_box_label(const struct rd_ui *ui, const struct rd_box *b,
		      char *buf, size_t n)
{
	if (b->flags & RD_BOX_SMALL)
		snprintf(buf, n, "%u small functions", b->count);
	else if (b->flags & RD_BOX_CHAIN && chain_kind(ui, b))
		snprintf(buf, n, "%u %s frames: %s \xe2\x80\xa6 %s", b->count,
			 chain_kind(ui, b), node_name(ui, b->node),
			 node_name(ui, b->last));
	else if (b->flags & RD_BOX_CHAIN)
		snprintf(buf, n, "(%u) %s \xe2\x80\xa6 %s", b->count,
			 node_name(ui, b->node), node_name(ui, b->last));
	else
		snprintf(buf, n, "%s", node_name(ui, b->node));
	return buf;
}

static unsigned node_class(const struct rd_ui *ui, uint32_t node)
{
	const struct prof_node *n = prof_node_get(ui->m->p, node);
	const struct prof_frame *f = n ? prof_frame_get(ui->m->p, n->frame) : NULL;

	if (!f || node == 0)
		return PROF_CLASS_UNKNOWN;
	return rd_frame_class(f);
}

static int box_match(const struct rd_ui *ui, const struct rd_box *b)
{
	if (b->flags & RD_BOX_SMALL)
		return 0;
	for (uint32_t a = b->last;; a = prof_node_get(ui->m->p, a)->parent) {
		if (rd_model_node_match(ui->m, a))
			return 1;
		if (a == b->node || a == 0)
			return 0;
	}
}

uint32_t rd_ui_box_color(const struct rd_ui *ui, const struct rd_box *b)
{
	const struct prof_node *fn = prof_node_get(ui->m->p, ui->focus);
	unsigned cls = node_class(ui, b->last);
	uint32_t c;

	if (RD_PANE(ui, box_color) && ui->panes.ops->box_color(ui, b, &c))
		; /* a pane colours it (diff) */
	else if (b->node == 0)
		c = 0xE4E1DA;
	else if (b->flags & RD_BOX_SMALL)
		c = 0xCDD0D4;
	else if (ui->by_value)
		c = rd_value_color(fn && fn->total ? (double)b->value /
				   (double)fn->total : 0);
	else
		c = rd_frame_color(cls, node_name(ui, b->last));
	if ((ui->faded >> cls & 1u) && !(b->flags & RD_BOX_SMALL) && b->node)
		c = rd_mix(c, RD_COL_BG, 0.78);
	else if (ui->m->searching && !box_match(ui, b))
		c = rd_mix(c, RD_COL_BG, 0.72);
	else if (b->flags & RD_BOX_ANCESTOR)
		c = rd_mix(c, RD_COL_BG, 0.35);
	else if (b->flags & RD_BOX_THIN)
		c = rd_mix(c, RD_COL_BG, 0.25);
	return c;
}

int rd_ui_set_query(struct rd_ui *ui, const char *q)
{
	ui->search_dirty = 0;
	if (q != ui->query) {
		size_t l = strnlen(q, sizeof(ui->query) - 1);

		memmove(ui->query, q, l);
		ui->query[l] = '\0';
	}
	if (rd_model_search(ui->m, ui->query) < 0)
		ui->oom = 1;
	return 1;
}

static void zoom(struct rd_ui *ui, uint32_t node)
{
	ui->bucket = 0;
	ui->focus = node;
	ui->selected = node;
	ui->scroll = 0;
}

static void find_function(struct rd_ui *ui, const struct rd_model *m,
			  uint32_t fn)
{
	char q[512];

	rd_model_exact_query(rd_model_fn_name(m, fn), q, sizeof(q));
	rd_ui_set_query(ui, q);
}

static int press_button(struct rd_ui *ui, uint32_t b)
{
	switch (b) {
	case RD_BTN_MODE: ui->icicle = !ui->icicle; ui->scroll = 0; break;
	case RD_BTN_COLOR: ui->by_value = !ui->by_value; break;
	case RD_BTN_UNFOLD: ui->unfold = !ui->unfold; break;
	case RD_BTN_ALIGN: ui->keep_end = !ui->keep_end; break;
	case RD_BTN_TABLE: ui->show_table = !ui->show_table; break;
	case RD_BTN_YOURS: ui->yours_only = !ui->yours_only; ui->table_scroll = 0; break;
	case RD_BTN_MYCODE:
		if (rd_ui_set_filter(ui, ui->filter ^ RD_FILTER_YOURS) < 0)
			ui->oom = 1;
		break;
	case RD_BTN_THREADS:
		if (rd_ui_set_filter(ui, ui->filter ^ RD_FILTER_THREADS) < 0)
			ui->oom = 1;
		break;
	case RD_BTN_RESET:
		if (ui->filter && rd_ui_set_filter(ui, 0) < 0)
			ui->oom = 1;
		zoom(ui, 0);
		ui->selected = 0;
		ui->faded = 0;
		rd_ui_set_query(ui, "");
		break;
	default: return 0;
	}
	return 1;
}

static const struct rd_zone *zone_at(const struct rd_ui *ui, int x, int y)
{
	for (size_t i = ui->nzones; i-- > 0;) {
		const struct rd_rect *r = &ui->zones[i].r;

		if (x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h)
			return &ui->zones[i];
	}
	return NULL;
}

int rd_ui_click(struct rd_ui *ui, int x, int y)
{
	const struct rd_zone *z = zone_at(ui, x, y);
	const struct rd_box *b;
	int was_typing = ui->typing, r;

	if (RD_PANE(ui, click) && (r = ui->panes.ops->click(ui, x, y)) >= 0)
		return r;
	ui->typing = 0;
	if (z) {
		switch (z->kind) {
		case RD_Z_CARD: find_function(ui, ui->base, z->arg); return 1;
		case RD_Z_TABLE_ROW: find_function(ui, ui->m, z->arg); return 1;
		case RD_Z_BUTTON: return press_button(ui, z->arg);
		case RD_Z_SEARCH: ui->typing = 1; return 1;
		case RD_Z_LEGEND: ui->faded ^= 1u << z->arg; return 1;
		case RD_Z_CRUMB: zoom(ui, z->arg); return 1;
		case RD_Z_TABLE_HEAD:
			ui->sort = (enum rd_sort)z->arg;
			ui->table_scroll = 0;
			return 1;
		case RD_Z_DIVIDER: ui->dragging = 1; return 1;
		default: break;
		}
	}
	b = rd_flame_hit(&ui->boxes, x, y);
	if (!b)
		return was_typing;
	if (b->flags & RD_BOX_SMALL) {
		/* Open the bucket: its functions fill the width. */
		zoom(ui, b->node);
		ui->bucket = 1;
		ui->selected = 0;
		return 1;
	}
	if (b->node == ui->focus && b->node != 0 && !ui->bucket)
		zoom(ui, prof_node_get(ui->m->p, b->node)->parent);
	else
		zoom(ui, b->node);
	return 1;
}

int rd_ui_motion(struct rd_ui *ui, int x, int y)
{
	const struct rd_box *before = ui->mouse_in ?
		rd_flame_hit(&ui->boxes, ui->mouse_x, ui->mouse_y) : NULL;
	const struct rd_box *after = rd_flame_hit(&ui->boxes, x, y);

	ui->mouse_x = x;
	ui->mouse_y = y;
	ui->mouse_in = 1;
	if (RD_PANE(ui, motion) && ui->panes.ops->motion(ui))
		return 1;
	if (ui->dragging) {
		int pad = (int)(8 * ui->scale);

		ui->table_w = ui->w - pad - x;
		return 1;
	}
	/* The tooltip follows the mouse over boxes. */
	return before != after || after != NULL;
}

int rd_ui_leave(struct rd_ui *ui)
{
	int was = ui->mouse_in && rd_flame_hit(&ui->boxes, ui->mouse_x,
					       ui->mouse_y);

	ui->mouse_in = 0;
	return was;
}

int rd_ui_release_button(struct rd_ui *ui)
{
	int was = ui->dragging;

	ui->dragging = 0;
	return was;
}

int rd_ui_wheel(struct rd_ui *ui, int x, int y, int dy)
{
	const struct rd_rect *t = &ui->table;
	int row = ui->text.line_h[RD_FONT_NORMAL] + (int)(5 * ui->scale);

	if (ui->show_table && x >= t->x && x < t->x + t->w && y >= t->y &&
	    y < t->y + t->h) {
		ui->table_scroll -= dy * 3;
		if (ui->table_scroll < 0)
			ui->table_scroll = 0;
		return 1;
	}
	/* Flame: the deep rows are above, the wheel up brings them down into
	 * view; icicle: they are below, the wheel down brings them up. */
	ui->scroll += ui->icicle ? -dy * 3 * row : dy * 3 * row;
	if (ui->scroll < 0)
		ui->scroll = 0;
	return 1;
}

/* The selected box, or the focus box when none is selected/visible. */
static const struct rd_box *selected_box(const struct rd_ui *ui)
{
	long i = rd_flame_find(&ui->boxes, ui->m->p,
			       ui->selected ? ui->selected : ui->focus);

	if (i < 0)
		i = rd_flame_find(&ui->boxes, ui->m->p, ui->focus);
	return i < 0 ? NULL : &ui->boxes.v[i];
}

static uint32_t widest_child(const struct rd_ui *ui, uint32_t node)
{
	const struct prof_node *n = prof_node_get(ui->m->p, node);
	uint32_t best = 0;
	uint64_t bv = 0;

	for (uint32_t c = n ? n->child : 0; c;) {
		const struct prof_node *cn = prof_node_get(ui->m->p, c);

		if (cn->total > bv) {
			bv = cn->total;
			best = c;
		}
		c = cn->sibling;
	}
	return best;
}

static uint32_t neighbour(const struct rd_ui *ui, const struct rd_box *b,
			  int dir)
{
	const struct rd_box *best = NULL;

	for (size_t i = 0; i < ui->boxes.n; i++) {
		const struct rd_box *o = &ui->boxes.v[i];

		if (o->depth != b->depth || o == b || (o->flags & RD_BOX_SMALL))
			continue;
		if (dir > 0 && o->x > b->x && (!best || o->x < best->x))
			best = o;
		if (dir < 0 && o->x < b->x && (!best || o->x > best->x))
			best = o;
	}
	return best ? best->node : b->node;
}

static int key_typing(struct rd_ui *ui, enum rd_key key)
{
	size_t l = strlen(ui->query);

	switch (key) {
	case RD_KEY_ESCAPE:
	case RD_KEY_ENTER:
		ui->typing = 0;
		return 1;
	case RD_KEY_BACKSPACE:
		if (!l)
			return 0;
		while (l > 0 && ((unsigned char)ui->query[l - 1] & 0xC0) == 0x80)
			l--;
		if (l > 0)
			l--;
		ui->query[l] = '\0';
		ui->search_dirty = 1; /* searched at the next layout */
		return 1;
	default:
		return 0;
	}
}

int rd_ui_key(struct rd_ui *ui, enum rd_key key)
{
	const struct rd_box *b;
	int r;

	if (ui->typing)
		return key_typing(ui, key);
	if (RD_PANE(ui, key) && (r = ui->panes.ops->key(ui, (int)key)) >= 0)
		return r;
	b = selected_box(ui);
	switch (key) {
	case RD_KEY_SLASH:
		ui->typing = 1;
		return 1;
	case RD_KEY_ESCAPE:
		if (ui->bucket) {
			ui->bucket = 0;
			return 1;
		}
		if (ui->focus != 0) {
			zoom(ui, prof_node_get(ui->m->p, ui->focus)->parent);
			return 1;
		}
		if (ui->m->searching)
			return rd_ui_set_query(ui, "");
		return 0;
	case RD_KEY_ENTER:
		if (!b || b->node == ui->focus)
			return 0;
		zoom(ui, b->node);
		return 1;
	case RD_KEY_UP:
		if (b && widest_child(ui, b->last)) {
			ui->selected = widest_child(ui, b->last);
			return 1;
		}
		return 0;
	case RD_KEY_DOWN:
		if (b && b->node != 0) {
			ui->selected = prof_node_get(ui->m->p, b->node)->parent;
			return 1;
		}
		return 0;
	case RD_KEY_LEFT:
	case RD_KEY_RIGHT:
		if (!b)
			return 0;
		ui->selected = neighbour(ui, b, key == RD_KEY_RIGHT ? 1 : -1);
		return 1;
	default:
		return 0;
	}
}

int rd_ui_text(struct rd_ui *ui, const char *utf8)
{
	size_t l = strlen(ui->query), n = strlen(utf8);
	int r;

	if (!ui->typing && RD_PANE(ui, text) &&
	    (r = ui->panes.ops->text(ui, utf8)) > 0)
		return r;
	if (!ui->typing) {
		if (!strcmp(utf8, "/")) {
			ui->typing = 1;
			return 1;
		}
		return 0;
	}
	if (l + n + 1 > sizeof(ui->query))
		return 0;
	memcpy(ui->query + l, utf8, n + 1);
	ui->search_dirty = 1; /* a burst of keys searches once */
	return 1;
}

int rd_ui_dump(const struct rd_ui *ui, FILE *out)
{
	char label[512];

	fprintf(out, "window %d %d\n", ui->w, ui->h);
	fprintf(out, "graph %d %d %d %d\n", ui->graph.x, ui->graph.y,
		ui->graph.w, ui->graph.h);
	fprintf(out, "focus %s\n", node_name(ui, ui->focus));
	fprintf(out, "bucket %d\n", ui->bucket);
	fprintf(out, "status %s\n", ui->status);
	fprintf(out, "query %s\n", ui->query);
	fprintf(out, "tooltip %d %d %d %d\n", ui->tip.x, ui->tip.y, ui->tip.w,
		ui->tip.h);
	fprintf(out, "answer %s\n", ui->base->answer);
	fprintf(out, "notice %s\n", ui->base->notice);
	fprintf(out, "filter %u\n", ui->filter);
	rd_ui_langs_text(ui, label, sizeof(label));
	fprintf(out, "languages %s\n", label);
	/* The tooltip's lines: the text drawn inside it, after its box. */
	for (size_t i = 0, in = 0; ui->tip.w && i < ui->list.n; i++) {
		const struct rd_cmd *c = &ui->list.cmds[i];

		if (c->kind == RD_CMD_RECT && c->x == ui->tip.x && c->y == ui->tip.y &&
		    c->w == ui->tip.w && c->h == ui->tip.h)
			in = 1;
		else if (in && c->kind == RD_CMD_TEXT && ui->tip.x <= c->x &&
			 c->x < ui->tip.x + ui->tip.w && ui->tip.y <= c->y &&
			 c->y < ui->tip.y + ui->tip.h)
			fprintf(out, "tip %.*s\n", (int)c->len, rd_cmd_text(&ui->list, c));
	}
	for (size_t i = 0; i < ui->boxes.n; i++) {
		const struct rd_box *b = &ui->boxes.v[i];

		fprintf(out, "box %d %d %d %d %u %u %06X %s\n", b->x, b->y, b->w,
			b->h, b->depth, b->flags, rd_ui_box_color(ui, b),
			rd_ui_box_label(ui, b, label, sizeof(label)));
	}
	for (size_t i = 0; i < ui->nzones; i++) {
		const struct rd_zone *z = &ui->zones[i];
		const char *name = "";

		if (z->kind == RD_Z_LEGEND)
			name = rd_class_name(z->arg);
		else if (z->kind == RD_Z_CRUMB)
			name = node_name(ui, z->arg);
		else if (z->kind == RD_Z_CARD)
			name = rd_model_fn_name(ui->base, z->arg);
		else if (z->kind == RD_Z_TABLE_ROW)
			name = rd_model_fn_name(ui->m, z->arg);
		fprintf(out, "zone %d %d %d %d %d %u %s\n", z->kind, z->r.x,
			z->r.y, z->r.w, z->r.h, z->arg, name);
	}
	if (RD_PANE(ui, dump))
		ui->panes.ops->dump(ui, out);
	return ferror(out) ? -EIO : 0;
}
