/* SPDX-License-Identifier: MIT */
/*
 * Loading folded text into an empty profile sorts the stacks and makes
 * each node once (prof_build). The tree must equal the one made stack by
 * stack with lookups: same frames, totals, selves and sibling order
 * (the order the input first reached them), whatever the order of the
 * lines; and after prof_sort() the node ids are the tree's preorder.
 */
#include <errno.h>
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

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static struct prof_profile *parse(const char *text, size_t len, int procs)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, text, len, procs, err,
					   sizeof(err)), 0);
	return p;
}

static struct prof_profile *parse_sorted(const char *text, int procs)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse_sorted(p, text, strlen(text), procs,
						  err, sizeof(err)), 0);
	return p;
}

/* The reference: one line at a time, so every line after the first is
 * added to a non-empty tree by lookups, stack by stack. */
static struct prof_profile *parse_by_line(const char *text, int procs)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	const char *s = text;

	assert_non_null(p);
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);

		assert_int_equal(prof_folded_parse(p, s, n, procs, NULL, 0), 0);
		s += n;
	}
	return p;
}

/* The reference for big texts: the whole text added to a tree that
 * already holds a node ("\x01seed", value 0, the root's first child
 * before and after sorting), so it goes stack by stack with lookups. */
static struct prof_profile *parse_seeded(const char *text, int procs)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct prof_frame f = { 0 };
	uint32_t id;

	assert_non_null(p);
	f.name = prof_intern_cstr(p, "\x01seed");
	id = prof_frame_intern(p, &f);
	assert_int_equal(prof_add_stack(p, &id, 1, 0), 1);
	assert_int_equal(prof_folded_parse(p, text, strlen(text), procs, NULL, 0),
			 0);
	return p;
}

/* Asserts the subtrees under @na of @a and @nb of @b are equal: frames
 * (name and kind), totals, selves and sibling order. */
static void assert_same(const struct prof_profile *a, uint32_t na,
			const struct prof_profile *b, uint32_t nb)
{
	const struct prof_node *x = prof_node_get(a, na), *y = prof_node_get(b, nb);
	uint32_t ca, cb;

	assert_non_null(x);
	assert_non_null(y);
	assert_true(x->total == y->total);
	assert_true(x->self == y->self);
	if (na) {
		const struct prof_frame *fa = prof_frame_get(a, x->frame);
		const struct prof_frame *fb = prof_frame_get(b, y->frame);

		assert_string_equal(prof_str(a, fa->name), prof_str(b, fb->name));
		assert_int_equal(fa->kind, fb->kind);
		assert_int_equal(x->parent < na, 1);
	}
	for (ca = x->child, cb = y->child; ca && cb;
	     ca = prof_node_get(a, ca)->sibling,
	     cb = prof_node_get(b, cb)->sibling)
		assert_same(a, ca, b, cb);
	assert_int_equal(ca, 0);
	assert_int_equal(cb, 0);
}

/* After prof_sort(), a depth-first walk meets the nodes in id order. */
static void assert_preorder(const struct prof_profile *p)
{
	uint32_t id = 0, next = 0;

	for (;;) {
		const struct prof_node *nd = prof_node_get(p, id);

		assert_int_equal(id, next);
		next++;
		if (nd->child) {
			id = nd->child;
			continue;
		}
		while (id && !prof_node_get(p, id)->sibling)
			id = prof_node_get(p, id)->parent;
		if (!id)
			break;
		id = prof_node_get(p, id)->sibling;
	}
	assert_int_equal(next, prof_node_count(p));
}

static const char *const names[] = {
	"a", "b", "ab", "a_[k]", "b_[k]", "a_[i]", "x_[i]", "main",
	"operator new(unsigned long)", "\xc3\xa9t\xc3\xa9", "eightchr",
	"sixteen_chars_ok", "a_long_name_past_sixteen_bytes_1",
	"a_long_name_past_sixteen_bytes_2", "Z", "_", "a~", "!",
};

