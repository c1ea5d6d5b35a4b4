/* SPDX-License-Identifier: MIT */
/* The model's sums (render/model_sums.c) against sums made the slow way,
 * node by node up the parent links: each function's self, total counted
 * once through recursion, node count and own share, the class and
 * language sums; the children lists the walk keeps against the sibling
 * links; on one thread and on two, in place and copied, with functions
 * one per frame or shared by frames. Also the candidates' bits and the
 * cards' order. */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"
#include "render/model.h"
#include "render/model_sums.h"
#include "render/tree.h"

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* The function of frame @fr in @m, found by name (function 0: the root). */
static uint32_t fn_by_name(const struct rd_model *m, const uint32_t *name_fn,
			   uint32_t fr)
{
	const struct prof_frame *f = prof_frame_get(m->p, fr);
	uint32_t nstr = prof_str_count(m->p);

	if (!fr)
		return 0;
	return name_fn[f && f->name < nstr ? f->name : 0];
}

/* The functions are one per name, numbered by their first frames. */
static uint32_t *check_functions(const struct rd_model *m)
{
	uint32_t nstr = prof_str_count(m->p), nfr = prof_frame_count(m->p);
	uint32_t *name_fn = calloc(nstr, sizeof(*name_fn)), next = 1;

	assert_non_null(name_fn);
	for (uint32_t fr = 1; fr < nfr; fr++) {
		const struct prof_frame *f = prof_frame_get(m->p, fr);
		uint32_t name = f->name < nstr ? f->name : 0;

		if (name_fn[name])
			continue;
		assert_true(next < m->nfn);
		assert_int_equal(m->fns[next].frame, fr);
		assert_int_equal(m->fns[next].name, name);
		name_fn[name] = next++;
	}
	assert_int_equal(next, m->nfn);
	return name_fn;
}

/* Every sum of @m against the same sums made node by node. */
static void check_sums(const struct rd_model *m)
{
	const struct prof_profile *p = m->p;
	const struct prof_node *nd = prof_nodes(p);
	uint32_t n = prof_node_count(p), *name_fn = check_functions(m);
	uint32_t nf = m->nfn, *nodes = calloc(nf, sizeof(*nodes));
	uint64_t *self = calloc(nf, 8), *total = calloc(nf, 8);
	uint64_t *own_y = calloc(nf, 8), *own_a = calloc(nf, 8), sum_y = 0;
	uint64_t cls[PROF_CLASS_COUNT] = { 0 }, lang[PROF_LANG_COUNT] = { 0 };
	unsigned *bits = calloc(nf, sizeof(*bits));

	assert_true(nodes && self && total && own_y && own_a && bits);
	for (uint32_t f = 1; f < nf; f++)
		bits[f] = rd_answer_frame_bits(p, m->fns[f].frame);
	for (uint32_t v = 1; v < n; v++) {
		uint32_t f = fn_by_name(m, name_fn, nd[v].frame), a;
		const struct prof_frame *fr = prof_frame_get(p, nd[v].frame);
		int counted = 1, y = 0, any = 0;

		self[f] += nd[v].self;
		nodes[f]++;
		cls[rd_frame_class(fr)] += nd[v].self;
		lang[fr->lang < PROF_LANG_COUNT ? fr->lang : 0] += nd[v].self;
		for (a = nd[v].parent; a; a = nd[a].parent)
			counted &= fn_by_name(m, name_fn, nd[a].frame) != f;
		total[f] += counted ? nd[v].total : 0;
		for (a = v; a && !(y && any); a = nd[a].parent) {
			uint32_t g = fn_by_name(m, name_fn, nd[a].frame);

			if (!y && (bits[g] & 1)) {
				own_y[g] += nd[v].self;
				y = 1;
			}
			if (!any && (bits[g] & 2)) {
				own_a[g] += nd[v].self;
				any = 1;
			}
		}
	}
	for (uint32_t f = 0; f < nf; f++)
		sum_y += own_y[f];
	assert_int_equal(m->yours, m->total && sum_y * 20 >= m->total);
	for (uint32_t f = 1; f < nf; f++) {
		assert_true(m->fns[f].self == self[f]);
		assert_true(m->fns[f].total == total[f]);
		assert_int_equal(m->fns[f].nodes, nodes[f]);
		assert_true(m->fns[f].own == (m->yours ? own_y[f] : own_a[f]));
	}
	assert_memory_equal(m->class_self, cls, sizeof(cls));
	assert_memory_equal(m->lang_self, lang, sizeof(lang));
	free(name_fn);
	free(nodes);
	free(self);
	free(total);
	free(own_y);
	free(own_a);
	free(bits);
}

