/* SPDX-License-Identifier: MIT */
/* The diff's union tree against a reference computed from paths: every
 * path of either side is one node, with that side's values and zero for
 * the other side, on random profiles shaped to reach every branch of the
 * merge (wide and narrow families, frames equal by name but not by
 * module or kind, sorted inputs, an empty side, values over 2^32). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/diff.h"
#include "profile/profile.h"

/* One node by its path: the frames' fields spelled out, root first. */
struct entry {
	char *key;
	uint32_t node;
	uint64_t total, self;
};

struct table {
	struct entry *e;
	size_t n;
};

static void key_add(char **key, size_t *len, const struct prof_profile *p,
		    uint32_t frame)
{
	const struct prof_frame *f = prof_frame_get(p, frame);
	char part[512];
	int k = snprintf(part, sizeof(part), "%s|%s|%s|%u|%u|%u|%u;",
			 prof_str(p, f->name), prof_str(p, f->module),
			 prof_str(p, f->file), f->line, f->kind, f->cls,
			 f->lang);

	assert_true(0 < k && (size_t)k < sizeof(part));
	*key = realloc(*key, *len + (size_t)k + 1);
	assert_non_null(*key);
	memcpy(*key + *len, part, (size_t)k + 1);
	*len += (size_t)k;
}

/* The path key of node @node (parents have smaller ids, so the parent's
 * key is already in @keys). */
static char *node_key(const struct prof_profile *p, char **keys, uint32_t node)
{
	const struct prof_node *n = prof_node_get(p, node);
	const char *parent = n->parent ? keys[n->parent] : "";
	size_t len = strlen(parent);
	char *key = malloc(len + 1);

	assert_non_null(key);
	memcpy(key, parent, len + 1);
	key_add(&key, &len, p, n->frame);
	return key;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->key,
		      ((const struct entry *)b)->key);
}

/* Every node but the root, by path, sorted. */
static struct table table_of(const struct prof_profile *p)
{
	uint32_t n = prof_node_count(p);
	char **keys = calloc(n, sizeof(*keys));
	struct table t = { calloc(n, sizeof(*t.e)), 0 };

	assert_non_null(keys);
	assert_non_null(t.e);
	for (uint32_t i = 1; i < n; i++) {
		const struct prof_node *nd = prof_node_get(p, i);

		keys[i] = node_key(p, keys, i);
		t.e[t.n++] = (struct entry){ keys[i], i, nd->total, nd->self };
	}
	free(keys);
	qsort(t.e, t.n, sizeof(*t.e), entry_cmp);
	return t;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].key);
	free(t->e);
}

static const struct entry *table_find(const struct table *t, const char *key)
{
	struct entry k = { .key = (char *)key };

	return bsearch(&k, t->e, t->n, sizeof(*t->e), entry_cmp);
}

/* Checks @d against @b and @a path by path. */
static void check_union(const struct prof_diff *d, const struct prof_profile *b,
			const struct prof_profile *a)
{
	const struct prof_profile *t = prof_diff_tree_const(d);
	struct table tb = table_of(b), ta = table_of(a), tu = table_of(t);
	struct prof_diff_values v = prof_diff_values(d, 0);
	size_t both = 0;

	assert_int_equal(v.before_total, prof_total(b));
	assert_int_equal(v.after_total, prof_total(a));
	assert_int_equal(v.before_self, prof_node_get(b, 0)->self);
	assert_int_equal(v.after_self, prof_node_get(a, 0)->self);
	assert_int_equal(prof_diff_total_before(d), prof_total(b));
	assert_int_equal(prof_diff_total_after(d), prof_total(a));
	for (size_t i = 0; i < tu.n; i++) {
		const struct entry *u = &tu.e[i];
		const struct entry *eb = table_find(&tb, u->key);
		const struct entry *ea = table_find(&ta, u->key);
		const struct prof_node *n = prof_node_get(t, u->node);

		/* One node per path, found on at least one side. */
		if (i)
			assert_true(strcmp(tu.e[i - 1].key, u->key) < 0);
		assert_true(eb || ea);
		both += eb && ea;
		v = prof_diff_values(d, u->node);
		assert_int_equal(v.before_total, eb ? eb->total : 0);
		assert_int_equal(v.before_self, eb ? eb->self : 0);
		assert_int_equal(v.after_total, ea ? ea->total : 0);
		assert_int_equal(v.after_self, ea ? ea->self : 0);
		assert_int_equal(n->total, v.before_total + v.after_total);
		assert_int_equal(n->self, v.before_self + v.after_self);
	}
	/* Every path of each side is in the union. */
	assert_int_equal(tu.n, tb.n + ta.n - both);
	table_free(&tb);
	table_free(&ta);
	table_free(&tu);
}

/* The children of every union node: after's in after's order, then
 * before's own in before's order (the order the merge documents). */
