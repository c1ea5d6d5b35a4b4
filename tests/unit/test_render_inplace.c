/* SPDX-License-Identifier: MIT */
/* The viewer's tree read in place (a bulk-loaded profile: ids are the
 * preorder) against the same tree copied, on the same profiles: every
 * node, the functions' sums and shares, the answer and cards, searches,
 * layouts at several zooms, hit tests, the call tree; with a deep
 * recursive chain and a node with 100,000 children. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"
#include "render/calltree.h"
#include "render/flame.h"
#include "render/model.h"
#include "render/tree.h"

/* A growing folded text. */
struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if ((size_t)n < t->cap - t->len)
			break;
		t->cap = t->cap * 2 + (size_t)n + 1;
		assert_non_null(t->s = realloc(t->s, t->cap));
	}
	t->len += (size_t)n;
}

/* The profile of @t, bulk-loaded: its ids are its preorder. */
static struct prof_profile *load(struct text *t)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse_sorted(p, t->s, t->len, 1, err,
						  sizeof(err)), 0);
	assert_int_equal(prof_ids_preorder(p), 1);
	free(t->s);
	memset(t, 0, sizeof(*t));
	return p;
}

static void same_nodes(const struct rd_tree *s, const struct rd_tree *t)
{
	assert_int_equal(s->n, t->n);
	for (uint32_t i = 0; i < s->n; i++) {
		assert_int_equal(rd_tree_parent(s, i), rd_tree_parent(t, i));
		assert_int_equal(rd_tree_child(s, i), rd_tree_child(t, i));
		assert_int_equal(rd_tree_next(s, i), rd_tree_next(t, i));
		assert_true(rd_tree_total(s, i) == rd_tree_total(t, i));
		assert_true(rd_tree_self(s, i) == rd_tree_self(t, i));
		assert_int_equal(rd_tree_fn(s, i), rd_tree_fn(t, i));
		assert_int_equal(rd_tree_id(s, i), rd_tree_id(t, i));
		assert_int_equal(rd_tree_pre(t, rd_tree_id(t, i)), i);
		/* First child i + 1, next sibling j + size(j). */
		if (rd_tree_child(s, i))
			assert_int_equal(rd_tree_child(s, i), i + 1);
		if (rd_tree_next(s, i))
			assert_int_equal(rd_tree_next(s, i), i + rd_tree_size(s, i));
	}
	assert_int_equal(s->nbig, t->nbig);
	for (uint32_t b = 0; b < s->nbig; b++)
		assert_int_equal(s->big[b], t->big[b]);
}

static void same_boxes(const struct rd_boxes *a, const struct rd_boxes *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->max_depth, b->max_depth);
	for (size_t i = 0; i < a->n; i++) {
		const struct rd_box *x = &a->v[i], *y = &b->v[i];

		assert_int_equal(x->x, y->x);
		assert_int_equal(x->y, y->y);
		assert_int_equal(x->w, y->w);
		assert_int_equal(x->h, y->h);
		assert_true(x->fx == y->fx && x->fw == y->fw);
		assert_int_equal(x->node, y->node);
		assert_int_equal(x->last, y->last);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->depth, y->depth);
		assert_int_equal(x->flags, y->flags);
		assert_true(x->value == y->value);
	}
}

/* Layouts of @s and @t: the full view (flame, icicle, unfolded), zooms
 * on some of its boxes with their small functions opened or not, and a
 * grid of hit tests. Returns how many zooms were laid out. */
static int same_layouts(const struct rd_tree *s, const struct rd_tree *t)
{
	struct rd_flame_opts o = { .area = { 10, 20, 1200, 700 }, .row_h = 14,
				   .min_px = 0.5 };
	struct rd_boxes a = { 0 }, b = { 0 }, full = { 0 };
	int zooms = 0;

	for (int v = 0; v < 4; v++) {
		o.icicle = v & 1;
		o.unfold = v >> 1;
		assert_int_equal(rd_flame_layout(s, &o, &a), rd_flame_layout(t, &o, &b));
		same_boxes(&a, &b);
	}
	o.icicle = o.unfold = 0;
	assert_int_equal(rd_flame_layout(s, &o, &full), 0);
	for (size_t i = 0; i < full.n; i += 1 + full.n / 25) {
		o.focus = full.v[i].node;
		for (o.bucket = 0; o.bucket < 2; o.bucket++) {
			assert_int_equal(rd_flame_layout(s, &o, &a),
					 rd_flame_layout(t, &o, &b));
			same_boxes(&a, &b);
			zooms++;
		}
	}
	o.focus = 0;
	o.bucket = 0;
	assert_int_equal(rd_flame_layout(t, &o, &b), 0);
	for (int y = 20; y < 720; y += 5)
		for (int x = 10; x < 1210; x += 7) {
			const struct rd_box *p = rd_flame_hit(&full, x, y);
			const struct rd_box *q = rd_flame_hit(&b, x, y);

			assert_int_equal(p ? p - full.v : -1, q ? q - b.v : -1);
		}
	rd_boxes_free(&a);
	rd_boxes_free(&b);
	rd_boxes_free(&full);
	return zooms;
}

