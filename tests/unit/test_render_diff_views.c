/* SPDX-License-Identifier: MIT */
/* The views in the window, as pure code (text measured by a 7 px per
 * character stand-in): diff colours of the graph's boxes and the diff
 * tooltip lines, `s` opening the sandwich with both callers and Escape
 * going back, the call tree pane's search, and live updates that keep the
 * zoom (or say that the zoomed frame is gone), from a fake hearthd. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "render/ui.h"
#include "render/views.h"

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

static const struct rd_text text = { .measure = measure7, .line_h = { 15, 15, 18 } };

static struct prof_profile *parse(const char *t)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, t, strlen(t), 1, err, sizeof(err)), 0);
	return p;
}

static const struct rd_box *box(const struct rd_ui *ui, const char *name)
{
	char label[512];

	for (size_t i = 0; i < ui->boxes.n; i++)
		if (!strcmp(rd_ui_box_label(ui, &ui->boxes.v[i], label, sizeof(label)), name))
			return &ui->boxes.v[i];
	return NULL;
}

static int has_sbox(const struct rd_views *v, int side, const char *name)
{
	const struct rd_model *m = v->sw_m[side];

	for (size_t i = 0; i < v->sw_boxes[side].n; i++) {
		const struct rd_box *b = &v->sw_boxes[side].v[i];

		if (!strcmp(prof_str(m->p, prof_frame_get(m->p, prof_node_get(m->p, b->node)->frame)->name), name))
			return 1;
	}
	return 0;
}

static const struct rd_zone *zone(const struct rd_ui *ui, int kind, uint32_t arg)
{
	for (size_t i = 0; i < ui->nzones; i++)
		if (ui->zones[i].kind == kind && ui->zones[i].arg == arg)
			return &ui->zones[i];
	return NULL;
}

static void click(struct rd_ui *ui, const struct rd_zone *z)
{
	assert_non_null(z);
	assert_int_equal(rd_ui_click(ui, z->r.x + 1, z->r.y + 1), 1);
	assert_int_equal(rd_ui_layout(ui, ui->w, ui->h, 1), 0);
}

static void test_diff_in_window(void **state)
{
	struct rd_views *v = rd_views_new();
	struct rd_model *m;
	struct rd_ui ui;
	const struct rd_box *b;
	char err[256], lines[4][256];

	(void)state;
	assert_non_null(v);
	assert_int_equal(rd_views_set_diff(v,
		parse("app;main;hot_b 100\napp;main;cold 200\napp;main;steady 500\n"
		      "app;main;gone 50\napp;main;idle 150\n"),
		parse("app;main;hot_b 200\napp;main;cold 150\napp;main;steady 500\n"
		      "app;main;idle 150\n"),
		&m, err, sizeof(err)), 0);
	assert_string_equal(m->answer, "hot_b grew from 10% to 20% of CPU time.");
	assert_int_equal(rd_ui_init(&ui, m, &text), 0);
	assert_int_equal(rd_views_attach(v, &ui, NULL, NULL), 0);
	ui.unfold = 1;
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_int_equal(ui.avail, 0); /* no filters on a diff */
	/* +100%: full red; -25%: a quarter of the way to blue; only before:
	 * full blue; 0: neutral. */
	assert_non_null(b = box(&ui, "hot_b"));
	assert_int_equal(rd_ui_box_color(&ui, b), 0xE0301E);
	assert_non_null(b = box(&ui, "cold"));
	assert_int_equal(rd_ui_box_color(&ui, b), rd_diff_color(-25, 0));
	assert_non_null(b = box(&ui, "gone"));
	assert_int_equal(rd_ui_box_color(&ui, b), 0x1F6FD1);
	assert_non_null(b = box(&ui, "steady"));
	assert_int_equal(rd_ui_box_color(&ui, b), 0xE6E2DA);
	assert_int_equal(rd_views_tip_lines(&ui, box(&ui, "hot_b"), lines, 4), 4);
	assert_string_equal(lines[3], "s: its callers and callees (sandwich)");
	assert_string_equal(lines[0], "Before: 100 (10%)  After: 200 (20%)");
	/* The top table of a diff: functions by the largest change first
	 * (hot_b +10 pp), re-sorted by a column, a row finds the function. */
	ui.show_table = 1;
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_non_null(zone(&ui, RD_Z_DT_ROW, 0));
	assert_int_equal(v->ndt, 6); /* main too */
	assert_string_equal(prof_str(m->p, v->dt[0].name), "hot_b");
	assert_true(v->dt[0].change == 10.0);
	click(&ui, zone(&ui, RD_Z_DT_HEAD, RD_DT_NAME));
	assert_string_equal(prof_str(m->p, v->dt[0].name), "cold");
	click(&ui, zone(&ui, RD_Z_DT_ROW, 1));
	assert_string_equal(ui.query, "^gone$");
	assert_int_equal(ui.m->match_boxes, 1);
	/* A row's sandwich button. */
	click(&ui, zone(&ui, RD_Z_DT_SANDWICH, 0));
	assert_int_equal(v->pane, RD_PANE_SANDWICH);
	assert_string_equal(v->sw_name, "cold");
	assert_int_equal(rd_ui_key(&ui, RD_KEY_ESCAPE), 1);
	assert_int_equal(v->pane, RD_PANE_GRAPH);
	ui.show_table = 0;
	rd_ui_set_query(&ui, "");
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	/* Colour-blind palette through its button's state. */
	v->dopt.palette = RD_DIFF_COLORBLIND;
	assert_int_equal(rd_ui_box_color(&ui, box(&ui, "hot_b")), 0xCA0020);
	assert_int_equal(rd_ui_box_color(&ui, box(&ui, "steady")), 0xBEBEBE);
	rd_views_detach(v);
	rd_ui_release(&ui);
	rd_views_free(v);
}