static void check_order(const struct prof_diff *d, const struct prof_profile *b,
			const struct prof_profile *a)
{
	const struct prof_profile *t = prof_diff_tree_const(d);
	struct table tb = table_of(b), ta = table_of(a), tu = table_of(t);
	uint32_t n = prof_node_count(t);
	uint32_t *tob = calloc(n, sizeof(*tob)), *toa = calloc(n, sizeof(*toa));
	uint8_t *matched = calloc(prof_node_count(b), 1);

	assert_non_null(tob);
	assert_non_null(toa);
	assert_non_null(matched);
	for (size_t i = 0; i < tu.n; i++) {
		const struct entry *eb = table_find(&tb, tu.e[i].key);
		const struct entry *ea = table_find(&ta, tu.e[i].key);

		tob[tu.e[i].node] = eb ? eb->node : 0;
		toa[tu.e[i].node] = ea ? ea->node : 0;
		if (eb && ea)
			matched[eb->node] = 1;
	}
	for (uint32_t u = 0; u < n; u++) {
		uint32_t c = prof_node_get(t, u)->child;
		uint32_t sa = u == 0 || toa[u] ? prof_node_get(a, toa[u])->child : 0;
		uint32_t sb = u == 0 || tob[u] ? prof_node_get(b, tob[u])->child : 0;

		for (; sa; sa = prof_node_get(a, sa)->sibling) {
			assert_int_not_equal(c, 0);
			assert_int_equal(toa[c], sa);
			c = prof_node_get(t, c)->sibling;
		}
		for (; sb; sb = prof_node_get(b, sb)->sibling) {
			if (matched[sb])
				continue;
			assert_int_not_equal(c, 0);
			assert_int_equal(tob[c], sb);
			assert_int_equal(toa[c], 0);
			c = prof_node_get(t, c)->sibling;
		}
		assert_int_equal(c, 0);
	}
	free(matched);
	free(tob);
	free(toa);
	table_free(&tb);
	table_free(&ta);
	table_free(&tu);
}

static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* A frame from a small pool: names f0..f<names-1>, some in a second
 * module or as kernel frames, so equal names are not always one frame. */
static uint32_t pool_frame(struct prof_profile *p, uint32_t *s, unsigned names)
{
	struct prof_frame f = { 0 };
	char name[16];
	unsigned r = rnd(s);

	snprintf(name, sizeof(name), "f%u", r % names);
	f.name = prof_intern_cstr(p, name);
	if (r / names % 7 == 0)
		f.module = prof_intern_cstr(p, "libother.so");
	if (r / names % 11 == 0)
		f.kind = PROF_KIND_KERNEL;
	return prof_frame_intern(p, &f);
}

/* @lines stacks: the first frame from @wide names (a wide family under
 * the root), the rest from @names, depth 1 to 9. */
static struct prof_profile *random_profile(enum prof_unit unit, uint32_t seed,
					   int lines, unsigned wide,
					   unsigned names, uint64_t scale)
{
	struct prof_profile *p = prof_new(unit);

	assert_non_null(p);
	for (int l = 0; l < lines; l++) {
		uint32_t fs[10];
		size_t n = 1 + rnd(&seed) % 9;

		fs[0] = pool_frame(p, &seed, wide);
		for (size_t i = 1; i < n; i++)
			fs[i] = pool_frame(p, &seed, names);
		assert_int_not_equal(prof_add_stack(p, fs, n,
						    (1 + rnd(&seed) % 50) * scale),
				     UINT32_MAX);
	}
	return p;
}

static void diff_and_check(struct prof_profile *b, struct prof_profile *a)
{
	struct prof_diff *d = NULL;

	assert_int_equal(prof_diff_build(b, a, &d), 0);
	check_union(d, b, a);
	check_order(d, b, a);
	prof_diff_free(d);
}

/* Narrow families (3 names) and wide ones (40 names, past the size where
 * the merge switches from comparing to marking), both directions. */
static void test_union_random(void **state)
{
	static const unsigned shapes[][2] = { { 3, 3 }, { 40, 4 }, { 12, 40 },
					      { 200, 2 } };

	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct prof_profile *b = random_profile(PROF_UNIT_SAMPLES, 7 + s, 300,
							shapes[s][0], shapes[s][1], 1);
		struct prof_profile *a = random_profile(PROF_UNIT_SAMPLES, 99 + s, 250,
							shapes[s][0], shapes[s][1], 1);

		diff_and_check(b, a);
		diff_and_check(a, b);
		prof_free(a);
		prof_free(b);
	}
}

/* Sorted inputs (sibling order no longer the order nodes were made),
 * a profile against itself, an empty side, and values past 2^32. */
static void test_union_edges(void **state)
{
	struct prof_profile *b = random_profile(PROF_UNIT_NANOSECONDS, 5, 400, 30,
						5, 3000000000ull);
	struct prof_profile *a = random_profile(PROF_UNIT_NANOSECONDS, 6, 400, 30,
						5, 3000000000ull);
	struct prof_profile *e = prof_new(PROF_UNIT_NANOSECONDS);
	struct prof_profile *s = prof_new(PROF_UNIT_SAMPLES);
	struct prof_diff *d = NULL;

	(void)state;
	assert_true((uint64_t)UINT32_MAX < prof_total(b));
	diff_and_check(b, a);
	assert_int_equal(prof_sort(b), 0);
	assert_int_equal(prof_sort(a), 0);
	diff_and_check(b, a);
	diff_and_check(b, b);
	diff_and_check(e, a);
	diff_and_check(b, e);
	diff_and_check(e, e);
	assert_int_equal(prof_diff_build(b, s, &d), -EINVAL);
	assert_null(d);
	prof_free(s);
	prof_free(e);
	prof_free(a);
	prof_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_union_random),
		cmocka_unit_test(test_union_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
