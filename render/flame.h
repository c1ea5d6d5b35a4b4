/* SPDX-License-Identifier: MIT */
/*
 * render/flame: the geometry of a flame (or icicle) graph. Pure code.
 *
 * Node 0 (the profile's root) is drawn as the row "all" at depth 0. With the
 * view zoomed on node F, the path from the root to F is drawn full width and
 * F's subtree fills the width W: a node's x is its parent's x plus the widths
 * of its earlier siblings, and its width is v·W/(T·(z1−z0)) = v·W/total(F).
 * Siblings keep the profile's order (prof_sort(): by name).
 *
 * Folding (unless opts.unfold): a node whose only child carries more than
 * 99% of it is drawn with that child on one row, "(N) name", repeatedly;
 * children under 0.1% of total(F) merge into one "N small functions" box
 * per caller, after the others (one such child alone is drawn as itself).
 * Process and thread rows never fold. Boxes under half a pixel are not drawn.
 */
#ifndef HEARTH_RENDER_FLAME_H
#define HEARTH_RENDER_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "render/draw.h"
#include "render/tree.h"

enum rd_box_flags {
	RD_BOX_SMALL = 1u << 0,    /* "N small functions" of caller `node` */
	RD_BOX_CHAIN = 1u << 1,    /* a folded chain node..last, count frames */
	RD_BOX_ANCESTOR = 1u << 2, /* on the path below the zoomed node */
	RD_BOX_THIN = 1u << 3,     /* 10 px or less: no border, muted */
	RD_BOX_LABEL = 1u << 4,    /* 20 px or more: carries a label */
};

struct rd_box {
	int32_t x, y, w, h; /* pixels, clipped to the area */
	double fx, fw;      /* unrounded x (from the area's left) and width */
	uint32_t node;      /* first node (a bucket: its caller) */
	uint32_t last;      /* last node of a chain, else == node */
	uint32_t count;     /* frames in a chain, functions in a bucket, else 1 */
	uint32_t depth;     /* row, 0 = "all" */
	uint32_t flags;     /* enum rd_box_flags */
	uint64_t value;     /* total of the box */
};

struct rd_boxes {
	struct rd_box *v;
	size_t n, cap;
	uint32_t max_depth; /* deepest row laid out (drawn or not) */
};

struct rd_flame_opts {
	struct rd_rect area; /* where the graph goes */
	int row_h;           /* pixels per row (gap included) */
	int icicle;          /* 1: root on top; 0: flame, root at the bottom */
	int unfold;          /* 1: "show every frame", no folding */
	uint32_t focus;      /* zoomed node, 0 = whole profile */
	int scroll;          /* pixels the rows are shifted away from the root */
	int bucket;          /* 1: the focus's "N small functions" opened: only
			      * its children under 0.1% of it, filling the
			      * width, thresholds relative to their sum */
	double min_px;       /* boxes narrower than this are dropped (0.5) */
};

/* Lays out the tree @t (of a sorted profile) into @out (emptied first),
 * boxes in depth-first order. Only boxes at least partly inside opts->area are kept.
 * Returns 0, -EINVAL for a bad focus or empty area, -ENOMEM. @out's memory
 * belongs to the caller (rd_boxes_free). */
int rd_flame_layout(const struct rd_tree *t,
		    const struct rd_flame_opts *opts, struct rd_boxes *out);

/* Frees the boxes' memory. */
void rd_boxes_free(struct rd_boxes *b);

/* Returns the box under (x, y), or NULL. */
const struct rd_box *rd_flame_hit(const struct rd_boxes *b, int x, int y);

/* Returns the index of the box showing node @node (as first or last node
 * of a chain, or inside it), or -1. */
long rd_flame_find(const struct rd_boxes *b, const struct prof_profile *p,
		   uint32_t node);

#endif /* HEARTH_RENDER_FLAME_H */