/* Random folded text: @lines lines of stacks 0 to @deep frames deep over
 * the first @nnames names, with repeats, blank lines, CRLF and tabs. */
static char *random_text(uint64_t *s, size_t lines, size_t nnames,
			 size_t deep)
{
	size_t cap = lines * (deep + 1) * 40 + 64, len = 0;
	char *t = malloc(cap);

	assert_non_null(t);
	for (size_t i = 0; i < lines; i++) {
		size_t n = 1 + rng(s) % deep;

		if (rng(s) % 17 == 0) {
			len += (size_t)snprintf(t + len, cap - len, "\n");
			continue;
		}
		for (size_t j = 0; j < n; j++) {
			/* Mostly the same first frames, as in real profiles. */
			size_t k = j < 2 && rng(s) % 4 ? j : rng(s) % nnames;

			len += (size_t)snprintf(t + len, cap - len, "%s%s",
						j ? ";" : "", names[k]);
		}
		len += (size_t)snprintf(t + len, cap - len, "%s%llu%s",
					rng(s) % 5 ? " " : "\t",
					(unsigned long long)(rng(s) % 50),
					rng(s) % 7 ? "\n" : "\r\n");
	}
	t[len] = '\0';
	return t;
}

/* The lines of @text in a random order. */
static char *shuffled(uint64_t *s, const char *text)
{
	size_t n = 0, len = strlen(text), at = 0;
	const char **line;
	char *copy = strdup(text), *out = malloc(len + 2), *tok;

	assert_non_null(copy);
	assert_non_null(out);
	line = calloc(len + 1, sizeof(*line));
	assert_non_null(line);
	for (tok = strtok(copy, "\n"); tok; tok = strtok(NULL, "\n"))
		line[n++] = tok;
	for (size_t i = n; 1 < i; i--) {
		size_t j = rng(s) % i;
		const char *x = line[i - 1];

		line[i - 1] = line[j];
		line[j] = x;
	}
	for (size_t i = 0; i < n; i++)
		at += (size_t)sprintf(out + at, "%s\n", line[i]);
	out[at] = '\0';
	free(line);
	free(copy);
	return out;
}

/* Asserts @p equals @ref but for @ref's first top-level node, the seed. */
static void assert_same_seeded(const struct prof_profile *p,
			       const struct prof_profile *ref)
{
	uint32_t a = prof_node_get(p, 0)->child;
	uint32_t b = prof_node_get(ref, prof_node_get(ref, 0)->child)->sibling;

	assert_true(prof_total(p) == prof_total(ref));
	assert_int_equal(prof_node_count(p) + 1, prof_node_count(ref));
	for (; a && b; a = prof_node_get(p, a)->sibling,
		       b = prof_node_get(ref, b)->sibling)
		assert_same(p, a, ref, b);
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
}

/* A big text: as made, as sorted when made, as sorted after. */
static void check_big_text(const char *text, int procs)
{
	struct prof_profile *p = parse(text, strlen(text), procs);
	struct prof_profile *ref = parse_seeded(text, procs);
	struct prof_profile *q = parse_sorted(text, procs);

	assert_same_seeded(p, ref);
	assert_int_equal(prof_sort(p), 0);
	assert_int_equal(prof_sort(ref), 0);
	assert_same_seeded(p, ref);
	assert_same_seeded(q, ref);
	assert_preorder(p);
	assert_preorder(q);
	prof_free(p);
	prof_free(q);
	prof_free(ref);
}

