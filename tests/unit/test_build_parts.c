/* SPDX-License-Identifier: MIT */
/*
 * The tree built in two parts on two threads (prof_build_cut(), sorted
 * sibling order) must equal the one built in one part node by node:
 * same ids, frames, parents, links, totals and selves, wherever the cut
 * falls (inside a shared prefix, at a process's first stack, inside equal
 * stacks, in a deep recursion, among 100,000 siblings). The one-part tree
 * must equal the one made stack by stack with lookups, sorted. The stacks'
 * sort (sort_paths()) must give each stack its length and the frames it
 * shares with the one before. Frames ranked ahead give the same tree.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "profile/sort_impl.h"

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Queued stacks as the parser hands them to prof_build(). */
struct queue {
	uint32_t *rec;
	size_t len, cap, n;
};

static void push(struct queue *q, const uint32_t *frames, size_t n,
		 uint64_t value)
{
	if (q->cap < q->len + n + 3) {
		q->cap = 2 * (q->len + n + 3);
		q->rec = realloc(q->rec, q->cap * sizeof(*q->rec));
		assert_non_null(q->rec);
	}
	q->rec[q->len++] = (uint32_t)n;
	q->rec[q->len++] = (uint32_t)value;
	q->rec[q->len++] = (uint32_t)(value >> 32);
	memcpy(q->rec + q->len, frames, n * sizeof(*frames));
	q->len += n;
	q->n++;
}

/* A profile with @nframes frames (ids 1..nframes) whose names sort in
 * another order than their ids: "f" then the id's digits reversed. */
static struct prof_profile *frames_profile(uint32_t nframes)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);

	assert_non_null(p);
	for (uint32_t i = 1; i <= nframes; i++) {
		struct prof_frame f = { 0 };
		char name[32], digits[16];
		int len = snprintf(digits, sizeof(digits), "%u", i);

		name[0] = 'f';
		for (int k = 0; k < len; k++)
			name[1 + k] = digits[len - 1 - k];
		name[1 + len] = '\0';
		f.name = prof_intern_cstr(p, name);
		assert_int_equal(prof_frame_intern(p, &f), i);
	}
	return p;
}

static struct prof_profile *built(uint32_t nframes, const struct queue *q,
				  int in_order, size_t cut)
{
	struct prof_profile *p = frames_profile(nframes);

	assert_int_equal(prof_build_cut(p, q->rec, q->len, q->n, in_order, cut, NULL), 0);
	return p;
}

/* The reference: every stack added with lookups, then sorted. */
static struct prof_profile *by_lookups(uint32_t nframes, const struct queue *q)
{
	struct prof_profile *p = frames_profile(nframes);

	for (size_t o = 0; o < q->len; o += 3 + q->rec[o]) {
		uint64_t v = (uint64_t)q->rec[o + 2] << 32 | q->rec[o + 1];

		assert_int_not_equal(prof_add_stack(p, q->rec + o + 3, q->rec[o], v),
				     UINT32_MAX);
	}
	assert_int_equal(prof_sort(p), 0);
	return p;
}

/* Asserts two node arrays are the same, field by field. */
static void assert_same_nodes(const struct prof_profile *a,
			      const struct prof_profile *b)
{
	const struct prof_node *x = prof_nodes(a), *y = prof_nodes(b);

	assert_int_equal(prof_node_count(a), prof_node_count(b));
	for (uint32_t i = 0; i < prof_node_count(a); i++) {
		assert_int_equal(x[i].frame, y[i].frame);
		assert_int_equal(x[i].parent, y[i].parent);
		assert_int_equal(x[i].child, y[i].child);
		assert_int_equal(x[i].sibling, y[i].sibling);
		assert_true(x[i].total == y[i].total);
		assert_true(x[i].self == y[i].self);
	}
}

/* Asserts @a and @b are the same tree (frames, values, sibling order),
 * walking both in preorder without recursion (trees may be deep). */