static void test_sandwich_key(void **state)
{
	struct prof_profile *p = parse("app;main;load;parse 6\napp;main;save;parse 4\napp;main;parse;lex 5\n");
	struct rd_model *m = rd_model_new(p);
	struct rd_views *v = rd_views_new();
	const struct rd_box *b;
	struct rd_ui ui;
	FILE *out;
	char *dump = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(rd_ui_init(&ui, m, &text), 0);
	assert_int_equal(rd_views_attach(v, &ui, NULL, NULL), 0);
	ui.unfold = 1;
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	/* Select parse under load, then s. */
	for (size_t i = 0; i < ui.boxes.n; i++) {
		b = &ui.boxes.v[i];
		if (b->depth == 4 && !strcmp(rd_model_fn_name(m, rd_model_node_fn(m, b->node)), "parse")) {
			ui.selected = b->node;
			break;
		}
	}
	ui.focus = 0;
	assert_int_equal(rd_ui_text(&ui, "s"), 1);
	assert_int_equal(v->pane, RD_PANE_SANDWICH);
	assert_string_equal(v->sw_name, "parse");
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_true(has_sbox(v, 0, "load"));
	assert_true(has_sbox(v, 0, "save"));
	assert_true(has_sbox(v, 0, "main"));
	assert_true(has_sbox(v, 1, "lex"));
	assert_false(has_sbox(v, 1, "load"));
	out = open_memstream(&dump, &len);
	assert_int_equal(rd_ui_dump(&ui, out), 0);
	fclose(out);
	assert_non_null(strstr(dump, "\nview sandwich\n"));
	assert_non_null(strstr(dump, "\nsandwich parse\n"));
	free(dump);
	/* Escape goes back to the graph. */
	assert_int_equal(rd_ui_key(&ui, RD_KEY_ESCAPE), 1);
	assert_int_equal(v->pane, RD_PANE_GRAPH);
	/* The top table's sandwich button on parse's row. */
	ui.show_table = 1;
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	{
		const struct rd_zone *z = NULL;

		for (size_t i = 0; i < ui.nzones; i++)
			if (ui.zones[i].kind == RD_Z_TT_SANDWICH &&
			    !strcmp(rd_model_fn_name(m, ui.zones[i].arg), "parse"))
				z = &ui.zones[i];
		assert_non_null(z);
		assert_int_equal(rd_ui_click(&ui, z->r.x + 1, z->r.y + 1), 1);
	}
	assert_int_equal(v->pane, RD_PANE_SANDWICH);
	assert_string_equal(v->sw_name, "parse");
	assert_int_equal(rd_ui_key(&ui, RD_KEY_ESCAPE), 1);
	ui.show_table = 0;
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	/* The call tree pane follows the window's search: 2 parse nodes
	 * (parse under main is a third). */
	v->pane = RD_PANE_CALLTREE;
	rd_ui_set_query(&ui, "^parse$");
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_int_equal(v->ct.nmatch, 3);
	assert_int_equal(rd_ui_key(&ui, RD_KEY_ENTER), 1);
	assert_int_equal(v->ct.cur, 1);
	rd_views_detach(v);
	rd_ui_release(&ui);
	rd_views_free(v);
	rd_model_free(m);
	prof_free(p);
}