static void same_calltree(const struct rd_model *a, const struct rd_model *b,
			  const char *query)
{
	struct rd_calltree x, y;

	assert_int_equal(rd_calltree_init(&x, a), 0);
	assert_int_equal(rd_calltree_init(&y, b), 0);
	for (size_t r = 0; r < 6 && r < x.nrows; r++) {
		assert_int_equal(rd_calltree_toggle(&x, x.rows[r].pre), 0);
		assert_int_equal(rd_calltree_toggle(&y, y.rows[r].pre), 0);
	}
	assert_int_equal(rd_calltree_search(&x, query, 30),
			 rd_calltree_search(&y, query, 30));
	assert_int_equal(x.nrows, y.nrows);
	assert_memory_equal(x.rows, y.rows, x.nrows * sizeof(*x.rows));
	assert_int_equal(x.nmatch, y.nmatch);
	if (x.nmatch)
		assert_memory_equal(x.matches, y.matches, x.nmatch * sizeof(*x.matches));
	rd_calltree_free(&x);
	rd_calltree_free(&y);
}

/* Everything the viewer shows of @a (in place) and @b (copied). */
static void same_models(struct rd_model *a, struct rd_model *b,
			const char *const *queries, size_t nq)
{
	assert_null(a->tree.copy);
	assert_non_null(b->tree.copy);
	same_nodes(&a->tree, &b->tree);
	assert_int_equal(a->nfn, b->nfn);
	for (uint32_t f = 0; f < a->nfn; f++) {
		assert_int_equal(a->fns[f].name, b->fns[f].name);
		assert_int_equal(a->fns[f].frame, b->fns[f].frame);
		assert_true(a->fns[f].self == b->fns[f].self);
		assert_true(a->fns[f].total == b->fns[f].total);
		assert_true(a->fns[f].own == b->fns[f].own);
		assert_int_equal(a->fns[f].nodes, b->fns[f].nodes);
		assert_int_equal(a->fns[f].row, b->fns[f].row);
	}
	assert_memory_equal(a->class_self, b->class_self, sizeof(a->class_self));
	assert_memory_equal(a->lang_self, b->lang_self, sizeof(a->lang_self));
	assert_int_equal(a->yours, b->yours);
	assert_string_equal(a->answer, b->answer);
	assert_string_equal(a->notice, b->notice);
	assert_int_equal(a->ncards, b->ncards);
	for (int c = 0; c < a->ncards; c++) {
		assert_int_equal(a->cards[c].fn, b->cards[c].fn);
		assert_true(a->cards[c].pct == b->cards[c].pct);
	}
	for (size_t q = 0; q < nq; q++) {
		assert_int_equal(rd_model_search(a, queries[q]), 0);
		assert_int_equal(rd_model_search(b, queries[q]), 0);
		assert_int_equal(a->match_boxes, b->match_boxes);
		assert_true(a->match_value == b->match_value);
		for (uint32_t id = 0; id < a->nnodes; id++) {
			assert_int_equal(rd_model_node_fn(a, id), rd_model_node_fn(b, id));
			assert_int_equal(rd_model_node_match(a, id),
					 rd_model_node_match(b, id));
		}
	}
	assert_true(same_layouts(&a->tree, &b->tree) > 10);
	same_calltree(a, b, queries[0]);
}

static void both(struct prof_profile *p, struct rd_model **a, struct rd_model **b)
{
	assert_non_null(*a = rd_model_new(p));
	assert_non_null(*b = rd_model_new_copied(p));
}

/* Random stacks over two cores' halves: shared prefixes, recursion,
 * kernel frames named like user ones (so functions are not frames one to
 * one) and a function that holds most of the time. */
