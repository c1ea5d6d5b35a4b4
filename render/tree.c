/* SPDX-License-Identifier: MIT */
/* The call tree in preorder. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "render/tree.h"

/* Asks the kernel for the pages under @a[lo..hi) (of @size bytes each)
 * in one call, before they are written: cheaper than a fault a page. A
 * hint only. */
static void populate(void *a, size_t size, size_t lo, size_t hi)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = 4096, x = ((uintptr_t)a + lo * size) & ~(page - 1);
	uintptr_t y = (uintptr_t)a + hi * size;

	if (x < y)
		(void)madvise((void *)x, y - x, MADV_POPULATE_WRITE);
#else
	(void)a;
	(void)size;
	(void)lo;
	(void)hi;
#endif
}

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
	populate(t->kid_off, sizeof(*t->kid_off), 0, (size_t)n + 1);
	populate(t->kid, sizeof(*t->kid), 0, n);
	populate(t->kid_total, sizeof(*t->kid_total), 0, n);
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
 * faulting in fresh memory). Each half keeps the path from the root to
 * the node it is at, so a node's size is known when its subtree ends;
 * a half's first path is its first node's ancestors, and the sizes of
 * those the other half made are applied after both are done. */
struct fill_job {
	struct rd_tree *t;
	uint32_t lo, hi;
	unsigned half;
	const struct rd_tree_visit *vis;
	uint32_t *path; /* open nodes, root first */
	size_t np, cap;
	uint32_t *late; /* pairs (node, size) of nodes below lo */
	size_t nlate, late_cap;
	int rc; /* -EINVAL: not a preorder; -ENOMEM */
};

static int job_push(uint32_t **a, size_t *n, size_t *cap, uint32_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		uint32_t *b = realloc(*a, c * sizeof(*b));

		if (!b)
			return -ENOMEM;
		*a = b;
		*cap = c;
	}
	(*a)[(*n)++] = x;
	return 0;
}

/* Node @x's subtree ends before node @end. */
static int job_close(struct fill_job *j, uint32_t x, uint32_t end)
{
	if (j->lo <= x) {
		j->t->v[x].size = end - x;
		return 0;
	}
	if (job_push(&j->late, &j->nlate, &j->late_cap, x) < 0)
		return -ENOMEM;
	return job_push(&j->late, &j->nlate, &j->late_cap, end - x);
}

/* Leaves the path down to @parent (closing the nodes below it at @end);
 * -EINVAL when @parent is not on it. */
static int job_leave(struct fill_job *j, uint32_t parent, uint32_t end)
{
	while (j->np && j->path[j->np - 1] != parent)
		if (job_close(j, j->path[--j->np], end) < 0)
			return -ENOMEM;
	return j->np ? 0 : -EINVAL;
}

/* The path to node @lo: its ancestors, root first. */
static int job_start(struct fill_job *j)
{
	const struct prof_profile *p = j->t->p;
	uint32_t a = j->lo;

	if (a == 0)
		return 0;
	do {
		a = prof_node_get(p, a)->parent;
		if (job_push(&j->path, &j->np, &j->cap, a) < 0)
			return -ENOMEM;
	} while (a && j->np <= j->lo);
	if (a)
		return -EINVAL; /* a cycle: not a preorder */
	for (size_t x = 0, y = j->np - 1; x < y; x++, y--) {
		uint32_t s = j->path[x];

		j->path[x] = j->path[y];
		j->path[y] = s;
	}
	return 0;
}

#define FILL_CHUNK 4096u
/* Trees from this size on are filled in two halves. */
#define FILL_SPLIT_MIN 65536u