static const char *ct_name(const struct rd_views *v, size_t row)
{
	return rd_model_fn_name(v->ct_of, rd_tree_fn(&v->ct_of->tree, v->ct.rows[row].pre));
}

static long ct_find(const struct rd_views *v, const char *name)
{
	for (size_t i = 0; i < v->ct.nrows; i++)
		if (!strcmp(ct_name(v, i), name))
			return (long)i;
	return -1;
}

/* The call tree's rows open on click and show a function's callers as
 * the tree; side by side zooms the diff from a click in "after". */
static void test_panes(void **state)
{
	struct rd_views *v = rd_views_new();
	const struct prof_profile *ap;
	struct rd_model *m;
	struct rd_ui ui;
	char err[256];
	long r;

	(void)state;
	assert_int_equal(rd_views_set_diff(v,
		parse("app;main;hot_b;spin 100\napp;main;cold;spin 200\napp;main;steady 700\n"),
		parse("app;main;hot_b;spin 200\napp;main;cold;spin 100\napp;main;steady 700\n"),
		&m, err, sizeof(err)), 0);
	assert_int_equal(rd_ui_init(&ui, m, &text), 0);
	assert_int_equal(rd_views_attach(v, &ui, NULL, NULL), 0);
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	click(&ui, zone(&ui, RD_Z_VIEW_BUTTON, RD_VB_CALLTREE));
	assert_int_equal(v->pane, RD_PANE_CALLTREE);
	assert_int_equal(v->ct.nrows, 1);
	click(&ui, zone(&ui, RD_Z_CT_ROW, 0)); /* app */
	click(&ui, zone(&ui, RD_Z_CT_ROW, 1)); /* main */
	assert_int_equal(v->ct.nrows, 5);
	assert_string_equal(ct_name(v, 2), "steady"); /* largest first */
	assert_true((r = ct_find(v, "spin")) < 0);
	assert_true((r = ct_find(v, "cold")) > 0);
	click(&ui, zone(&ui, RD_Z_CT_ROW, (uint32_t)r));
	assert_true((r = ct_find(v, "spin")) > 0);
	/* spin's callers as the tree: spin, then cold and hot_b. */
	click(&ui, zone(&ui, RD_Z_CT_CALLERS, (uint32_t)r));
	assert_int_equal(v->ct_side, 0);
	assert_string_equal(v->ct_name, "spin");
	assert_string_equal(ct_name(v, 0), "spin");
	assert_int_equal(v->ct.nrows, 3);
	assert_true(ct_find(v, "cold") == 1 || ct_find(v, "cold") == 2);
	assert_true(ct_find(v, "hot_b") == 1 || ct_find(v, "hot_b") == 2);
	click(&ui, zone(&ui, RD_Z_VIEW_BUTTON, RD_VB_CT_WHOLE));
	assert_int_equal(v->ct_side, -1);
	/* Side by side. */
	click(&ui, zone(&ui, RD_Z_VIEW_BUTTON, RD_VB_SIDE));
	assert_int_equal(v->pane, RD_PANE_SIDE);
	assert_true(v->side_boxes[0].n > 0 && v->side_boxes[1].n > 0);
	ap = v->side_m[1]->p;
	for (size_t i = 0; i < v->side_boxes[1].n; i++) {
		const struct rd_box *b = &v->side_boxes[1].v[i];

		if (b->node && !strcmp(prof_str(ap, prof_frame_get(ap, prof_node_get(ap, b->node)->frame)->name), "hot_b")) {
			assert_int_equal(rd_ui_click(&ui, b->x + 1, b->y + 1), 1);
			break;
		}
	}
	assert_true(ui.focus != 0);
	assert_string_equal(rd_model_fn_name(ui.m, rd_model_node_fn(ui.m, ui.focus)), "hot_b");
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	rd_views_detach(v);
	rd_ui_release(&ui);
	rd_views_free(v);
}

