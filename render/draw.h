/* SPDX-License-Identifier: MIT */
/*
 * render/draw: the list of draw commands that layout produces and a backend
 * (SDL2 window, software surface, tests) walks. Pure data, no SDL.
 *
 * Text is measured through a callback so layout runs without a window:
 * a backend passes its font metrics, tests pass a fixed-width stand-in.
 */
#ifndef HEARTH_RENDER_DRAW_H
#define HEARTH_RENDER_DRAW_H

#include <stddef.h>
#include <stdint.h>

enum rd_font {
	RD_FONT_NORMAL = 0, /* labels, tables */
	RD_FONT_BOLD = 1,   /* tooltip titles, card shares */
	RD_FONT_TITLE = 2,  /* the answer sentence */
	RD_FONT_COUNT
};

enum rd_cmd_kind {
	RD_CMD_RECT = 0,    /* filled rectangle */
	RD_CMD_OUTLINE = 1, /* 1 px rectangle outline */
	RD_CMD_TEXT = 2,    /* text, top-left at (x, y), clipped to w */
};

struct rd_cmd {
	uint8_t kind;  /* enum rd_cmd_kind */
	uint8_t font;  /* enum rd_font, text only */
	uint16_t pad;
	int32_t x, y, w, h;
	uint32_t color; /* 0xRRGGBB */
	uint32_t text;  /* offset of the text in the list's arena */
	uint32_t len;   /* its length in bytes */
};

/* A growable command list with a text arena. */
struct rd_list {
	struct rd_cmd *cmds;
	size_t n, cap;
	char *text;
	size_t tlen, tcap;
	int oom; /* set when an append failed; the list is then incomplete */
};

struct rd_rect {
	int x, y, w, h;
};

/* Returns the width in pixels of @s[0..n) in @font. */
typedef int (*rd_measure_fn)(void *ctx, int font, const char *s, size_t n);

/* How layout measures text: a callback plus each font's line height. */
struct rd_text {
	rd_measure_fn measure;
	void *ctx;
	int line_h[RD_FONT_COUNT];
};

/* Empties @l, keeping its memory. */
void rd_list_clear(struct rd_list *l);

/* Frees the list's memory; the struct itself belongs to the caller. */
void rd_list_free(struct rd_list *l);

/* Appends a filled rectangle or an outline. Sets l->oom on failure. */
void rd_list_rect(struct rd_list *l, int x, int y, int w, int h,
		  uint32_t color);
void rd_list_outline(struct rd_list *l, int x, int y, int w, int h,
		     uint32_t color);

/* Appends text @s[0..n) at (x, y) in @font; @w is the width it may use
 * (the backend clips to it). Sets l->oom on failure. */
void rd_list_text(struct rd_list *l, int x, int y, int w, int font,
		  uint32_t color, const char *s, size_t n);

/* The text of command @c. */
static inline const char *rd_cmd_text(const struct rd_list *l,
				      const struct rd_cmd *c)
{
	return l->text + c->text;
}

/* Fits @s into @maxw pixels: writes to @out (size @outsz, NUL-terminated)
 * either @s whole, or a truncated form with an ellipsis ("abc…" keeping the
 * start, or "…xyz" keeping the end when @keep_end). Cuts only at UTF-8
 * character boundaries. Returns the byte length written, 0 when not even
 * the ellipsis fits. */
size_t rd_text_fit(const struct rd_text *t, int font, const char *s,
		   int maxw, int keep_end, char *out, size_t outsz);

#endif /* HEARTH_RENDER_DRAW_H */
