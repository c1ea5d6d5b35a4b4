/* SPDX-License-Identifier: MIT */
/* The viewer's model: search (regex, fuzzy, commas, share counted once),
 * the answer sentence, hot-spot cards, the top table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"
#include "render/model.h"

static struct prof_profile *parse(const char *text)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 1, err,
					   sizeof(err)), 0);
	return p;
}

/* Adds a stack of "name:class" frames under process "app". */
static void add(struct prof_profile *p, const char *const *names,
		const unsigned *cls, size_t n, uint64_t v)
{
	uint32_t ids[16];
	struct prof_frame f = { 0 };

	f.name = prof_intern_cstr(p, "app");
	f.kind = PROF_KIND_PROCESS;
	ids[0] = prof_frame_intern(p, &f);
	for (size_t i = 0; i < n; i++) {
		memset(&f, 0, sizeof(f));
		f.name = prof_intern_cstr(p, names[i]);
		f.cls = (uint8_t)cls[i];
		f.kind = PROF_KIND_USER;
		ids[i + 1] = prof_frame_intern(p, &f);
	}
	assert_int_not_equal(prof_add_stack(p, ids, n + 1, v), UINT32_MAX);
}

#define Y PROF_CLASS_YOURS
#define L PROF_CLASS_LIBRARY
#define S PROF_CLASS_SYSTEM
#define W PROF_CLASS_WAITING

static void test_search(void **state)
{
	struct prof_profile *p = parse("app;main;parse;lex 3\n"
				       "app;main;parse;parse;lex 2\n"
				       "app;main;eval 5\n");
	struct rd_model *m = rd_model_new(p);

	(void)state;
	assert_non_null(m);
	assert_int_equal(m->total, 10);
	/* Regex: parse appears twice nested; its share is counted once. */
	assert_int_equal(rd_model_search(m, "parse"), 0);
	assert_true(m->searching);
	assert_int_equal(m->match_boxes, 2);
	assert_int_equal(m->match_value, 5);
	/* Commas: lex (2 boxes, 5) and eval (1 box, 5). */
	rd_model_search(m, " lex , eval");
	assert_int_equal(m->match_boxes, 3);
	assert_int_equal(m->match_value, 10);
	/* Anchored regex, case-insensitive. */
	rd_model_search(m, "^L.X$");
	assert_int_equal(m->match_boxes, 2);
	assert_int_equal(m->match_value, 5);
	/* "prs" matches nothing as a regex: fuzzy, parse. */
	rd_model_search(m, "prs");
	assert_int_equal(m->match_boxes, 2);
	assert_int_equal(m->match_value, 5);
	/* An invalid regex falls back to fuzzy: "(ev" -> nothing, "ev(" no. */
	rd_model_search(m, "ma(");
	assert_int_equal(m->match_boxes, 0);
	rd_model_search(m, "[lex");
	assert_int_equal(m->match_boxes, 0);
	rd_model_search(m, "eva[");
	assert_int_equal(m->match_boxes, 0);
	/* main contains everything below it: 100%, one box. */
	rd_model_search(m, "main,lex");
	assert_int_equal(m->match_boxes, 3);
	assert_int_equal(m->match_value, 10);
	rd_model_search(m, "  ");
	assert_false(m->searching);
	assert_int_equal(m->match_boxes, 0);
	rd_model_free(m);
	prof_free(p);
}

static void test_exact_query(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(rd_model_exact_query("std::vector<int>::push_back", b, sizeof(b)),
			    "^std::vector<int>::push_back$");
	assert_string_equal(rd_model_exact_query("a.b(c)", b, sizeof(b)), "^a\\.b\\(c\\)$");
	assert_string_equal(rd_model_exact_query("f(a, b)", b, sizeof(b)), "^f\\(a. b\\)$");
}

