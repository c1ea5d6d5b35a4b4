/* SPDX-License-Identifier: MIT */
/* One box per function: a function sampled at four lines, with a helper
 * inlined at two of them, is one box in the model's flame layout, in the
 * window and in the SVG export, and one node of a diff; its lines stay in
 * the tooltip, on its card and in the call tree, each with its share. A
 * profile without lines, or whose lines merge nothing, is drawn as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "render/flame.h"
#include "render/lines.h"
#include "render/model.h"
#include "render/svg.h"
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

static uint32_t frame(struct prof_profile *p, const char *name, uint32_t line,
		      int kind)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, name),
		.module = prof_intern_cstr(p, "mixer"),
		.file = prof_intern_cstr(p, line ? "mix.c" : NULL),
		.line = line, .kind = (uint8_t)kind, .cls = PROF_CLASS_YOURS,
		.lang = PROF_LANG_C,
	};
	uint32_t id = prof_frame_intern(p, &f);

	assert_int_not_equal(id, UINT32_MAX);
	return id;
}

static void add(struct prof_profile *p, uint64_t v, int n, ...)
{
	uint32_t fr[8];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		fr[i] = va_arg(ap, uint32_t);
	va_end(ap);
	assert_int_not_equal(prof_add_stack(p, fr, (size_t)n, v), UINT32_MAX);
}

/* main -> mix_inline at lines 10 (40), 11 with mix_step inlined at its
 * line 3 (20), 12 (25), 13 with mix_step at 4 (15); pprof's shape. */
static struct prof_profile *mixed(void)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t m = frame(p, "main", 30, PROF_KIND_USER);

	assert_non_null(p);
	add(p, 40, 2, m, frame(p, "mix_inline", 10, PROF_KIND_USER));
	add(p, 20, 3, m, frame(p, "mix_inline", 11, PROF_KIND_USER),
	    frame(p, "mix_step", 3, PROF_KIND_INLINE));
	add(p, 25, 2, m, frame(p, "mix_inline", 12, PROF_KIND_USER));
	add(p, 15, 3, m, frame(p, "mix_inline", 13, PROF_KIND_USER),
	    frame(p, "mix_step", 4, PROF_KIND_INLINE));
	return p;
}

/* The boxes of the full view (unfolded) named @name, and the last one. */
static int boxes_named(const struct rd_model *m, const char *name,
		       struct rd_box *last)
{
	struct rd_flame_opts o = { .area = { 0, 0, 1000, 400 }, .row_h = 20,
				   .unfold = 1, .min_px = 0.5 };
	struct rd_boxes b = { 0 };
	int k = 0;

	assert_int_equal(rd_flame_layout(&m->tree, &o, &b), 0);
	for (size_t i = 0; i < b.n; i++) {
		const struct prof_node *n = prof_node_get(m->p, b.v[i].node);

		if (b.v[i].node && !strcmp(prof_str(m->p, prof_frame_get(m->p, n->frame)->name), name)) {
			k++;
			*last = b.v[i];
		}
	}
	rd_boxes_free(&b);
	return k;
}

static void test_model_one_box(void **state)
{
	struct prof_profile *p = mixed();
	struct rd_model *m = rd_model_new(p);
	const struct rd_line *l;
	struct rd_box b;
	char buf[256];

	(void)state;
	assert_non_null(m);
	assert_non_null(m->merged);
	assert_ptr_equal(m->p, m->merged);
	assert_int_equal(boxes_named(m, "mix_inline", &b), 1);
	assert_int_equal(b.value, 100);
	assert_int_equal(b.w, 1000);
	assert_int_equal(boxes_named(m, "mix_step", &b), 1);
	assert_int_equal(b.value, 35);
	assert_int_equal(boxes_named(m, "main", &b), 1);
	/* The lines, with what each gave. */
	assert_int_equal(boxes_named(m, "mix_inline", &b), 1);
	assert_int_equal(rd_lines_of(&m->lines, b.node, &l), 4);
	assert_int_equal(l[0].line, 10);
	assert_int_equal(l[0].value, 40);
	assert_int_equal(l[1].line, 11);
	assert_int_equal(l[1].value, 20);
	assert_int_equal(l[2].line, 12);
	assert_int_equal(l[2].value, 25);
	assert_int_equal(l[3].line, 13);
	assert_int_equal(l[3].value, 15);
	assert_string_equal(rd_lines_text(&m->lines, m->p, b.node, 0, buf, sizeof(buf)),
			    "mix.c:10-13");
	assert_string_equal(rd_lines_text(&m->lines, m->p, b.node, 1, buf, sizeof(buf)),
			    "mix.c:10 (40%), 12 (25%), 11 (20%), 13 (15%)");
	assert_int_equal(boxes_named(m, "mix_step", &b), 1);
	assert_string_equal(rd_lines_text(&m->lines, m->p, b.node, 0, buf, sizeof(buf)),
			    "mix.c:3-4");
	/* The function's table row and its card. */
	assert_int_equal(m->fns[rd_model_node_fn(m, b.node)].total, 35);
	for (int i = 0; i < m->ncards; i++)
		if (!strcmp(rd_model_fn_name(m, m->cards[i].fn), "mix_inline"))
			assert_string_equal(m->cards[i].at, "mix.c:10-13");
	assert_true(m->ncards > 0);
	assert_string_equal(rd_model_fn_name(m, m->cards[0].fn), "mix_inline");
	rd_model_free(m);
	prof_free(p);
}

