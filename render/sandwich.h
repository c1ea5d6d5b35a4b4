/* SPDX-License-Identifier: MIT */
/*
 * render/sandwich: one function's callers and callees, each merged from
 * every place the function appears. Pure code.
 *
 * A function is a name (as the viewer's top table counts it). For every
 * node of that name that is the outermost of its name on its path (so a
 * recursive function is counted once), with total v:
 *   - callers: the path from its parent up to the top, reversed, is added
 *     under a top-level node of the function with value v: the callers
 *     profile reads "F; caller; caller's caller; ... ", an inverted flame;
 *   - callees: its whole subtree (inner recursive calls included, as they
 *     are) is merged under a top-level node of the function.
 * Both results have the function's counted-once total as their total.
 * With @d (a diff), the per-side values are merged the same way, so the
 * sandwich of a diff can be coloured by change.
 */
#ifndef HEARTH_RENDER_SANDWICH_H
#define HEARTH_RENDER_SANDWICH_H

#include <stdint.h>

#include "profile/diff.h"
#include "profile/profile.h"

struct rd_sandwich {
	struct prof_profile *callers; /* owned; top-level node = the function */
	struct prof_profile *callees; /* owned; top-level node = the function */
	/* With a diff: per node of callers / callees, the merged values of
	 * each side; NULL otherwise. */
	struct prof_diff_values *callers_v, *callees_v;
	uint64_t total_before, total_after; /* the diff's totals */
	uint64_t total;                     /* the function's total */
};

/* Builds the sandwich of the function named @name in @p (a diff tree when
 * @d is not NULL; then @p must be prof_diff_tree(@d)). Returns 0, -ENOENT
 * when no frame has that name, -ENOMEM. Free with rd_sandwich_free(). */
int rd_sandwich_build(const struct prof_profile *p, const struct prof_diff *d,
		      const char *name, struct rd_sandwich *out);

/* Frees what @s owns. Accepts a zeroed struct. */
void rd_sandwich_free(struct rd_sandwich *s);

#endif /* HEARTH_RENDER_SANDWICH_H */
