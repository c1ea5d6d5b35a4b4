/* SPDX-License-Identifier: MIT */
/* Diff arithmetic on hand-computed cases: Δ of share, its rounding and
 * clamping, the significance test, the union tree and the ranking. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/diff.h"
#include "profile/folded.h"
#include "profile/profile.h"

#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static void test_delta_cases(void **state)
{
	struct prof_delta d;

	(void)state;
	/* Equal shares (30% of 100, 30% of 200) -> 0, measured. */
	d = prof_delta_share(30, 100, 60, 200);
	assert_int_equal(d.kind, PROF_DELTA_CHANGED);
	assert_true(d.delta == 0.0);
	assert_true(d.p_before == 30.0 && d.p_after == 30.0);
	/* 30% -> 46%: 100 * 16 / 30 = 53.333... -> 53.33. */
	d = prof_delta_share(30, 100, 46, 100);
	assert_int_equal(d.kind, PROF_DELTA_CHANGED);
	assert_true(d.delta == 53.33);
	/* 50% -> 20%: -60. */
	d = prof_delta_share(50, 100, 20, 100);
	assert_true(d.delta == -60.0);
	/* 10% -> 40% is +300, clamped to +100. */
	d = prof_delta_share(10, 100, 40, 100);
	assert_true(d.delta == 100.0);
	assert_int_equal(d.kind, PROF_DELTA_CHANGED);
	/* Only after / only before. */
	d = prof_delta_share(0, 100, 5, 100);
	assert_int_equal(d.kind, PROF_DELTA_ADDED);
	assert_true(d.delta == 100.0);
	d = prof_delta_share(5, 100, 0, 100);
	assert_int_equal(d.kind, PROF_DELTA_REMOVED);
	assert_true(d.delta == -100.0);
	/* Either total zero, or nothing on both sides: neutral, Δ 0. */
	d = prof_delta_share(0, 0, 5, 100);
	assert_int_equal(d.kind, PROF_DELTA_NEUTRAL);
	assert_true(d.delta == 0.0);
	d = prof_delta_share(5, 100, 0, 0);
	assert_int_equal(d.kind, PROF_DELTA_NEUTRAL);
	assert_true(d.delta == 0.0);
	d = prof_delta_share(0, 100, 0, 100);
	assert_int_equal(d.kind, PROF_DELTA_NEUTRAL);
}

/* The shares are rounded to two decimals before Δ is computed. */
static void test_delta_rounding(void **state)
{
	struct prof_delta d;

	(void)state;
	/* 1/3 -> 33.33, 1/2 -> 50.00: 100 * 16.67 / 33.33 = 50.0150... ->
	 * 50.02 (unrounded shares would give exactly 50.00). */
	d = prof_delta_share(1, 3, 1, 2);
	assert_true(d.p_before == 33.33);
	assert_true(d.p_after == 50.0);
	assert_true(d.delta == 50.02);
	/* 1/6 -> 16.67, 1/5 -> 20.00: 100 * 3.33 / 16.67 = 19.976 -> 19.98. */
	d = prof_delta_share(1, 6, 1, 5);
	assert_true(d.p_before == 16.67);
	assert_true(d.delta == 19.98);
	/* 2/3 -> 66.67 (halves round up), 1/3 -> 33.33: -50.0075 -> -50.01. */
	d = prof_delta_share(2, 3, 1, 3);
	assert_true(d.p_before == 66.67);
	assert_true(d.delta == -50.01);
	/* A share that rounds to 0.00 before: growth is +100. */
	d = prof_delta_share(1, 1000000, 5, 100);
	assert_true(d.p_before == 0.0);
	assert_true(d.delta == 100.0);
	assert_true(prof_round2(0.125) == 0.13);
	assert_true(prof_round2(-0.125) == -0.13);
}