static void assert_same_tree(const struct prof_profile *a,
			     const struct prof_profile *b)
{
	uint32_t x = 0, y = 0, seen = 0;

	assert_int_equal(prof_node_count(a), prof_node_count(b));
	for (;;) {
		const struct prof_node *nx = prof_node_get(a, x);
		const struct prof_node *ny = prof_node_get(b, y);

		assert_int_equal(nx->frame, ny->frame);
		assert_true(nx->total == ny->total);
		assert_true(nx->self == ny->self);
		seen++;
		assert_int_equal(!nx->child, !ny->child);
		if (nx->child) {
			x = nx->child;
			y = ny->child;
			continue;
		}
		while (x && !prof_node_get(a, x)->sibling) {
			assert_int_equal(!!prof_node_get(b, y)->sibling, 0);
			x = prof_node_get(a, x)->parent;
			y = prof_node_get(b, y)->parent;
		}
		if (!x)
			break;
		assert_int_not_equal(prof_node_get(b, y)->sibling, 0);
		x = prof_node_get(a, x)->sibling;
		y = prof_node_get(b, y)->sibling;
	}
	assert_int_equal(seen, prof_node_count(a));
}

/* Builds @q in one part and cut at each of @cuts (0-terminated), and
 * checks every cut's nodes against the one part's, and the one part's
 * tree against the lookups' (with @ref). */
static void check_cuts(uint32_t nframes, const struct queue *q,
		       const size_t *cuts, int ref)
{
	struct prof_profile *one = built(nframes, q, 1, 0);

	assert_int_equal(prof_ids_preorder(one), 0 < prof_node_count(one));
	if (ref) {
		struct prof_profile *r = by_lookups(nframes, q);

		assert_same_tree(one, r);
		prof_free(r);
	}
	for (size_t i = 0; cuts[i]; i++) {
		struct prof_profile *two = built(nframes, q, 1, cuts[i]);

		assert_same_nodes(one, two);
		assert_int_equal(prof_sort(two), 0);
		assert_same_nodes(one, two);
		prof_free(two);
	}
	prof_free(one);
}

/* Builds @q cut at every stack. */
static void check_every_cut(uint32_t nframes, const struct queue *q)
{
	size_t *cuts = calloc(q->n + 1, sizeof(*cuts));

	assert_non_null(cuts);
	for (size_t i = 1; i < q->n; i++)
		cuts[i - 1] = i;
	check_cuts(nframes, q, cuts, 1);
	free(cuts);
}

/* Random stacks over few frames, so they share prefixes and repeat, with
 * a few processes (first frames) and values that saturate now and then. */
static void test_random_every_cut(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (int round = 0; round < 40; round++) {
		struct queue q = { 0 };
		size_t lines = 1 + (size_t)(rng(&s) % 80);
		uint32_t nframes = 2 + (uint32_t)(rng(&s) % 12), fr[16];

		for (size_t i = 0; i < lines; i++) {
			size_t n = 1 + (size_t)(rng(&s) % 12);
			uint64_t v = rng(&s) % 9 == 0 ? UINT64_MAX / 3 : rng(&s) % 100;

			for (size_t j = 0; j < n; j++)
				fr[j] = j == 0 ? 1 + (uint32_t)(rng(&s) % (nframes < 3 ? nframes : 3))
				      : 1 + (uint32_t)(rng(&s) % nframes);
			push(&q, fr, n, v);
			if (rng(&s) % 5 == 0) /* the same stack again */
				push(&q, fr, n, rng(&s) % 7);
		}
		check_every_cut(nframes, &q);
		free(q.rec);
	}
}

/* The cut falls inside a long shared prefix, among equal stacks, at a
 * process's first stack and between a stack and the ones it leads to. */
