/* SPDX-License-Identifier: MIT */
/* The profile data model: interning, tree totals and self, sort, merge,
 * walking. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"

static uint32_t fr(struct prof_profile *p, const char *name, int kind)
{
	struct prof_frame f = { 0 };

	f.name = prof_intern_cstr(p, name);
	f.kind = (uint8_t)kind;
	return prof_frame_intern(p, &f);
}

static void test_intern(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char big[70000];
	uint32_t a, b, ids[5000];
	const char *kept;

	(void)state;
	assert_non_null(p);
	assert_int_equal(prof_str_count(p), 1);
	assert_int_equal(prof_intern_cstr(p, ""), 0);
	assert_int_equal(prof_intern_cstr(p, NULL), 0);
	assert_string_equal(prof_str(p, 0), "");
	a = prof_intern(p, "main_xyz", 4);
	b = prof_intern_cstr(p, "main");
	assert_int_equal(a, b);
	assert_true(a > 0);
	kept = prof_str(p, a);
	assert_string_equal(kept, "main");
	/* Many strings and one larger than a chunk: ids stay stable and the
	 * first pointer stays valid. */
	for (int i = 0; i < 5000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "fn_%d", i);
		ids[i] = prof_intern_cstr(p, s);
	}
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	b = prof_intern_cstr(p, big);
	assert_int_equal(strlen(prof_str(p, b)), sizeof(big) - 1);
	for (int i = 0; i < 5000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "fn_%d", i);
		assert_int_equal(prof_intern_cstr(p, s), ids[i]);
		assert_string_equal(prof_str(p, ids[i]), s);
	}
	assert_ptr_equal(prof_str(p, a), kept);
	assert_int_equal(prof_str_count(p), 5003);
	assert_string_equal(prof_str(p, 99999), "");
	prof_free(p);
	prof_free(NULL);
}

/* Short strings are packed into shared chunks: the next string starts
 * right after the previous one except when a chunk fills up. */
static void test_intern_packs(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	size_t jumps = 0, bytes = 0;
	uint32_t n = 200000;

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		char s[32];

		snprintf(s, sizeof(s), "function_%u", i);
		assert_int_equal(prof_intern_cstr(p, s), i + 1);
		bytes += strlen(s) + 1;
	}
	for (uint32_t i = 1; i < n; i++) {
		const char *a = prof_str(p, i), *b = prof_str(p, i + 1);

		if (b != a + strlen(a) + 1)
			jumps++;
	}
	/* 64 KiB chunks: one jump per chunk filled. */
	assert_true(jumps <= bytes / 65536 + 1);
	assert_int_equal(prof_str_len(p, n), strlen("function_199999"));
	prof_free(p);
}

static void test_frames(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct prof_frame f = { 0 }, g;
	uint32_t a, b, c;

	(void)state;
	assert_int_equal(prof_frame_count(p), 1);
	f.name = prof_intern_cstr(p, "read");
	f.module = prof_intern_cstr(p, "libc.so.6");
	f.line = 12;
	f.cls = PROF_CLASS_SYSTEM;
	a = prof_frame_intern(p, &f);
	g = f;
	b = prof_frame_intern(p, &g);
	assert_int_equal(a, b);
	g.lang = PROF_LANG_C;
	c = prof_frame_intern(p, &g);
	assert_int_not_equal(a, c);
	assert_true(a >= 1);
	assert_int_equal(prof_frame_get(p, c)->lang, PROF_LANG_C);
	assert_int_equal(prof_frame_get(p, a)->line, 12);
	assert_null(prof_frame_get(p, 100));
	assert_int_equal(prof_frame_count(p), 3);
	prof_free(p);
}

