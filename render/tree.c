/* SPDX-License-Identifier: MIT */
/* The call tree in preorder. */
#include <errno.h>
#include <pthread.h>
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
 * visits each parent's children in sibling order. kid_off[p] serves as
 * p's cursor while filling (it then holds p + 1's start), so the lists
 * need no fourth array; one shift puts the starts back. */
int rd_tree_build_kids(struct rd_tree *t)
{
	uint32_t n = t->n;

	t->kid_off = calloc((size_t)n + 1, sizeof(*t->kid_off));
	t->kid = malloc((n ? n : 1) * sizeof(*t->kid));
	t->kid_total = malloc((n ? n : 1) * sizeof(*t->kid_total));
	if (!t->kid_off || !t->kid || !t->kid_total) {
		free(t->kid_off);
		free(t->kid);
		free(t->kid_total);
		t->kid_off = t->kid = NULL;
		t->kid_total = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 1; i < n; i++)
		t->kid_off[t->v[i].parent + 1]++;
	for (uint32_t i = 0; i < n; i++)
		t->kid_off[i + 1] += t->kid_off[i];
	for (uint32_t i = 1; i < n; i++) {
		uint32_t at = t->kid_off[t->v[i].parent]++;

		t->kid[at] = i;
		t->kid_total[at] = t->v[i].total;
	}
	/* kid_off[p] is now p's end, which is p + 1's start. */
	memmove(t->kid_off + 1, t->kid_off, (size_t)n * sizeof(*t->kid_off));
	t->kid_off[0] = 0;
	return 0;
}

/* For profiles whose ids are their preorder: v[] and pre[] are a copy
 * of the nodes, filled in two halves on two threads (the time is in
 * faulting in fresh memory), then the sizes in one pass from the end. */
struct fill_job {
	struct rd_tree *t;
	uint32_t lo, hi;
	int bad; /* a parent id not below its child's: not a preorder */
};

static void *fill_range(void *arg)
{
	struct fill_job *j = arg;
	struct rd_tree *t = j->t;

	for (uint32_t i = j->lo; i < j->hi; i++) {
		const struct prof_node *nd = prof_node_get(t->p, i);

		t->v[i] = (struct rd_tnode){ .id = i, .parent = nd->parent,
					     .size = 1, .fn = nd->frame,
					     .total = nd->total, .self = nd->self };
		t->pre[i] = i;
		j->bad |= i && i <= nd->parent;
	}
	return NULL;
}

/* Fills @t from the preorder ids of its profile's @n nodes; 0, or -EINVAL
 * when they turn out not to be a preorder (then @t is to be refilled). */
static int fill_preorder(struct rd_tree *t, uint32_t n)
{
	struct fill_job a = { t, 0, n / 2, 0 }, b = { t, n / 2, n, 0 };
	pthread_t th;
	int threaded = n >= 65536 && pthread_create(&th, NULL, fill_range, &b) == 0;

	fill_range(&a);
	if (threaded)
		pthread_join(th, NULL);
	else
		fill_range(&b);
	if (a.bad || b.bad)
		return -EINVAL;
	for (uint32_t i = n; i-- > 1;)
		t->v[t->v[i].parent].size += t->v[i].size;
	t->n = n;
	return 0;
}

int rd_tree_build_nodes(struct rd_tree *t, const struct prof_profile *p)
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
	if (n && prof_ids_preorder(p) && fill_preorder(t, n) == 0)
		return 0;
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
	return 0;
}

int rd_tree_build(struct rd_tree *t, const struct prof_profile *p)
{
	int rc = rd_tree_build_nodes(t, p);

	if (rc == 0 && (rc = rd_tree_build_kids(t)) < 0)
		rd_tree_free(t);
	return rc;
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
