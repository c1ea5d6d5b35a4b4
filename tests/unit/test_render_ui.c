/* SPDX-License-Identifier: MIT */
/* The window as pure code: clicks, keys and text change the state; the
 * layout's zones, breadcrumb, status and table follow. Text is measured by
 * a 7 px per character stand-in, so no window is needed. */
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
#include "render/palette.h"
#include "render/ui.h"

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

struct fx {
	struct prof_profile *p;
	struct rd_model *m;
	struct rd_ui ui;
};

static const char fixture[] =
	"app;main;build_report;dumps 24\n"
	"app;main;build_report 30\n"
	"app;main;build_report;memcpy_[k] 8\n"
	"app;main 5\n"
	"app;main;parse;lex 20\n"
	"app;main;parse;parse_expr 13\n";

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct rd_text t = { .measure = measure7, .line_h = { 15, 15, 18 } };
	char err[128];

	f->p = prof_new(PROF_UNIT_SAMPLES);
	assert_int_equal(prof_folded_parse(f->p, fixture, strlen(fixture), 1, err,
					   sizeof(err)), 0);
	f->m = rd_model_new(f->p);
	assert_non_null(f->m);
	assert_int_equal(rd_ui_init(&f->ui, f->m, &t), 0);
	assert_int_equal(rd_ui_layout(&f->ui, 1200, 800, 1), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	rd_ui_release(&f->ui);
	rd_model_free(f->m);
	prof_free(f->p);
	free(f);
	return 0;
}

static const struct rd_box *box(struct rd_ui *ui, const char *name)
{
	char label[256];

	for (size_t i = 0; i < ui->boxes.n; i++)
		if (!strcmp(rd_ui_box_label(ui, &ui->boxes.v[i], label,
					    sizeof(label)), name))
			return &ui->boxes.v[i];
	return NULL;
}

static const struct rd_zone *zone(struct rd_ui *ui, int kind, uint32_t arg)
{
	for (size_t i = 0; i < ui->nzones; i++)
		if (ui->zones[i].kind == kind && ui->zones[i].arg == arg)
			return &ui->zones[i];
	return NULL;
}

static size_t count_zones(struct rd_ui *ui, int kind)
{
	size_t n = 0;

	for (size_t i = 0; i < ui->nzones; i++)
		n += ui->zones[i].kind == kind;
	return n;
}

static void click_box(struct rd_ui *ui, const char *name)
{
	const struct rd_box *b = box(ui, name);

	assert_non_null(b);
	assert_int_equal(rd_ui_click(ui, b->x + 1, b->y + 1), 1);
	assert_int_equal(rd_ui_layout(ui, ui->w, ui->h, 1), 0);
}

static void click_zone(struct rd_ui *ui, const struct rd_zone *z)
{
	assert_non_null(z);
	assert_int_equal(rd_ui_click(ui, z->r.x + 1, z->r.y + 1), 1);
	assert_int_equal(rd_ui_layout(ui, ui->w, ui->h, 1), 0);
}

/* Click zooms: the box fills the graph's width, the breadcrumb has one
 * step per level, Escape and a breadcrumb step zoom out. */
static void test_zoom(void **state)
{
	struct fx *f = *state;
	struct rd_ui *ui = &f->ui;
	const struct rd_box *b;

	assert_int_equal(count_zones(ui, RD_Z_CRUMB), 1);
	assert_int_equal(box(ui, "build_report")->w, 734); /* 1184 x 62% */
	click_box(ui, "build_report");
	b = box(ui, "build_report");
	assert_int_equal(b->x, ui->graph.x);
	assert_int_equal(b->w, ui->graph.w);
	assert_int_equal(box(ui, "dumps")->w, 458); /* 1184 x 24/62 */
	assert_null(box(ui, "parse"));
	assert_int_equal(count_zones(ui, RD_Z_CRUMB), 4);
	/* Clicking the zoomed box again zooms out to its caller. */
	click_box(ui, "build_report");
	assert_int_equal(box(ui, "main")->w, ui->graph.w);
	assert_non_null(box(ui, "parse"));
	click_box(ui, "dumps");
	click_zone(ui, zone(ui, RD_Z_CRUMB, prof_node_get(f->p, 0)->child));
	assert_int_equal(count_zones(ui, RD_Z_CRUMB), 2);
	assert_int_equal(rd_ui_key(ui, RD_KEY_ESCAPE), 1);
	assert_int_equal(ui->focus, 0);
	assert_int_equal(rd_ui_key(ui, RD_KEY_ESCAPE), 0);
}

