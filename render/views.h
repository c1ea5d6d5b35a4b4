/* SPDX-License-Identifier: MIT */
/*
 * render/views: the viewer's other panes, given to the window (render/ui)
 * as a table (rd_views_panes): diff colouring of the flame graph, the
 * sandwich of a function, the call tree pane, before and after side by
 * side, and live data from hearthd. Pure code like render/ui: it lays out
 * draw commands and zones and reacts to abstract input; it calls the UI
 * core and the models (render/sandwich.h, calltree.h, diff_view.h), never
 * a window. A window without panes behaves exactly as before.
 *
 * The panes' entries: the toolbar row; the graph area (the sandwich, the
 * call tree, side by side, or the normal graph); the tooltip of those
 * panes; diff lines in the graph's tooltip; graph boxes coloured by
 * change; input first (the window has what they leave); their state in the
 * debug layout; live data.
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

#include "render/ui.h"

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

/* The table of these panes for the window (render/ui.h), with @v as
 * their state: what opens a window with views passes it in
 * rd_window_opts.panes, or to rd_ui_attach(). */
struct rd_panes rd_views_panes(struct rd_views *v);

/* rd_ui_attach() of rd_views_panes(@v): binds @v to the window @ui once
 * it is initialised (starts the live thread with @wake). Returns 0 or a
 * negative errno. */
int rd_views_attach(struct rd_views *v, struct rd_ui *ui,
		    rd_live_wake_fn wake, void *wake_arg);

/* Stops the live thread and unbinds the window. */
void rd_views_detach(struct rd_views *v);

/* Opens the sandwich of the function named @name (from the profile shown)
 * in the window @ui the views are attached to. Returns 1 when shown, 0
 * when no such function, -ENOMEM. */
int rd_views_sandwich(struct rd_ui *ui, const char *name);

/* The panes' tooltip lines for graph box @b of @ui (the diff's, and how
 * to open the sandwich): rd_pane_ops.tip_lines. */
int rd_views_tip_lines(const struct rd_ui *ui, const struct rd_box *b,
		       char (*lines)[256], int max);

/* Takes the newest live data, if any, keeping the zoom, selection and
 * open panes where the new data still has them: rd_pane_ops.update.
 * Returns 1 when it took some, 0 when none was waiting. */
int rd_views_update(struct rd_ui *ui);

#endif /* HEARTH_RENDER_VIEWS_H */