static void test_answer_cpu(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_model *m;

	(void)state;
	add(p, (const char *const[]){ "main", "build_report", "dumps" },
	    (const unsigned[]){ Y, Y, L }, 3, 24);
	add(p, (const char *const[]){ "main", "build_report" },
	    (const unsigned[]){ Y, Y }, 2, 30);
	add(p, (const char *const[]){ "main", "build_report", "memcpy" },
	    (const unsigned[]){ Y, Y, S }, 3, 8);
	add(p, (const char *const[]){ "main" }, (const unsigned[]){ Y }, 1, 5);
	add(p, (const char *const[]){ "main", "parse" },
	    (const unsigned[]){ Y, Y }, 2, 33);
	prof_meta(p)->duration_ns = 30000000000ULL;
	m = rd_model_new(p);
	assert_non_null(m);
	assert_string_equal(m->answer, "Over 30 s, 62% of CPU time was in "
			    "build_report, mostly inside dumps (24%).");
	assert_int_equal(m->ncards, 3);
	assert_string_equal(rd_model_fn_name(m, m->cards[0].fn), "build_report");
	assert_true(m->cards[0].pct > 61.99 && m->cards[0].pct < 62.01);
	assert_string_equal(rd_model_fn_name(m, m->cards[1].fn), "parse");
	assert_string_equal(rd_model_fn_name(m, m->cards[2].fn), "main");
	/* Class shares of self time. */
	assert_int_equal(m->class_self[PROF_CLASS_YOURS], 68);
	assert_int_equal(m->class_self[PROF_CLASS_LIBRARY], 24);
	assert_int_equal(m->class_self[PROF_CLASS_SYSTEM], 8);
	rd_model_free(m);
	prof_free(p);
}

static void test_answer_waits(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	struct rd_model *m;

	(void)state;
	add(p, (const char *const[]){ "main", "handle", "futex_wait" },
	    (const unsigned[]){ Y, Y, W }, 3, 600);
	add(p, (const char *const[]){ "main", "handle", "read" },
	    (const unsigned[]){ Y, Y, W }, 3, 100);
	add(p, (const char *const[]){ "main", "sleeper", "nanosleep" },
	    (const unsigned[]){ Y, Y, W }, 3, 300);
	prof_meta(p)->off_cpu = 1;
	m = rd_model_new(p);
	assert_string_equal(m->answer, "70% of the waiting time was under "
			    "handle, mostly waiting in futex_wait (60%).");
	rd_model_free(m);
	prof_free(p);
}

/* Without classes (a plain folded file): the function with most time of
 * its own; no "mostly" when it calls nothing. */
static void test_answer_plain(void **state)
{
	struct prof_profile *p = parse("app;main;work 60\napp;main 40\n");
	struct rd_model *m = rd_model_new(p);

	(void)state;
	assert_string_equal(m->answer, "60% of CPU time was in work.");
	assert_string_equal(rd_model_fn_name(m, m->cards[0].fn), "work");
	assert_string_equal(rd_model_fn_name(m, m->cards[1].fn), "main");
	assert_int_equal(m->ncards, 2);
	rd_model_free(m);
	prof_free(p);
	p = prof_new(PROF_UNIT_SAMPLES);
	m = rd_model_new(p);
	assert_string_equal(m->answer, "Nothing was recorded in this profile.");
	assert_int_equal(m->ncards, 0);
	rd_model_free(m);
	prof_free(p);
}

/* Binaries without symbols holding 1% or more are named. */
static void test_notice(void **state)
{
	struct prof_profile *p = parse("app;main;app+0x4a1f0 30\n"
				       "app;main;app+0x11 20\n"
				       "app;main;libz.so.1+0x99 1\n"
				       "app;main;libq.so+0xzz 9\n"
				       "app;main 940\n");
	struct rd_model *m = rd_model_new(p);

	(void)state;
	assert_string_equal(m->notice, "Unnamed frames: app (5.0%) ran without "
			    "symbols; install their -dbgsym packages or set "
			    "DEBUGINFOD_URLS to name them.");
	rd_model_free(m);
	prof_free(p);
	/* JIT code without a perf map: the runtimes' flags */
	p = parse("node;main;[anon]+0x7f3a0 30\n"
		  "node;main 70\n");
	m = rd_model_new(p);
	assert_string_equal(m->notice, "Unnamed frames: [anon] (30%) ran "
			    "without symbols; install -dbgsym packages or set "
			    "DEBUGINFOD_URLS, and run JITs with their perf map "
			    "(node --perf-basic-prof, jcmd PID Compiler.perfmap).");
	rd_model_free(m);
	prof_free(p);
	p = parse("app;main 5\n");
	m = rd_model_new(p);
	assert_string_equal(m->notice, "");
	rd_model_free(m);
	prof_free(p);
}

/* Frames without a name ("[unknown]", "module+0x...") are never the
 * answer: their time goes to the named caller. */
static void test_answer_unnamed(void **state)
{
	struct prof_profile *p = parse("app;main;render;[unknown] 50\n"
				       "app;main;render;libfoo.so+0x1f0 30\n"
				       "app;main;render 5\n"
				       "app;main;parse 15\n");
	struct rd_model *m = rd_model_new(p);

	(void)state;
	assert_string_equal(m->answer, "85% of CPU time was in render, mostly "
			    "inside [unknown] (50%).");
	rd_model_free(m);
	prof_free(p);
}

