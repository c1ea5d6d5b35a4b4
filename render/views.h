/* SPDX-License-Identifier: MIT */
/*
 * render/views: the viewer's other views, plugged into the window
 * (render/ui) through small hooks: diff colouring of the flame graph, the
 * sandwich of a function, the call tree pane, before and after side by
 * side, and live data from hearthd. Pure code like render/ui: it lays out
 * draw commands and zones and reacts to abstract input. A window without
 * views (ui->views == NULL) behaves exactly as before.
 *
 * Hooks (each called only when ui->views is set): rd_views_bar() lays out
 * the views' toolbar row; rd_views_graph() lays out the graph area (the
 * sandwich, the call tree, side by side, or the normal graph);
 * rd_views_tooltip() draws the tooltip of those panes; rd_views_tip_lines()
 * adds diff lines to the graph's tooltip; rd_views_box_color() colours a
 * graph box by change; rd_views_click/motion/key/text() take input first
 * and return -1 when they leave it to the window; rd_views_dump() adds the
 * views' state to the debug layout; rd_views_update() takes live data.
 */
#ifndef HEARTH_RENDER_VIEWS_H
#define HEARTH_RENDER_VIEWS_H

#include <stdint.h>
#include <stdio.h>

#include "profile/diff.h"
#include "render/calltree.h"
#include "render/diff_view.h"
#include "render/flame.h"
#include "render/live.h"
#include "render/sandwich.h"

struct rd_ui;
struct rd_window_opts;

enum rd_pane {
	RD_PANE_GRAPH = 0,
	RD_PANE_SANDWICH,
	RD_PANE_CALLTREE,
	RD_PANE_SIDE, /* before | after above the merged diff */
};

/* Zone kinds of the views (the window's own kinds are below 100). */
enum rd_views_zone {
	RD_Z_VIEW_BUTTON = 100, /* arg: enum rd_view_button */
	RD_Z_CT_ROW,            /* arg: row index */
	RD_Z_CT_CALLERS,        /* arg: row index */
	RD_Z_CT_CALLEES,        /* arg: row index */
	RD_Z_DT_HEAD,           /* diff table: arg = enum rd_dt_sort */
	RD_Z_DT_ROW,            /* diff table: arg = index in dt */
	RD_Z_TT_SANDWICH,       /* top table row's sandwich: arg = function */
	RD_Z_DT_SANDWICH,       /* diff table row's sandwich: arg = index */
};

enum rd_dt_sort {
	RD_DT_NAME = 0, RD_DT_BEFORE, RD_DT_AFTER, RD_DT_CHANGE,
};

enum rd_view_button {
	RD_VB_SANDWICH = 0, /* sandwich of the selected function / back */
	RD_VB_CALLTREE,     /* call tree pane on / off */
	RD_VB_SIDE,         /* diff: side by side on / off */
	RD_VB_PALETTE,      /* diff: red-blue / colour-blind */
	RD_VB_ABSOLUTE,     /* diff: relative / absolute */
	RD_VB_NOISE,        /* diff: noise filter on / off */
	RD_VB_PAUSE,        /* live: pause / resume */
	RD_VB_CT_PREV,      /* call tree search: previous match */
	RD_VB_CT_NEXT,      /* call tree search: next match */
	RD_VB_CT_WHOLE,     /* call tree: back to the whole profile */
	RD_VB_COUNT
};

struct rd_views {
	struct rd_ui *ui;   /* the window, while attached */
	enum rd_pane pane, back;
	char notice[256];   /* one line shown in the bar, or "" */
	/* Diff (diff != NULL). */
	struct prof_diff *diff;
	struct prof_profile *before, *after;
	struct rd_diff_opts dopt;
	struct rd_model *own_m;     /* the model the window was opened on */
	struct prof_diff_fn *dt;    /* the diff table: functions by change */
	size_t ndt;
	int dt_sort;                /* enum rd_dt_sort */
	struct prof_profile *own_p; /* its profile, when not the diff tree */
	/* Sandwich. */
	char sw_name[256];
	struct rd_sandwich sw;
	struct rd_model *sw_m[2];   /* callers, callees */
	uint32_t sw_focus[2];
	struct rd_boxes sw_boxes[2];
	int sw_scroll[2];
	uint32_t back_focus;
	/* Call tree. */
	struct rd_calltree ct;
	const struct rd_model *ct_of; /* the model ct was built on */
	const struct rd_model *ct_base; /* the window's base model then */
	unsigned ct_filter;             /* and its filter */
	int ct_side;                  /* -1 whole, 0 callers, 1 callees */
	struct rd_sandwich ct_sw;
	struct rd_model *ct_swm;
	char ct_name[256];
	size_t ct_visible;
	char **ct_keep;               /* open rows to reopen after new data: */
	size_t nct_keep;              /*   names from the top, '\x1f' apart */
	/* Side by side. */
	struct rd_model *side_m[2]; /* before, after */
	struct rd_boxes side_boxes[2];
	struct rd_rect side_area[2];
	/* Live. */
	struct rd_live *live;
	struct prof_profile *live_p; /* data shown, owned */
	struct rd_model *live_m;
	uint64_t live_arrived_ns, live_updates;
	double live_latency_ms;      /* arrival to the end of the last dump */
	int live_pending;            /* a dump after an update is due */
};