/* '/' then text searches as you type; Return leaves the box; Escape then
 * clears the search. */
static void test_search(void **state)
{
	struct fx *f = *state;
	struct rd_ui *ui = &f->ui;

	assert_int_equal(rd_ui_text(ui, "x"), 0);
	assert_int_equal(rd_ui_key(ui, RD_KEY_SLASH), 1);
	assert_true(ui->typing);
	rd_ui_text(ui, "lex");
	rd_ui_text(ui, ",");
	rd_ui_text(ui, "dumpz");
	rd_ui_key(ui, RD_KEY_BACKSPACE);
	rd_ui_text(ui, "s");
	rd_ui_key(ui, RD_KEY_ENTER);
	assert_false(ui->typing);
	rd_ui_layout(ui, ui->w, ui->h, 1);
	assert_string_equal(ui->query, "lex,dumps");
	assert_string_equal(ui->status, "2 matches \xc2\xb7 44% of the total");
	/* Non-matching boxes fade towards the background, matches do not. */
	assert_int_equal(rd_ui_box_color(ui, box(ui, "main")),
			 rd_mix(rd_frame_color(PROF_CLASS_UNKNOWN, "main"), RD_COL_BG, 0.72));
	assert_int_equal(rd_ui_box_color(ui, box(ui, "dumps")),
			 rd_frame_color(PROF_CLASS_UNKNOWN, "dumps"));
	assert_int_equal(rd_ui_key(ui, RD_KEY_ESCAPE), 1);
	rd_ui_layout(ui, ui->w, ui->h, 1);
	assert_string_equal(ui->status, "");
}

/* The legend fades a class and brings it back; a card finds its function. */
static void test_legend_cards(void **state)
{
	struct fx *f = *state;
	struct rd_ui *ui = &f->ui;
	uint32_t before = rd_ui_box_color(ui, box(ui, "memcpy"));

	/* memcpy_[k] is a kernel frame: system, grey. */
	assert_int_equal(before, rd_frame_color(PROF_CLASS_SYSTEM, "memcpy"));
	assert_non_null(zone(ui, RD_Z_LEGEND, PROF_CLASS_UNKNOWN));
	click_zone(ui, zone(ui, RD_Z_LEGEND, PROF_CLASS_SYSTEM));
	assert_int_equal(rd_ui_box_color(ui, box(ui, "memcpy")),
			 rd_mix(before, RD_COL_BG, 0.78));
	assert_int_equal(rd_ui_box_color(ui, box(ui, "dumps")),
			 rd_frame_color(PROF_CLASS_UNKNOWN, "dumps"));
	click_zone(ui, zone(ui, RD_Z_LEGEND, PROF_CLASS_SYSTEM));
	assert_int_equal(rd_ui_box_color(ui, box(ui, "memcpy")), before);
	/* Cards: build_report (38 of its own), dumps, lex. */
	assert_int_equal(count_zones(ui, RD_Z_CARD), 3);
	click_zone(ui, &ui->zones[0]);
	assert_string_equal(ui->query, "^build_report$");
	assert_string_equal(ui->status, "1 match \xc2\xb7 62% of the total");
}

/* Arrows move the selection, Enter zooms into it. */
static void test_keys(void **state)
{
	struct fx *f = *state;
	struct rd_ui *ui = &f->ui;

	rd_ui_key(ui, RD_KEY_UP); /* all -> app */
	rd_ui_key(ui, RD_KEY_UP); /* main */
	rd_ui_key(ui, RD_KEY_UP); /* build_report, the widest */
	rd_ui_layout(ui, ui->w, ui->h, 1);
	assert_int_equal(ui->selected, box(ui, "build_report")->node);
	rd_ui_key(ui, RD_KEY_RIGHT);
	assert_int_equal(ui->selected, box(ui, "parse")->node);
	rd_ui_key(ui, RD_KEY_RIGHT); /* no neighbour: stays */
	assert_int_equal(ui->selected, box(ui, "parse")->node);
	rd_ui_key(ui, RD_KEY_LEFT);
	assert_int_equal(ui->selected, box(ui, "build_report")->node);
	rd_ui_key(ui, RD_KEY_DOWN);
	assert_int_equal(ui->selected, box(ui, "main")->node);
	rd_ui_key(ui, RD_KEY_UP);
	assert_int_equal(rd_ui_key(ui, RD_KEY_ENTER), 1);
	rd_ui_layout(ui, ui->w, ui->h, 1);
	assert_int_equal(ui->focus, box(ui, "build_report")->node);
	assert_int_equal(box(ui, "build_report")->w, ui->graph.w);
}