/* main;a;b 5, main;a 2, main;c 3, (empty) 1 */
static void test_tree_totals(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t m = fr(p, "main", 0), a = fr(p, "a", 0), b = fr(p, "b", 0),
		 c = fr(p, "c", 0);
	uint32_t s1[] = { m, a, b }, s2[] = { m, a }, s3[] = { m, c };
	uint32_t nb, na, nm, nc;

	(void)state;
	nb = prof_add_stack(p, s1, 3, 5);
	na = prof_add_stack(p, s2, 2, 2);
	nc = prof_add_stack(p, s3, 2, 3);
	assert_int_equal(prof_add_stack(p, NULL, 0, 1), 0);
	assert_int_equal(prof_add_stack(p, s1, 3, 4), nb);
	nm = prof_child_find(p, 0, m);
	assert_int_equal(prof_child_find(p, nm, a), na);
	assert_int_equal(prof_child_find(p, na, b), nb);
	assert_int_equal(prof_child_find(p, nm, c), nc);
	assert_int_equal(prof_child_find(p, nm, b), 0);
	assert_int_equal(prof_total(p), 15);
	assert_int_equal(prof_node_get(p, 0)->self, 1);
	assert_int_equal(prof_node_get(p, nm)->total, 14);
	assert_int_equal(prof_node_get(p, nm)->self, 0);
	assert_int_equal(prof_node_get(p, na)->total, 11);
	assert_int_equal(prof_node_get(p, na)->self, 2);
	assert_int_equal(prof_node_get(p, nb)->total, 9);
	assert_int_equal(prof_node_get(p, nb)->self, 9);
	assert_int_equal(prof_node_get(p, nc)->total, 3);
	assert_int_equal(prof_node_get(p, nc)->parent, nm);
	assert_int_equal(prof_node_count(p), 5);
	assert_null(prof_node_get(p, 5));
	/* Frame 0 and unknown frames are refused, leaving the tree alone. */
	uint32_t bad[] = { m, 0 }, bad2[] = { m, 77 };
	assert_int_equal(prof_add_stack(p, bad, 2, 1), UINT32_MAX);
	assert_int_equal(prof_add_stack(p, bad2, 2, 1), UINT32_MAX);
	assert_int_equal(prof_total(p), 15);
	assert_int_equal(prof_node_count(p), 5);
	prof_free(p);
}

static void test_saturate(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	uint32_t a = fr(p, "a", 0);

	(void)state;
	prof_add_stack(p, &a, 1, UINT64_MAX - 1);
	prof_add_stack(p, &a, 1, 5);
	assert_true(prof_total(p) == UINT64_MAX);
	prof_free(p);
}

/* Collects "name,name=value" lines of every stack into a buffer. */
struct collect {
	char buf[65536];
	size_t len;
	int stop_after;
	int calls;
};

static int collect_fn(const struct prof_profile *p, const uint32_t *frames,
		      size_t n, uint64_t value, void *arg)
{
	struct collect *c = arg;

	/* Output beyond the buffer is dropped (the text stays a C string). */
	for (size_t i = 0; i < n && c->len < sizeof(c->buf); i++)
		c->len += (size_t)snprintf(c->buf + c->len,
					   sizeof(c->buf) - c->len, "%s%s",
					   i ? "," : "",
					   prof_str(p, prof_frame_get(p, frames[i])->name));
	if (c->len < sizeof(c->buf))
		c->len += (size_t)snprintf(c->buf + c->len,
					   sizeof(c->buf) - c->len, "=%llu\n",
					   (unsigned long long)value);
	c->calls++;
	return c->calls == c->stop_after ? 42 : 0;
}