/* A new empty set of views (none active). NULL when out of memory. */
struct rd_views *rd_views_new(void);

/* Frees @v and everything it owns (models, profiles, the live source).
 * Accepts NULL. */
void rd_views_free(struct rd_views *v);

/* Makes @v a diff of @before and @after (both now owned by @v). Builds the
 * union tree and its model into *@m (owned by @v), the model to open the
 * window on. Returns 0, -EINVAL for different units (sentence in @err),
 * -ENOMEM. */
int rd_views_set_diff(struct rd_views *v, struct prof_profile *before,
		      struct prof_profile *after, struct rd_model **m,
		      char *err, size_t errlen);

/* Makes @v live from @live (now owned by @v), showing @first (owned; its
 * range @from_ns..@to_ns) until the next window arrives. The model to open
 * the window on goes to *@m (owned by @v). Returns 0 or -ENOMEM. */
int rd_views_set_live(struct rd_views *v, struct rd_live *live,
		      struct prof_profile *first, uint64_t from_ns,
		      uint64_t to_ns, struct rd_model **m);

/* Binds @v to the window @ui once it is initialised (starts the live
 * thread with @wake). Returns 0 or a negative errno. */
int rd_views_attach(struct rd_views *v, struct rd_ui *ui,
		    rd_live_wake_fn wake, void *wake_arg);

/* Stops the live thread and unbinds the window. */
void rd_views_detach(struct rd_views *v);

/* Runs the window on the diff of @before and @after (taken). */
int rd_views_run_diff_profiles(struct prof_profile *before,
			       struct prof_profile *after,
			       const struct rd_window_opts *o, char *err,
			       size_t errlen);

/* Runs the window live from @live (taken) showing @first (taken) first. */
int rd_views_run_live(struct rd_live *live, struct prof_profile *first,
		      uint64_t from_ns, uint64_t to_ns,
		      const struct rd_window_opts *o, char *err, size_t errlen);

/* ---- hooks ------------------------------------------------------------- */

int rd_views_bar(struct rd_ui *ui, int y);
int rd_views_graph(struct rd_ui *ui);
int rd_views_tooltip(struct rd_ui *ui);
int rd_views_tip_lines(const struct rd_ui *ui, const struct rd_box *b,
		       char (*lines)[256], int max);
int rd_views_box_color(const struct rd_ui *ui, const struct rd_box *b,
		       uint32_t *color);
int rd_views_click(struct rd_ui *ui, int x, int y);
int rd_views_motion(struct rd_ui *ui);
int rd_views_key(struct rd_ui *ui, int key);
int rd_views_text(struct rd_ui *ui, const char *utf8);
void rd_views_dump(const struct rd_ui *ui, FILE *out);
int rd_views_update(struct rd_ui *ui);

/* Opens the sandwich of the function named @name (from the profile shown).
 * Returns 1 when shown, 0 when no such function, -ENOMEM. */
int rd_views_sandwich(struct rd_ui *ui, const char *name);

/* ---- between the views' files -------------------------------------------- */

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

/* The sandwich pane (render/sandwich.c). */
void rd_views_sandwich_clear(struct rd_views *v);
int rd_views_sandwich_graph(struct rd_ui *ui);
int rd_views_sandwich_tooltip(struct rd_ui *ui);
int rd_views_sandwich_click(struct rd_ui *ui, int x, int y);
int rd_views_sandwich_leave(struct rd_ui *ui);
int rd_views_sandwich_escape(struct rd_ui *ui);
int rd_views_sandwich_here(struct rd_ui *ui);
void rd_views_sandwich_dump(const struct rd_ui *ui, FILE *out);
void rd_views_sandwich_refresh(struct rd_ui *ui);

/* The call tree pane (render/calltree.c). */
void rd_views_calltree_clear(struct rd_views *v);
/* Before new data replaces the model: remembers the open rows (and the
 * callers/callees tree shown) so the pane reopens them on the new data. */
void rd_views_calltree_keep(struct rd_ui *ui);
int rd_views_calltree_graph(struct rd_ui *ui);
int rd_views_calltree_click(struct rd_ui *ui, int kind, uint32_t arg);
int rd_views_calltree_step(struct rd_ui *ui, int dir);
void rd_views_calltree_dump(const struct rd_ui *ui, FILE *out);

/* A small "sandwich" button at the right end of a table's name column,
 * with zone @kind and @arg. */
void rd_views_row_sandwich(struct rd_ui *ui, int x, int y, int h, int kind,
			   uint32_t arg);

/* The top table of a diff, drawn over the window's (render/diff_view.c). */
int rd_views_diff_table(struct rd_ui *ui);
int rd_views_diff_table_click(struct rd_ui *ui, int kind, uint32_t arg);

/* Side by side (render/diff_view.c). */
int rd_views_side_graph(struct rd_ui *ui);
int rd_views_side_tooltip(struct rd_ui *ui);
int rd_views_side_click(struct rd_ui *ui, int x, int y);
void rd_views_side_dump(const struct rd_ui *ui, FILE *out);

#endif /* HEARTH_RENDER_VIEWS_H */
