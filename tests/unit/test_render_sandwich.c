/* SPDX-License-Identifier: MIT */
/* Sandwich merging against hand-built trees: a function called from
 * several places, directly and indirectly recursive, counted once; and
 * the per-side values of a diff's sandwich. */
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
#include "profile/folded.h"
#include "render/sandwich.h"

static struct prof_profile *parse(const char *text)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 1, err, sizeof(err)), 0);
	return p;
}

/* The profile as sorted folded text, in a malloc'd string. */
static char *folded(struct prof_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(prof_folded_write(p, f, 0), 0);
	fclose(f);
	return buf;
}

/* The node reached from the root by the names in @path (NULL-ended). */
static uint32_t at(const struct prof_profile *p, const char *const *path)
{
	uint32_t n = 0;

	for (; *path; path++) {
		uint32_t c = prof_node_get(p, n)->child;

		while (c && strcmp(prof_str(p, prof_frame_get(p, prof_node_get(p, c)->frame)->name), *path))
			c = prof_node_get(p, c)->sibling;
		assert_true(c != 0);
		n = c;
	}
	return n;
}

static const char fixture[] =
	"p;main;a;F;x 10\n"
	"p;main;b;F;y 5\n"
	"p;main;c;F;g;F;z 3\n" /* recursive through g */
	"p;main;a;F 2\n"
	"p;main;F;F;w 4\n"     /* directly recursive */
	"p;other 7\n";

static void test_multi_caller_recursive(void **state)
{
	struct prof_profile *p = parse(fixture);
	struct rd_sandwich s;
	char *text;

	(void)state;
	assert_int_equal(rd_sandwich_build(p, NULL, "F", &s), 0);
	/* F's outermost occurrences: a;F 12, b;F 5, c;F 3, main;F 4. */
	assert_int_equal(s.total, 24);
	assert_int_equal(prof_total(s.callers), 24);
	assert_int_equal(prof_total(s.callees), 24);
	text = folded(s.callers);
	assert_string_equal(text,
		"F;a;main;p 12\n"
		"F;b;main;p 5\n"
		"F;c;main;p 3\n"
		"F;main;p 4\n");
	free(text);
	text = folded(s.callees);
	assert_string_equal(text,
		"F 2\n"
		"F;F;w 4\n"
		"F;g;F;z 3\n"
		"F;x 10\n"
		"F;y 5\n");
	free(text);
	/* Totals inside the trees. */
	assert_int_equal(prof_node_get(s.callers, at(s.callers, (const char *[]){ "F", NULL }))->total, 24);
	assert_int_equal(prof_node_get(s.callers, at(s.callers, (const char *[]){ "F", "main", NULL }))->total, 4);
	assert_int_equal(prof_node_get(s.callers, at(s.callers, (const char *[]){ "F", "a", "main", "p", NULL }))->total, 12);
	assert_int_equal(prof_node_get(s.callees, at(s.callees, (const char *[]){ "F", NULL }))->self, 2);
	assert_int_equal(prof_node_get(s.callees, at(s.callees, (const char *[]){ "F", "g", NULL }))->total, 3);
	assert_null(s.callers_v);
	rd_sandwich_free(&s);

	/* main: one caller (the process row), everything else below it. */
	assert_int_equal(rd_sandwich_build(p, NULL, "main", &s), 0);
	assert_int_equal(s.total, 24);
	text = folded(s.callers);
	assert_string_equal(text, "main;p 24\n");
	free(text);
	rd_sandwich_free(&s);

	/* A name that is not there; a process row is not a function. */
	assert_int_equal(rd_sandwich_build(p, NULL, "nothere", &s), -ENOENT);
	assert_int_equal(rd_sandwich_build(p, NULL, "p", &s), -ENOENT);
	prof_free(p);
}

static void test_two_callers(void **state)
{
	struct prof_profile *p = parse(
		"app;main;load;parse 6\n"
		"app;main;save;parse 4\n"
		"app;main;parse;lex 5\n");
	struct rd_sandwich s;
	char *text;

	(void)state;
	assert_int_equal(rd_sandwich_build(p, NULL, "parse", &s), 0);
	text = folded(s.callers);
	assert_string_equal(text, "parse;load;main;app 6\nparse;main;app 5\nparse;save;main;app 4\n");
	free(text);
	text = folded(s.callees);
	assert_string_equal(text, "parse 10\nparse;lex 5\n");
	free(text);
	rd_sandwich_free(&s);
	prof_free(p);
}

static void test_diff_sandwich(void **state)
{
	struct prof_profile *b = parse("app;main;load;parse 6\napp;main;save;parse 4\n");
	struct prof_profile *a = parse("app;main;load;parse 12\napp;main;save;parse 4\napp;main;save;parse;lex 2\n");
	struct prof_diff *d;
	struct rd_sandwich s;
	uint32_t n;

	(void)state;
	assert_int_equal(prof_diff_build(b, a, &d), 0);
	assert_int_equal(rd_sandwich_build(prof_diff_tree(d), d, "parse", &s), 0);
	assert_non_null(s.callers_v);
	assert_int_equal(s.total_before, 10);
	assert_int_equal(s.total_after, 18);
	n = at(s.callers, (const char *[]){ "parse", "load", NULL });
	assert_int_equal(s.callers_v[n].before_total, 6);
	assert_int_equal(s.callers_v[n].after_total, 12);
	assert_int_equal(prof_node_get(s.callers, n)->total, 18); /* combined */
	n = at(s.callers, (const char *[]){ "parse", "save", "main", "app", NULL });
	assert_int_equal(s.callers_v[n].before_self, 4);
	assert_int_equal(s.callers_v[n].after_self, 6);
	n = at(s.callees, (const char *[]){ "parse", NULL });
	assert_int_equal(s.callees_v[n].before_total, 10);
	assert_int_equal(s.callees_v[n].after_total, 18);
	assert_int_equal(s.callees_v[n].after_self, 16);
	n = at(s.callees, (const char *[]){ "parse", "lex", NULL });
	assert_int_equal(s.callees_v[n].before_total, 0);
	assert_int_equal(s.callees_v[n].after_total, 2);
	rd_sandwich_free(&s);
	prof_diff_free(d);
	prof_free(a);
	prof_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_caller_recursive),
		cmocka_unit_test(test_two_callers),
		cmocka_unit_test(test_diff_sandwich),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
