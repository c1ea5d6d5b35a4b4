/* SPDX-License-Identifier: MIT */
/*
 * render/ui: the viewer window as pure code. rd_ui_layout() turns the model
 * and the view state (zoom, search, toggles, mouse) into a draw list, the
 * graph's boxes and the clickable zones; the input functions change the
 * state from abstract events. A backend (SDL2 window, PNG surface, tests)
 * feeds events in and draws the list out; nothing here knows SDL.
 *
 * All coordinates are drawable pixels; @scale (HiDPI) multiplies the
 * metrics. Every input function returns 1 when the window must be laid out
 * and drawn again, 0 when nothing visible changed.
 */
#ifndef HEARTH_RENDER_UI_H
#define HEARTH_RENDER_UI_H

#include <stdint.h>
#include <stdio.h>

#include "render/draw.h"
#include "render/filter.h"
#include "render/flame.h"
#include "render/model.h"

enum rd_zone_kind {
	RD_Z_CARD = 1,    /* arg: function */
	RD_Z_BUTTON,      /* arg: enum rd_button */
	RD_Z_SEARCH,      /* the search box */
	RD_Z_LEGEND,      /* arg: class */
	RD_Z_CRUMB,       /* arg: node */
	RD_Z_TABLE_HEAD,  /* arg: enum rd_sort */
	RD_Z_TABLE_ROW,   /* arg: function */
	RD_Z_DIVIDER,     /* between graph and table */
};

enum rd_button {
	RD_BTN_MODE = 0,  /* flame / icicle */
	RD_BTN_COLOR,     /* by owner / by value */
	RD_BTN_UNFOLD,    /* show every frame */
	RD_BTN_ALIGN,     /* labels keep the start / the end */
	RD_BTN_TABLE,     /* top table pane */
	RD_BTN_RESET,     /* zoom, search, fades */
	RD_BTN_YOURS,     /* table: your code / everything */
	RD_BTN_MYCODE,    /* graph: only my code */
	RD_BTN_THREADS,   /* graph: merge threads per process */
	RD_BTN_COUNT
};

enum rd_key {
	RD_KEY_UP = 1, RD_KEY_DOWN, RD_KEY_LEFT, RD_KEY_RIGHT, RD_KEY_ENTER,
	RD_KEY_ESCAPE, RD_KEY_BACKSPACE, RD_KEY_SLASH,
};

struct rd_ui;

/*
 * The panes a window shows besides its flame graph (render/views: the
 * sandwich, the call tree, a diff's panes, live data). The UI core knows
 * them only through this table, given to it by whoever opens the window
 * (rd_ui_attach); it never links them. Every entry may be NULL (then the
 * window does as without it).
 *
 * attach binds @ctx to @ui once the window is initialised, with @wake to
 * call from another thread when update() has new data (0 or -errno);
 * detach undoes it. bar lays out a toolbar row at @y and returns the y
 * below it; graph lays out the graph area instead of the flame graph (0 or
 * -ENOMEM); tooltip, called after the table, returns 1 when it drew the
 * tooltip itself; tip_lines adds up to @max lines to a graph box's
 * tooltip and returns how many; box_color returns 1 with the colour of a
 * graph box it colours. click, key and text take input first and return
 * -1 (click, key) or 0 (text) to leave it to the window, else what the
 * window's input functions return; motion returns 1 when the panes must
 * be drawn again. dump adds their state to rd_ui_dump(); update takes new
 * data, 1 when it did.
 */
struct rd_pane_ops {
	int (*attach)(void *ctx, struct rd_ui *ui, void (*wake)(void *arg),
		      void *wake_arg);
	void (*detach)(void *ctx);
	int (*bar)(struct rd_ui *ui, int y);
	int (*graph)(struct rd_ui *ui);
	int (*tooltip)(struct rd_ui *ui);
	int (*tip_lines)(const struct rd_ui *ui, const struct rd_box *b,
			 char (*lines)[256], int max);
	int (*box_color)(const struct rd_ui *ui, const struct rd_box *b,
			 uint32_t *color);
	int (*click)(struct rd_ui *ui, int x, int y);
	int (*motion)(struct rd_ui *ui);
	int (*key)(struct rd_ui *ui, int key);
	int (*text)(struct rd_ui *ui, const char *utf8);
	void (*dump)(const struct rd_ui *ui, FILE *out);
	int (*update)(struct rd_ui *ui);
};

/* A window's panes: their table and their state. */
struct rd_panes {
	const struct rd_pane_ops *ops; /* NULL: the flame graph alone */
	void *ctx;                     /* passed back to attach and detach;
					* the others find it in ui->panes */
};