static int fill_nodes(struct fill_job *j)
{
	struct rd_tree *t = j->t;
	const struct prof_node *nodes = prof_nodes(t->p);
	uint32_t n = prof_node_count(t->p), from = j->lo;
	int rc = job_start(j);

	for (uint32_t i = j->lo; i < j->hi && rc == 0; i++) {
		const struct prof_node *nd = &nodes[i];

		if (i == from) {
			uint32_t to = j->hi - i < FILL_CHUNK ? j->hi : i + FILL_CHUNK;

			populate(t->v, sizeof(*t->v), i, to);
			populate(t->pre, sizeof(*t->pre), i, to);
		}

		/* Most nodes are their parent's only child: the path's top. */
		if (i && (!j->np || j->path[j->np - 1] != nd->parent) &&
		    (rc = job_leave(j, nd->parent, i)) < 0)
			break;
		t->v[i] = (struct rd_tnode){ .id = i, .parent = nd->parent,
					     .size = 1, .fn = nd->frame,
					     .total = nd->total, .self = nd->self };
		t->pre[i] = i;
		if (j->np < j->cap)
			j->path[j->np++] = i;
		else
			rc = job_push(&j->path, &j->np, &j->cap, i);
		if (j->vis && (i + 1 - from == FILL_CHUNK || i + 1 == j->hi)) {
			j->vis->range(t, from, i + 1, j->half, j->vis->arg);
			from = i + 1;
		}
	}
	if (rc < 0)
		return rc;
	/* What ends before the next half's first node. */
	if (j->hi < n)
		return job_leave(j, nodes[j->hi].parent, j->hi);
	while (j->np)
		if (job_close(j, j->path[--j->np], n) < 0)
			return -ENOMEM;
	return 0;
}

static void *fill_thread(void *arg)
{
	struct fill_job *j = arg;

	j->rc = fill_nodes(j);
	return NULL;
}

/* Fills @t from the preorder ids of its profile's @n nodes; 0, -ENOMEM,
 * or -EINVAL when they turn out not to be a preorder (then @t is to be
 * refilled). */
static int fill_preorder(struct rd_tree *t, uint32_t n,
			 const struct rd_tree_visit *vis)
{
	struct fill_job a = { .t = t, .hi = n, .vis = vis };
	struct fill_job b = { .t = t, .lo = n / 2, .hi = n, .half = 1, .vis = vis };
	pthread_t th;
	int threaded = n >= FILL_SPLIT_MIN;
	int rc;

	if (threaded) {
		a.hi = n / 2;
		threaded = pthread_create(&th, NULL, fill_thread, &b) == 0;
		if (!threaded)
			a.hi = n;
	}
	fill_thread(&a);
	if (threaded)
		pthread_join(th, NULL);
	rc = a.rc < 0 ? a.rc : threaded ? b.rc : 0;
	for (size_t k = 0; rc == 0 && k < b.nlate; k += 2)
		t->v[b.late[k]].size = b.late[k + 1];
	free(a.path);
	free(a.late);
	free(b.path);
	free(b.late);
	if (rc == 0)
		t->n = n;
	return rc;
}

/* Fills @t by walking the sibling links: iterative preorder, sizes
 * closed when a subtree is left. */
static void fill_linked(struct rd_tree *t, uint32_t n)
{
	const struct prof_profile *p = t->p;
	uint32_t k = 0, id = 0;

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
			if (id == 0) {
				t->n = k;
				return;
			}
			if (nd->sibling && k < n) {
				id = nd->sibling;
				break;
			}
			id = nd->parent;
		}
	}
}

int rd_tree_build_nodes_visit(struct rd_tree *t, const struct prof_profile *p,
			      const struct rd_tree_visit *vis)
{
	uint32_t n = prof_node_count(p);
	int rc = -EINVAL;

	memset(t, 0, sizeof(*t));
	t->p = p;
	t->v = calloc(n ? n : 1, sizeof(*t->v));
	t->pre = calloc(n ? n : 1, sizeof(*t->pre));
	if (!t->v || !t->pre) {
		rd_tree_free(t);
		return -ENOMEM;
	}
	if (n && prof_ids_preorder(p))
		rc = fill_preorder(t, n, vis);
	if (rc == 0)
		return 0;
	if (rc == -ENOMEM) {
		rd_tree_free(t);
		return rc;
	}
	if (vis && vis->restart && n && prof_ids_preorder(p))
		vis->restart(vis->arg);
	fill_linked(t, n);
	if (vis)
		vis->range(t, 0, t->n, 0, vis->arg);
	return 0;
}

int rd_tree_build_nodes(struct rd_tree *t, const struct prof_profile *p)
{
	return rd_tree_build_nodes_visit(t, p, NULL);
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
