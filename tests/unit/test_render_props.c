/* SPDX-License-Identifier: MIT */
/* Properties that hold for any profile, checked on random ones (fixed
 * seeds): shares add up, search shares never exceed the whole, boxes stay
 * inside the graph and inside their parents' span, and any sequence of
 * clicks, keys, text and resizes leaves the window consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "render/filter.h"
#include "render/flame.h"
#include "render/model.h"
#include "render/ui.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static struct prof_profile *random_profile(uint64_t *s)
{
	static const char *const names[] = {
		"main", "run", "parse", "lex", "eval", "malloc", "free", "memcpy",
		"futex_wait", "read", "write", "std::vector<int>::push_back",
		"json_dumps", "sort", "hash", "lookup", "[unknown]", "app+0x1f0",
		"recurse", "\xc3\xa9t\xc3\xa9",
	};
	struct prof_profile *p = prof_new(rnd(s) % 2 ? PROF_UNIT_SAMPLES :
					  PROF_UNIT_NANOSECONDS);
	uint32_t procs[3], threads[4], frames[20], path[40];
	int nstacks = 1 + (int)(rnd(s) % 300);

	for (int i = 0; i < 3; i++) {
		struct prof_frame f = { 0 };
		char n[16];

		snprintf(n, sizeof(n), "proc%d", i);
		f.name = prof_intern_cstr(p, n);
		f.kind = PROF_KIND_PROCESS;
		procs[i] = prof_frame_intern(p, &f);
	}
	for (int i = 0; i < 4; i++) {
		struct prof_frame f = { 0 };
		char n[16];

		snprintf(n, sizeof(n), "thread %d", i);
		f.name = prof_intern_cstr(p, n);
		f.kind = PROF_KIND_THREAD;
		threads[i] = prof_frame_intern(p, &f);
	}
	for (int i = 0; i < 20; i++) {
		struct prof_frame f = { 0 };

		f.name = prof_intern_cstr(p, names[i]);
		f.cls = (uint8_t)(rnd(s) % PROF_CLASS_COUNT);
		f.lang = (uint8_t)(rnd(s) % PROF_LANG_COUNT);
		f.kind = rnd(s) % 5 == 0 ? PROF_KIND_KERNEL : PROF_KIND_USER;
		frames[i] = prof_frame_intern(p, &f);
	}
	for (int k = 0; k < nstacks; k++) {
		size_t n = 0, depth = 1 + rnd(s) % 30;

		path[n++] = procs[rnd(s) % 3];
		if (rnd(s) % 2)
			path[n++] = threads[rnd(s) % 4];
		for (size_t d = 0; d < depth && n < 40; d++)
			path[n++] = frames[rnd(s) % (d < 3 ? 4 : 20)];
		assert_int_not_equal(prof_add_stack(p, path, n, 1 + rnd(s) % 1000),
				     UINT32_MAX);
	}
	return p;
}

static void check_model(struct rd_model *m, uint64_t *s)
{
	static const char *const queries[] = {
		"main", "a,e", "^l.x$", "prs", "[", "(", "", " , ", "t\xc3\xa9", "zzz",
	};
	uint64_t self = 0, cls = 0;

	for (uint32_t f = 0; f < m->nfn; f++) {
		self += m->fns[f].self;
		assert_true(m->fns[f].total <= m->total);
		assert_true(m->fns[f].self <= m->fns[f].total || f == 0);
	}
	for (int c = 0; c < PROF_CLASS_COUNT; c++)
		cls += m->class_self[c];
	assert_int_equal(self, m->total);
	assert_int_equal(cls, m->total);
	assert_true(strlen(m->answer) > 10);
	assert_true(m->answer[strlen(m->answer) - 1] == '.');
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rd_model_search(m, queries[rnd(s) % 10]), 0);
		assert_true(m->match_value <= m->total);
		assert_true(m->match_boxes < m->nnodes);
	}
}

static void check_layout(struct rd_model *m, uint64_t *s)
{
	struct rd_flame_opts o = { .row_h = 1 + (int)(rnd(s) % 30), .min_px = 0.5 };
	struct rd_boxes b = { 0 };

	o.area = (struct rd_rect){ (int)(rnd(s) % 50), (int)(rnd(s) % 50),
				   1 + (int)(rnd(s) % 3000), 1 + (int)(rnd(s) % 2000) };
	o.icicle = (int)(rnd(s) % 2);
	o.unfold = (int)(rnd(s) % 2);
	o.bucket = (int)(rnd(s) % 3 == 0);
	o.scroll = (int)(rnd(s) % 4) * o.row_h;
	o.focus = (uint32_t)(rnd(s) % m->nnodes);
	assert_int_equal(rd_flame_layout(&m->tree, &o, &b), 0);
	for (size_t i = 0; i < b.n; i++) {
		const struct rd_box *x = &b.v[i];

		assert_true(x->w >= 1);
		assert_true(x->x >= o.area.x);
		assert_true(x->x + x->w <= o.area.x + o.area.w);
		assert_true(x->y + x->h > o.area.y);
		assert_true(x->y < o.area.y + o.area.h);
		assert_true(x->fw >= o.min_px);
		assert_true(x->fx >= -0.001 && x->fx + x->fw <= o.area.w + 0.001);
	}
	rd_boxes_free(&b);
}

static int measure7(void *ctx, int font, const char *s, size_t n)
{
	(void)ctx, (void)font, (void)s;
	return (int)n * 7;
}

static void check_ui(struct rd_model *m, uint64_t *s)
{
	struct rd_text t = { .measure = measure7, .line_h = { 15, 15, 18 } };
	static const char *const texts[] = { "/", "m", "a", ",", "(", "s", " " };
	struct rd_ui ui;
	int w = 300 + (int)(rnd(s) % 1500), h = 200 + (int)(rnd(s) % 900);

	assert_int_equal(rd_ui_init(&ui, m, &t), 0);
	for (int step = 0; step < 60; step++) {
		int x = (int)(rnd(s) % (unsigned)w), y = (int)(rnd(s) % (unsigned)h);

		assert_int_equal(rd_ui_layout(&ui, w, h, 1 + (double)(rnd(s) % 2)), 0);
		switch (rnd(s) % 8) {
		case 0: case 1: rd_ui_click(&ui, x, y); break;
		case 2: rd_ui_motion(&ui, x, y); break;
		case 3: rd_ui_key(&ui, (enum rd_key)(1 + rnd(s) % 8)); break;
		case 4: rd_ui_text(&ui, texts[rnd(s) % 7]); break;
		case 5: rd_ui_wheel(&ui, x, y, (int)(rnd(s) % 5) - 2); break;
		case 6: rd_ui_release_button(&ui); break;
		default: w = 100 + (int)(rnd(s) % 2000); h = 100 + (int)(rnd(s) % 1200);
		}
		assert_true(ui.focus < ui.m->nnodes);
	}
	assert_int_equal(rd_ui_layout(&ui, w, h, 1), 0);
	rd_ui_release(&ui);
}

static void test_random_profiles(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 120; seed++) {
		uint64_t s = seed * 0x9E3779B97F4A7C15ull;
		struct prof_profile *p = random_profile(&s);
		struct rd_model *m = rd_model_new(p);
		struct rd_filtered f;

		assert_non_null(m);
		check_model(m, &s);
		for (int i = 0; i < 5; i++)
			check_layout(m, &s);
		check_ui(m, &s);
		/* Filtered views keep the whole's total. */
		for (unsigned fl = 1; fl <= 3; fl++) {
			struct rd_model *fm;

			assert_int_equal(rd_filter(p, fl, &f), 0);
			fm = rd_model_new(f.p);
			assert_int_equal(fm->total, m->total);
			check_layout(fm, &s);
			rd_model_free(fm);
			rd_filtered_free(&f);
		}
		rd_model_free(m);
		prof_free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_profiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
