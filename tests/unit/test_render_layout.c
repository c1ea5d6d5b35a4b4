/* SPDX-License-Identifier: MIT */
/* Flame geometry: exact rectangles, folding, zoom, hit testing; text fit;
 * number formatting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"
#include "render/draw.h"
#include "render/flame.h"
#include "render/format.h"
#include "render/tree.h"

static struct prof_profile *parse(const char *text)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 0, err,
					   sizeof(err)), 0);
	assert_int_equal(prof_sort(p), 0);
	return p;
}

/* Lays out @p with @o through its preorder tree. */
static int layout(struct prof_profile *p, const struct rd_flame_opts *o,
		  struct rd_boxes *b)
{
	struct rd_tree t;
	int rc;

	assert_int_equal(rd_tree_build(&t, p), 0);
	rc = rd_flame_layout(&t, o, b);
	rd_tree_free(&t);
	return rc;
}

static const char *box_name(struct prof_profile *p, const struct rd_box *b)
{
	const struct prof_node *n = prof_node_get(p, b->node);

	if (b->node == 0)
		return "all";
	return prof_str(p, prof_frame_get(p, n->frame)->name);
}

struct want {
	const char *name;
	int x, y, w, h;
	uint32_t depth, count, flags;
};

static void check(struct prof_profile *p, const struct rd_boxes *b,
		  const struct want *w, size_t n)
{
	assert_int_equal(b->n, n);
	for (size_t i = 0; i < n; i++) {
		const struct rd_box *x = &b->v[i];

		assert_string_equal(box_name(p, x), w[i].name);
		assert_int_equal(x->x, w[i].x);
		assert_int_equal(x->y, w[i].y);
		assert_int_equal(x->w, w[i].w);
		assert_int_equal(x->h, w[i].h);
		assert_int_equal(x->depth, w[i].depth);
		assert_int_equal(x->count, w[i].count);
		assert_int_equal(x->flags & (RD_BOX_SMALL | RD_BOX_CHAIN |
					     RD_BOX_ANCESTOR), w[i].flags);
	}
}

/* x of a node = x of its parent + widths of earlier siblings; width =
 * v·W/T. W = 800, T = 8: 100 px per sample. */
static void test_flame_exact(void **state)
{
	struct prof_profile *p = parse("a;b 3\na;c 1\nd 4\n");
	struct rd_flame_opts o = { .area = { 0, 0, 800, 200 }, .row_h = 20,
				   .unfold = 1, .min_px = 0.5 };
	struct rd_boxes b = { 0 };
	static const struct want w[] = {
		{ "all", 0, 180, 800, 20, 0, 1, 0 },
		{ "a", 0, 160, 400, 20, 1, 1, 0 },
		{ "b", 0, 140, 300, 20, 2, 1, 0 },
		{ "c", 300, 140, 100, 20, 2, 1, 0 },
		{ "d", 400, 160, 400, 20, 1, 1, 0 },
	};

	(void)state;
	assert_int_equal(layout(p, &o, &b), 0);
	check(p, &b, w, 5);
	assert_int_equal(b.max_depth, 2);
	/* Icicle: root on top, rows go down; offset area. */
	o.icicle = 1;
	o.area = (struct rd_rect){ 10, 50, 800, 200 };
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.v[0].y, 50);
	assert_int_equal(b.v[0].x, 10);
	assert_int_equal(b.v[2].y, 90);
	assert_int_equal(b.v[3].x, 310);
	/* Hit testing: inside c, on its left edge, outside everything. */
	assert_string_equal(box_name(p, rd_flame_hit(&b, 350, 95)), "c");
	assert_string_equal(box_name(p, rd_flame_hit(&b, 310, 90)), "c");
	assert_string_equal(box_name(p, rd_flame_hit(&b, 309, 90)), "b");
	assert_null(rd_flame_hit(&b, 700, 95));
	assert_null(rd_flame_hit(&b, 9, 55));
	rd_boxes_free(&b);
	prof_free(p);
}

/* Zoom on a: the path below it full width, a fills W, its children keep
 * proportions: W/(T(z1−z0)) = 800/4 = 200 px per sample. */