struct rd_zone {
	int kind; /* enum rd_zone_kind */
	uint32_t arg;
	struct rd_rect r;
};

struct rd_ui {
	struct rd_model *m;    /* the model drawn: base, or the filtered one */
	struct rd_model *base; /* borrowed: the profile as loaded */
	unsigned filter;       /* enum rd_filter_flags in force */
	unsigned avail;        /* rd_filter_available() of the base */
	struct rd_filtered filt;
	struct rd_model *fm;   /* model of filt.p, owned */
	struct rd_panes panes;  /* other panes of the window (ops NULL: none) */
	struct rd_text text;
	/* View state. */
	uint32_t focus;     /* zoomed node, 0 = everything */
	int bucket;         /* 1: the focus's "N small functions" are opened */
	uint32_t selected;  /* keyboard selection, 0 = none */
	int icicle, by_value, unfold, keep_end, show_table, yours_only;
	enum rd_sort sort;
	unsigned faded;     /* bit per class faded by the legend */
	char query[256];
	int typing;         /* the search box has the keyboard */
	int search_dirty;   /* query typed, not yet searched (rd_ui_layout does) */
	int scroll, table_scroll, table_w;
	int mouse_x, mouse_y, mouse_in, dragging;
	/* Last layout. */
	int w, h;
	double scale;
	struct rd_list list;
	struct rd_boxes boxes;
	struct rd_zone *zones;
	size_t nzones, zcap;
	struct rd_rect graph;
	struct rd_rect table;
	struct rd_rect tip;  /* the tooltip, w = 0 when none */
	uint32_t *table_idx;
	size_t table_n;
	char status[160];   /* "12 matches · 34% of the total" */
	int oom;
};

/* Initialises @ui for model @m with text measuring @t. Returns 0 or
 * -ENOMEM. Release with rd_ui_release(). */
int rd_ui_init(struct rd_ui *ui, struct rd_model *m, const struct rd_text *t);

/* Frees what @ui allocated (not the model). */
void rd_ui_release(struct rd_ui *ui);

/* Gives @ui the panes @p (copied) and attaches them (their attach entry,
 * with @wake and @wake_arg). Returns 0, or attach's negative errno (then
 * @ui has no panes). */
int rd_ui_attach(struct rd_ui *ui, const struct rd_panes *p,
		 void (*wake)(void *arg), void *wake_arg);

/* Detaches the panes of @ui, if any, and forgets them. */
void rd_ui_detach(struct rd_ui *ui);

/* Lets the panes take new data (their update entry). Returns 1 when the
 * window must be drawn again, 0 when nothing changed. */
int rd_ui_update(struct rd_ui *ui);

/* Lays out the whole window at @w x @h pixels. Returns 0 or -ENOMEM. */
int rd_ui_layout(struct rd_ui *ui, int w, int h, double scale);

/* Input, in the pixels of the last layout. */
int rd_ui_click(struct rd_ui *ui, int x, int y);
int rd_ui_motion(struct rd_ui *ui, int x, int y);
int rd_ui_leave(struct rd_ui *ui);
int rd_ui_release_button(struct rd_ui *ui);
int rd_ui_wheel(struct rd_ui *ui, int x, int y, int dy);
int rd_ui_key(struct rd_ui *ui, enum rd_key key);
int rd_ui_text(struct rd_ui *ui, const char *utf8);

/* Shows the base profile filtered by @flags (enum rd_filter_flags; 0 =
 * as loaded). Zoom and selection reset; the search is kept. Returns 0 or
 * -ENOMEM (the base stays shown). */
int rd_ui_set_filter(struct rd_ui *ui, unsigned flags);

/* Sets the search query (as typed in the box). Returns 1. */
int rd_ui_set_query(struct rd_ui *ui, const char *q);

/* Writes the last layout as text, one item a line, for tests that drive a
 * real window: "window W H", "graph X Y W H", "focus NAME",
 * "status TEXT", "tooltip X Y W H", "answer TEXT", "box X Y W H DEPTH FLAGS RRGGBB NAME",
 * "zone KIND X Y W H ARG LABEL". Returns 0 or -EIO. */
int rd_ui_dump(const struct rd_ui *ui, FILE *out);

/* The label of box @b ("all", "(3) name", "12 small functions", name) into
 * @buf. Returns @buf. */
char *rd_ui_box_label(const struct rd_ui *ui, const struct rd_box *b,
		      char *buf, size_t n);

/* The fill colour of box @b under the current state. */
uint32_t rd_ui_box_color(const struct rd_ui *ui, const struct rd_box *b);

#endif /* HEARTH_RENDER_UI_H */
