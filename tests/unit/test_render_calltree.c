/* SPDX-License-Identifier: MIT */
/* The call tree table: rows largest first, opening and closing, and the
 * search that says "1 of N" and steps through matches, opening the path
 * to each and scrolling it into view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "render/calltree.h"

static const char fixture[] =
	"app;main;build_report;dumps 24\n"
	"app;main;build_report 30\n"
	"app;main;build_report;memcpy_[k] 8\n"
	"app;main 5\n"
	"app;main;parse;lex 20\n"
	"app;main;parse;parse_expr 13\n";

/* The rows as "name/depth" joined by spaces. */
static const char *rows(const struct rd_calltree *ct, char *buf, size_t n)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ct->nrows && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%s/%u", i ? " " : "",
				      rd_model_fn_name(ct->m, rd_tree_fn(&ct->m->tree, ct->rows[i].pre)),
				      ct->rows[i].depth);
	return buf;
}

static uint32_t pre_of(const struct rd_calltree *ct, const char *name)
{
	for (uint32_t i = 1; i < ct->m->tree.n; i++)
		if (!strcmp(rd_model_fn_name(ct->m, rd_tree_fn(&ct->m->tree, i)), name))
			return i;
	fail_msg("no node %s", name);
	return 0;
}

static void test_rows_and_search(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_calltree ct;
	struct rd_model *m;
	char err[128], buf[512];

	(void)state;
	assert_int_equal(prof_folded_parse(p, fixture, strlen(fixture), 1, err, sizeof(err)), 0);
	m = rd_model_new(p);
	assert_non_null(m);
	assert_int_equal(rd_calltree_init(&ct, m), 0);
	assert_string_equal(rows(&ct, buf, sizeof(buf)), "app/0");
	assert_int_equal(rd_calltree_toggle(&ct, pre_of(&ct, "app")), 0);
	assert_int_equal(rd_calltree_toggle(&ct, pre_of(&ct, "main")), 0);
	/* Largest total first: build_report 62 before parse 33. */
	assert_string_equal(rows(&ct, buf, sizeof(buf)),
			    "app/0 main/1 build_report/2 parse/2");
	assert_int_equal(ct.rows[2].leaf, 0);
	assert_int_equal(rd_calltree_toggle(&ct, pre_of(&ct, "main")), 0);
	assert_string_equal(rows(&ct, buf, sizeof(buf)), "app/0 main/1");
	assert_int_equal(rd_calltree_toggle(&ct, pre_of(&ct, "main")), 0);

	/* Search: "lex" opens parse and scrolls lex (row 4) into 3 rows. */
	assert_int_equal(rd_calltree_search(&ct, "lex", 3), 1);
	assert_string_equal(rd_calltree_status(&ct, buf, sizeof(buf)), "1 of 1");
	assert_string_equal(rows(&ct, buf, sizeof(buf)),
			    "app/0 main/1 build_report/2 parse/2 lex/3 parse_expr/3");
	assert_int_equal(rd_calltree_row_of(&ct, pre_of(&ct, "lex")), 4);
	assert_int_equal(ct.scroll, 3);

	/* Two matches in tree order: dumps, then lex; stepping wraps. */
	assert_int_equal(rd_calltree_search(&ct, "^(LEX|dumps)$", 10), 2);
	assert_string_equal(rd_calltree_status(&ct, buf, sizeof(buf)), "1 of 2");
	assert_int_equal(ct.matches[ct.cur], pre_of(&ct, "dumps"));
	assert_true(rd_calltree_row_of(&ct, pre_of(&ct, "dumps")) >= 0);
	assert_int_equal(rd_calltree_step(&ct, 1, 10), 0);
	assert_string_equal(rd_calltree_status(&ct, buf, sizeof(buf)), "2 of 2");
	assert_int_equal(ct.matches[ct.cur], pre_of(&ct, "lex"));
	assert_int_equal(rd_calltree_step(&ct, 1, 10), 0);
	assert_string_equal(rd_calltree_status(&ct, buf, sizeof(buf)), "1 of 2");
	assert_int_equal(rd_calltree_step(&ct, -1, 10), 0);
	assert_string_equal(rd_calltree_status(&ct, buf, sizeof(buf)), "2 of 2");

	/* Not a regular expression: a substring, case-insensitive. */
	assert_int_equal(rd_calltree_search(&ct, "PARSE(", 10), 0);
	assert_string_equal(rd_calltree_status(&ct, buf, sizeof(buf)), "no matches");
	assert_int_equal(rd_calltree_search(&ct, "[", 10), 0);
	assert_int_equal(rd_calltree_search(&ct, "_EX", 10), 1);
	assert_int_equal(rd_calltree_step(&ct, 1, 10), 0);
	assert_int_equal(rd_calltree_search(&ct, "", 10), 0);
	assert_string_equal(rd_calltree_status(&ct, buf, sizeof(buf)), "");
	assert_int_equal(rd_calltree_step(&ct, 1, 10), -2);
	rd_calltree_free(&ct);
	rd_model_free(m);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_and_search),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
