/* SPDX-License-Identifier: MIT */
/* Diff view on hand-computed cases: the Δ each frame is coloured by, the
 * noise filter (two-proportion test for samples, a threshold otherwise),
 * the colours of each palette, the absolute mode, tooltip lines, the
 * legend and the answer sentence. */
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
#include "render/diff_view.h"
#include "render/palette.h"

static struct rd_diff_opts plain(void)
{
	struct rd_diff_opts o = rd_diff_opts_default();

	o.noise_filter = 0;
	return o;
}

static void test_significance(void **state)
{
	struct rd_diff_opts o = rd_diff_opts_default();
	struct prof_signif s;
	struct rd_diff_shade sh;

	(void)state;
	/* 1,000 vs 1,100 of 10,000: z = 0.01 / sqrt(.105 * .895 * 2e-4)
	 * = 2.3066 >= 1.96, significant. */
	assert_int_equal(prof_signif_test(1000, 10000, 1100, 10000, &s), 0);
	assert_int_equal(s.significant, 1);
	assert_true(fabs(s.z - 2.3066) < 0.0001);
	sh = rd_diff_shade(1000, 10000, 1100, 10000, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.noise, 0);
	assert_true(sh.delta == 10.0); /* 10.00% -> 11.00% */
	assert_true(sh.shown == 10.0);
	/* 100 vs 110 of 1,000: z = 0.7294, within noise: drawn neutral. */
	assert_int_equal(prof_signif_test(100, 1000, 110, 1000, &s), 0);
	assert_int_equal(s.significant, 0);
	assert_true(fabs(s.z - 0.7294) < 0.0001);
	sh = rd_diff_shade(100, 1000, 110, 1000, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.noise, 1);
	assert_true(sh.delta == 10.0);
	assert_true(sh.shown == 0.0);
	assert_int_equal(rd_diff_color(sh.shown, 0), rd_diff_color(0, 0));
	/* Filter off: the same change is coloured. */
	o.noise_filter = 0;
	sh = rd_diff_shade(100, 1000, 110, 1000, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.noise, 0);
	assert_true(sh.shown == 10.0);
}

static void test_delta_cases(void **state)
{
	struct rd_diff_opts o = plain();
	struct rd_diff_shade sh;

	(void)state;
	/* Equal shares: 30% of 100 and 30% of 200 -> 0, neutral colour. */
	sh = rd_diff_shade(30, 100, 60, 200, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.kind, PROF_DELTA_CHANGED);
	assert_true(sh.delta == 0.0);
	assert_int_equal(rd_diff_color(sh.shown, 0), 0xE6E2DA);
	/* 30% -> 46%: 100 * 16 / 30 = 53.333 -> +53.33. */
	sh = rd_diff_shade(300, 1000, 460, 1000, PROF_UNIT_SAMPLES, &o);
	assert_true(sh.delta == 53.33);
	/* Only after: +100, full red; only before: -100, full blue. */
	sh = rd_diff_shade(0, 1000, 5, 1000, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.kind, PROF_DELTA_ADDED);
	assert_true(sh.delta == 100.0);
	assert_int_equal(rd_diff_color(sh.shown, 0), 0xE0301E);
	sh = rd_diff_shade(5, 1000, 0, 1000, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.kind, PROF_DELTA_REMOVED);
	assert_true(sh.delta == -100.0);
	assert_int_equal(rd_diff_color(sh.shown, 0), 0x1F6FD1);
	/* Only after stays full red with the noise filter on. */
	o.noise_filter = 1;
	sh = rd_diff_shade(0, 1000, 1, 1000, PROF_UNIT_SAMPLES, &o);
	assert_true(sh.shown == 100.0);
	o.noise_filter = 0;
	/* A zero total: neutral. */
	sh = rd_diff_shade(0, 0, 5, 10, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.kind, PROF_DELTA_NEUTRAL);
	assert_true(sh.shown == 0.0);
	sh = rd_diff_shade(5, 10, 0, 0, PROF_UNIT_SAMPLES, &o);
	assert_int_equal(sh.kind, PROF_DELTA_NEUTRAL);
	/* Rounding: 1 of 3 = 33.33%, 40 of 100 = 40.00%:
	 * 100 * 6.67 / 33.33 = 20.0120 -> 20.01. */
	sh = rd_diff_shade(1, 3, 40, 100, PROF_UNIT_SAMPLES, &o);
	assert_true(sh.delta == 20.01);
	/* 2 of 3 = 66.67% -> 1 of 3 = 33.33%: -50.0075 -> -50.01. */
	sh = rd_diff_shade(2, 3, 1, 3, PROF_UNIT_SAMPLES, &o);
	assert_true(sh.delta == -50.01);
	/* Clamped: 10% -> 40% is +300 -> +100. */
	sh = rd_diff_shade(10, 100, 40, 100, PROF_UNIT_SAMPLES, &o);
	assert_true(sh.delta == 100.0);
}

static void test_absolute_and_threshold(void **state)
{
	struct rd_diff_opts o = plain();
	struct rd_diff_shade sh;
	struct prof_delta d;

	(void)state;
	/* Absolute: 100 -> 150 is +50 whatever the totals. */
	o.absolute = 1;
	sh = rd_diff_shade(100, 1000, 150, 3000, PROF_UNIT_SAMPLES, &o);
	assert_true(sh.delta == 50.0);
	d = prof_delta_abs(3, 2);
	assert_true(d.delta == -33.33);
	assert_int_equal(prof_delta_abs(0, 0).kind, PROF_DELTA_NEUTRAL);
	assert_true(prof_delta_abs(0, 7).delta == 100.0);
	assert_true(prof_delta_abs(7, 0).delta == -100.0);
	/* Non-sample units: a change of share under 0.1 points is noise. */
	o = rd_diff_opts_default();
	sh = rd_diff_shade(1000, 100000, 1090, 100000, PROF_UNIT_NANOSECONDS, &o);
	assert_true(sh.delta == 9.0); /* 1.00% -> 1.09% */
	assert_int_equal(sh.noise, 1);
	sh = rd_diff_shade(1000, 100000, 1110, 100000, PROF_UNIT_NANOSECONDS, &o);
	assert_int_equal(sh.noise, 0);
	assert_true(sh.shown == 11.0);
}