static void test_significance(void **state)
{
	struct prof_signif s;

	(void)state;
	/* 1,000 vs 1,100 of 10,000: p1 = .10, p2 = .11, pooled .105,
	 * se = sqrt(.105 * .895 * 2/10000) = .0043353, z = 2.3066: significant.
	 * CI: se' = sqrt(.1*.9/1e4 + .11*.89/1e4) = .0043347,
	 * 1 ± 1.96 * .43347 = [0.1504, 1.8496] points. */
	assert_int_equal(prof_signif_test(1000, 10000, 1100, 10000, &s), 0);
	assert_int_equal(s.valid, 1);
	assert_int_equal(s.significant, 1);
	assert_near(s.z, 2.3066, 1e-3);
	assert_near(s.change, 1.0, 1e-9);
	assert_near(s.ci_low, 0.1504, 1e-3);
	assert_near(s.ci_high, 1.8496, 1e-3);
	/* 100 vs 110 of 1,000: se = sqrt(.105 * .895 * 2/1000) = .013709,
	 * z = 0.7294: not significant; CI 1 ± 2.6867 = [-1.6867, 3.6867]. */
	assert_int_equal(prof_signif_test(100, 1000, 110, 1000, &s), 0);
	assert_int_equal(s.valid, 1);
	assert_int_equal(s.significant, 0);
	assert_near(s.z, 0.7294, 1e-3);
	assert_near(s.ci_low, -1.6867, 1e-3);
	assert_near(s.ci_high, 3.6867, 1e-3);
	/* A shrink is significant with a negative z. */
	assert_int_equal(prof_signif_test(1100, 10000, 1000, 10000, &s), 0);
	assert_int_equal(s.significant, 1);
	assert_near(s.z, -2.3066, 1e-3);
	/* Nothing to test. */
	assert_int_equal(prof_signif_test(0, 0, 5, 10, &s), 0);
	assert_int_equal(s.valid, 0);
	assert_int_equal(s.significant, 0);
	/* All samples on both sides: no variance, no significance. */
	assert_int_equal(prof_signif_test(10, 10, 20, 20, &s), 0);
	assert_int_equal(s.significant, 0);
	assert_int_equal(prof_signif_test(11, 10, 1, 10, &s), -EINVAL);
}

static struct prof_profile *folded(const char *text)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_int_equal(prof_folded_parse(p, text, strlen(text), 0, err,
					   sizeof(err)),
			 0);
	return p;
}

static uint32_t node_at(const struct prof_profile *t, const char *a,
			const char *b)
{
	uint32_t n = 0;
	const char *path[2] = { a, b };

	for (int i = 0; i < 2 && path[i]; i++) {
		uint32_t c;

		for (c = prof_node_get(t, n)->child; c; c = prof_node_get(t, c)->sibling)
			if (strcmp(prof_str(t, prof_frame_get(t, prof_node_get(t, c)->frame)->name),
				   path[i]) == 0)
				break;
		assert_int_not_equal(c, 0);
		n = c;
	}
	return n;
}

static void test_tree(void **state)
{
	struct prof_profile *b = folded("main;a 30\nmain;b 70\n");
	struct prof_profile *a = folded("main;a 46\nmain;c 54\n");
	struct prof_profile *ns = prof_new(PROF_UNIT_NANOSECONDS);
	struct prof_diff *d = NULL;
	const struct prof_profile *t;
	struct prof_diff_values v;
	struct prof_delta dl;

	(void)state;
	assert_int_equal(prof_diff_build(b, ns, &d), -EINVAL);
	assert_null(d);
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	t = prof_diff_tree_const(d);
	assert_int_equal(prof_diff_total_before(d), 100);
	assert_int_equal(prof_diff_total_after(d), 100);
	/* The union: main, a, b, c; widths are before + after. */
	assert_int_equal(prof_node_count(t), 5);
	assert_int_equal(prof_total(t), 200);
	v = prof_diff_values(d, node_at(t, "main", "a"));
	assert_int_equal(v.before_total, 30);
	assert_int_equal(v.after_total, 46);
	assert_int_equal(v.after_self, 46);
	assert_int_equal(prof_node_get(t, node_at(t, "main", "a"))->total, 76);
	dl = prof_diff_node_delta(d, node_at(t, "main", "a"), 0);
	assert_true(dl.delta == 53.33);
	dl = prof_diff_node_delta(d, node_at(t, "main", "b"), 1);
	assert_int_equal(dl.kind, PROF_DELTA_REMOVED);
	dl = prof_diff_node_delta(d, node_at(t, "main", "c"), 0);
	assert_int_equal(dl.kind, PROF_DELTA_ADDED);
	dl = prof_diff_node_delta(d, node_at(t, "main", NULL), 0);
	assert_int_equal(dl.kind, PROF_DELTA_CHANGED);
	assert_true(dl.delta == 0.0);
	/* main has no self on either side. */
	dl = prof_diff_node_delta(d, node_at(t, "main", NULL), 1);
	assert_int_equal(dl.kind, PROF_DELTA_NEUTRAL);
	v = prof_diff_values(d, 999);
	assert_int_equal(v.before_total + v.after_total, 0);
	prof_diff_free(d);
	prof_diff_free(NULL);
	prof_free(ns);
	prof_free(a);
	prof_free(b);
}