/* The kept children lists are the sibling links' (totals too); every
 * node with 64 children or more has one. Returns how many children the
 * lists hold. */
static uint32_t check_lists(const struct rd_tree *t)
{
	uint32_t listed = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t b = rd_tree_big(t, i), k = 0;

		for (uint32_t c = rd_tree_child(t, i); c; c = rd_tree_next(t, c), k++) {
			if (b == UINT32_MAX)
				continue;
			assert_true(t->kid_off[b] + k < t->kid_off[b + 1]);
			assert_int_equal(t->kid[t->kid_off[b] + k], c);
			assert_true(t->kid_total[t->kid_off[b] + k] == rd_tree_total(t, c));
		}
		if (b != UINT32_MAX) {
			assert_int_equal(t->kid_off[b] + k, t->kid_off[b + 1]);
			listed += k;
		} else {
			assert_true(k < 64);
		}
	}
	return listed;
}

/* Frames named from a small pool, some in the kernel with user names (so
 * frames are not functions one to one), classes mixed, recursion. */
static uint32_t pool_frame(struct prof_profile *p, uint64_t *s, int shared)
{
	static const unsigned cls[] = { PROF_CLASS_YOURS, PROF_CLASS_LIBRARY,
					PROF_CLASS_SYSTEM, PROF_CLASS_WAITING,
					PROF_CLASS_UNKNOWN };
	struct prof_frame f = { 0 };
	char name[32];
	uint64_t r = rnd(s);

	snprintf(name, sizeof(name), r % 97 == 0 ? "lib.so+0x%x" : "f%u",
		 (unsigned)(r % 3000));
	f.name = prof_intern_cstr(p, name);
	f.cls = (uint8_t)cls[(r >> 12) % 5];
	f.kind = shared && (r >> 16) % 7 == 0 ? PROF_KIND_KERNEL : PROF_KIND_USER;
	f.lang = (uint8_t)((r >> 20) % PROF_LANG_COUNT);
	return prof_frame_intern(p, &f);
}

/* @stacks random stacks under two processes, built stack by stack (ids
 * not the preorder: the tree is copied). */
static struct prof_profile *random_profile(int stacks, int shared, uint64_t seed)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct prof_frame proc = { .kind = PROF_KIND_PROCESS };
	uint32_t ids[32];
	uint64_t s = seed;

	assert_non_null(p);
	for (int i = 0; i < stacks; i++) {
		size_t n = 1, depth = 3 + rnd(&s) % 20;

		proc.name = prof_intern_cstr(p, rnd(&s) % 2 ? "app" : "db");
		ids[0] = prof_frame_intern(p, &proc);
		for (; n < depth; n++)
			ids[n] = n < 3 && rnd(&s) % 2 ? ids[n - 1] : pool_frame(p, &s, shared);
		assert_int_not_equal(prof_add_stack(p, ids, n, 1 + rnd(&s) % 50),
				     UINT32_MAX);
	}
	return p;
}

static void check_model(struct prof_profile *p, int two)
{
	struct rd_model *m = rd_model_new(p);

	assert_non_null(m);
	assert_int_equal(RD_MODEL_SPLIT_MIN <= m->tree.n, two);
	check_sums(m);
	check_lists(&m->tree);
	rd_model_free(m);
	assert_non_null(m = rd_model_new_copied(p));
	check_sums(m);
	check_lists(&m->tree);
	rd_model_free(m);
}

static void test_random_two_threads(void **state)
{
	struct prof_profile *p = random_profile(9000, 1, 7);

	(void)state;
	check_model(p, 1);
	prof_free(p);
}

static void test_random_one_thread(void **state)
{
	struct prof_profile *p = random_profile(1500, 1, 11);

	(void)state;
	check_model(p, 0);
	prof_free(p);
}

/* A folded text written through a stream, then parsed in bulk (node ids
 * are the preorder, the tree is read in place). */
struct text {
	FILE *f;
	char *s;
	size_t len;
};

static void text_open(struct text *t)
{
	assert_non_null(t->f = open_memstream(&t->s, &t->len));
}

static struct prof_profile *text_profile(struct text *t)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_int_equal(fclose(t->f), 0);
	assert_non_null(p);
	assert_int_equal(prof_folded_parse_sorted(p, t->s, t->len, 1, err,
						  sizeof(err)), 0);
	assert_int_equal(prof_ids_preorder(p), 1);
	free(t->s);
	return p;
}

