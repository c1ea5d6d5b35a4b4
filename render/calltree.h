/* SPDX-License-Identifier: MIT */
/*
 * render/calltree: the profile as an expandable table (name, total,
 * self), with a search that counts its matches ("1 of N") and steps
 * through them, expanding the path to each and scrolling it into view.
 * Pure code over a model's preorder tree (render/tree.h); children are
 * listed largest total first.
 */
#ifndef HEARTH_RENDER_CALLTREE_H
#define HEARTH_RENDER_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "render/model.h"

struct rd_ct_row {
	uint32_t pre;   /* preorder index in the model's tree */
	uint32_t depth; /* 0 = a top-level node */
	uint8_t open;   /* its children are listed */
	uint8_t leaf;   /* it has no children */
};

struct rd_calltree {
	const struct rd_model *m; /* borrowed */
	uint8_t *open;            /* per preorder index */
	struct rd_ct_row *rows;   /* the visible rows, in order */
	size_t nrows;
	uint32_t *matches;        /* preorder indexes of matching nodes */
	size_t nmatch, cur;       /* cur: the match shown, < nmatch */
	int searching;
	size_t scroll;            /* first row shown */
	char query[256];
};

/* Starts a table of @m with the top-level nodes listed and nothing open.
 * Returns 0 or -ENOMEM. Free with rd_calltree_free(). */
int rd_calltree_init(struct rd_calltree *ct, const struct rd_model *m);

/* Frees what @ct owns (not the model). Accepts a zeroed struct. */
void rd_calltree_free(struct rd_calltree *ct);

/* Opens or closes the row of preorder node @pre (no-op for a leaf).
 * Returns 0 or -ENOMEM. */
int rd_calltree_toggle(struct rd_calltree *ct, uint32_t pre);

/* Finds the nodes whose function name matches @query (case-insensitive
 * POSIX extended regular expression; a plain case-insensitive substring
 * when it does not compile). Shows the first match: its ancestors are
 * opened and @visible rows are scrolled so it is in view. An empty query
 * clears the search. Returns the number of matches, or -ENOMEM. */
long rd_calltree_search(struct rd_calltree *ct, const char *query,
			size_t visible);

/* Steps to the next (@dir > 0) or previous match, wrapping, and shows it
 * as above. Returns 0, -ENOENT without matches, -ENOMEM. */
int rd_calltree_step(struct rd_calltree *ct, int dir, size_t visible);

/* Lists the rows again after ct->open[] was changed directly. Returns 0
 * or -ENOMEM. */
int rd_calltree_refresh(struct rd_calltree *ct);

/* The row showing preorder node @pre, or -1 when it is not listed. */
long rd_calltree_row_of(const struct rd_calltree *ct, uint32_t pre);

/* "1 of N" (or "no matches", or "" without a search) into @buf. */
char *rd_calltree_status(const struct rd_calltree *ct, char *buf, size_t n);

#endif /* HEARTH_RENDER_CALLTREE_H */