static void test_cut_places(void **state)
{
	struct queue q = { 0 };
	uint32_t shared[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, fr[12];

	(void)state;
	for (uint32_t i = 0; i < 6; i++) {
		memcpy(fr, shared, sizeof(shared));
		fr[8] = 9 + i;
		push(&q, fr, 9, 1 + i);
	}
	for (int i = 0; i < 5; i++)
		push(&q, shared, 8, 10);       /* equal stacks */
	push(&q, shared, 3, 7);                /* a stack others lead to */
	fr[0] = 20;                            /* another process */
	fr[1] = 2;
	push(&q, fr, 2, 5);
	push(&q, fr, 1, 5);
	fr[0] = 21;
	push(&q, fr, 1, 1);
	check_every_cut(21, &q);
	free(q.rec);
}

/* One and two stacks; a cut past the stacks or with the input's sibling
 * order is ignored. */
static void test_few_stacks(void **state)
{
	struct queue q = { 0 };
	uint32_t a[] = { 2, 1 }, b[] = { 1, 2 };
	size_t cuts[] = { 1, 5, 0 };
	struct prof_profile *x, *y;

	(void)state;
	push(&q, a, 2, 3);
	check_cuts(2, &q, cuts, 1);
	push(&q, b, 2, 4);
	check_cuts(2, &q, cuts, 1);
	push(&q, b, 1, 4);
	x = built(2, &q, 0, 0);
	y = built(2, &q, 0, 2);
	assert_same_nodes(x, y);
	prof_free(x);
	prof_free(y);
	free(q.rec);
}

/* One process whose every stack goes through the same two frames: the
 * second part shares the root's only child and its child. */
static void test_one_big_process(void **state)
{
	struct queue q = { 0 };
	uint64_t s = 42;
	uint32_t fr[10];
	size_t cuts[] = { 1, 250, 1000, 1999, 0 };

	(void)state;
	for (int i = 0; i < 2000; i++) {
		size_t n = 3 + (size_t)(rng(&s) % 7);

		fr[0] = 1;
		fr[1] = 2;
		for (size_t j = 2; j < n; j++)
			fr[j] = 3 + (uint32_t)(rng(&s) % 40);
		push(&q, fr, n, 1 + rng(&s) % 3);
	}
	check_cuts(42, &q, cuts, 1);
	free(q.rec);
}

/* A recursion 60,000 frames deep, with stacks leaving it at several
 * depths; the cut falls inside it. */
static void test_deep_recursion(void **state)
{
	enum { DEEP = 60000 };
	struct queue q = { 0 };
	uint32_t *fr = malloc((DEEP + 1) * sizeof(*fr));
	size_t cuts[] = { 1, 2, 3, 4, 5, 6, 0 };

	(void)state;
	assert_non_null(fr);
	for (size_t j = 0; j < DEEP; j++)
		fr[j] = 1;
	push(&q, fr, DEEP, 5);
	fr[DEEP] = 2;
	push(&q, fr, DEEP + 1, 6);
	fr[30000] = 3;
	push(&q, fr, 30001, 7);
	push(&q, fr, DEEP, 8);
	fr[30000] = 1;
	push(&q, fr, DEEP, 9);
	fr[59999] = 2;
	push(&q, fr, DEEP, 10);
	push(&q, fr, 2, 11);
	check_cuts(3, &q, cuts, 1);
	free(q.rec);
	free(fr);
}

/* One node with 100,000 children: cut among them, and where prof_build()
 * cuts on its own (enough stacks for two parts), with memory lent for the
 * sort (holding garbage; and one byte too small, so it is not used). */
static void test_many_children(void **state)
{
	enum { KIDS = 100000 };
	struct queue q = { 0 };
	uint32_t fr[2] = { 1, 0 };
	size_t cuts[] = { 1, KIDS / 2, KIDS - 1, BUILD_CUT_AUTO, 0 };
	size_t need = 2 * (size_t)KIDS * 16;
	struct prof_scratch lend = { malloc(need), need, NULL };
	struct prof_profile *one, *auto_;

	(void)state;
	assert_non_null(lend.mem);
	for (uint32_t i = 0; i < KIDS; i++) {
		fr[1] = 2 + (i * 7919u) % KIDS;
		push(&q, fr, 2, 1 + i % 5);
	}
	check_cuts(KIDS + 1, &q, cuts, 1);
	one = built(KIDS + 1, &q, 1, 0);
	for (int round = 0; round < 3; round++) {
		lend.bytes = need - (round == 2);
		memset(lend.mem, 0xa5, need);
		auto_ = frames_profile(KIDS + 1);
		assert_int_equal(prof_build_cut(auto_, q.rec, q.len, q.n, 1,
						BUILD_CUT_AUTO, round ? &lend : NULL), 0);
		assert_same_nodes(one, auto_);
		/* Used when it holds both arrays: the sort wrote over it. */
		assert_int_equal(((unsigned char *)lend.mem)[need - 1] == 0xa5,
				 round != 1);
		prof_free(auto_);
	}
	prof_free(one);
	free(lend.mem);
	free(q.rec);
}

/* A bigger random load cut where prof_build() cuts (BUILD_CUT_AUTO) and a few elsewhere. */
static void test_big_random(void **state)
{
	struct queue q = { 0 };
	uint64_t s = 7;
	uint32_t fr[24];
	size_t cuts[] = { BUILD_CUT_AUTO, 1, 12345, 39999, 0 };

	(void)state;
	for (int i = 0; i < 40000; i++) {
		size_t n = 1 + (size_t)(rng(&s) % 24);

		fr[0] = 1 + (uint32_t)(rng(&s) % 4);
		for (size_t j = 1; j < n; j++)
			fr[j] = 5 + (uint32_t)(rng(&s) % (j < 4 ? 6 : 3000));
		push(&q, fr, n, rng(&s) % 1000);
	}
	check_cuts(3004, &q, cuts, 1);
	free(q.rec);
}

/* Stacks of random frames as records; sort_paths() puts them in rank
 * order, each key holding the frames shared with the stack before and
 * the stack's length, with the first key's depths 0 and 1 by rank or by
 * code (few frames there, so more fit in the key). */
static void test_sort_paths_shared(void **state)
{
	uint64_t s = 0x1234567ull;

	(void)state;
	for (int round = 0; round < 30; round++) {
		struct queue q = { 0 };
		uint32_t nframes = 1 + (uint32_t)(rng(&s) % (round < 15 ? 4 : 5000));
		uint32_t *rank = malloc((nframes + 1) * sizeof(*rank)), fr[40];
		size_t lines = 1 + (size_t)(rng(&s) % 3000);
		struct kv *a, *tmp;

		assert_non_null(rank);
		rank[0] = 0;
		for (uint32_t f = 1; f <= nframes; f++)
			rank[f] = f;
		for (uint32_t f = nframes; 1 < f; f--) { /* ranks shuffled */
			uint32_t g = 1 + (uint32_t)(rng(&s) % f), t = rank[f];

			rank[f] = rank[g];
			rank[g] = t;
		}
		for (size_t i = 0; i < lines; i++) {
			size_t n = (size_t)(rng(&s) % 40);

			for (size_t j = 0; j < n; j++)
				fr[j] = 1 + (uint32_t)(rng(&s) % (j < 3 && 1 < nframes ? 2 : nframes));
			push(&q, fr, n, 0);
		}
		a = malloc(q.n * sizeof(*a));
		tmp = malloc(q.n * sizeof(*tmp));
		assert_non_null(a);
		assert_non_null(tmp);
		/* Every third item says its frame count is past what a val
		 * holds: the sort reads it from the record then. */
		for (size_t i = 0, o = 0; i < q.n; o += 3 + q.rec[o], i++)
			a[i].val = kv_path(o, i % 3 ? q.rec[o] : UINT32_MAX);
		if (round % 2) {
			assert_int_equal(sort_paths(q.rec, rank, nframes, NULL, a,
						    tmp, q.n, NULL), 0);
		} else {
			uint32_t *by_rank = malloc(5 * ((size_t)nframes + 1) * sizeof(*by_rank));
			uint8_t *seen = calloc(2 * ((size_t)nframes + 1), 1);
			struct path_codes c;

			assert_non_null(by_rank);
			assert_non_null(seen);
			for (uint32_t f = 0; f <= nframes; f++)
				by_rank[rank[f]] = f;
			for (size_t i = 0; i < q.n; i++) {
				const uint32_t *r = q.rec + kv_rec(a[i].val);

				for (uint32_t d = 0; d < 2 && d < r[0]; d++)
					seen[d * (nframes + 1) + r[3 + d]] = 1;
			}
			for (int d = 0; d < 2; d++) {
				uint32_t *code = by_rank + (2 + d) * ((size_t)nframes + 1);

				c.count[d] = sort_frame_codes(seen + d * (nframes + 1),
							      by_rank, nframes + 1, code);
				c.code[d] = code;
			}
			assert_int_equal(sort_paths(q.rec, rank, nframes, &c, a, tmp,
						    q.n, NULL), 0);
			free(by_rank);
			free(seen);
		}
		assert_int_equal((uint32_t)a[0].key, 0);
		assert_int_equal(a[0].key >> 32, q.rec[kv_rec(a[0].val)]);
		for (size_t i = 1; i < q.n; i++) {
			const uint32_t *x = q.rec + kv_rec(a[i - 1].val);
			const uint32_t *y = q.rec + kv_rec(a[i].val);
			size_t k = 0;

			while (k < x[0] && k < y[0] && x[3 + k] == y[3 + k])
				k++;
			assert_int_equal((uint32_t)a[i].key, k);
			assert_int_equal(a[i].key >> 32, y[0]);
			/* In order: x ends there, or its next rank is smaller. */
			assert_true(k == x[0] ||
				    (k < y[0] && rank[x[3 + k]] < rank[y[3 + k]]));
		}
		free(a);
		free(tmp);
		free(rank);
		free(q.rec);
	}
}

/* Frames ranked ahead (prof_ranks_start()) and lent to prof_build() give
 * the tree it makes ranking them itself; ranks of another profile are
 * not used, nor are ranks for too few stacks started; ranks lent to a
 * build that fails, or never lent, are freed (the sanitizer's leak check
 * tells). */
static void test_ranks_ahead(void **state)
{
	struct queue q = { 0 };
	uint64_t s = 11;
	uint32_t fr[20];
	struct prof_profile *ref, *p, *other;
	struct prof_scratch lend = { NULL, 0, NULL };

	(void)state;
	for (int i = 0; i < 30000; i++) {
		size_t n = 1 + (size_t)(rng(&s) % 20);

		fr[0] = 1 + (uint32_t)(rng(&s) % 3);
		for (size_t j = 1; j < n; j++)
			fr[j] = 4 + (uint32_t)(rng(&s) % 2000);
		push(&q, fr, n, 1 + rng(&s) % 100);
	}
	ref = built(2003, &q, 1, 0);

	p = frames_profile(2003);
	assert_null(prof_ranks_start(p, 100));
	lend.ranks = prof_ranks_start(p, q.n);
	assert_non_null(lend.ranks);
	assert_int_equal(prof_build(p, q.rec, q.len, q.n, 1, &lend), 0);
	assert_same_nodes(ref, p);

	/* Ranks of another profile (as many frames, ranked otherwise: the
	 * tree would differ with them) lent to a build. */
	other = prof_new(PROF_UNIT_SAMPLES);
	assert_non_null(other);
	for (uint32_t i = 1; i <= 2003; i++) {
		struct prof_frame f = { 0 };
		char name[16];

		snprintf(name, sizeof(name), "z%05u", 2004 - i);
		f.name = prof_intern_cstr(other, name);
		assert_int_equal(prof_frame_intern(other, &f), i);
	}
	prof_free(p);
	p = frames_profile(2003);
	lend.ranks = prof_ranks_start(other, q.n);
	assert_non_null(lend.ranks);
	assert_int_equal(prof_build(p, q.rec, q.len, q.n, 1, &lend), 0);
	assert_same_nodes(ref, p);

	/* A build that cannot start (a tree there already), and ranks
	 * never lent. */
	lend.ranks = prof_ranks_start(p, q.n);
	assert_int_equal(prof_build(p, q.rec, q.len, q.n, 1, &lend), -EINVAL);
	prof_ranks_free(prof_ranks_start(other, q.n));
	prof_ranks_free(NULL);
	prof_free(other);
	prof_free(p);
	prof_free(ref);
	free(q.rec);
}

/* sort_kv() of many items (split by their top bits first) and of few:
 * keys in order, equal keys in their first order, whatever bits vary. */
static void test_sort_kv(void **state)
{
	static const uint64_t masks[] = { ~0ull, 0xffull, 0xff00000000000000ull,
					  0x3ffff00000ull, 0x8000000000000001ull };
	const size_t sizes[] = { 1, 63, 64, 1000, 65535, 65536, 200000 };
	uint64_t s = 99;

	(void)state;
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
			size_t n = sizes[z];
			struct kv *a = malloc(n * sizeof(*a));
			struct kv *tmp = malloc(n * sizeof(*tmp));

			assert_non_null(a);
			assert_non_null(tmp);
			for (size_t i = 0; i < n; i++)
				a[i] = (struct kv){ rng(&s) & masks[m], i };
			sort_kv(a, tmp, n);
			for (size_t i = 1; i < n; i++) {
				assert_true(a[i - 1].key <= a[i].key);
				if (a[i - 1].key == a[i].key)
					assert_true(a[i - 1].val < a[i].val);
			}
			free(a);
			free(tmp);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_every_cut),
		cmocka_unit_test(test_cut_places),
		cmocka_unit_test(test_few_stacks),
		cmocka_unit_test(test_one_big_process),
		cmocka_unit_test(test_deep_recursion),
		cmocka_unit_test(test_many_children),
		cmocka_unit_test(test_big_random),
		cmocka_unit_test(test_sort_paths_shared),
		cmocka_unit_test(test_ranks_ahead),
		cmocka_unit_test(test_sort_kv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