static void test_nothing_to_merge(void **state)
{
	static const char folded[] = "app;main;a 3\napp;main;b 1\n";
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q = prof_new(PROF_UNIT_SAMPLES);
	struct rd_model *m;
	char err[64];
	struct rd_box b;

	(void)state;
	/* Folded text: no lines. */
	assert_int_equal(prof_folded_parse(p, folded, strlen(folded), 1, err, sizeof(err)), 0);
	m = rd_model_new(p);
	assert_null(m->merged);
	assert_ptr_equal(m->p, p);
	assert_int_equal(m->lines.n, 0);
	rd_model_free(m);
	/* Lines, but each function at one: drawn as read, line and all. */
	add(q, 5, 2, frame(q, "main", 30, PROF_KIND_USER), frame(q, "solo", 7, PROF_KIND_USER));
	m = rd_model_new(q);
	assert_null(m->merged);
	assert_ptr_equal(m->p, q);
	assert_int_equal(boxes_named(m, "solo", &b), 1);
	assert_int_equal(prof_frame_get(q, prof_node_get(q, b.node)->frame)->line, 7);
	rd_model_free(m);
	prof_free(p);
	prof_free(q);
}

/* The texts of the last layout's draw list that contain @s. */
static int drawn(const struct rd_ui *ui, const char *s)
{
	int k = 0;

	for (size_t i = 0; i < ui->list.n; i++) {
		const struct rd_cmd *c = &ui->list.cmds[i];

		if (c->kind == RD_CMD_TEXT && memmem(rd_cmd_text(&ui->list, c), c->len, s, strlen(s)))
			k++;
	}
	return k;
}

static const struct rd_box *ui_box(const struct rd_ui *ui, const char *name, int *n)
{
	const struct rd_box *found = NULL;
	char label[512];

	*n = 0;
	for (size_t i = 0; i < ui->boxes.n; i++)
		if (!strcmp(rd_ui_box_label(ui, &ui->boxes.v[i], label, sizeof(label)), name)) {
			found = &ui->boxes.v[i];
			++*n;
		}
	return found;
}

static void test_window(void **state)
{
	struct prof_profile *p = mixed();
	struct rd_model *m = rd_model_new(p);
	struct rd_views *v = rd_views_new();
	const struct rd_box *b;
	struct rd_ui ui;
	int n, cards[2];

	(void)state;
	assert_int_equal(rd_ui_init(&ui, m, &text), 0);
	assert_int_equal(rd_views_attach(v, &ui, NULL, NULL), 0);
	ui.unfold = 1;
	assert_int_equal(rd_ui_layout(&ui, 1200, 700, 1), 0);
	b = ui_box(&ui, "mix_inline", &n);
	assert_int_equal(n, 1);
	/* Its tooltip: the lines with their shares. */
	rd_ui_motion(&ui, b->x + 2, b->y + 2);
	assert_int_equal(rd_ui_layout(&ui, 1200, 700, 1), 0);
	assert_true(ui.tip.w > 0);
	assert_int_equal(drawn(&ui, "mixer  mix.c:10 (40%), 12 (25%), 11 (20%), 13 (15%)"), 1);
	/* The card. */
	assert_int_equal(drawn(&ui, "mix.c:10-13 \xc2\xb7 C \xc2\xb7 your code"), 1);
	/* The call tree: the rows opened down to mix_step, lines beside. */
	rd_ui_leave(&ui);
	assert_int_equal(rd_ui_layout(&ui, 1200, 700, 1), 0);
	cards[0] = drawn(&ui, "mix.c:10-13"); /* the cards' */
	cards[1] = drawn(&ui, "mix.c:3-4");
	v->pane = RD_PANE_CALLTREE;
	assert_int_equal(rd_ui_layout(&ui, 1200, 700, 1), 0);
	assert_int_equal(rd_calltree_toggle(&v->ct, 1), 0); /* main */
	assert_int_equal(rd_calltree_toggle(&v->ct, 2), 0); /* mix_inline */
	assert_int_equal(rd_ui_layout(&ui, 1200, 700, 1), 0);
	assert_int_equal(v->ct.nrows, 3);
	assert_int_equal(drawn(&ui, "mix.c:10-13"), cards[0] + 1);
	assert_int_equal(drawn(&ui, "mix.c:3-4"), cards[1] + 1);
	rd_views_detach(v);
	rd_views_free(v);
	rd_ui_release(&ui);
	rd_model_free(m);
	prof_free(p);
}

static void test_svg(void **state)
{
	struct prof_profile *p = mixed();
	struct rd_model *m = rd_model_new(p);
	struct rd_svg_opts o = { .width = 1200 };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int n = 0;

	(void)state;
	assert_int_equal(rd_svg_write(m, &o, out), 0);
	fclose(out);
	for (const char *s = buf; (s = strstr(s, "data-n=\"mix_inline\"")); s++)
		n++;
	assert_int_equal(n, 1);
	assert_non_null(strstr(buf, "<title>mix_inline (total 100, 100%; self 65, 65%; "
				    "mix.c:10 (40%), 12 (25%), 11 (20%), 13 (15%); your code)</title>"));
	n = 0;
	for (const char *s = buf; (s = strstr(s, "data-n=\"mix_step\"")); s++)
		n++;
	assert_int_equal(n, 1);
	free(buf);
	rd_model_free(m);
	prof_free(p);
}

/* A diff of two such profiles: one node per function on a path, so the
 * diff's model draws the diff's own tree. */
static void test_diff(void **state)
{
	struct rd_views *v = rd_views_new();
	struct rd_model *m;
	struct rd_box b;
	char err[128];

	(void)state;
	assert_int_equal(rd_views_set_diff(v, mixed(), mixed(), &m, err, sizeof(err)), 0);
	assert_null(m->merged);
	assert_ptr_equal(m->p, prof_diff_tree(v->diff));
	assert_int_equal(boxes_named(m, "mix_inline", &b), 1);
	assert_int_equal(b.value, 200);
	rd_views_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_one_box),
		cmocka_unit_test(test_nothing_to_merge),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