static void test_flame_zoom(void **state)
{
	struct prof_profile *p = parse("a;b 3\na;c 1\nd 4\n");
	struct rd_flame_opts o = { .area = { 0, 0, 800, 200 }, .row_h = 20,
				   .unfold = 1, .min_px = 0.5 };
	struct rd_boxes b = { 0 };
	static const struct want w[] = {
		{ "all", 0, 180, 800, 20, 0, 1, RD_BOX_ANCESTOR },
		{ "a", 0, 160, 800, 20, 1, 1, 0 },
		{ "b", 0, 140, 600, 20, 2, 1, 0 },
		{ "c", 600, 140, 200, 20, 2, 1, 0 },
	};

	(void)state;
	o.focus = prof_child_find(p, 0, prof_node_get(p, prof_node_get(p, 0)->child)->frame);
	assert_int_equal(layout(p, &o, &b), 0);
	check(p, &b, w, 4);
	assert_int_equal(rd_flame_find(&b, p, o.focus), 1);
	o.focus = 999999;
	assert_int_equal(layout(p, &o, &b), -EINVAL);
	rd_boxes_free(&b);
	prof_free(p);
}

/* Thresholds: under half a pixel not drawn, 10 px or less thin, labels
 * from 20 px. T = 2000, W = 1000: 0.5 px per sample. */
static void test_flame_thresholds(void **state)
{
	struct prof_profile *p = parse("a 1958\nb 1\nc 20\nd 21\n");
	struct rd_flame_opts o = { .area = { 0, 0, 1000, 100 }, .row_h = 20,
				   .unfold = 1, .min_px = 0.5 };
	struct rd_boxes b = { 0 };

	(void)state;
	assert_int_equal(layout(p, &o, &b), 0);
	/* all, a, b (0.5 px: drawn, rounds to 1 px), c (10 px), d (10.5) */
	assert_int_equal(b.n, 5);
	assert_string_equal(box_name(p, &b.v[2]), "b");
	assert_true(b.v[2].flags & RD_BOX_THIN);
	assert_true(b.v[3].flags & RD_BOX_THIN);
	assert_false(b.v[3].flags & RD_BOX_LABEL);
	assert_false(b.v[4].flags & RD_BOX_THIN);
	assert_false(b.v[4].flags & RD_BOX_LABEL);
	assert_true(b.v[1].flags & RD_BOX_LABEL);
	prof_free(p);
	p = parse("a 3999\nb 1\n"); /* b: 0.25 px */
	o.area.w = 1000;
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, 2);
	rd_boxes_free(&b);
	prof_free(p);
}

/* A single child holding >99% folds onto its parent's row; exactly 99%
 * does not. */
static void test_flame_chain(void **state)
{
	struct prof_profile *p = parse("m;r;w;x 995\nm;r;w;y 3\nm;z 2\n");
	struct rd_flame_opts o = { .area = { 0, 0, 1000, 200 }, .row_h = 20,
				   .min_px = 0.5 };
	struct rd_boxes b = { 0 };
	static const struct want w[] = {
		{ "all", 0, 180, 1000, 20, 0, 1, 0 },
		{ "m", 0, 160, 1000, 20, 1, 1, 0 },
		{ "r", 0, 140, 998, 20, 2, 2, RD_BOX_CHAIN },
		{ "x", 0, 120, 995, 20, 3, 1, 0 },
		{ "y", 995, 120, 3, 20, 3, 1, 0 },
		{ "z", 998, 140, 2, 20, 2, 1, 0 },
	};

	(void)state;
	assert_int_equal(layout(p, &o, &b), 0);
	check(p, &b, w, 6);
	assert_string_equal(prof_str(p, prof_frame_get(p, prof_node_get(p, b.v[2].last)->frame)->name), "w");
	/* Show every frame: r and w on their own rows. */
	o.unfold = 1;
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, 7);
	prof_free(p);
	/* 99 of 100 is not more than 99%: no fold. */
	p = parse("m;r 99\nm 1\n");
	o.unfold = 0;
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, 3);
	prof_free(p);
	p = parse("m;r 995\nm 4\n");
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.v[1].count, 2);
	rd_boxes_free(&b);
	prof_free(p);
}