static void check_text(const char *text, int procs)
{
	struct prof_profile *p = parse(text, strlen(text), procs);
	struct prof_profile *ref = parse_by_line(text, procs);
	struct prof_profile *q = parse_sorted(text, procs);

	assert_int_equal(prof_node_count(p), prof_node_count(ref));
	assert_int_equal(prof_frame_count(p), prof_frame_count(ref));
	/* Before sorting: the input's order, as stack by stack. */
	assert_same(p, 0, ref, 0);
	assert_int_equal(prof_sort(p), 0);
	assert_int_equal(prof_sort(ref), 0);
	assert_same(p, 0, ref, 0);
	assert_preorder(p);
	/* Sorted as it is made: the same as sorting after, ids and all. */
	assert_same(q, 0, ref, 0);
	assert_preorder(q);
	for (uint32_t i = 0; i < prof_node_count(p); i++)
		assert_int_equal(prof_node_get(p, i)->frame,
				 prof_node_get(q, i)->frame);
	assert_int_equal(prof_sort(q), 0);
	assert_same(q, 0, ref, 0);
	prof_free(p);
	prof_free(q);
	prof_free(ref);
}

/* Random texts, each checked against the stack-by-stack tree. */
static void test_matches_stack_by_stack(void **state)
{
	uint64_t s = 0x1234567887654321ull;

	(void)state;
	for (int round = 0; round < 60; round++) {
		size_t nnames = 2 + rng(&s) % (sizeof(names) / sizeof(*names) - 1);
		char *t = random_text(&s, 1 + rng(&s) % 120, nnames,
				      1 + rng(&s) % 40);

		check_text(t, round & 1);
		free(t);
	}
}

/* The same lines in any order give the same sorted tree, node ids and
 * all. */
static void test_shuffled_lines_same_tree(void **state)
{
	uint64_t s = 0xfeedfacecafebeefull;

	(void)state;
	for (int round = 0; round < 20; round++) {
		char *t = random_text(&s, 300, 12, 30);
		char *u = shuffled(&s, t);
		struct prof_profile *p = parse(t, strlen(t), 1);
		struct prof_profile *q = parse(u, strlen(u), 1);

		assert_int_equal(prof_sort(p), 0);
		assert_int_equal(prof_sort(q), 0);
		assert_int_equal(prof_node_count(p), prof_node_count(q));
		assert_same(p, 0, q, 0);
		for (uint32_t i = 0; i < prof_node_count(p); i++) {
			assert_int_equal(prof_node_get(p, i)->parent,
					 prof_node_get(q, i)->parent);
			assert_true(prof_node_get(p, i)->total ==
				    prof_node_get(q, i)->total);
		}
		check_text(u, 1);
		prof_free(p);
		prof_free(q);
		free(t);
		free(u);
	}
}

/* Many distinct frames: ranks need 17 bits, three to a sort key, and
 * long shared prefixes need several rounds of keys. Over 2 MiB of text,
 * so the stacks' room is reserved at once, and 70,000 stacks, so the
 * runs left after the first key are sorted in two parts on two threads
 * (and the text parsed in two halves). */
static void test_many_frames(void **state)
{
	uint64_t s = 42;
	size_t cap = 70000 * 120, len = 0;
	char *t = malloc(cap);

	(void)state;
	assert_non_null(t);
	for (int i = 0; i < 70000; i++) {
		int n = 1 + (int)(rng(&s) % 12);

		len += (size_t)snprintf(t + len, cap - len, "p%d", (int)(rng(&s) % 3));
		for (int j = 0; j < n; j++)
			len += (size_t)snprintf(t + len, cap - len, ";f%d",
						j < 6 && rng(&s) % 8 ?
							j : (int)(rng(&s) % 70000));
		len += (size_t)snprintf(t + len, cap - len, " %d\n",
					(int)(rng(&s) % 9));
	}
	assert_true((size_t)2 << 20 < len);
	check_big_text(t, 1);
	free(t);
}

/* Values saturate as prof_add_stack() saturates them. */
static void test_saturates(void **state)
{
	(void)state;
	check_text("a;b 18446744073709551614\na;b 5\na;c 18446744073709551615\n"
		   "a 3\n", 0);
}

/* Ties in the folded spelling: a function and an inline frame of the same
 * name, a kernel frame, prefixes of each other, bytes above 0x7f. */