static void test_sort_and_walk(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t z = fr(p, "zeta", 0), a = fr(p, "alpha", 0),
		 ak = fr(p, "alpha", PROF_KIND_KERNEL), f1 = fr(p, "f1", 0),
		 f = fr(p, "f", 0), m = fr(p, "m", 0);
	struct collect c = { .stop_after = -1 };

	(void)state;
	prof_add_stack(p, (uint32_t[]){ m, z }, 2, 1);
	prof_add_stack(p, (uint32_t[]){ m, ak }, 2, 2);
	prof_add_stack(p, (uint32_t[]){ m, a }, 2, 3);
	prof_add_stack(p, (uint32_t[]){ m, f1 }, 2, 4);
	prof_add_stack(p, (uint32_t[]){ m, f, z }, 3, 5);
	prof_add_stack(p, (uint32_t[]){ m }, 1, 6);
	/* Before sorting: insertion order. */
	assert_int_equal(prof_walk_stacks(p, collect_fn, &c), 0);
	assert_string_equal(c.buf, "m=6\nm,zeta=1\nm,alpha=2\nm,alpha=3\n"
				   "m,f1=4\nm,f,zeta=5\n");
	assert_int_equal(prof_sort(p), 0);
	memset(&c, 0, sizeof(c));
	c.stop_after = -1;
	assert_int_equal(prof_walk_stacks(p, collect_fn, &c), 0);
	/* "alpha;" < "alpha_[k];" and "f1;" < "f;" as LC_ALL=C sort would
	 * order the folded lines. */
	assert_string_equal(c.buf, "m=6\nm,alpha=3\nm,alpha=2\nm,f1=4\n"
				   "m,f,zeta=5\nm,zeta=1\n");
	/* Early stop returns the callback's value. */
	memset(&c, 0, sizeof(c));
	c.stop_after = 2;
	assert_int_equal(prof_walk_stacks(p, collect_fn, &c), 42);
	assert_int_equal(c.calls, 2);
	/* Adding after a sort keeps the tree valid and sorts again. */
	prof_add_stack(p, (uint32_t[]){ m, fr(p, "beta", 0) }, 2, 7);
	assert_int_equal(prof_sort(p), 0);
	memset(&c, 0, sizeof(c));
	c.stop_after = -1;
	prof_walk_stacks(p, collect_fn, &c);
	assert_string_equal(c.buf, "m=6\nm,alpha=3\nm,alpha=2\nm,beta=7\n"
				   "m,f1=4\nm,f,zeta=5\nm,zeta=1\n");
	prof_free(p);
}

static void test_merge(void **state)
{
	struct prof_profile *a = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *b = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *ns = prof_new(PROF_UNIT_NANOSECONDS);
	struct prof_frame f = { 0 };
	uint32_t am, ax, bm, bx, by, nm, nx, ny, bk;

	(void)state;
	/* Give b's strings different ids than a's. */
	prof_intern_cstr(b, "padding");
	am = fr(a, "main", 0);
	ax = fr(a, "x", 0);
	by = fr(b, "y", 0);
	bx = fr(b, "x", 0);
	bm = fr(b, "main", 0);
	f.name = prof_intern_cstr(b, "x");
	f.module = prof_intern_cstr(b, "libx.so");
	f.cls = PROF_CLASS_LIBRARY;
	bk = prof_frame_intern(b, &f);
	prof_add_stack(a, (uint32_t[]){ am, ax }, 2, 10);
	prof_add_stack(b, (uint32_t[]){ bm, bx }, 2, 5);
	prof_add_stack(b, (uint32_t[]){ bm, by }, 2, 7);
	prof_add_stack(b, (uint32_t[]){ bm, bk }, 2, 1);
	prof_meta(a)->duration_ns = 10;
	prof_meta(a)->start_ns = 500;
	prof_meta(a)->drops = 1;
	prof_meta(b)->duration_ns = 20;
	prof_meta(b)->start_ns = 300;
	prof_meta(b)->drops = 2;
	assert_int_equal(prof_merge(a, ns), -EINVAL);
	assert_int_equal(prof_merge(a, a), -EINVAL);
	assert_int_equal(prof_merge(a, b), 0);
	assert_int_equal(prof_total(a), 23);
	nm = prof_child_find(a, 0, am);
	nx = prof_child_find(a, nm, ax);
	ny = prof_child_find(a, nm, fr(a, "y", 0));
	assert_int_equal(prof_node_get(a, nm)->total, 23);
	assert_int_equal(prof_node_get(a, nx)->self, 15);
	assert_int_equal(prof_node_get(a, ny)->self, 7);
	/* The module-carrying x is a different frame and keeps its fields. */
	f.name = prof_intern_cstr(a, "x");
	f.module = prof_intern_cstr(a, "libx.so");
	uint32_t ak = prof_frame_intern(a, &f);
	assert_int_equal(prof_node_get(a, prof_child_find(a, nm, ak))->total, 1);
	assert_int_equal(prof_frame_get(a, ak)->cls, PROF_CLASS_LIBRARY);
	assert_int_equal(prof_meta_const(a)->duration_ns, 30);
	assert_int_equal(prof_meta_const(a)->drops, 3);
	assert_int_equal(prof_meta_const(a)->start_ns, 300);
	/* Merging into an empty profile copies it exactly. */
	struct prof_profile *e = prof_new(PROF_UNIT_SAMPLES);
	assert_int_equal(prof_merge(e, a), 0);
	assert_int_equal(prof_total(e), 23);
	assert_int_equal(prof_node_count(e), prof_node_count(a));
	prof_free(e);
	prof_free(a);
	prof_free(b);
	prof_free(ns);
}