/* A flat profile: no function holds 5% of it on its own. */
static void test_answer_flat(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char text[64 * 1024];
	size_t o = 0;
	struct rd_model *m;
	char err[64];

	(void)state;
	for (int i = 0; i < 40; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "app;main;f%02d 25\n", i);
	assert_int_equal(prof_folded_parse(p, text, o, 1, err, sizeof(err)), 0);
	prof_meta(p)->duration_ns = 60000000000ULL;
	m = rd_model_new(p);
	assert_string_equal(m->answer, "Over 1 min, the CPU time is spread thin: no "
			    "function holds more than 2.5% of it on its own.");
	rd_model_free(m);
	prof_free(p);
}

/* A share near 2^64 is not taken for a flat profile (its times 20 would
 * wrap). */
static void test_answer_huge(void **state)
{
	static const char text[] = "proc;a 18446744073709551615\nproc;b 5\n";
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct rd_model *m;
	char err[64];

	(void)state;
	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, text, sizeof(text) - 1, 1, err,
					   sizeof(err)), 0);
	m = rd_model_new(p);
	assert_non_null(m);
	assert_null(strstr(m->answer, "spread thin"));
	assert_non_null(strstr(m->answer, " in a"));
	rd_model_free(m);
	prof_free(p);
}

static void test_table(void **state)
{
	struct prof_profile *p = parse("app;main;f;f;g 4\napp;main;g 1\n"
				       "app;main 2\napp;h 3\n");
	struct rd_model *m = rd_model_new(p);
	uint32_t idx[16];
	size_t n;

	(void)state;
	n = rd_model_sorted(m, RD_SORT_TOTAL, 0, idx);
	assert_int_equal(n, 4); /* main, f, g, h: the process row is not */
	assert_string_equal(rd_model_fn_name(m, idx[0]), "main");
	assert_int_equal(m->fns[idx[0]].total, 7);
	/* f is recursive: its total counts once. */
	assert_string_equal(rd_model_fn_name(m, idx[1]), "g");
	assert_int_equal(m->fns[idx[1]].total, 5);
	assert_string_equal(rd_model_fn_name(m, idx[2]), "f");
	assert_int_equal(m->fns[idx[2]].total, 4);
	assert_string_equal(rd_model_fn_name(m, idx[3]), "h");
	n = rd_model_sorted(m, RD_SORT_SELF, 0, idx);
	assert_string_equal(rd_model_fn_name(m, idx[0]), "g");
	assert_int_equal(m->fns[idx[0]].self, 5);
	assert_string_equal(rd_model_fn_name(m, idx[1]), "h");
	assert_string_equal(rd_model_fn_name(m, idx[2]), "main");
	assert_string_equal(rd_model_fn_name(m, idx[3]), "f");
	n = rd_model_sorted(m, RD_SORT_NAME, 0, idx);
	assert_string_equal(rd_model_fn_name(m, idx[0]), "f");
	assert_string_equal(rd_model_fn_name(m, idx[3]), "main");
	assert_int_equal(rd_model_sorted(m, RD_SORT_NAME, 1, idx), 0);
	rd_model_free(m);
	prof_free(p);
}

/* A recursion 200,000 deep: its total counts once, search counts every
 * box and the value once. */
static void test_deep(void **state)
{
	enum { DEPTH = 200000 };
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t *ids = malloc(DEPTH * sizeof(*ids)), fn;
	struct prof_frame f = { 0 };
	struct rd_model *m;

	(void)state;
	f.name = prof_intern_cstr(p, "recurse");
	ids[0] = prof_frame_intern(p, &f);
	for (int i = 1; i < DEPTH; i++)
		ids[i] = ids[0];
	assert_int_not_equal(prof_add_stack(p, ids, DEPTH, 7), UINT32_MAX);
	m = rd_model_new(p);
	assert_non_null(m);
	fn = rd_model_node_fn(m, prof_node_get(p, 0)->child);
	assert_string_equal(rd_model_fn_name(m, fn), "recurse");
	assert_int_equal(m->fns[fn].total, 7);
	assert_int_equal(m->fns[fn].self, 7);
	assert_int_equal(m->fns[fn].nodes, DEPTH);
	rd_model_search(m, "recurse");
	assert_int_equal(m->match_boxes, DEPTH);
	assert_int_equal(m->match_value, 7);
	assert_string_equal(m->answer, "100% of CPU time was in recurse.");
	rd_model_free(m);
	free(ids);
	prof_free(p);
}

