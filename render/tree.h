/* SPDX-License-Identifier: MIT */
/*
 * render/tree: the call tree in depth-first (pre)order for the viewer's
 * hot loops. Nodes are numbered by their preorder index i: node i's
 * subtree is [i, i + size); its first child is i + 1, the next sibling of
 * child j is j + size(j); parent < i. Walks over it touch memory in order
 * instead of chasing links across the whole array.
 *
 * When the profile's ids already are its preorder (prof_ids_preorder(): a
 * bulk-loaded profile), the tree reads the profile's own nodes in place
 * and costs no memory per node. Otherwise (profiles built stack by stack,
 * diffs, sandwiches, pprof input) it keeps a copy of the nodes in preorder,
 * with links renumbered. Both read the same through the accessors below,
 * which are the only way to read a node.
 */
#ifndef HEARTH_RENDER_TREE_H
#define HEARTH_RENDER_TREE_H

#include <stdint.h>

#include "profile/profile.h"

struct rd_tree {
	const struct prof_profile *p; /* borrowed; must not change while the
				       * tree is used (nodes are read in place) */
	/* Node i in preorder: frame, total and self as in the profile;
	 * parent, child and sibling are preorder indexes (0: none, and the
	 * root's parent). The profile's array itself, or `copy`. */
	const struct prof_node *nd;
	uint32_t n;
	uint32_t nfr;         /* frames of the profile when built */
	uint32_t *fn_of;      /* frame -> function (owned; set by the model,
			       * NULL: function i is frame i) */
	uint32_t *id;         /* preorder index -> node id; NULL: the same */
	uint32_t *pre;        /* node id -> preorder index; NULL: the same */
	struct prof_node *copy; /* owned, when the ids are not the preorder */
	/* Children lists of some nodes with many children (see
	 * rd_tree_list_kids), so walks over those read in order instead of
	 * a cache miss a child: big[] (ascending preorder indexes, nbig of
	 * them); the children of big[b] are kid[kid_off[b] .. kid_off[b+1])
	 * in sibling order, with their totals in kid_total[]. */
	uint32_t nbig;
	uint32_t *big;
	uint32_t *kid_off;
	uint32_t *kid;
	uint64_t *kid_total;
};

/* Builds the tree of @p (in its current sibling order): in place when
 * its ids are the preorder, else a copy. Returns 0 or -ENOMEM. Free with
 * rd_tree_free(); @p must outlive @t and stay unchanged. */
int rd_tree_build(struct rd_tree *t, const struct prof_profile *p);

/* rd_tree_build() that always copies (the path taken by profiles whose
 * ids are not their preorder), so both can be compared. */
int rd_tree_build_copy(struct rd_tree *t, const struct prof_profile *p);

/* Frees what @t owns. Accepts a zeroed tree. */
void rd_tree_free(struct rd_tree *t);

/* Keeps the children lists of the @n nodes @nodes (preorder indexes, in
 * any order, repeats allowed; meant for those with many children),
 * replacing any kept before. @nodes is sorted in place. Returns 0, or
 * -ENOMEM (then no lists are kept; walks read the links). */
int rd_tree_list_kids(struct rd_tree *t, uint32_t *nodes, uint32_t n);

/* Children of a node already known (by a walk over the tree): @n
 * consecutive siblings kid[0..n) of @node, in sibling order, with their
 * totals. */
struct rd_kid_run {
	uint32_t node;
	uint32_t n;
	const uint32_t *kid;
	const uint64_t *total;
};

/* rd_tree_list_kids() that copies the children in @runs (@nruns of them,
 * sorted by node, then by their first child; runs of one node must not
 * overlap) instead of following the links through them: only the
 * children outside the runs are read from the tree. Runs of nodes not in
 * @nodes are ignored. Returns 0 or -ENOMEM (then no lists are kept). */
int rd_tree_list_kids_runs(struct rd_tree *t, uint32_t *nodes, uint32_t n,
			   const struct rd_kid_run *runs, uint32_t nruns);

static inline uint64_t rd_tree_total(const struct rd_tree *t, uint32_t i)
{
	return t->nd[i].total;
}

static inline uint64_t rd_tree_self(const struct rd_tree *t, uint32_t i)
{
	return t->nd[i].self;
}