static void test_random(void **state)
{
	static const char *const q[] = { "f1.*", "hot", "^f2$,f3", "xyzzy" };
	struct text t = { 0 };
	struct rd_model *a, *b;
	struct prof_profile *p;
	uint64_t s = 4242;

	(void)state;
	for (int i = 0; i < 15000; i++) {
		int n = 2 + (int)((s = s * 6364136223846793005ull + 1) >> 60);

		put(&t, "p%d;main", (int)(s >> 62));
		for (int j = 0; j < n; j++) {
			s = s * 6364136223846793005ull + 1;
			put(&t, ";f%d%s", (int)(s >> 54) % (j < 3 ? 40 : 9000),
			    (s >> 20) % 11 == 0 ? "_[k]" : "");
		}
		put(&t, "%s %d\n", i % 3 ? "" : ";hot;memcpy_[k]", 1 + (int)((s >> 40) % 9));
	}
	p = load(&t);
	both(p, &a, &b);
	assert_true(65536 <= a->tree.n); /* summed in two halves */
	assert_true(a->tree.fn_of != NULL);
	same_models(a, b, q, 4);
	rd_model_free(a);
	rd_model_free(b);
	prof_free(p);
}

/* A recursive chain 60,000 deep, cut by the halves' boundary, beside a
 * flat part; the chain's function holds most of the time, with a main
 * callee (the answer's second walk). */
static void test_deep_chain(void **state)
{
	static const char *const q[] = { "^r$", "leaf" };
	struct text t = { 0 };
	struct rd_model *a, *b;
	struct prof_profile *p;
	uint32_t r = 0;

	(void)state;
	put(&t, "p0;main");
	for (int i = 0; i < 60000; i++)
		put(&t, ";r");
	put(&t, ";leaf 300000\np0;main");
	for (int i = 0; i < 45000; i++)
		put(&t, ";r");
	put(&t, " 500000\np0;main");
	for (int i = 0; i < 30000; i++)
		put(&t, ";r");
	put(&t, ";other 100000\n");
	for (int i = 0; i < 20000; i++)
		put(&t, "p1;g%d 1\n", i);
	p = load(&t);
	both(p, &a, &b);
	/* The second half starts inside the chain, between the branches. */
	assert_true(30000 < a->tree.n / 2 && a->tree.n / 2 < 45000);
	same_models(a, b, q, 2);
	for (uint32_t f = 1; f < a->nfn; f++)
		if (!strcmp(rd_model_fn_name(a, f), "r"))
			r = f;
	assert_true(r != 0);
	assert_true(a->fns[r].total == 900000);
	assert_true(a->fns[r].self == 500000);
	assert_true(a->fns[r].own == 500000);
	assert_int_equal(a->fns[r].nodes, 60000);
	/* r: 900,000 of 920,000; leaf, its largest direct callee: 300,000. */
	assert_string_equal(a->answer, "98% of CPU time was in r, mostly inside "
			    "leaf (33%).");
	rd_model_free(a);
	rd_model_free(b);
	prof_free(p);
}

/* A node with 100,000 children: the model keeps its list, and the tree
 * without lists (built alone) lays out the same. */
static void test_many_children(void **state)
{
	static const char *const q[] = { "g9999", "g1" };
	struct text t = { 0 };
	struct rd_model *a, *b;
	struct prof_profile *p;
	struct rd_tree bare;
	struct rd_kids k;
	uint32_t n = 0;

	(void)state;
	for (int i = 0; i < 100000; i++)
		put(&t, "p0;main;g%d%s %d\n", i, i % 10 ? "" : ";h", i % 1000 ? 1 : 5000);
	put(&t, "p1;main 7\n");
	p = load(&t);
	both(p, &a, &b);
	assert_true(a->tree.nbig >= 1);
	/* main's children from its list, in order. */
	for (rd_kids_start(&k, &a->tree, 2); rd_kids_next(&k); n++)
		assert_true(k.total == rd_tree_total(&a->tree, k.at));
	assert_int_equal(n, 100000);
	assert_int_equal(rd_tree_big(&a->tree, 2), 0);
	same_models(a, b, q, 2);
	assert_int_equal(rd_tree_build(&bare, p), 0);
	assert_int_equal(bare.nbig, 0);
	assert_true(same_layouts(&a->tree, &bare) > 10);
	rd_tree_free(&bare);
	rd_model_free(a);
	rd_model_free(b);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_deep_chain),
		cmocka_unit_test(test_many_children),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