/* The functions of @a and @b, matched by name: the same sums, node
 * counts and answerable shares; the same class and language sums. */
static void assert_same_functions(const struct rd_model *a,
				  const struct rd_model *b)
{
	uint32_t *x = malloc(a->nfn * sizeof(*x)), *y = malloc(b->nfn * sizeof(*y));
	size_t n;

	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(a->nfn, b->nfn);
	n = rd_model_sorted(a, RD_SORT_NAME, 0, x);
	assert_int_equal(rd_model_sorted(b, RD_SORT_NAME, 0, y), n);
	for (size_t i = 0; i < n; i++) {
		const struct rd_fn *f = &a->fns[x[i]], *g = &b->fns[y[i]];

		assert_string_equal(rd_model_fn_name(a, x[i]), rd_model_fn_name(b, y[i]));
		assert_true(f->self == g->self);
		assert_true(f->total == g->total);
		assert_true(f->own == g->own);
		assert_int_equal(f->nodes, g->nodes);
	}
	assert_memory_equal(a->class_self, b->class_self, sizeof(a->class_self));
	assert_memory_equal(a->lang_self, b->lang_self, sizeof(a->lang_self));
	free(x);
	free(y);
}

/* The viewer's tree of a bulk-loaded profile (ids in preorder: read in
 * place, summed in two halves on two threads) equals the one copied from
 * the links of the same stacks added one by one in another order. */
static void assert_same_tree(const struct rd_model *a, const struct rd_model *b)
{
	const struct rd_tree *s = &a->tree, *t = &b->tree;

	assert_int_equal(s->n, t->n);
	for (uint32_t i = 0; i < s->n; i++) {
		assert_int_equal(rd_tree_parent(s, i), rd_tree_parent(t, i));
		assert_int_equal(rd_tree_child(s, i), rd_tree_child(t, i));
		assert_int_equal(rd_tree_next(s, i), rd_tree_next(t, i));
		assert_true(rd_tree_total(s, i) == rd_tree_total(t, i));
		assert_true(rd_tree_self(s, i) == rd_tree_self(t, i));
		assert_string_equal(rd_model_fn_name(a, rd_tree_fn(s, i)),
				    rd_model_fn_name(b, rd_tree_fn(t, i)));
		assert_int_equal(rd_tree_pre(s, rd_tree_id(s, i)), i);
		assert_int_equal(rd_tree_pre(t, rd_tree_id(t, i)), i);
	}
	for (uint32_t i = 0; i < s->n; i += 1 + s->n / 500)
		assert_int_equal(rd_tree_size(s, i), rd_tree_size(t, i));
	assert_string_equal(a->answer, b->answer);
	assert_same_functions(a, b);
}

/* The models of a bulk-loaded profile (ids in preorder, big enough for
 * two halves) and of the same stacks linked one by one; they must be
 * equal. Returns them in *@a and *@b. */
static void models_bulk_and_linked(struct prof_profile *bulk,
				   struct prof_profile *linked,
				   struct rd_model **a, struct rd_model **b)
{
	*a = rd_model_new(bulk);
	*b = rd_model_new(linked);
	assert_non_null(*a);
	assert_non_null(*b);
	assert_int_equal(prof_ids_preorder(bulk), 1);
	assert_int_equal(prof_ids_preorder(linked), 0);
	assert_true(65536 <= (*a)->tree.n);
	assert_same_tree(*a, *b);
}

static void test_tree_bulk_and_linked(void **state)
{
	enum { LINES = 12000 };
	size_t cap = LINES * 80, len = 0, nl = 0;
	char *text = malloc(cap), **line = calloc(LINES, sizeof(*line));
	struct prof_profile *bulk, *linked = prof_new(PROF_UNIT_SAMPLES);
	struct rd_model *a, *b;
	uint64_t s = 77;

	(void)state;
	assert_non_null(text);
	assert_non_null(line);
	assert_non_null(linked);
	for (int i = 0; i < LINES; i++) {
		int n = 1 + (int)((s = s * 6364136223846793005ull + 1) >> 60);

		line[nl++] = text + len;
		len += (size_t)snprintf(text + len, cap - len, "p%d", (int)(s >> 62));
		for (int j = 0; j < n; j++) {
			s = s * 6364136223846793005ull + 1;
			len += (size_t)snprintf(text + len, cap - len, ";f%d",
						j < 2 ? j : (int)(s >> 52));
		}
		len += (size_t)snprintf(text + len, cap - len, " %d\n",
					1 + (int)((s >> 40) % 9));
	}
	bulk = parse(text);
	/* The same lines, last first, each added to a non-empty tree. */
	for (size_t i = nl; i-- > 0;) {
		size_t l = (size_t)(strchr(line[i], '\n') - line[i]) + 1;

		assert_int_equal(prof_folded_parse(linked, line[i], l, 1, NULL, 0), 0);
	}
	models_bulk_and_linked(bulk, linked, &a, &b);
	rd_model_free(a);
	rd_model_free(b);
	prof_free(bulk);
	prof_free(linked);
	free(line);
	free(text);
}