/* Toolbar: icicle puts the root on top; the table pane sorts by column and
 * its divider drags; "Show every frame" unfolds; Reset clears all. */
static void test_toolbar_table(void **state)
{
	struct fx *f = *state;
	struct rd_ui *ui = &f->ui;
	int gw = ui->graph.w;

	click_zone(ui, zone(ui, RD_Z_BUTTON, RD_BTN_MODE));
	assert_int_equal(box(ui, "all")->y, ui->graph.y);
	/* Colour by value: yellow to red by share of the view. */
	click_zone(ui, zone(ui, RD_Z_BUTTON, RD_BTN_COLOR));
	assert_int_equal(rd_ui_box_color(ui, box(ui, "build_report")), rd_value_color(0.62));
	assert_int_equal(rd_ui_box_color(ui, box(ui, "main")), rd_value_color(1.0));
	click_zone(ui, zone(ui, RD_Z_BUTTON, RD_BTN_COLOR));
	assert_int_equal(rd_ui_box_color(ui, box(ui, "build_report")),
			 rd_frame_color(PROF_CLASS_UNKNOWN, "build_report"));
	click_zone(ui, zone(ui, RD_Z_BUTTON, RD_BTN_TABLE));
	assert_true(ui->graph.w < gw);
	assert_int_equal(box(ui, "all")->w, ui->graph.w);
	/* Sorted by total: main (95) first; by self: build_report (30). */
	assert_string_equal(rd_model_fn_name(f->m, ui->table_idx[0]), "main");
	click_zone(ui, zone(ui, RD_Z_TABLE_HEAD, RD_SORT_SELF));
	assert_string_equal(rd_model_fn_name(f->m, ui->table_idx[0]), "build_report");
	assert_int_equal(ui->table_n, 7);
	/* A row finds its function. */
	click_zone(ui, zone(ui, RD_Z_TABLE_ROW, ui->table_idx[1]));
	assert_string_equal(ui->query, "^dumps$");
	/* Drag the divider 100 px left: the table grows by 100. */
	{
		const struct rd_zone *d = zone(ui, RD_Z_DIVIDER, 0);
		int tw = ui->table.w, x = d->r.x + d->r.w / 2;

		assert_int_equal(rd_ui_click(ui, x, d->r.y + 5), 1);
		assert_int_equal(rd_ui_motion(ui, x - 100, d->r.y + 5), 1);
		assert_int_equal(rd_ui_release_button(ui), 1);
		rd_ui_layout(ui, ui->w, ui->h, 1);
		assert_true(ui->table.w > tw + 90 && ui->table.w < tw + 110);
	}
	click_zone(ui, zone(ui, RD_Z_BUTTON, RD_BTN_RESET));
	assert_string_equal(ui->query, "");
	assert_int_equal(ui->focus, 0);
}

/* Hover: a tooltip with total, self and samples; the dump lists it. */
static void test_tooltip_dump(void **state)
{
	struct fx *f = *state;
	struct rd_ui *ui = &f->ui;
	const struct rd_box *b = box(ui, "build_report");
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	assert_int_equal(rd_ui_motion(ui, b->x + 5, b->y + 5), 1);
	rd_ui_layout(ui, ui->w, ui->h, 1);
	assert_true(ui->tip.w > 0);
	out = open_memstream(&buf, &len);
	assert_int_equal(rd_ui_dump(ui, out), 0);
	fclose(out);
	assert_non_null(strstr(buf, "focus all\n"));
	assert_non_null(strstr(buf, "answer 62% of CPU time was in build_report, mostly inside dumps (24%).\n"));
	assert_non_null(strstr(buf, " build_report\n"));
	free(buf);
	/* The tooltip's text is in the draw list. */
	{
		int total = 0, self = 0, samples = 0;

		for (size_t i = 0; i < ui->list.n; i++) {
			const char *s = rd_cmd_text(&ui->list, &ui->list.cmds[i]);

			if (ui->list.cmds[i].kind != RD_CMD_TEXT)
				continue;
			total |= !strcmp(s, "Total: 62 (62%)");
			self |= !strcmp(s, "Self: 30 (30%)");
			samples |= !strcmp(s, "Samples: 62");
		}
		assert_true(total && self && samples);
	}
	assert_int_equal(rd_ui_leave(ui), 1);
}

