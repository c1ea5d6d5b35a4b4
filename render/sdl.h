/* SPDX-License-Identifier: MIT */
/*
 * render/sdl: the SDL2 backend. It draws a draw list (render/draw.h) with a
 * glyph cache (each glyph rasterized once per renderer), runs the viewer
 * window, and renders off-screen with SDL's software renderer for PNG
 * export and the benchmark. Nothing here prints.
 */
#ifndef HEARTH_RENDER_SDL_H
#define HEARTH_RENDER_SDL_H

#include <stddef.h>

#include "render/draw.h"
#include "render/model.h"
#include "render/ui.h"

struct rd_canvas;

/* An off-screen 24-bit surface of @w x @h pixels drawn by the software
 * renderer, with fonts at @scale. Returns NULL and one sentence in @err
 * when SDL, SDL_ttf or the font cannot be set up. Free with
 * rd_canvas_free(). */
struct rd_canvas *rd_canvas_new(int w, int h, double scale, char *err,
				size_t errlen);
void rd_canvas_free(struct rd_canvas *c);

/* The canvas's text measuring, for layout. */
struct rd_text rd_canvas_text(struct rd_canvas *c);

/* Draws @l onto the canvas. Returns 0, or -EIO when SDL failed. */
int rd_canvas_draw(struct rd_canvas *c, const struct rd_list *l);

/* Writes the canvas as PNG to @f (left open). Returns 0 or -EIO. */
int rd_canvas_save_png(struct rd_canvas *c, FILE *f);

struct rd_window_opts {
	const char *title;        /* the window's title */
	const char *debug_layout; /* test aid: file rewritten after each
				   * layout with rd_ui_dump(), or NULL */
	const char *query;        /* initial search, or NULL */
	int width, height;        /* initial size, 0 = default */
	struct rd_panes panes;    /* other panes to attach (render/views);
				   * ops NULL: the flame graph alone */
};

/* Opens the viewer on @m and runs until the window is closed. The metrics
 * follow the display's HiDPI scale; the environment variable HEARTH_SCALE
 * (1 to 4) overrides it where the window system reports none (X11). Returns 0,
 * -ENODEV with one sentence in @err when there is no display, or -EIO with
 * one sentence when SDL fails. */
int rd_window_run(struct rd_model *m, const struct rd_window_opts *o,
		  char *err, size_t errlen);

/* Renders the viewer's window as it opens (no mouse, full view) into a PNG
 * of @w x @h pixels (@h = 0: tall enough for the whole graph, at most
 * 8192), written to @f (left open). Returns 0, -EIO or -ENOMEM with one
 * sentence in @err. */
int rd_png_export(struct rd_model *m, FILE *f, int w, int h,
		  int icicle, char *err, size_t errlen);

#endif /* HEARTH_RENDER_SDL_H */
