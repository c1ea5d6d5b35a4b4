/* SPDX-License-Identifier: MIT */
/*
 * render/tree: the call tree flattened in depth-first (pre)order for the
 * viewer's hot loops. Node i's subtree is [i, i + size); its first child
 * is i + 1, the next sibling of child j is j + size(j); parent < i. Walks
 * over it touch memory in order instead of chasing sibling links.
 */
#ifndef HEARTH_RENDER_TREE_H
#define HEARTH_RENDER_TREE_H

#include <stdint.h>

#include "profile/profile.h"

struct rd_tnode {
	uint32_t id;     /* the profile's node id */
	uint32_t parent; /* preorder index of the parent (root: 0) */
	uint32_t size;   /* nodes in the subtree, itself included */
	uint32_t fn;     /* frame id after rd_tree_build; the model turns
			  * it into its function index */
	uint64_t total;
	uint64_t self;
};

struct rd_tree {
	const struct prof_profile *p; /* borrowed */
	struct rd_tnode *v;           /* v[0] is the root */
	uint32_t n;
	uint32_t *pre;                /* node id -> preorder index */
	/* Children of node i, contiguous (for nodes with thousands of
	 * children): kid[kid_off[i] .. kid_off[i + 1]) are their preorder
	 * indexes in sibling order, kid_total[] their totals. */
	uint32_t *kid_off;
	uint32_t *kid;
	uint64_t *kid_total;
};

/* Flattens @p (in its current sibling order) into @t. Returns 0 or
 * -ENOMEM. Free with rd_tree_free(). */
int rd_tree_build(struct rd_tree *t, const struct prof_profile *p);

/* rd_tree_build() in two steps, for callers that do other work on the
 * nodes meanwhile: rd_tree_build_nodes() fills v[], pre[] and n;
 * rd_tree_build_kids() then the children lists, reading only v[].parent
 * and v[].total (so another thread may write v[].fn meanwhile) and
 * writing only kid_off, kid and kid_total. Each returns 0 or -ENOMEM:
 * rd_tree_build_nodes() then frees @t, rd_tree_build_kids() leaves the
 * three lists NULL (free @t with rd_tree_free()). */
int rd_tree_build_nodes(struct rd_tree *t, const struct prof_profile *p);
int rd_tree_build_kids(struct rd_tree *t);

/* Work done on the nodes while they are filled in, where they are still
 * in the cache: range() is called with each stretch [lo, hi) of v[] once
 * its id, parent, fn (the frame id), total and self are written (not its
 * size), on the thread that wrote it. The stretches of each half come in
 * preorder; @half is 0 or 1, and half 1's stretches may come while half
 * 0's are worked on, on another thread. Half 1 is used only when the
 * profile's ids are its preorder (v[i].id == i), and starts below its
 * first node's ancestors, which half 0 makes. restart() (may be NULL)
 * says that every stretch seen so far is void and will come again. */
struct rd_tree_visit {
	void (*range)(struct rd_tree *t, uint32_t lo, uint32_t hi,
		      unsigned half, void *arg);
	void (*restart)(void *arg);
	void *arg;
};

/* rd_tree_build_nodes() calling @vis (may be NULL) on the nodes as they
 * are filled in. Returns 0 or -ENOMEM (then @t is freed). */
int rd_tree_build_nodes_visit(struct rd_tree *t, const struct prof_profile *p,
			      const struct rd_tree_visit *vis);

/* Frees the arrays of @t. Accepts a zeroed tree. */
void rd_tree_free(struct rd_tree *t);

/* Calls @enter for every node but the root in preorder and @leave once its
 * subtree is done, with preorder indexes. Returns 0 or -ENOMEM. */
typedef void (*rd_tree_fn)(const struct rd_tree *t, uint32_t i, void *arg);
int rd_tree_walk(const struct rd_tree *t, rd_tree_fn enter, rd_tree_fn leave,
		 void *arg);

#endif /* HEARTH_RENDER_TREE_H */