static void test_colors(void **state)
{
	(void)state;
	/* Intensity is |Δ|/100 of the way from neutral to the end colour. */
	assert_int_equal(rd_diff_color(50, RD_DIFF_RED_BLUE),
			 rd_mix(0xE6E2DA, 0xE0301E, 0.5));
	assert_int_equal(rd_diff_color(-25, RD_DIFF_RED_BLUE),
			 rd_mix(0xE6E2DA, 0x1F6FD1, 0.25));
	/* Colour-blind: blue, grey, red. */
	assert_int_equal(rd_diff_color(0, RD_DIFF_COLORBLIND), 0xBEBEBE);
	assert_int_equal(rd_diff_color(100, RD_DIFF_COLORBLIND), 0xCA0020);
	assert_int_equal(rd_diff_color(-100, RD_DIFF_COLORBLIND), 0x0571B0);
	/* Out of range clamps to the end colour. */
	assert_int_equal(rd_diff_color(250, RD_DIFF_RED_BLUE), 0xE0301E);
}

static struct prof_profile *parse(const char *text)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 1, err, sizeof(err)), 0);
	return p;
}

static uint32_t find(const struct prof_profile *t, const char *name)
{
	for (uint32_t i = 1; i < prof_node_count(t); i++)
		if (!strcmp(prof_str(t, prof_frame_get(t, prof_node_get(t, i)->frame)->name), name))
			return i;
	fail_msg("no node %s", name);
	return 0;
}

static int measure7(void *ctx, int font, const char *s, size_t n)
{
	(void)ctx;
	(void)font;
	(void)s;
	return (int)n * 7;
}

static void test_tree_answer_tip(void **state)
{
	struct prof_profile *b = parse("app;main;hot_b 300\napp;main;other 700\n");
	struct prof_profile *a = parse("app;main;hot_b 460\napp;main;other 540\n");
	struct rd_diff_opts o = rd_diff_opts_default();
	struct rd_text t = { .measure = measure7, .line_h = { 15, 15, 18 } };
	struct rd_list l = { 0 };
	struct prof_diff *d;
	struct rd_diff_shade sh;
	char buf[256], lines[4][256];
	int k;

	(void)state;
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	sh = rd_diff_node_shade(d, find(prof_diff_tree(d), "hot_b"), &o);
	assert_true(sh.delta == 53.33);
	assert_int_equal(sh.noise, 0);
	/* Red family: red well above green and blue. */
	{
		uint32_t c = rd_diff_color(sh.shown, 0);

		assert_true((c >> 16 & 0xff) > (c >> 8 & 0xff) + 40);
		assert_true((c >> 16 & 0xff) > (c & 0xff) + 40);
	}
	sh = rd_diff_node_shade(d, find(prof_diff_tree(d), "other"), &o);
	assert_true(sh.delta == -22.86); /* 70% -> 54%: -22.857 */
	/* main holds everything on both sides: 0, neutral. */
	sh = rd_diff_node_shade(d, find(prof_diff_tree(d), "main"), &o);
	assert_true(sh.delta == 0.0);
	assert_int_equal(rd_diff_answer(d, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "hot_b grew from 30% to 46% of CPU time.");
	prof_diff_free(d);
	/* What grew most is named even when a shrink is larger: x loses 40
	 * points, z (new) gains 30, y gains 10. Nothing changed: says so. */
	{
		struct prof_profile *b2 = parse("app;main;x 800\napp;main;y 200\n");
		struct prof_profile *a2 = parse("app;main;x 400\napp;main;y 300\napp;main;z 300\n");
		struct prof_profile *a3 = parse("app;main;x 400\napp;main;y 100\n");

		assert_int_equal(prof_diff_build(b2, a2, &d), 0);
		assert_int_equal(rd_diff_answer(d, buf, sizeof(buf)), 0);
		assert_string_equal(buf, "z grew from 0% to 30% of CPU time.");
		prof_diff_free(d);
		assert_int_equal(prof_diff_build(b2, a3, &d), 0);
		assert_int_equal(rd_diff_answer(d, buf, sizeof(buf)), 0);
		assert_string_equal(buf, "No function's share of CPU time changed.");
		prof_diff_free(d);
		prof_free(b2);
		prof_free(a2);
		prof_free(a3);
	}
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	k = rd_diff_tip(d, find(prof_diff_tree(d), "hot_b"), &o, lines, 4);
	assert_int_equal(k, 3);
	assert_string_equal(lines[0], "Before: 300 (30%)  After: 460 (46%)");
	assert_string_equal(lines[1], "\xce\x94 share total: +53.33%  self: +53.33%");
	assert_string_equal(lines[2], "Change +16.00 pp, 95% CI [11.80, 20.20]: significant");
	assert_int_equal(rd_diff_legend(&l, &t, (struct rd_rect){ 0, 0, 400, 16 }, 0), 400);
	assert_true(l.n > 20);
	rd_list_free(&l);
	prof_diff_free(d);
	prof_free(a);
	prof_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_significance),
		cmocka_unit_test(test_delta_cases),
		cmocka_unit_test(test_absolute_and_threshold),
		cmocka_unit_test(test_colors),
		cmocka_unit_test(test_tree_answer_tip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