/* Appends @n frames "name" joined by ';' to @text at *@len. */
static void put_chain(char *text, size_t cap, size_t *len, const char *name,
		      int n)
{
	for (int i = 0; i < n; i++)
		*len += (size_t)snprintf(text + *len, cap - *len, ";%s", name);
}

/* A recursive chain that the middle of the tree cuts: the second half of
 * the fill starts deep inside it, so its own sums must know the
 * function is already on the path above (counted once through
 * recursion), whatever half each node falls in. Its kernel frames
 * "r_[k]" are the same function as "r" (so functions are not frames
 * one to one), of another class. */
static void test_tree_halves_recursion(void **state)
{
	enum { DEEP = 40000, SPLIT = 20000, TAIL = 500, FLAT = 30000 };
	size_t cap = (size_t)(DEEP + SPLIT + TAIL * 3) * 3 + (size_t)FLAT * 24 + 256;
	size_t len = 0, ends[3];
	char *text = malloc(cap), err[128];
	struct prof_profile *bulk = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *linked = prof_new(PROF_UNIT_SAMPLES);
	struct rd_model *a, *b;
	uint32_t r = 0, x = 0;

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "p0");
	put_chain(text, cap, &len, "r", DEEP);
	len += (size_t)snprintf(text + len, cap - len, " 3\np0");
	ends[0] = len - 2;
	put_chain(text, cap, &len, "r", SPLIT);
	put_chain(text, cap, &len, "x", 1);
	put_chain(text, cap, &len, "r_[k]", TAIL);
	len += (size_t)snprintf(text + len, cap - len, " 2\n");
	ends[1] = len;
	for (int i = 0; i < FLAT; i++)
		len += (size_t)snprintf(text + len, cap - len, "p1;g%d 1\n", i);
	ends[2] = len;
	assert_int_equal(prof_folded_parse_sorted(bulk, text, len, 1, err,
						  sizeof(err)), 0);
	/* The same lines another way: the flat ones, then the two deep
	 * ones last first, each added to a non-empty tree. */
	assert_int_equal(prof_folded_parse(linked, text + ends[1],
					   ends[2] - ends[1], 1, err, sizeof(err)), 0);
	assert_int_equal(prof_folded_parse(linked, text + ends[0],
					   ends[1] - ends[0], 1, err, sizeof(err)), 0);
	assert_int_equal(prof_folded_parse(linked, text, ends[0], 1, err,
					   sizeof(err)), 0);
	models_bulk_and_linked(bulk, linked, &a, &b);
	/* The middle node lies inside the chain, below SPLIT nodes of r. */
	assert_true(SPLIT + 2 < a->tree.n / 2 && a->tree.n / 2 < DEEP);
	for (uint32_t f = 1; f < a->nfn; f++) {
		if (!strcmp(rd_model_fn_name(a, f), "r"))
			r = f;
		if (!strcmp(rd_model_fn_name(a, f), "x"))
			x = f;
	}
	assert_true(r && x);
	assert_true(a->fns[r].total == 5);
	assert_true(a->fns[r].self == 5);
	assert_int_equal(a->fns[r].nodes, DEEP + TAIL);
	assert_true(a->fns[x].total == 2);
	assert_int_equal(a->fns[x].nodes, 1);
	assert_true(a->class_self[PROF_CLASS_UNKNOWN] == 3 + FLAT);
	assert_true(a->class_self[PROF_CLASS_SYSTEM] == 2);
	rd_model_free(a);
	rd_model_free(b);
	prof_free(bulk);
	prof_free(linked);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search),
		cmocka_unit_test(test_exact_query),
		cmocka_unit_test(test_answer_cpu),
		cmocka_unit_test(test_answer_waits),
		cmocka_unit_test(test_answer_plain),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_notice),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_tree_bulk_and_linked),
		cmocka_unit_test(test_tree_halves_recursion),
		cmocka_unit_test(test_answer_flat),
		cmocka_unit_test(test_answer_huge),
		cmocka_unit_test(test_answer_unnamed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
