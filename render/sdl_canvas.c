/* SPDX-License-Identifier: MIT */
/* SDL2 drawing of a draw list: fonts, the glyph cache, off-screen canvas. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>
#include <SDL_image.h>
#include <SDL_ttf.h>

#include "render/font_find.h"
#include "render/sdl.h"
#include "render/sdl_draw.h"

#ifndef HEARTH_FONT_DIR
#define HEARTH_FONT_DIR "/usr/share/fonts/truetype/dejavu"
#endif

#define GLYPH_SLOTS 1024 /* open addressing, power of two */

struct glyph {
	uint32_t cp;     /* 0 = empty slot */
	int adv;
	SDL_Texture *tex; /* NULL until drawn once */
	int w, h;
};

struct rd_fonts {
	TTF_Font *font[RD_FONT_COUNT];
	struct glyph *glyphs[RD_FONT_COUNT];
	SDL_Renderer *r;
	int ttf_inited;
};

static const struct { bool bold; int pt; } font_spec[RD_FONT_COUNT] = {
	[RD_FONT_NORMAL] = { false, 12 },
	[RD_FONT_BOLD] = { true, 12 },
	[RD_FONT_TITLE] = { true, 15 },
};

struct rd_fonts *rd_fonts_new(SDL_Renderer *r, double scale, char *err,
			      size_t errlen)
{
	struct rd_fonts *f = calloc(1, sizeof(*f));
	const char *dir = getenv("HEARTH_FONT_DIR");
	char path[2][1024];

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->r = r;
	/* HEARTH_FONT_DIR: DejaVu from that folder, fontconfig not asked.
	 * Otherwise fontconfig's font for HEARTH_FONT (default sans-serif),
	 * DejaVu when it has none. */
	for (int bold = 0; bold < 2; bold++) {
		if (dir && *dir)
			snprintf(path[bold], sizeof(path[bold]), "%s/%s", dir,
				 bold ? "DejaVuSans-Bold.ttf" : "DejaVuSans.ttf");
		else
			rd_font_find(getenv("HEARTH_FONT"), bold, HEARTH_FONT_DIR,
				     path[bold], sizeof(path[bold]));
	}
	/* TTF_Init counts its callers; each rd_fonts pairs one with TTF_Quit. */
	if (TTF_Init() < 0) {
		snprintf(err, errlen, "SDL_ttf did not start: %s", TTF_GetError());
		free(f);
		return NULL;
	}
	f->ttf_inited = 1;
	for (int i = 0; i < RD_FONT_COUNT; i++) {
		const char *file = path[font_spec[i].bold];

		f->font[i] = TTF_OpenFont(file, (int)(font_spec[i].pt * scale + 0.5));
		f->glyphs[i] = calloc(GLYPH_SLOTS, sizeof(struct glyph));
		if (!f->font[i] || !f->glyphs[i]) {
			snprintf(err, errlen, "cannot open the font %s (install fonts-dejavu-core)",
				 file);
			rd_fonts_free(f);
			return NULL;
		}
		TTF_SetFontHinting(f->font[i], TTF_HINTING_LIGHT);
	}
	return f;
}

void rd_fonts_free(struct rd_fonts *f)
{
	if (!f)
		return;
	for (int i = 0; i < RD_FONT_COUNT; i++) {
		for (int g = 0; f->glyphs[i] && g < GLYPH_SLOTS; g++)
			if (f->glyphs[i][g].tex)
				SDL_DestroyTexture(f->glyphs[i][g].tex);
		free(f->glyphs[i]);
		if (f->font[i])
			TTF_CloseFont(f->font[i]);
	}
	if (f->ttf_inited)
		TTF_Quit();
	free(f);
}

/* Decodes one UTF-8 character at *s (advancing it); bad bytes give '?'. */
static uint32_t next_cp(const char **s, const char *end)
{
	const unsigned char *p = (const unsigned char *)*s;
	uint32_t cp;
	int n;

	if (p[0] < 0x80)
		cp = p[0], n = 1;
	else if ((p[0] & 0xE0) == 0xC0)
		cp = p[0] & 0x1F, n = 2;
	else if ((p[0] & 0xF0) == 0xE0)
		cp = p[0] & 0x0F, n = 3;
	else if ((p[0] & 0xF8) == 0xF0)
		cp = p[0] & 0x07, n = 4;
	else
		cp = '?', n = 1;
	if ((const char *)p + n > end)
		n = 1, cp = '?';
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80) {
			*s += 1;
			return '?';
		}
		cp = cp << 6 | (p[i] & 0x3F);
	}
	*s += n;
	return cp;
}

static struct glyph *glyph_get(struct rd_fonts *f, int font, uint32_t cp)
{
	struct glyph *tab = f->glyphs[font];
	uint32_t h = (cp * 2654435761u) & (GLYPH_SLOTS - 1);
	int minx, maxx, miny, maxy, adv;