/* Children under 0.1% of the view merge per caller; zooming into the
 * caller shows them again. */
static void test_flame_small(void **state)
{
	struct prof_profile *p = parse("p;a 9990\np;q;b 5\np;q;c 5\n");
	struct rd_flame_opts o = { .area = { 0, 0, 1000, 200 }, .row_h = 20,
				   .min_px = 0.01 };
	struct rd_boxes b = { 0 };
	uint32_t pn, qn;

	(void)state;
	assert_int_equal(layout(p, &o, &b), 0);
	/* all, p, a, q, bucket(b, c) */
	assert_int_equal(b.n, 5);
	assert_string_equal(box_name(p, &b.v[3]), "q");
	assert_true(b.v[4].flags & RD_BOX_SMALL);
	assert_int_equal(b.v[4].count, 2);
	assert_int_equal(b.v[4].value, 10);
	assert_int_equal(b.v[4].node, b.v[3].node);
	assert_int_equal(b.v[4].depth, 3);
	/* Zoom into q: b and c are 50% of the view each. */
	pn = prof_node_get(p, 0)->child;
	qn = prof_node_get(p, prof_node_get(p, pn)->child)->sibling;
	o.focus = qn;
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, 5);
	assert_string_equal(box_name(p, &b.v[3]), "b");
	assert_int_equal(b.v[3].w, 500);
	assert_string_equal(box_name(p, &b.v[4]), "c");
	assert_int_equal(b.v[4].x, 500);
	/* One small child alone is drawn as itself. */
	prof_free(p);
	p = parse("p;a 1999\np;b 1\n"); /* b: 0.5 px */
	o.focus = 0;
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, 4);
	assert_string_equal(box_name(p, &b.v[3]), "b");
	rd_boxes_free(&b);
	prof_free(p);
}

/* An opened "N small functions" box: the caller full width, only its small
 * children, filling the width by their own sum (60 = 600 px). */
static void test_flame_bucket(void **state)
{
	struct prof_profile *p = parse("p;big 99940\np;s1 10\np;s2 20\np;s3 30\n");
	struct rd_flame_opts o = { .area = { 0, 0, 600, 200 }, .row_h = 20,
				   .min_px = 0.5 };
	struct rd_boxes b = { 0 };
	static const struct want w[] = {
		{ "all", 0, 180, 600, 20, 0, 1, RD_BOX_ANCESTOR },
		{ "p", 0, 160, 600, 20, 1, 1, 0 },
		{ "s1", 0, 140, 100, 20, 2, 1, 0 },
		{ "s2", 100, 140, 200, 20, 2, 1, 0 },
		{ "s3", 300, 140, 300, 20, 2, 1, 0 },
	};

	(void)state;
	o.area.w = 6000; /* the bucket: 3.6 px */
	assert_int_equal(layout(p, &o, &b), 0);
	o.area.w = 600;
	assert_int_equal(b.n, 4); /* all, p, big, 3 small functions */
	assert_true(b.v[3].flags & RD_BOX_SMALL);
	assert_int_equal(b.v[3].count, 3);
	o.focus = b.v[3].node;
	o.bucket = 1;
	assert_int_equal(layout(p, &o, &b), 0);
	check(p, &b, w, 5);
	rd_boxes_free(&b);
	prof_free(p);
}

/* A recursion 200,000 frames deep lays out without recursing in C (an
 * explicit work stack), one box per row. */
static void test_flame_deep(void **state)
{
	enum { DEPTH = 200000 };
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct prof_frame f = { 0 };
	uint32_t *ids = malloc(DEPTH * sizeof(*ids)), id;
	struct rd_flame_opts o = { .area = { 0, 0, 500, DEPTH + 10 }, .row_h = 1,
				   .unfold = 1, .min_px = 0.5, .icicle = 1 };
	struct rd_boxes b = { 0 };

	(void)state;
	assert_non_null(ids);
	f.name = prof_intern_cstr(p, "recurse");
	id = prof_frame_intern(p, &f);
	for (int i = 0; i < DEPTH; i++)
		ids[i] = id;
	assert_int_not_equal(prof_add_stack(p, ids, DEPTH, 7), UINT32_MAX);
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, DEPTH + 1);
	assert_int_equal(b.max_depth, DEPTH);
	assert_int_equal(b.v[DEPTH].y, DEPTH);
	assert_int_equal(b.v[DEPTH].w, 500);
	/* Folded: one chain box under "all". */
	o.unfold = 0;
	assert_int_equal(layout(p, &o, &b), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.v[1].count, DEPTH);
	rd_boxes_free(&b);
	free(ids);
	prof_free(p);
}

