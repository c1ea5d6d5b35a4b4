/* SPDX-License-Identifier: MIT */
/* The call tree in preorder. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render/tree.h"

void rd_tree_free(struct rd_tree *t)
{
	free(t->v);
	free(t->pre);
	free(t->kid_off);
	free(t->kid);
	free(t->kid_total);
	memset(t, 0, sizeof(*t));
}

/* Children lists: counted per parent, then filled in preorder, which
 * visits each parent's children in sibling order. */
static int build_kids(struct rd_tree *t)
{
	uint32_t *fill;

	t->kid_off = calloc((size_t)t->n + 1, sizeof(*t->kid_off));
	t->kid = malloc((t->n ? t->n : 1) * sizeof(*t->kid));
	t->kid_total = malloc((t->n ? t->n : 1) * sizeof(*t->kid_total));
	fill = malloc((t->n ? t->n : 1) * sizeof(*fill));
	if (!t->kid_off || !t->kid || !t->kid_total || !fill) {
		free(fill);
		rd_tree_free(t);
		return -ENOMEM;
	}
	for (uint32_t i = 1; i < t->n; i++)
		t->kid_off[t->v[i].parent + 1]++;
	for (uint32_t i = 0; i < t->n; i++)
		t->kid_off[i + 1] += t->kid_off[i];
	memcpy(fill, t->kid_off, t->n * sizeof(*fill));
	for (uint32_t i = 1; i < t->n; i++) {
		uint32_t at = fill[t->v[i].parent]++;

		t->kid[at] = i;
		t->kid_total[at] = t->v[i].total;
	}
	free(fill);
	return 0;
}

int rd_tree_build(struct rd_tree *t, const struct prof_profile *p)
{
	uint32_t n = prof_node_count(p), k = 0, id = 0;

	memset(t, 0, sizeof(*t));
	t->p = p;
	t->v = calloc(n ? n : 1, sizeof(*t->v));
	t->pre = calloc(n ? n : 1, sizeof(*t->pre));
	if (!t->v || !t->pre) {
		rd_tree_free(t);
		return -ENOMEM;
	}
	/* Iterative preorder; sizes are closed when a subtree is left. */
	for (;;) {
		const struct prof_node *nd = prof_node_get(p, id);
		uint32_t i = k++;

		t->v[i] = (struct rd_tnode){ .id = id, .total = nd->total,
					     .self = nd->self, .size = 1,
					     .fn = nd->frame };
		t->v[i].parent = id ? t->pre[nd->parent] : 0;
		t->pre[id] = i;
		if (nd->child && k < n) {
			id = nd->child;
			continue;
		}
		for (;;) {
			nd = prof_node_get(p, id);
			t->v[t->pre[id]].size = k - t->pre[id];
			if (id == 0)
				goto done;
			if (nd->sibling && k < n) {
				id = nd->sibling;
				break;
			}
			id = nd->parent;
		}
	}
done:
	t->n = k;
	return build_kids(t);
}

int rd_tree_walk(const struct rd_tree *t, rd_tree_fn enter, rd_tree_fn leave,
		 void *arg)
{
	uint32_t *stack, sp = 0, cap = 256;

	if (!(stack = malloc(cap * sizeof(*stack))))
		return -ENOMEM;
	for (uint32_t i = 1; i < t->n; i++) {
		uint32_t parent = t->v[i].parent;

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