	for (uint32_t i = 0; i < GLYPH_SLOTS; i++, h = (h + 1) & (GLYPH_SLOTS - 1)) {
		if (tab[h].cp == cp)
			return &tab[h];
		if (tab[h].cp == 0)
			break;
	}
	if (tab[h].cp != 0)
		return NULL; /* full: the caller skips the glyph */
	if (TTF_GlyphMetrics32(f->font[font], cp, &minx, &maxx, &miny, &maxy, &adv) < 0)
		adv = 0;
	tab[h].cp = cp;
	tab[h].adv = adv;
	return &tab[h];
}

int rd_fonts_measure(void *ctx, int font, const char *s, size_t n)
{
	struct rd_fonts *f = ctx;
	const char *end = s + n;
	int w = 0;

	while (s < end) {
		struct glyph *g = glyph_get(f, font, next_cp(&s, end));

		if (g)
			w += g->adv;
	}
	return w;
}

struct rd_text rd_fonts_text(struct rd_fonts *f)
{
	struct rd_text t = { .measure = rd_fonts_measure, .ctx = f };

	for (int i = 0; i < RD_FONT_COUNT; i++)
		t.line_h[i] = TTF_FontLineSkip(f->font[i]);
	return t;
}

static void draw_text(struct rd_fonts *f, const struct rd_cmd *c,
		      const char *s)
{
	const char *end = s + c->len;
	int x = c->x, limit = c->x + c->w;

	while (s < end) {
		uint32_t cp = next_cp(&s, end);
		struct glyph *g = glyph_get(f, c->font, cp);
		SDL_Rect dst;

		if (!g)
			continue;
		if (x + g->adv > limit + 1)
			break;
		if (!g->tex && cp != ' ') {
			SDL_Color white = { 255, 255, 255, 255 };
			SDL_Surface *sf = TTF_RenderGlyph32_Blended(f->font[c->font], cp, white);

			if (sf) {
				g->tex = SDL_CreateTextureFromSurface(f->r, sf);
				g->w = sf->w;
				g->h = sf->h;
				SDL_FreeSurface(sf);
				if (g->tex)
					SDL_SetTextureBlendMode(g->tex, SDL_BLENDMODE_BLEND);
			}
		}
		if (g->tex) {
			SDL_SetTextureColorMod(g->tex, c->color >> 16 & 0xff,
					       c->color >> 8 & 0xff, c->color & 0xff);
			dst = (SDL_Rect){ x, c->y, g->w, g->h };
			SDL_RenderCopy(f->r, g->tex, NULL, &dst);
		}
		x += g->adv;
	}
}

int rd_sdl_draw(SDL_Renderer *r, struct rd_fonts *f, const struct rd_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct rd_cmd *c = &l->cmds[i];
		SDL_Rect rc = { c->x, c->y, c->w, c->h };

		switch (c->kind) {
		case RD_CMD_RECT:
		case RD_CMD_OUTLINE:
			SDL_SetRenderDrawColor(r, c->color >> 16 & 0xff,
					       c->color >> 8 & 0xff, c->color & 0xff, 255);
			if (c->kind == RD_CMD_RECT)
				SDL_RenderFillRect(r, &rc);
			else
				SDL_RenderDrawRect(r, &rc);
			break;
		case RD_CMD_TEXT:
			draw_text(f, c, rd_cmd_text(l, c));
			break;
		default:
			break;
		}
	}
	return 0;
}

struct rd_canvas {
	SDL_Surface *surface;
	SDL_Renderer *r;
	struct rd_fonts *fonts;
};

struct rd_canvas *rd_canvas_new(int w, int h, double scale, char *err,
				size_t errlen)
{
	struct rd_canvas *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->surface = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGB888);
	if (!c->surface || !(c->r = SDL_CreateSoftwareRenderer(c->surface))) {
		snprintf(err, errlen, "cannot make a %dx%d drawing surface: %s", w, h,
			 SDL_GetError());
		rd_canvas_free(c);
		return NULL;
	}
	c->fonts = rd_fonts_new(c->r, scale, err, errlen);
	if (!c->fonts) {
		rd_canvas_free(c);
		return NULL;
	}
	return c;
}

void rd_canvas_free(struct rd_canvas *c)
{
	if (!c)
		return;
	rd_fonts_free(c->fonts);
	if (c->r)
		SDL_DestroyRenderer(c->r);
	if (c->surface)
		SDL_FreeSurface(c->surface);
	free(c);
}

struct rd_text rd_canvas_text(struct rd_canvas *c)
{
	return rd_fonts_text(c->fonts);
}

int rd_canvas_draw(struct rd_canvas *c, const struct rd_list *l)
{
	rd_sdl_draw(c->r, c->fonts, l);
	SDL_RenderPresent(c->r);
	return 0;
}

int rd_canvas_save_png(struct rd_canvas *c, FILE *f)
{
	SDL_RWops *rw = SDL_RWFromFP(f, SDL_FALSE);

	return rw && IMG_SavePNG_RW(c->surface, rw, 1) == 0 ? 0 : -EIO;
}
