/* SPDX-License-Identifier: MIT */
/* render/sdl: fonts and drawing shared by the window and the canvas. */
#ifndef HEARTH_RENDER_SDL_DRAW_H
#define HEARTH_RENDER_SDL_DRAW_H

#include <SDL.h>

#include "render/draw.h"

struct rd_fonts;

/* Opens the DejaVu fonts at @scale for renderer @r (HEARTH_FONT_DIR, or the
 * environment variable of that name). Returns NULL and a sentence in @err. */
struct rd_fonts *rd_fonts_new(SDL_Renderer *r, double scale, char *err,
			      size_t errlen);

/* Frees the fonts and their glyph textures. Accepts NULL. */
void rd_fonts_free(struct rd_fonts *f);

/* Text measuring from cached glyph advances (an rd_measure_fn). */
int rd_fonts_measure(void *ctx, int font, const char *s, size_t n);

/* The measuring callback and line heights for layout. */
struct rd_text rd_fonts_text(struct rd_fonts *f);

/* Draws every command of @l with @r. Returns 0. */
int rd_sdl_draw(SDL_Renderer *r, struct rd_fonts *f, const struct rd_list *l);

#endif /* HEARTH_RENDER_SDL_DRAW_H */