/* Preorder index of the parent of @i (root: 0). */
static inline uint32_t rd_tree_parent(const struct rd_tree *t, uint32_t i)
{
	return t->nd[i].parent;
}

/* The first child of @i (i + 1), or 0 when @i is a leaf. */
static inline uint32_t rd_tree_child(const struct rd_tree *t, uint32_t i)
{
	return t->nd[i].child;
}

/* The next sibling of @j (j + size(j)), or 0 when @j is the last. */
static inline uint32_t rd_tree_next(const struct rd_tree *t, uint32_t j)
{
	return t->nd[j].sibling;
}

/* 1 when @i has exactly one child. */
static inline int rd_tree_only_child(const struct rd_tree *t, uint32_t i)
{
	uint32_t c = t->nd[i].child;

	return c && !t->nd[c].sibling;
}

/* The frame of @i, and its function (the frame itself until the model
 * sets fn_of; a frame id out of range reads as the root's). */
static inline uint32_t rd_tree_frame(const struct rd_tree *t, uint32_t i)
{
	uint32_t f = t->nd[i].frame;

	return f < t->nfr ? f : 0;
}

static inline uint32_t rd_tree_fn(const struct rd_tree *t, uint32_t i)
{
	uint32_t f = rd_tree_frame(t, i);

	return t->fn_of ? t->fn_of[f] : f;
}

/* The profile's node id of preorder index @i, and back. */
static inline uint32_t rd_tree_id(const struct rd_tree *t, uint32_t i)
{
	return t->id ? t->id[i] : i;
}

static inline uint32_t rd_tree_pre(const struct rd_tree *t, uint32_t id)
{
	return t->pre ? t->pre[id] : id;
}

/* Walks the children of a node in sibling order, from its list when the
 * tree keeps one:
 *	for (rd_kids_start(&k, t, i); rd_kids_next(&k);)
 *		use k.at (preorder index) and k.total. */
struct rd_kids {
	const struct rd_tree *t;
	const uint32_t *list;  /* NULL: follow the links */
	const uint64_t *tot;
	uint32_t n, j;
	uint32_t at;           /* the current child */
	uint64_t total;        /* its total */
};

/* The index in t->big of node @i, or UINT32_MAX. */
static inline uint32_t rd_tree_big(const struct rd_tree *t, uint32_t i)
{
	uint32_t lo = 0, hi = t->nbig;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->big[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nbig && t->big[lo] == i ? lo : UINT32_MAX;
}

static inline void rd_kids_start(struct rd_kids *k, const struct rd_tree *t,
				 uint32_t i)
{
	uint32_t b = t->nbig ? rd_tree_big(t, i) : UINT32_MAX;

	k->t = t;
	k->j = 0;
	k->at = 0;
	k->list = NULL;
	k->tot = NULL;
	k->n = rd_tree_child(t, i); /* links: the first child */
	if (b != UINT32_MAX) {
		k->list = t->kid + t->kid_off[b];
		k->tot = t->kid_total + t->kid_off[b];
		k->n = t->kid_off[b + 1] - t->kid_off[b];
	}
}

/* Moves to the next child; 0 when there is none left. */
static inline int rd_kids_next(struct rd_kids *k)
{
	if (k->list) {
		if (k->j == k->n)
			return 0;
		k->at = k->list[k->j];
		k->total = k->tot[k->j++];
		return 1;
	}
	k->at = k->j++ ? rd_tree_next(k->t, k->at) : k->n;
	if (!k->at)
		return 0;
	k->total = rd_tree_total(k->t, k->at);
	return 1;
}

/* Nodes in the subtree of @i, itself included (walks up to the first
 * ancestor with a next sibling: for occasional use, not per node). */
uint32_t rd_tree_size(const struct rd_tree *t, uint32_t i);

/* Calls @enter for every node but the root in preorder and @leave once its
 * subtree is done, with preorder indexes. Returns 0 or -ENOMEM. */
typedef void (*rd_tree_fn_cb)(const struct rd_tree *t, uint32_t i, void *arg);
int rd_tree_walk(const struct rd_tree *t, rd_tree_fn_cb enter,
		 rd_tree_fn_cb leave, void *arg);

#endif /* HEARTH_RENDER_TREE_H */
