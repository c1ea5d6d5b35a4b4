/* SPDX-License-Identifier: MIT */
/* The call tree in preorder: the profile's nodes in place, or a copy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render/tree.h"

static void drop_kids(struct rd_tree *t)
{
	free(t->big);
	free(t->kid_off);
	free(t->kid);
	free(t->kid_total);
	t->big = t->kid_off = t->kid = NULL;
	t->kid_total = NULL;
	t->nbig = 0;
}

void rd_tree_free(struct rd_tree *t)
{
	drop_kids(t);
	free(t->fn_of);
	free(t->id);
	free(t->pre);
	free(t->copy);
	memset(t, 0, sizeof(*t));
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Room for @need children in the lists; 0 or -ENOMEM. */
static int kids_room(struct rd_tree *t, size_t need, size_t *cap)
{
	size_t c = *cap ? *cap * 2 : 4096;
	uint32_t *k;
	uint64_t *v;

	if (need <= *cap)
		return 0;
	if (c < need)
		c = need;
	if (UINT32_MAX < c || !(k = realloc(t->kid, c * sizeof(*k))))
		return -ENOMEM;
	t->kid = k;
	if (!(v = realloc(t->kid_total, c * sizeof(*v))))
		return -ENOMEM;
	t->kid_total = v;
	*cap = c;
	return 0;
}

/* Appends the children of node @b to the lists from @at on, copying
 * those in @runs (the runs of @b, @nr of them, in order) and following
 * the links for the others. Returns the new end, or -ENOMEM. */
static int64_t list_one(struct rd_tree *t, uint32_t b, size_t at, size_t *cap,
			const struct rd_kid_run *runs, uint32_t nr)
{
	uint32_t r = 0, c = rd_tree_child(t, b);

	while (c) {
		if (r < nr && runs[r].n && runs[r].kid[0] == c) {
			const struct rd_kid_run *k = &runs[r++];

			if (kids_room(t, at + k->n, cap) < 0)
				return -ENOMEM;
			memcpy(t->kid + at, k->kid, k->n * sizeof(*t->kid));
			memcpy(t->kid_total + at, k->total, k->n * sizeof(*t->kid_total));
			at += k->n;
			c = rd_tree_next(t, k->kid[k->n - 1]);
			continue;
		}
		if (kids_room(t, at + 1, cap) < 0)
			return -ENOMEM;
		t->kid[at] = c;
		t->kid_total[at++] = rd_tree_total(t, c);
		c = rd_tree_next(t, c);
	}
	return (int64_t)at;
}

int rd_tree_list_kids_runs(struct rd_tree *t, uint32_t *nodes, uint32_t n,
			   const struct rd_kid_run *runs, uint32_t nruns)
{
	uint32_t nb = 0, r = 0;
	size_t at = 0, cap = 0;

	drop_kids(t);
	qsort(nodes, n, sizeof(*nodes), cmp_u32);
	for (uint32_t k = 0; k < n; k++)
		if (nodes[k] < t->n && (!nb || nodes[nb - 1] != nodes[k]))
			nodes[nb++] = nodes[k];
	t->big = malloc((nb ? nb : 1) * sizeof(*t->big));
	t->kid_off = malloc(((size_t)nb + 1) * sizeof(*t->kid_off));
	if (!t->big || !t->kid_off || kids_room(t, 1, &cap) < 0)
		goto err;
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t r0;
		int64_t end;

		while (r < nruns && runs[r].node < nodes[b])
			r++;
		for (r0 = r; r < nruns && runs[r].node == nodes[b]; r++)
			;
		t->big[b] = nodes[b];
		t->kid_off[b] = (uint32_t)at;
		if ((end = list_one(t, nodes[b], at, &cap, runs + r0, r - r0)) < 0 ||
		    UINT32_MAX < end)
			goto err;
		at = (size_t)end;
	}
	t->kid_off[nb] = (uint32_t)at;
	t->nbig = nb;
	return 0;
err:
	drop_kids(t);
	return -ENOMEM;
}

int rd_tree_list_kids(struct rd_tree *t, uint32_t *nodes, uint32_t n)
{
	return rd_tree_list_kids_runs(t, nodes, n, NULL, 0);
}

/* Numbers the nodes of @t->p in preorder by walking the sibling links:
 * fills id[] and pre[] and returns how many were reached. */
static uint32_t number_linked(struct rd_tree *t, uint32_t n)
{
	const struct prof_node *nodes = prof_nodes(t->p);
	uint32_t k = 0, id = 0;

	for (;;) {
		t->id[k] = id;
		t->pre[id] = k++;
		if (nodes[id].child && k < n) {
			id = nodes[id].child;
			continue;
		}
		for (;;) {
			if (id == 0)
				return k;
			if (nodes[id].sibling && k < n) {
				id = nodes[id].sibling;
				break;
			}
			id = nodes[id].parent;
		}
	}
}

int rd_tree_build_copy(struct rd_tree *t, const struct prof_profile *p)
{
	uint32_t n = prof_node_count(p);
	const struct prof_node *nodes = prof_nodes(p);

	memset(t, 0, sizeof(*t));
	t->p = p;
	t->nfr = prof_frame_count(p);
	t->id = malloc((n ? n : 1) * sizeof(*t->id));
	t->pre = calloc(n ? n : 1, sizeof(*t->pre));
	t->copy = malloc((n ? n : 1) * sizeof(*t->copy));
	if (!t->id || !t->pre || !t->copy) {
		rd_tree_free(t);
		return -ENOMEM;
	}
	t->nd = t->copy;
	if (!n)
		return 0;
	t->n = number_linked(t, n);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct prof_node *nd = &nodes[t->id[i]];

		t->copy[i] = (struct prof_node){
			.frame = nd->frame,
			.parent = i ? t->pre[nd->parent] : 0,
			.child = nd->child ? t->pre[nd->child] : 0,
			.sibling = nd->sibling ? t->pre[nd->sibling] : 0,
			.total = nd->total,
			.self = nd->self,
		};
	}
	return 0;
}

int rd_tree_build(struct rd_tree *t, const struct prof_profile *p)
{
	if (!prof_ids_preorder(p))
		return rd_tree_build_copy(t, p);
	memset(t, 0, sizeof(*t));
	t->p = p;
	t->nfr = prof_frame_count(p);
	t->nd = prof_nodes(p);
	t->n = prof_node_count(p);
	return 0;
}

uint32_t rd_tree_size(const struct rd_tree *t, uint32_t i)
{
	uint32_t a = i;

	while (a && !rd_tree_next(t, a))
		a = rd_tree_parent(t, a);
	return (a ? rd_tree_next(t, a) : t->n) - i;
}

int rd_tree_walk(const struct rd_tree *t, rd_tree_fn_cb enter,
		 rd_tree_fn_cb leave, void *arg)
{
	uint32_t *stack, sp = 0, cap = 256;

	if (!(stack = malloc(cap * sizeof(*stack))))
		return -ENOMEM;
	for (uint32_t i = 1; i < t->n; i++) {
		uint32_t parent = rd_tree_parent(t, i);

		while (sp && stack[sp - 1] != parent)
			leave(t, stack[--sp], arg);
		enter(t, i, arg);
		if (sp == cap) {
			uint32_t *s = realloc(stack, 2 * cap * sizeof(*s));

			if (!s) {
				free(stack);
				return -ENOMEM;
			}
			stack = s;
			cap *= 2;
		}
		stack[sp++] = i;
	}
	while (sp)
		leave(t, stack[--sp], arg);
	free(stack);
	return 0;
}