/* Random profiles: every stack of each side is found in the union tree by
 * its path, with its own self value on that side and zero self where the
 * other side lacks it. */
struct check {
	struct prof_diff *d;
	int after;
	uint32_t rng;
};

static int check_stack(const struct prof_profile *p, const uint32_t *frames,
		       size_t n, uint64_t value, void *arg)
{
	struct check *c = arg;
	struct prof_profile *t = prof_diff_tree(c->d);
	uint32_t node = 0;
	struct prof_diff_values v;

	for (size_t i = 0; i < n; i++) {
		struct prof_frame f = *prof_frame_get(p, frames[i]);

		f.name = prof_intern_cstr(t, prof_str(p, f.name));
		node = prof_child_find(t, node, prof_frame_intern(t, &f));
		assert_int_not_equal(node, 0);
	}
	v = prof_diff_values(c->d, node);
	assert_int_equal(c->after ? v.after_self : v.before_self, value);
	return 0;
}

static struct prof_profile *random_profile(uint32_t *rng, int lines)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);

	for (int l = 0; l < lines; l++) {
		uint32_t fs[8];
		size_t n = 1 + (*rng >> 16) % 8;

		for (size_t i = 0; i < n; i++) {
			char name[8];

			*rng = *rng * 1103515245u + 12345u;
			snprintf(name, sizeof(name), "f%u", (*rng >> 16) % 6);
			struct prof_frame f = { .name = prof_intern_cstr(p, name) };
			fs[i] = prof_frame_intern(p, &f);
		}
		prof_add_stack(p, fs, n, 1 + (*rng >> 20) % 50);
	}
	return p;
}

static void test_tree_matches_paths(void **state)
{
	uint32_t rng = 7;
	struct prof_profile *b = random_profile(&rng, 400);
	struct prof_profile *a = random_profile(&rng, 300);
	struct check c = { 0 };
	uint64_t sb = 0, sa = 0;

	(void)state;
	assert_int_equal(prof_diff_build(b, a, &c.d), 0);
	assert_int_equal(prof_walk_stacks(b, check_stack, &c), 0);
	c.after = 1;
	assert_int_equal(prof_walk_stacks(a, check_stack, &c), 0);
	/* Self values sum to each side's total; node totals to the sum. */
	for (uint32_t i = 0; i < prof_node_count(prof_diff_tree(c.d)); i++) {
		struct prof_diff_values v = prof_diff_values(c.d, i);

		sb += v.before_self;
		sa += v.after_self;
		assert_int_equal(prof_node_get(prof_diff_tree(c.d), i)->total,
				 v.before_total + v.after_total);
	}
	assert_int_equal(sb, prof_total(b));
	assert_int_equal(sa, prof_total(a));
	prof_diff_free(c.d);
	prof_free(a);
	prof_free(b);
}

static void test_node_signif(void **state)
{
	struct prof_profile *b = folded("m;hot 1000\nm;rest 9000\n");
	struct prof_profile *a = folded("m;hot 1100\nm;rest 8900\n");
	struct prof_diff *d;
	struct prof_signif s;

	(void)state;
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	assert_int_equal(prof_diff_node_signif(d, node_at(prof_diff_tree(d), "m", "hot"),
					       1, &s), 0);
	assert_int_equal(s.significant, 1);
	assert_near(s.z, 2.3066, 1e-3);
	assert_int_equal(prof_diff_node_signif(d, 12345, 0, &s), -EINVAL);
	assert_int_equal(prof_diff_node_real(d, node_at(prof_diff_tree(d), "m", "hot"),
					     1, 0.1), 1);
	/* m holds everything on both sides: no change at all. */
	assert_int_equal(prof_diff_node_real(d, node_at(prof_diff_tree(d), "m", NULL),
					     0, 0.1), 0);
	assert_int_equal(prof_diff_node_real(d, 12345, 0, 0.1), 0);
	prof_diff_free(d);
	prof_free(a);
	prof_free(b);
}

/* 100 vs 110 of 1,000 samples is noise; in nanoseconds the threshold on
 * the change of share decides. */
