/* SPDX-License-Identifier: MIT */
/* The window's table of other panes: with ui->panes set, input goes to
 * the panes first and falls back to the window on -1, the panes may colour
 * boxes, replace the graph and add to the dump; without them nothing is
 * called. The panes here are a stand-in that records the calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "render/ui.h"
#include "render/ui_internal.h"

struct calls {
	int click, key, text, color, graph, dump, bar, motion;
	int click_ret, key_ret;
};

/* The stand-in panes' state is ui->panes.ctx; their calls are counted
 * there. */
static struct calls *C(const struct rd_ui *ui)
{
	return ui->panes.ctx;
}

static int bar(struct rd_ui *ui, int y) { C(ui)->bar++; return y + 10; }
static int graph(struct rd_ui *ui) { C(ui)->graph++; return rd_ui_graph(ui); }
static int tooltip(struct rd_ui *ui) { (void)ui; return 0; }
static int tip_lines(const struct rd_ui *ui, const struct rd_box *b,
		     char (*lines)[256], int max)
{
	(void)ui, (void)b;
	if (max < 1)
		return 0;
	snprintf(lines[0], 256, "view line");
	return 1;
}
static int box_color(const struct rd_ui *ui, const struct rd_box *b,
		     uint32_t *color)
{
	(void)b;
	C(ui)->color++;
	*color = 0x123456;
	return 1;
}
static int click(struct rd_ui *ui, int x, int y) { (void)x, (void)y; C(ui)->click++; return C(ui)->click_ret; }
static int motion(struct rd_ui *ui) { C(ui)->motion++; return 0; }
static int key(struct rd_ui *ui, int k) { (void)k; C(ui)->key++; return C(ui)->key_ret; }
static int text(struct rd_ui *ui, const char *utf8) { (void)utf8; C(ui)->text++; return 0; }
static void dump(const struct rd_ui *ui, FILE *out) { C(ui)->dump++; fputs("view graph\n", out); }

static const struct rd_pane_ops stand_in = {
	.bar = bar, .graph = graph, .tooltip = tooltip, .tip_lines = tip_lines,
	.box_color = box_color, .click = click, .motion = motion, .key = key,
	.text = text, .dump = dump,
};

static int measure7(void *ctx, int font, const char *s, size_t n)
{
	(void)ctx, (void)font, (void)s;
	return (int)n * 7;
}

static void test_panes(void **state)
{
	static const char text[] = "app;main;a 3\napp;main;b 1\n";
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_text t = { .measure = measure7, .line_h = { 15, 15, 18 } };
	struct calls calls = { .click_ret = -1, .key_ret = -1 };
	struct rd_model *m;
	struct rd_ui ui;
	char err[64], *buf = NULL;
	size_t len = 0;
	FILE *out;
	int y_plain;

	(void)state;
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 1, err, sizeof(err)), 0);
	m = rd_model_new(p);
	assert_int_equal(rd_ui_init(&ui, m, &t), 0);
	/* Without panes: none of them runs (they would crash on the NULL
	 * state pointer). */
	assert_int_equal(rd_ui_layout(&ui, 800, 600, 1), 0);
	y_plain = ui.graph.y;
	rd_ui_click(&ui, ui.boxes.v[2].x + 1, ui.boxes.v[2].y + 1);
	rd_ui_key(&ui, RD_KEY_ESCAPE);
	/* With them. */
	assert_int_equal(rd_ui_attach(&ui, &(struct rd_panes){ &stand_in, &calls },
				      NULL, NULL), 0);
	assert_int_equal(rd_ui_layout(&ui, 800, 600, 1), 0);
	assert_int_equal(calls.bar, 1);
	assert_int_equal(calls.graph, 1);
	assert_int_equal(ui.graph.y, y_plain + 10);
	assert_true(calls.color >= 3);
	assert_int_equal(ui.list.oom, 0);
	/* -1: the window handles the click (zoom into main). */
	assert_int_equal(rd_ui_click(&ui, ui.boxes.v[2].x + 1, ui.boxes.v[2].y + 1), 1);
	assert_int_equal(calls.click, 1);
	assert_int_not_equal(ui.focus, 0);
	/* 0: the view took it, nothing changes. */
	calls.click_ret = 0;
	assert_int_equal(rd_ui_click(&ui, 1, 1), 0);
	{
		uint32_t zoomed = ui.focus;

		calls.key_ret = 1;
		assert_int_equal(rd_ui_key(&ui, RD_KEY_ESCAPE), 1);
		assert_int_equal(ui.focus, zoomed); /* the view ate Escape */
		calls.key_ret = -1;
		assert_int_equal(rd_ui_key(&ui, RD_KEY_ESCAPE), 1);
		assert_int_equal(ui.focus, prof_node_get(p, zoomed)->parent);
	}
	assert_int_equal(rd_ui_text(&ui, "/"), 1); /* view returned 0: the window's */
	assert_int_equal(calls.text, 1);
	out = open_memstream(&buf, &len);
	rd_ui_dump(&ui, out);
	fclose(out);
	assert_int_equal(calls.dump, 1);
	assert_non_null(strstr(buf, "\nview graph\n"));
	free(buf);
	rd_ui_detach(&ui);
	assert_null(ui.panes.ops);
	rd_ui_release(&ui);
	rd_model_free(m);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_panes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
