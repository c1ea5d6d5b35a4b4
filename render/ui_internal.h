/* SPDX-License-Identifier: MIT */
/* render/ui: the parts of the window layout split across files. */
#ifndef HEARTH_RENDER_UI_INTERNAL_H
#define HEARTH_RENDER_UI_INTERNAL_H

#include "render/ui.h"

#define RD_S(ui, v) ((int)((v) * (ui)->scale + 0.5))

/* 1 when the window's panes have the entry @fn. */
#define RD_PANE(ui, fn) ((ui)->panes.ops && (ui)->panes.ops->fn)

/* Lays out the flame graph into ui->graph: boxes, fills, labels.
 * Returns 0 or -ENOMEM. */
int rd_ui_graph(struct rd_ui *ui);

/* Lays out the top table into ui->table. */
void rd_ui_table(struct rd_ui *ui);

/* Draws the tooltip of the box under the mouse, if any. */
void rd_ui_tooltip(struct rd_ui *ui);

/* Draws @k lines (the first in bold) in a tooltip box beside the mouse,
 * kept inside the window, at most half its width, and records it in
 * ui->tip. */
void rd_ui_tip_box(struct rd_ui *ui, char (*lines)[256], int k);

/* The legend's languages and their shares of the view ("C 60% · Python
 * 40%") into @line (@len bytes); "" when no frame says its language. */
void rd_ui_langs_text(const struct rd_ui *ui, char *line, size_t len);

/* Appends a clickable zone. */
void rd_ui_zone(struct rd_ui *ui, int kind, uint32_t arg, int x, int y,
		int w, int h);

#endif /* HEARTH_RENDER_UI_INTERNAL_H */