/* Bulk-loaded (read in place) with every name its own function, and with
 * kernel frames sharing user names. */
static void test_folded(void **state)
{
	for (int shared = 0; shared < 2; shared++) {
		struct text t = { 0 };
		struct prof_profile *p;
		struct rd_model *m;
		uint64_t s = 99 + (uint64_t)shared;

		(void)state;
		text_open(&t);
		for (int i = 0; i < 12000; i++) {
			int n = 2 + (int)(rnd(&s) % 14);

			fprintf(t.f, "p%d;main", (int)(rnd(&s) % 3));
			for (int j = 0; j < n; j++)
				fprintf(t.f, ";f%d%s", (int)(rnd(&s) % (j < 3 ? 30 : 5000)),
					shared && rnd(&s) % 9 == 0 ? "_[k]" : "");
			fprintf(t.f, " %d\n", 1 + (int)(rnd(&s) % 9));
		}
		p = text_profile(&t);
		assert_non_null(m = rd_model_new(p));
		assert_true(RD_MODEL_SPLIT_MIN <= m->tree.n);
		assert_int_equal(m->tree.fn_of != NULL, shared);
		check_sums(m);
		check_lists(&m->tree);
		rd_model_free(m);
		prof_free(p);
	}
}

/* Nodes with many children on both sides of the halves' boundary, one
 * inside another's subtree, and ones with 32 to 63 children in a half:
 * the lists the walk keeps are the links'. */
static void test_lists(void **state)
{
	struct text t = { 0 };
	struct prof_profile *p;
	struct rd_model *m;

	(void)state;
	text_open(&t);
	for (int i = 0; i < 33000; i++)
		fprintf(t.f, "p0;main;g%05d;x %d\n", i, 1 + i % 5);
	for (int i = 0; i < 200; i++)
		fprintf(t.f, "p0;main;g16500;h%03d %d\n", i, 1 + i % 3);
	for (int i = 0; i < 40; i++)
		fprintf(t.f, "p0;main;g32990;k%02d 1\n", i);
	for (int i = 0; i < 300; i++)
		fprintf(t.f, "p1;w%03d 2\n", i);
	p = text_profile(&t);
	assert_non_null(m = rd_model_new(p));
	assert_true(RD_MODEL_SPLIT_MIN <= m->tree.n);
	/* main (crossing the boundary), g16500 and p1 are listed, with
	 * every child. */
	assert_true(33000 + 201 + 300 <= check_lists(&m->tree));
	assert_true(rd_tree_big(&m->tree, 2) != UINT32_MAX);
	check_sums(m);
	rd_model_free(m);
	prof_free(p);
}

static uint32_t frame(struct prof_profile *p, const char *name, unsigned kind,
		      unsigned cls)
{
	struct prof_frame f = { .kind = (uint8_t)kind, .cls = (uint8_t)cls };

	f.name = prof_intern_cstr(p, name);
	return prof_frame_intern(p, &f);
}

static void test_frame_bits(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);

	(void)state;
	assert_non_null(p);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "main", PROF_KIND_USER,
							PROF_CLASS_YOURS)), 3);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "memcpy", PROF_KIND_USER,
							PROF_CLASS_LIBRARY)), 2);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "read", PROF_KIND_USER,
							PROF_CLASS_SYSTEM)), 0);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "poll", PROF_KIND_USER,
							PROF_CLASS_WAITING)), 0);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "schedule", PROF_KIND_KERNEL,
							PROF_CLASS_UNKNOWN)), 0);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "kfn", PROF_KIND_KERNEL,
							PROF_CLASS_YOURS)), 1);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "app", PROF_KIND_PROCESS,
							PROF_CLASS_YOURS)), 0);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "t1", PROF_KIND_THREAD,
							PROF_CLASS_YOURS)), 0);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "[unknown]", PROF_KIND_USER,
							PROF_CLASS_YOURS)), 0);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "libx.so+0x1f0", PROF_KIND_USER,
							PROF_CLASS_LIBRARY)), 4);
	/* Not "module+0xHEX": no module, no digits, not hex. */
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "+0x10", PROF_KIND_USER,
							PROF_CLASS_LIBRARY)), 2);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "a+0x", PROF_KIND_USER,
							PROF_CLASS_LIBRARY)), 2);
	assert_int_equal(rd_answer_frame_bits(p, frame(p, "a+0x1g", PROF_KIND_USER,
							PROF_CLASS_LIBRARY)), 2);
	assert_int_equal(rd_answer_frame_bits(p, prof_frame_count(p)), 0);
	prof_free(p);
}