/* Node-by-node building: get-or-create children, add values. */
static void test_child_get(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t a = fr(p, "a", 0), b = fr(p, "b", 0), na, nb;

	(void)state;
	na = prof_child_get(p, 0, a);
	assert_int_equal(na, 1);
	assert_int_equal(prof_child_get(p, 0, a), na);
	nb = prof_child_get(p, na, b);
	assert_true(na < nb);
	assert_int_equal(prof_node_get(p, nb)->parent, na);
	assert_int_equal(prof_child_get(p, 99, a), UINT32_MAX);
	assert_int_equal(prof_child_get(p, 0, 0), UINT32_MAX);
	assert_int_equal(prof_child_get(p, 0, 77), UINT32_MAX);
	assert_int_equal(prof_node_add(p, 0, 5, 0), 0);
	assert_int_equal(prof_node_add(p, na, 5, 2), 0);
	assert_int_equal(prof_node_add(p, nb, 3, 3), 0);
	assert_int_equal(prof_node_add(p, 42, 1, 1), -EINVAL);
	assert_int_equal(prof_total(p), 5);
	assert_int_equal(prof_node_get(p, na)->self, 2);
	/* prof_add_stack finds the same nodes. */
	assert_int_equal(prof_add_stack(p, (uint32_t[]){ a, b }, 2, 1), nb);
	assert_int_equal(prof_node_get(p, nb)->total, 4);
	prof_free(p);
}

/* Appending without lookups, then mixing with indexed adds. */
static void test_child_append(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t a = fr(p, "a", 0), b = fr(p, "b", 0), c = fr(p, "c", 0);
	uint32_t na, nb, nc;

	(void)state;
	na = prof_child_append(p, 0, a);
	nb = prof_child_append(p, na, b);
	nc = prof_child_append(p, na, c);
	assert_int_equal(prof_child_append(p, 9, a), UINT32_MAX);
	prof_node_add(p, 0, 3, 0);
	prof_node_add(p, na, 3, 0);
	prof_node_add(p, nb, 1, 1);
	prof_node_add(p, nc, 2, 2);
	/* Found before the index exists (by scanning) and after. */
	assert_int_equal(prof_child_find(p, na, c), nc);
	assert_int_equal(prof_child_find(p, na, a), 0);
	assert_int_equal(prof_add_stack(p, (uint32_t[]){ a, c }, 2, 5), nc);
	assert_int_equal(prof_child_find(p, na, c), nc);
	assert_int_equal(prof_child_find(p, 0, a), na);
	assert_int_equal(prof_node_get(p, nc)->total, 7);
	assert_int_equal(prof_total(p), 8);
	assert_int_equal(prof_node_count(p), 4);
	prof_free(p);
}

/* A very deep stack: nothing recurses on depth. */
static int count_fn(const struct prof_profile *p, const uint32_t *frames,
		    size_t n, uint64_t value, void *arg)
{
	(void)p;
	(void)frames;
	*(size_t *)arg += n * value;
	return 0;
}

static void test_deep_stack(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	size_t depth = 200000, sum = 0;
	uint32_t *fs = malloc(depth * sizeof(*fs));
	uint32_t a = fr(p, "a", 0), b = fr(p, "b", 0);

	(void)state;
	assert_non_null(fs);
	for (size_t i = 0; i < depth; i++)
		fs[i] = i % 2 ? b : a;
	assert_int_not_equal(prof_add_stack(p, fs, depth, 2), UINT32_MAX);
	assert_int_not_equal(prof_add_stack(p, fs, depth / 2, 1), UINT32_MAX);
	assert_int_equal(prof_node_count(p), depth + 1);
	assert_int_equal(prof_sort(p), 0);
	assert_int_equal(prof_walk_stacks(p, count_fn, &sum), 0);
	assert_int_equal(sum, depth * 2 + depth / 2);
	free(fs);
	prof_free(p);
}

