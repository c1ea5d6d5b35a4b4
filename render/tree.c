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

int rd_tree_list_kids(struct rd_tree *t, uint32_t *nodes, uint32_t n)
{
	uint32_t nb = 0;
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
		t->big[b] = nodes[b];
		t->kid_off[b] = (uint32_t)at;
		for (uint32_t c = rd_tree_child(t, nodes[b]); c; c = rd_tree_next(t, c)) {
			if (kids_room(t, at + 1, &cap) < 0)
				goto err;
			t->kid[at] = c;
			t->kid_total[at++] = rd_tree_total(t, c);
		}
	}
	t->kid_off[nb] = (uint32_t)at;
	t->nbig = nb;
	return 0;
err:
	drop_kids(t);
	return -ENOMEM;
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
