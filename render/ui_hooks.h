/* SPDX-License-Identifier: MIT */
/*
 * render/ui: the hooks through which render/views (diff colouring, the
 * sandwich, the call tree, live data) plugs into the window. They are
 * declared weak: a program that links no view has them NULL and ui->views
 * is never set; once render/views is linked (by whatever opens a view),
 * they resolve to it. Each is called only when ui->views is set; their
 * contracts are in render/views.h.
 */
#ifndef HEARTH_RENDER_UI_HOOKS_H
#define HEARTH_RENDER_UI_HOOKS_H

#include <stdint.h>
#include <stdio.h>

#include "render/flame.h"

struct rd_ui;
struct rd_views;

#define RD_WEAK __attribute__((weak))

int rd_views_bar(struct rd_ui *ui, int y) RD_WEAK;
int rd_views_graph(struct rd_ui *ui) RD_WEAK;
int rd_views_tooltip(struct rd_ui *ui) RD_WEAK;
int rd_views_tip_lines(const struct rd_ui *ui, const struct rd_box *b,
		       char (*lines)[256], int max) RD_WEAK;
int rd_views_box_color(const struct rd_ui *ui, const struct rd_box *b,
		       uint32_t *color) RD_WEAK;
int rd_views_click(struct rd_ui *ui, int x, int y) RD_WEAK;
int rd_views_motion(struct rd_ui *ui) RD_WEAK;
int rd_views_key(struct rd_ui *ui, int key) RD_WEAK;
int rd_views_text(struct rd_ui *ui, const char *utf8) RD_WEAK;
void rd_views_dump(const struct rd_ui *ui, FILE *out) RD_WEAK;
int rd_views_update(struct rd_ui *ui) RD_WEAK;
int rd_views_attach(struct rd_views *v, struct rd_ui *ui,
		    void (*wake)(void *arg), void *wake_arg) RD_WEAK;
void rd_views_detach(struct rd_views *v) RD_WEAK;

/* 1 when the hook @fn may be called for @ui. */
#define RD_HOOK(ui, fn) ((ui)->views && (fn))

#endif /* HEARTH_RENDER_UI_HOOKS_H */