static void test_noise_filter(void **state)
{
	struct prof_profile *b = folded("m;hot 100\nm;rest 900\n");
	struct prof_profile *a = folded("m;hot 110\nm;rest 890\n");
	struct prof_diff *d;
	uint32_t hot;

	(void)state;
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	hot = node_at(prof_diff_tree(d), "m", "hot");
	assert_int_equal(prof_diff_node_real(d, hot, 1, 0.1), 0);
	prof_diff_free(d);
	/* Same numbers as nanoseconds: 10.00% -> 11.00% is 1 point. */
	prof_meta(b)->unit = PROF_UNIT_NANOSECONDS;
	prof_meta(a)->unit = PROF_UNIT_NANOSECONDS;
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	hot = node_at(prof_diff_tree(d), "m", "hot");
	assert_int_equal(prof_diff_node_real(d, hot, 1, 0.1), 1);
	assert_int_equal(prof_diff_node_real(d, hot, 1, 1.0), 1);
	assert_int_equal(prof_diff_node_real(d, hot, 1, 1.01), 0);
	prof_diff_free(d);
	prof_free(a);
	prof_free(b);
}

static void test_rank(void **state)
{
	/* Before: f recursive through g; after: h appears. Totals 100 each.
	 * Functions by total: f before 60 (outer f only), after 30;
	 * g 40 -> 20; k 40 -> 50; h 0 -> 20. */
	struct prof_profile *b = folded("f;g;f 40\nf 20\nk 40\n");
	struct prof_profile *a = folded("f;g;f 20\nf 10\nk 50\nh 20\n");
	struct prof_diff *d;
	struct prof_diff_fn *fns;
	size_t n;
	const struct prof_profile *t;

	(void)state;
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	t = prof_diff_tree_const(d);
	assert_int_equal(prof_diff_rank(d, PROF_RANK_TOTAL, &fns, &n), 0);
	assert_int_equal(n, 4);
	/* |change|: f 30, g 20, h 20, k 10; g before h by name. */
	assert_string_equal(prof_str(t, fns[0].name), "f");
	assert_int_equal(fns[0].total_before, 60);
	assert_int_equal(fns[0].total_after, 30);
	assert_int_equal(fns[0].self_before, 60);
	assert_int_equal(fns[0].self_after, 30);
	assert_true(fns[0].change == -30.0);
	assert_true(fns[0].total_delta.delta == -50.0);
	assert_string_equal(prof_str(t, fns[1].name), "g");
	assert_true(fns[1].change == -20.0);
	assert_int_equal(fns[1].self_before, 0);
	assert_string_equal(prof_str(t, fns[2].name), "h");
	assert_true(fns[2].change == 20.0);
	assert_int_equal(fns[2].total_delta.kind, PROF_DELTA_ADDED);
	assert_string_equal(prof_str(t, fns[3].name), "k");
	assert_true(fns[3].change == 10.0);
	assert_true(fns[3].total_delta.delta == 25.0);
	free(fns);
	/* By self: f 60 -> 30 (-30), k +10, h +20, g 0 -> 0. */
	assert_int_equal(prof_diff_rank(d, PROF_RANK_SELF, &fns, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(prof_str(t, fns[0].name), "f");
	assert_string_equal(prof_str(t, fns[1].name), "h");
	assert_string_equal(prof_str(t, fns[2].name), "k");
	assert_string_equal(prof_str(t, fns[3].name), "g");
	assert_int_equal(fns[3].self_delta.kind, PROF_DELTA_NEUTRAL);
	free(fns);
	prof_diff_free(d);
	prof_free(a);
	prof_free(b);
}

/* Process rows are not functions. */
static void test_rank_skips_rows(void **state)
{
	struct prof_profile *b = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *a = prof_new(PROF_UNIT_SAMPLES);
	struct prof_diff *d;
	struct prof_diff_fn *fns;
	size_t n;
	const char *t1 = "app;work 5\n", *t2 = "app;work 7\n";

	(void)state;
	assert_int_equal(prof_folded_parse(b, t1, strlen(t1), 1, NULL, 0), 0);
	assert_int_equal(prof_folded_parse(a, t2, strlen(t2), 1, NULL, 0), 0);
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	assert_int_equal(prof_diff_rank(d, PROF_RANK_TOTAL, &fns, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(prof_str(prof_diff_tree(d), fns[0].name), "work");
	assert_true(fns[0].change == 0.0);
	free(fns);
	prof_diff_free(d);
	prof_free(a);
	prof_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta_cases),
		cmocka_unit_test(test_delta_rounding),
		cmocka_unit_test(test_significance),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_tree_matches_paths),
		cmocka_unit_test(test_node_signif),
		cmocka_unit_test(test_noise_filter),
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_rank_skips_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