/* Folded chains are labelled with their ends; a chain of runtime and
 * system frames says so. */
static void test_chain_labels(void **state)
{
	static const char text[] = "app;_start_[k];__libc_start_main_[k];main;serve;work 999\n"
				   "app;_start_[k];__libc_start_main_[k];main;serve 1\n";
	struct fx *f = *state;
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_text t = f->ui.text;
	struct rd_model *m;
	struct rd_ui ui;
	char err[64];

	assert_int_equal(prof_folded_parse(p, text, strlen(text), 1, err, sizeof(err)), 0);
	m = rd_model_new(p);
	assert_int_equal(rd_ui_init(&ui, m, &t), 0);
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	/* _start and __libc_start_main are kernel-style (system) frames;
	 * main..work holds 99.9% of serve: one chain from _start to work. */
	assert_non_null(box(&ui, "(5) _start \xe2\x80\xa6 work"));
	ui.unfold = 1;
	rd_ui_layout(&ui, 1200, 800, 1);
	assert_non_null(box(&ui, "work"));
	assert_null(box(&ui, "(5) _start \xe2\x80\xa6 work"));
	rd_ui_release(&ui);
	rd_model_free(m);
	prof_free(p);
	p = prof_new(PROF_UNIT_SAMPLES);
	{
		static const char t2[] = "app;_start_[k];__libc_start_main_[k] 5\n";

		assert_int_equal(prof_folded_parse(p, t2, strlen(t2), 1, err, sizeof(err)), 0);
	}
	m = rd_model_new(p);
	assert_int_equal(rd_ui_init(&ui, m, &t), 0);
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_non_null(box(&ui, "2 system frames: _start \xe2\x80\xa6 __libc_start_main"));
	rd_ui_release(&ui);
	rd_model_free(m);
	prof_free(p);
}

/* Only my code: library and system frames fold into their nearest caller
 * of your code, whose box keeps the time; totals do not change. Merge
 * threads drops the thread rows. */
static void test_filters(void **state)
{
	struct fx *f = *state;
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_text t = f->ui.text;
	struct rd_model *m;
	struct rd_ui ui;
	const struct { const char *name; unsigned cls, kind; } fr[] = {
		{ "app", 0, PROF_KIND_PROCESS }, { "worker-1", 0, PROF_KIND_THREAD },
		{ "main", PROF_CLASS_YOURS, 0 }, { "render", PROF_CLASS_YOURS, 0 },
		{ "png_write", PROF_CLASS_LIBRARY, 0 }, { "memcpy", PROF_CLASS_SYSTEM, 0 },
		{ "worker-2", 0, PROF_KIND_THREAD },
	};
	uint32_t id[7];
	const struct rd_box *b;

	(void)state;
	for (int i = 0; i < 7; i++) {
		struct prof_frame x = { 0 };

		x.name = prof_intern_cstr(p, fr[i].name);
		x.cls = (uint8_t)fr[i].cls;
		x.kind = (uint8_t)fr[i].kind;
		id[i] = prof_frame_intern(p, &x);
	}
	prof_add_stack(p, (uint32_t[]){ id[0], id[1], id[2], id[3], id[4], id[5] }, 6, 30);
	prof_add_stack(p, (uint32_t[]){ id[0], id[1], id[2], id[3] }, 4, 50);
	prof_add_stack(p, (uint32_t[]){ id[0], id[6], id[2], id[4] }, 4, 20);
	m = rd_model_new(p);
	assert_int_equal(rd_ui_init(&ui, m, &t), 0);
	assert_int_equal(ui.avail, 3);
	ui.unfold = 1; /* every frame its own box, for plain labels */
	assert_int_equal(rd_ui_layout(&ui, 1200, 800, 1), 0);
	assert_non_null(zone(&ui, RD_Z_BUTTON, RD_BTN_MYCODE));
	assert_non_null(box(&ui, "memcpy"));
	click_zone(&ui, zone(&ui, RD_Z_BUTTON, RD_BTN_MYCODE));
	assert_int_equal(ui.filter, RD_FILTER_YOURS);
	assert_null(box(&ui, "memcpy"));
	assert_null(box(&ui, "png_write"));
	b = box(&ui, "render");
	assert_non_null(b);
	assert_int_equal(b->value, 80);
	/* render keeps png_write's and memcpy's 30 as hidden self. */
	assert_int_equal(ui.filt.hidden[b->last], 30);
	assert_int_equal(ui.m->total, 100);
	/* Merge threads too: one main under app, 100. */
	click_zone(&ui, zone(&ui, RD_Z_BUTTON, RD_BTN_THREADS));
	assert_null(box(&ui, "worker-1"));
	assert_int_equal(box(&ui, "main")->value, 100);
	assert_int_equal(ui.filt.hidden[box(&ui, "main")->last], 20);
	/* The answer and cards stay those of the whole profile. */
	assert_string_equal(ui.base->answer, "80% of CPU time was in render, mostly inside png_write (30%).");
	click_zone(&ui, zone(&ui, RD_Z_BUTTON, RD_BTN_RESET));
	assert_int_equal(ui.filter, 0);
	assert_non_null(box(&ui, "png_write"));
	assert_non_null(box(&ui, "memcpy"));
	rd_ui_release(&ui);
	rd_model_free(m);
	prof_free(p);
}

