/* SPDX-License-Identifier: MIT */
/*
 * render/lines: one box per function. A profile that carries lines (pprof
 * has a line per location; hearth's own folded files keep them too) holds
 * a function at four lines, or inlined at two call sites, as separate
 * frames, and so as sibling nodes that a flame graph would draw as
 * separate boxes. For the viewer they are one frame (the line dropped, an
 * inlined frame read as a plain one) and one node; the lines are kept
 * beside, with the value each gave, for the tooltip, the cards and the
 * call tree. Pure code.
 */
#ifndef HEARTH_RENDER_LINES_H
#define HEARTH_RENDER_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* A line merged into a node of the merged profile. */
struct rd_line {
	uint32_t node;  /* the node, in the merged profile */
	uint32_t line;  /* the source line (its file is the node's frame's) */
	uint64_t value; /* the total the source nodes at that line gave it */
};

struct rd_lines {
	struct rd_line *v; /* by node, then line; a line once per node */
	size_t n;
};

/* When @p holds frames that differ only by line or by being inlined,
 * builds into *@out a copy of @p with each such set as one frame (line 0,
 * kind user) and the sibling nodes they made as one node (totals and
 * selves added), and fills @lines with the lines merged into each node of
 * the copy. Otherwise sets *@out to NULL and leaves @lines empty: @p is
 * drawn as it is. The copy's node ids are not its preorder, its metadata
 * is @p's. Returns 0 or -ENOMEM (nothing then to free). Free with
 * prof_free() and rd_lines_free(). */
int rd_lines_merge(const struct prof_profile *p, struct prof_profile **out,
		   struct rd_lines *lines);

/* rd_lines_merge() that copies whenever @p has a line or an inlined frame
 * (even with nothing to merge), keeping no lines: *@out then has none, so
 * two such copies compared on call paths (a diff) give one node per
 * function on a path. *@out is NULL when @p has none. Returns 0 or
 * -ENOMEM. */
int rd_lines_strip(const struct prof_profile *p, struct prof_profile **out);

/* Frees what @l owns. Accepts an empty one. */
void rd_lines_free(struct rd_lines *l);

/* The lines merged into node @node: their count, and the first in
 * *@first (0 and NULL when none). */
size_t rd_lines_of(const struct rd_lines *l, uint32_t node,
		   const struct rd_line **first);

/* The lines of node @node of @p as text into @buf: "mix.c:10, 12-14" by
 * line, or with @shares each line's share of the node's total, largest
 * first, "mix.c:12 (40%), 10 (35%), ...", as many as fit. "" when the
 * node has none. Returns @buf. */
char *rd_lines_text(const struct rd_lines *l, const struct prof_profile *p,
		    uint32_t node, int shares, char *buf, size_t n);

/* The lines of every node of frame @frame of @p (a function's, over the
 * whole profile) as text into @buf, by line as rd_lines_text() writes
 * them. "" when none. Returns @buf. */
char *rd_lines_frame_text(const struct rd_lines *l,
			  const struct prof_profile *p, uint32_t frame,
			  char *buf, size_t n);

#endif /* HEARTH_RENDER_LINES_H */