static void stack(struct prof_profile *p, const char *a, const char *b,
		  unsigned cls, uint64_t v)
{
	uint32_t ids[3] = { frame(p, "app", PROF_KIND_PROCESS, 0),
			    frame(p, a, PROF_KIND_USER, PROF_CLASS_YOURS),
			    b ? frame(p, b, PROF_KIND_USER, cls) : 0 };

	assert_int_not_equal(prof_add_stack(p, ids, b ? 3 : 2, v), UINT32_MAX);
}

static const char *card(const struct rd_model *m, int c)
{
	return rd_model_fn_name(m, m->cards[c].fn);
}

/* Cards: the largest values first, a tie to the function listed first;
 * your code's cards by own share, then the rest by self, each function
 * once. */
static void test_cards(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_model *m;

	(void)state;
	assert_non_null(p);
	stack(p, "a", NULL, 0, 5);
	stack(p, "b", NULL, 0, 5);
	stack(p, "c", "lib1", PROF_CLASS_LIBRARY, 7);
	stack(p, "d", NULL, 0, 5);
	stack(p, "e", "lib2", PROF_CLASS_LIBRARY, 6);
	assert_non_null(m = rd_model_new(p));
	assert_true(m->yours);
	/* Own shares: c 7, e 6, then a, b and d 5 each. */
	assert_int_equal(m->ncards, 3);
	assert_string_equal(card(m, 0), "c");
	assert_string_equal(card(m, 1), "e");
	assert_string_equal(card(m, 2), "a");
	assert_true(m->cards[0].pct == 100.0 * 7 / 28);
	rd_model_free(m);
	prof_free(p);

	/* No code of yours: by self, ties to the first listed. */
	assert_non_null(p = prof_new(PROF_UNIT_SAMPLES));
	for (int i = 0; i < 5; i++) {
		uint32_t ids[2] = { frame(p, "app", PROF_KIND_PROCESS, 0), 0 };
		char name[8];

		snprintf(name, sizeof(name), "g%d", i);
		ids[1] = frame(p, name, PROF_KIND_USER, PROF_CLASS_LIBRARY);
		assert_int_not_equal(prof_add_stack(p, ids, 2, i == 3 ? 9 : 4),
				     UINT32_MAX);
	}
	assert_non_null(m = rd_model_new(p));
	assert_false(m->yours);
	assert_int_equal(m->ncards, 3);
	assert_string_equal(card(m, 0), "g3");
	assert_string_equal(card(m, 1), "g0");
	assert_string_equal(card(m, 2), "g1");
	rd_model_free(m);
	prof_free(p);
}

/* Two functions with the same largest share, listed first and last (so
 * added up by different threads): the answer and the first card name
 * the one listed first. */
static void test_tie_across_halves(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t app = frame(p, "app", PROF_KIND_PROCESS, 0), ids[2] = { app, 0 };
	uint32_t a = frame(p, "first", PROF_KIND_USER, PROF_CLASS_LIBRARY), b;
	struct rd_model *m;

	(void)state;
	for (int i = 0; i < 70000; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		ids[1] = frame(p, name, PROF_KIND_USER, PROF_CLASS_LIBRARY);
		assert_int_not_equal(prof_add_stack(p, ids, 2, 1), UINT32_MAX);
	}
	b = frame(p, "last", PROF_KIND_USER, PROF_CLASS_LIBRARY);
	ids[1] = b;
	assert_int_not_equal(prof_add_stack(p, ids, 2, 20000), UINT32_MAX);
	ids[1] = a;
	assert_int_not_equal(prof_add_stack(p, ids, 2, 20000), UINT32_MAX);
	assert_non_null(m = rd_model_new(p));
	assert_true(RD_MODEL_SPLIT_MIN <= m->tree.n);
	assert_false(m->yours);
	assert_non_null(strstr(m->answer, " in first."));
	assert_string_equal(card(m, 0), "first");
	assert_string_equal(card(m, 1), "last");
	check_sums(m);
	rd_model_free(m);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_two_threads),
		cmocka_unit_test(test_random_one_thread),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_frame_bits),
		cmocka_unit_test(test_cards),
		cmocka_unit_test(test_tie_across_halves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