static void test_spelling_ties(void **state)
{
	static const char text[] = "p;foo_[i] 1\np;foo 2\np;foo_[k] 3\np;fo 4\n"
				   "p;\xc3\xa9 5\n";
	/* "fo;" < "foo;" (the function, then the inline frame) < "foo_[k];"
	 * < "\xc3\xa9;" */
	static const struct {
		const char *name;
		int kind;
	} want[] = {
		{ "fo", PROF_KIND_USER }, { "foo", PROF_KIND_USER },
		{ "foo", PROF_KIND_INLINE }, { "foo", PROF_KIND_KERNEL },
		{ "\xc3\xa9", PROF_KIND_USER },
	};
	struct prof_profile *p;
	uint32_t c;
	size_t i = 0;

	(void)state;
	check_text(text, 0);
	p = parse(text, strlen(text), 0);
	assert_int_equal(prof_sort(p), 0);
	c = prof_node_get(p, prof_node_get(p, 0)->child)->child;
	for (; c; c = prof_node_get(p, c)->sibling, i++) {
		const struct prof_frame *f = prof_frame_get(p, prof_node_get(p, c)->frame);

		assert_true(i < sizeof(want) / sizeof(*want));
		assert_string_equal(prof_str(p, f->name), want[i].name);
		assert_int_equal(f->kind, want[i].kind);
	}
	assert_int_equal(i, sizeof(want) / sizeof(*want));
	prof_free(p);
}

/* A profile that already has nodes takes the stacks by lookups; one
 * loaded in bulk takes more stacks the same way afterwards. */
static void test_adds_after_build(void **state)
{
	const char *text = "a;b 1\na;c 2\nd 3\n";
	struct prof_profile *p = parse(text, strlen(text), 0);
	uint32_t frames[2], n = prof_node_count(p);

	(void)state;
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 0, NULL, 0), 0);
	assert_int_equal(prof_node_count(p), n);
	assert_true(prof_total(p) == 12);
	frames[0] = prof_node_get(p, prof_node_get(p, 0)->child)->frame;
	frames[1] = prof_node_get(p, prof_node_get(p, prof_node_get(p, 0)->child)->child)->frame;
	assert_int_not_equal(prof_add_stack(p, frames, 2, 10), UINT32_MAX);
	assert_int_equal(prof_node_count(p), n);
	assert_true(prof_node_get(p, prof_node_get(p, prof_node_get(p, 0)->child)->child)->self == 12);
	assert_int_not_equal(prof_child_get(p, prof_node_get(p, 0)->child, frames[0]),
			     UINT32_MAX);
	assert_int_equal(prof_node_count(p), n + 1);
	assert_int_equal(prof_sort(p), 0);
	assert_int_equal(prof_child_find(p, 0, frames[0]), prof_node_get(p, 0)->child);
	prof_free(p);

	/* Sorted as made, then more stacks by lookups: "b" reached first
	 * stays after "a". */
	p = parse_sorted("x;b 1\nx;a 2\n", 0);
	assert_int_equal(prof_folded_parse_sorted(p, "x;c 4\nx;b 8\n", 12, 0,
						  NULL, 0), 0);
	assert_int_equal(prof_node_count(p), 5);
	assert_true(prof_total(p) == 15);
	{
		uint32_t x = prof_node_get(p, 0)->child;
		uint32_t a = prof_node_get(p, x)->child;
		uint32_t b = prof_node_get(p, a)->sibling;
		uint32_t c = prof_node_get(p, b)->sibling;

		assert_string_equal(prof_str(p, prof_frame_get(p, prof_node_get(p, a)->frame)->name), "a");
		assert_true(prof_node_get(p, b)->total == 9);
		assert_string_equal(prof_str(p, prof_frame_get(p, prof_node_get(p, c)->frame)->name), "c");
		assert_int_equal(prof_node_get(p, c)->sibling, 0);
	}
	prof_free(p);
}

/* The order frames are ranked in (sort.c): the folded spelling (name,
 * "_[k]" for kernel frames, ';') bytewise, then module and file names,
 * line, kind, class, language, id. Returns < 0, 0, > 0. */