/* A fake hearthd: each status reports a new window; snapshots cycle
 * through three profiles. */
static const char *const windows[] = {
	"app;main;a 10\napp;main;b 5\n",
	"app;main;a 10\napp;main;c 7\n",
	"other;x 5\n",
};

struct fake {
	int n;
	const char *const *data;
	int ndata;
};

static int fake_fetch(void *ctx, int snapshot, struct rd_live_answer *a)
{
	struct fake *f = ctx;

	if (!snapshot) {
		a->window_ns = 5000000000ull; /* a poll a second: no window skipped */
		a->end_ns = (uint64_t)++f->n;
		return 0;
	}
	a->p = parse(f->data[(f->n - 1) % f->ndata]);
	a->from_ns = 1;
	a->to_ns = 2;
	return 0;
}

/* Waits (up to 5 s) for the next window and takes it. */
static void next_update(struct rd_ui *ui)
{
	for (int i = 0; i < 500; i++) {
		if (rd_views_update(ui) == 1)
			return;
		usleep(10000);
	}
	fail_msg("no live update in 5 s");
}

static void test_live_keeps_zoom(void **state)
{
	struct fake f = { .data = windows, .ndata = 3 };
	struct rd_views *v = rd_views_new();
	struct rd_live *l = rd_live_new(fake_fetch, &f, 300000000000ull);
	struct rd_model *m;
	struct rd_ui ui;
	char err[256];
	int seen_c = 0;

	(void)state;
	assert_int_equal(rd_views_set_live(v, l, parse("app;main;a 1\n"), 1, 2, &m), 0);
	assert_int_equal(rd_ui_init(&ui, m, &text), 0);
	assert_int_equal(rd_views_attach(v, &ui, NULL, NULL), 0);
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	ui.focus = prof_node_get(m->p, prof_node_get(m->p, 0)->child)->child; /* main */
	rd_ui_set_query(&ui, "^a$");
	rd_live_pause(l, 1);
	/* Until the profile with c arrives, the zoom on main is kept. */
	rd_live_pause(l, 0);
	for (int i = 0; i < 3 && !seen_c; i++) {
		next_update(&ui);
		assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
		assert_string_equal(prof_str(ui.m->p, prof_frame_get(ui.m->p,
				    prof_node_get(ui.m->p, ui.focus)->frame)->name), "main");
		seen_c = box(&ui, "c") != NULL;
		/* The search is applied to the new data. */
		assert_string_equal(ui.query, "^a$");
		assert_int_equal(ui.m->match_boxes, 1);
		assert_int_equal(ui.m->match_value, 10);
	}
	assert_true(seen_c);
	assert_string_equal(v->notice, "");
	/* The next window has no app;main: the zoom resets and says so. */
	next_update(&ui);
	assert_int_equal(ui.focus, 0);
	assert_string_equal(v->notice, "The zoomed frame main is not in the latest data; showing everything.");
	assert_true(v->live_updates >= 2);
	rd_views_detach(v);
	rd_ui_release(&ui);
	rd_views_free(v);
	/* No daemon: the sentence. */
	assert_int_equal(rd_live_check("/nonexistent/hearth.sock", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "hearthd is not running: start it with sudo systemctl start hearthd");
}

/* An open sandwich follows the data, and closes (saying so) when its
 * function is gone. */
static void test_live_sandwich(void **state)
{
	static const char *const data[] = {
		"app;main;a 10\napp;main;b;a 5\n",
		"app;main;a 10\napp;main;b;a 5\napp;main;c;a 2\n",
		"other;x 5\n",
	};
	struct fake f = { .data = data, .ndata = 3 };
	struct rd_views *v = rd_views_new();
	struct rd_live *l = rd_live_new(fake_fetch, &f, 300000000000ull);
	struct rd_model *m;
	struct rd_ui ui;

	(void)state;
	assert_int_equal(rd_views_set_live(v, l, parse("app;main;a 1\n"), 1, 2, &m), 0);
	assert_int_equal(rd_ui_init(&ui, m, &text), 0);
	rd_live_pause(l, 1);
	assert_int_equal(rd_views_attach(v, &ui, NULL, NULL), 0);
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_int_equal(rd_views_sandwich(&ui, "a"), 1);
	rd_live_pause(l, 0);
	next_update(&ui); /* main;a and b;a */
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_int_equal(v->pane, RD_PANE_SANDWICH);
	assert_true(has_sbox(v, 0, "b"));
	next_update(&ui); /* a new caller, c */
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_int_equal(v->pane, RD_PANE_SANDWICH);
	assert_true(has_sbox(v, 0, "c"));
	next_update(&ui); /* no a */
	assert_int_equal(v->pane, RD_PANE_GRAPH);
	assert_string_equal(v->notice, "a is not in the latest data; the sandwich closed.");
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	rd_views_detach(v);
	rd_ui_release(&ui);
	rd_views_free(v);
}

/* The call tree pane keeps its open rows, and the callers tree it shows,
 * across new data. */
static void test_live_calltree(void **state)
{
	struct fake f = { .data = windows, .ndata = 2 };
	struct rd_views *v = rd_views_new();
	struct rd_live *l = rd_live_new(fake_fetch, &f, 300000000000ull);
	struct rd_model *m;
	struct rd_ui ui;

	(void)state;
	assert_int_equal(rd_views_set_live(v, l, parse("app;main;a 1\napp;main;b 1\n"), 1, 2, &m), 0);
	assert_int_equal(rd_ui_init(&ui, m, &text), 0);
	rd_live_pause(l, 1);
	assert_int_equal(rd_views_attach(v, &ui, NULL, NULL), 0);
	v->pane = RD_PANE_CALLTREE;
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	click(&ui, zone(&ui, RD_Z_CT_ROW, 0)); /* app */
	click(&ui, zone(&ui, RD_Z_CT_ROW, 1)); /* main */
	assert_int_equal(v->ct.nrows, 4);
	rd_live_pause(l, 0);
	next_update(&ui); /* main: a 10, b 5 */
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_int_equal(v->ct.nrows, 4);
	assert_string_equal(ct_name(v, 1), "main");
	assert_int_equal(v->ct.rows[1].open, 1);
	assert_string_equal(ct_name(v, 2), "a");
	/* The callers of a as the tree, kept through the next window. */
	click(&ui, zone(&ui, RD_Z_CT_CALLERS, 2));
	assert_int_equal(v->ct_side, 0);
	assert_string_equal(ct_name(v, 0), "a");
	next_update(&ui); /* main: a 10, c 7 */
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_int_equal(v->ct_side, 0);
	assert_string_equal(v->ct_name, "a");
	assert_string_equal(ct_name(v, 0), "a");
	assert_int_equal(v->ct.rows[0].open, 1);
	assert_string_equal(ct_name(v, 1), "main");
	rd_views_detach(v);
	rd_ui_release(&ui);
	rd_views_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_in_window),
		cmocka_unit_test(test_sandwich_key),
		cmocka_unit_test(test_panes),
		cmocka_unit_test(test_live_keeps_zoom),
		cmocka_unit_test(test_live_sandwich),
		cmocka_unit_test(test_live_calltree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