/* Tiny and odd window sizes lay out without crashing; the wheel scrolls
 * the rows and the table and stops at the ends. */
static void test_sizes_wheel(void **state)
{
	struct fx *f = *state;
	struct rd_ui *ui = &f->ui;
	static const int sizes[][2] = { { 1, 1 }, { 40, 30 }, { 200, 120 },
					{ 320, 2000 }, { 5000, 300 } };

	for (int tbl = 0; tbl < 2; tbl++) {
		ui->show_table = tbl;
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			assert_int_equal(rd_ui_layout(ui, sizes[i][0], sizes[i][1], 1), 0);
	}
	ui->show_table = 0;
	rd_ui_layout(ui, 1200, 800, 1);
	{
		int y0 = box(ui, "all")->y;

		/* Wheel up in a flame graph: the rows move down to show the
		 * deep ones, never past the deepest row. */
		assert_int_equal(rd_ui_wheel(ui, 600, 600, 2), 1);
		rd_ui_layout(ui, 1200, 800, 1);
		assert_int_equal(ui->scroll, ui->boxes.max_depth * 20);
		assert_null(box(ui, "all"));
		rd_ui_wheel(ui, 600, 600, -5);
		rd_ui_layout(ui, 1200, 800, 1);
		assert_int_equal(ui->scroll, 0);
		assert_int_equal(box(ui, "all")->y, y0);
	}
	/* HiDPI: everything scales, boxes still fill the graph. */
	assert_int_equal(rd_ui_layout(ui, 2400, 1600, 2), 0);
	assert_int_equal(box(ui, "all")->w, ui->graph.w);
	assert_int_equal(ui->graph.x, 16);
}

/* "N small functions" opens on a click: its functions fill the width and
 * the breadcrumb says so; Escape closes it. */
static void test_bucket(void **state)
{
	static const char text[] = "app;main;big 99940\napp;main;s1 10\n"
				   "app;main;s2 20\napp;main;s3 30\n";
	struct fx *f = *state;
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_text t = f->ui.text;
	struct rd_model *m;
	struct rd_ui ui;
	char err[64];
	const struct rd_box *b;
	int found = 0;

	assert_int_equal(prof_folded_parse(p, text, strlen(text), 1, err, sizeof(err)), 0);
	m = rd_model_new(p);
	assert_int_equal(rd_ui_init(&ui, m, &t), 0);
	assert_int_equal(rd_ui_layout(&ui, 8000, 800, 1), 0);
	b = box(&ui, "3 small functions");
	assert_non_null(b);
	click_box(&ui, "3 small functions");
	assert_int_equal(ui.bucket, 1);
	assert_null(box(&ui, "big"));
	assert_int_equal(box(&ui, "s1")->w, ui.graph.w / 6 + 1);
	assert_int_equal(box(&ui, "s3")->x + box(&ui, "s3")->w, ui.graph.x + ui.graph.w);
	for (size_t i = 0; i < ui.list.n; i++)
		if (ui.list.cmds[i].kind == RD_CMD_TEXT &&
		    !strcmp(rd_cmd_text(&ui.list, &ui.list.cmds[i]), "3 small functions"))
			found = 1;
	assert_true(found);
	assert_int_equal(rd_ui_key(&ui, RD_KEY_ESCAPE), 1);
	rd_ui_layout(&ui, 8000, 800, 1);
	assert_int_equal(ui.bucket, 0);
	assert_non_null(box(&ui, "big"));
	rd_ui_release(&ui);
	rd_model_free(m);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_zoom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search, setup, teardown),
		cmocka_unit_test_setup_teardown(test_legend_cards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_toolbar_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tooltip_dump, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes_wheel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bucket, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