/* A stand-in font: 7 px per character (UTF-8 aware). */
static int measure7(void *ctx, int font, const char *s, size_t n)
{
	int w = 0;

	(void)ctx;
	(void)font;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			w += 7;
	return w;
}

static void test_text_fit(void **state)
{
	struct rd_text t = { .measure = measure7 };
	char out[64];

	(void)state;
	assert_int_equal(rd_text_fit(&t, 0, "build_report", 84, 0, out, sizeof(out)), 12);
	assert_string_equal(out, "build_report");
	/* 83 px: 11 characters fit, 10 plus the ellipsis. */
	rd_text_fit(&t, 0, "build_report", 83, 0, out, sizeof(out));
	assert_string_equal(out, "build_repo\xe2\x80\xa6");
	rd_text_fit(&t, 0, "ns::Foo::bar", 42, 1, out, sizeof(out));
	assert_string_equal(out, "\xe2\x80\xa6::bar");
	assert_int_equal(rd_text_fit(&t, 0, "abc", 6, 0, out, sizeof(out)), 0);
	rd_text_fit(&t, 0, "\xc3\xa9t\xc3\xa9s", 21, 0, out, sizeof(out));
	assert_string_equal(out, "\xc3\xa9t\xe2\x80\xa6");
}

static void test_format(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(rd_fmt_value(b, sizeof(b), 950, PROF_UNIT_SAMPLES), "950");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 1234, PROF_UNIT_SAMPLES), "1.2 K");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 1000, PROF_UNIT_SAMPLES), "1 K");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 340000, PROF_UNIT_SAMPLES), "340 K");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 3400000, PROF_UNIT_SAMPLES), "3.4 M");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 812, PROF_UNIT_NANOSECONDS), "812 ns");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 340000000, PROF_UNIT_NANOSECONDS), "340 ms");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 30000000000ULL, PROF_UNIT_NANOSECONDS), "30 s");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 999960000, PROF_UNIT_NANOSECONDS), "1 s");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 300000000000ULL, PROF_UNIT_NANOSECONDS), "5 min");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 7200000000000ULL, PROF_UNIT_NANOSECONDS), "2 h");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 1500, PROF_UNIT_NANOSECONDS), "1.5 \xc2\xb5s");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 512, PROF_UNIT_BYTES), "512 B");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 1536, PROF_UNIT_BYTES), "1.5 KiB");
	assert_string_equal(rd_fmt_value(b, sizeof(b), 12582912, PROF_UNIT_BYTES), "12 MiB");
	assert_string_equal(rd_fmt_pct(b, sizeof(b), 62.4), "62%");
	assert_string_equal(rd_fmt_pct(b, sizeof(b), 4.46), "4.5%");
	assert_string_equal(rd_fmt_pct(b, sizeof(b), 0.04), "<0.1%");
	assert_string_equal(rd_fmt_pct(b, sizeof(b), 0), "0%");
	assert_string_equal(rd_fmt_count(b, sizeof(b), 1234567), "1,234,567");
	assert_string_equal(rd_fmt_count(b, sizeof(b), 999), "999");
	assert_string_equal(rd_fmt_count(b, sizeof(b), 1000), "1,000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flame_exact),
		cmocka_unit_test(test_flame_zoom),
		cmocka_unit_test(test_flame_thresholds),
		cmocka_unit_test(test_flame_chain),
		cmocka_unit_test(test_flame_small),
		cmocka_unit_test(test_flame_deep),
		cmocka_unit_test(test_flame_bucket),
		cmocka_unit_test(test_text_fit),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