/* Merging equals adding every stack: random trees, merged twice into an
 * empty profile, against the same stacks added one by one. */
static struct prof_profile *random_tree(uint32_t *rng, int lines)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);

	for (int l = 0; l < lines; l++) {
		uint32_t fs[10];
		size_t n;

		*rng = *rng * 1103515245u + 12345u;
		n = 1 + (*rng >> 16) % 10;
		for (size_t i = 0; i < n; i++) {
			char name[8];

			*rng = *rng * 1103515245u + 12345u;
			snprintf(name, sizeof(name), "g%u", (*rng >> 16) % 5);
			fs[i] = fr(p, name, 0);
		}
		prof_add_stack(p, fs, n, 1 + (*rng >> 20) % 9);
	}
	return p;
}

static int add_into(const struct prof_profile *p, const uint32_t *frames,
		    size_t n, uint64_t value, void *arg)
{
	struct prof_profile *dst = arg;
	uint32_t fs[16];

	for (size_t i = 0; i < n; i++)
		fs[i] = fr(dst, prof_str(p, prof_frame_get(p, frames[i])->name), 0);
	return prof_add_stack(dst, fs, n, value) == UINT32_MAX ? -1 : 0;
}

static void test_merge_random(void **state)
{
	uint32_t rng = 99;
	struct prof_profile *a = random_tree(&rng, 500), *b = random_tree(&rng, 500);
	struct prof_profile *m = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *s = prof_new(PROF_UNIT_SAMPLES);
	struct collect cm = { .stop_after = -1 }, cs = { .stop_after = -1 };

	(void)state;
	assert_int_equal(prof_merge(m, a), 0);
	assert_int_equal(prof_merge(m, b), 0);
	assert_int_equal(prof_walk_stacks(a, add_into, s), 0);
	assert_int_equal(prof_walk_stacks(b, add_into, s), 0);
	assert_int_equal(prof_node_count(m), prof_node_count(s));
	assert_int_equal(prof_total(m), prof_total(s));
	/* Same stacks: compare the sorted walks (first 64 KiB of each). */
	prof_sort(m);
	prof_sort(s);
	prof_walk_stacks(m, collect_fn, &cm);
	prof_walk_stacks(s, collect_fn, &cs);
	assert_string_equal(cm.buf, cs.buf);
	/* The merged tree takes more stacks and finds its nodes. */
	uint32_t g0 = fr(m, "g0", 0), g1 = fr(m, "g1", 0);
	uint32_t before = prof_node_count(m);
	uint32_t leaf = prof_add_stack(m, (uint32_t[]){ g0, g1 }, 2, 1);
	assert_int_equal(prof_node_count(m), before);
	assert_int_equal(prof_child_find(m, prof_child_find(m, 0, g0), g1), leaf);
	prof_free(a);
	prof_free(b);
	prof_free(m);
	prof_free(s);
}

/* Many distinct stacks: the edge index stays consistent through growth. */
static void test_many_nodes(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t fs[64];

	(void)state;
	for (int i = 0; i < 64; i++) {
		char s[16];

		snprintf(s, sizeof(s), "f%d", i);
		fs[i] = fr(p, s, 0);
	}
	for (int i = 0; i < 64; i++)
		for (int j = 0; j < 64; j++)
			for (int k = 0; k < 8; k++)
				prof_add_stack(p, (uint32_t[]){ fs[i], fs[j], fs[k] },
					       3, 1);
	assert_int_equal(prof_node_count(p), 1 + 64 + 64 * 64 + 64 * 64 * 8);
	assert_int_equal(prof_total(p), 64 * 64 * 8);
	for (int i = 0; i < 64; i++) {
		uint32_t n = prof_child_find(p, 0, fs[i]);

		assert_int_equal(prof_node_get(p, n)->total, 64 * 8);
		assert_int_equal(prof_node_get(p, prof_child_find(p, n, fs[3]))->total, 8);
	}
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_intern_packs),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_tree_totals),
		cmocka_unit_test(test_saturate),
		cmocka_unit_test(test_sort_and_walk),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_child_get),
		cmocka_unit_test(test_child_append),
		cmocka_unit_test(test_deep_stack),
		cmocka_unit_test(test_merge_random),
		cmocka_unit_test(test_many_nodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