static int spelling_order(const struct prof_profile *p, uint32_t a, uint32_t b)
{
	const struct prof_frame *fa = prof_frame_get(p, a), *fb = prof_frame_get(p, b);
	char sa[256], sb[256];
	size_t la, lb;
	int c;

	la = (size_t)snprintf(sa, sizeof(sa), "%s%s;", prof_str(p, fa->name),
			      fa->kind == PROF_KIND_KERNEL ? "_[k]" : "");
	lb = (size_t)snprintf(sb, sizeof(sb), "%s%s;", prof_str(p, fb->name),
			      fb->kind == PROF_KIND_KERNEL ? "_[k]" : "");
	c = memcmp(sa, sb, la < lb ? la : lb);
	if (c || la != lb)
		return c ? c : (la < lb ? -1 : 1);
	if ((c = strcmp(prof_str(p, fa->module), prof_str(p, fb->module))))
		return c;
	if ((c = strcmp(prof_str(p, fa->file), prof_str(p, fb->file))))
		return c;
	if (fa->line != fb->line)
		return fa->line < fb->line ? -1 : 1;
	if (fa->kind != fb->kind)
		return fa->kind < fb->kind ? -1 : 1;
	if (fa->cls != fb->cls)
		return fa->cls < fb->cls ? -1 : 1;
	if (fa->lang != fb->lang)
		return fa->lang < fb->lang ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Frames ranked for the build: many share long prefixes (namespaces,
 * "fn_" and digits, lengths around every multiple of 8 up to 90 bytes,
 * names that are prefixes of others), some differ only past 64 bytes or
 * only in kind, and some hold bytes over 0x7f. Built from folded text,
 * the root's children come out in that order, each frame once. */
static void test_frame_ranks(void **state)
{
	uint64_t s = 0xfeedfacecafebeefull;
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap), name[128];
	struct prof_profile *p;
	uint32_t c, prev = 0, n = 0;

	(void)state;
	assert_non_null(text);
	for (int i = 0; i < 6000; i++) {
		unsigned r = (unsigned)(rng(&s) % 1000);
		size_t nl;

		switch (rng(&s) % 6) {
		case 0:
			snprintf(name, sizeof(name), "ns%u::Type%u::method_%u",
				 r % 7, r % 13, (unsigned)(rng(&s) % 5000));
			break;
		case 1:
			snprintf(name, sizeof(name), "fn_%u", (unsigned)(rng(&s) % 100000));
			break;
		case 2:
			/* A long shared prefix, differing past 64 bytes. */
			snprintf(name, sizeof(name), "%s%u",
				 "std::vector<std::basic_string<char>>::emplace_back_aux_",
				 r);
			break;
		case 3:
			nl = 1 + (size_t)(rng(&s) % 90);
			memset(name, 'a' + (int)(r % 3), nl);
			name[nl] = '\0';
			if (rng(&s) % 4 == 0)
				name[nl / 2] = (char)0xe9;
			break;
		default:
			snprintf(name, sizeof(name), "dup%u", r % 40);
			break;
		}
		len += (size_t)snprintf(text + len, cap - len, "%s%s 1\n", name,
					rng(&s) % 4 ? "" : rng(&s) % 2 ? "_[k]" : "_[i]");
		assert_true(len + 256 < cap);
	}
	p = parse_sorted(text, 0);
	for (c = prof_node_get(p, 0)->child; c; c = prof_node_get(p, c)->sibling, n++) {
		uint32_t f = prof_node_get(p, c)->frame;

		if (prev)
			assert_true(spelling_order(p, prev, f) < 0);
		prev = f;
	}
	assert_int_equal(n, prof_frame_count(p) - 1);
	free(text);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_stack_by_stack),
		cmocka_unit_test(test_shuffled_lines_same_tree),
		cmocka_unit_test(test_many_frames),
		cmocka_unit_test(test_saturates),
		cmocka_unit_test(test_spelling_ties),
		cmocka_unit_test(test_adds_after_build),
		cmocka_unit_test(test_frame_ranks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
