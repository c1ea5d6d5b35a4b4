/* SPDX-License-Identifier: MIT */
/*
 * render/views: what the panes' files share (views.c, sandwich_pane.c,
 * calltree_pane.c, diff_pane.c). Private to them: the window reaches the
 * panes only through rd_views_panes()'s table.
 */
#ifndef HEARTH_RENDER_PANES_H
#define HEARTH_RENDER_PANES_H

#include <stdint.h>
#include <stdio.h>

#include "render/ui.h"
#include "render/views.h"

/* The views attached to @ui (its panes' state). */
static inline struct rd_views *rd_views_of(const struct rd_ui *ui)
{
	return ui->panes.ctx;
}

/* Fitted text at (x, y) within @w; returns the width drawn. */
int rd_views_text_at(struct rd_ui *ui, int x, int y, int w, int font,
		     uint32_t color, const char *s);
/* Draws box @b of a pane with @label and fill @c. */
void rd_views_draw_box(struct rd_ui *ui, const struct rd_box *b,
		       const char *label, uint32_t c);
#define RD_PATH_MAX 512
/* The names from the top to @node (the root excluded) into @path, as
 * pointers into @p; returns how many, 0 when deeper than RD_PATH_MAX. */
int rd_views_name_path(const struct prof_profile *p, uint32_t node,
		       const char **path);
/* The node reached from the root by the names @path[0..n) in @p, or 0. */
uint32_t rd_views_find_path(const struct prof_profile *p, const char **path,
			    int n);
/* 1 when the graph shows the diff tree (diff colours apply). */
int rd_views_diff_on(const struct rd_ui *ui);

/* A small "sandwich" button at the right end of a table's name column,
 * with zone @kind and @arg. */
void rd_views_row_sandwich(struct rd_ui *ui, int x, int y, int h, int kind,
			   uint32_t arg);

/* The sandwich pane (render/sandwich_pane.c). */
void rd_views_sandwich_clear(struct rd_views *v);
int rd_views_sandwich_graph(struct rd_ui *ui);
int rd_views_sandwich_tooltip(struct rd_ui *ui);
int rd_views_sandwich_click(struct rd_ui *ui, int x, int y);
int rd_views_sandwich_leave(struct rd_ui *ui);
int rd_views_sandwich_escape(struct rd_ui *ui);
int rd_views_sandwich_here(struct rd_ui *ui);
void rd_views_sandwich_dump(const struct rd_ui *ui, FILE *out);
void rd_views_sandwich_refresh(struct rd_ui *ui);

/* The call tree pane (render/calltree_pane.c). */
void rd_views_calltree_clear(struct rd_views *v);
/* Before new data replaces the model: remembers the open rows (and the
 * callers/callees tree shown) so the pane reopens them on the new data. */
void rd_views_calltree_keep(struct rd_ui *ui);
int rd_views_calltree_graph(struct rd_ui *ui);
int rd_views_calltree_click(struct rd_ui *ui, int kind, uint32_t arg);
int rd_views_calltree_step(struct rd_ui *ui, int dir);
void rd_views_calltree_dump(const struct rd_ui *ui, FILE *out);

/* A diff's top table, drawn over the window's (render/diff_pane.c). */
int rd_views_diff_table(struct rd_ui *ui);
int rd_views_diff_table_click(struct rd_ui *ui, int kind, uint32_t arg);

/* Side by side (render/diff_pane.c). */
int rd_views_side_graph(struct rd_ui *ui);
int rd_views_side_tooltip(struct rd_ui *ui);
int rd_views_side_click(struct rd_ui *ui, int x, int y);
void rd_views_side_dump(const struct rd_ui *ui, FILE *out);

#endif /* HEARTH_RENDER_PANES_H */
