/* SPDX-License-Identifier: MIT */
/*
 * kallsyms parsing: the in-place parser against a plain line-by-line parse
 * (sscanf, one copy per name, one sort) of the same bytes of the real
 * /proc/kallsyms, symbol by symbol; and the cases the real file rarely
 * shows: modules out of order, aliases, malformed lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"

/* ---- the reference: one line at a time, the obvious way ---- */

struct ref_sym {
	unsigned long long addr;
	size_t order; /* line number: among aliases the later one is named */
	char *name;
	char *module;
};

struct ref {
	struct ref_sym *s;
	size_t n, cap;
	unsigned long long etext;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

static void ref_line(struct ref *r, const char *line, size_t order)
{
	unsigned long long addr;
	char type, name[1024], mod[1024];
	int got = sscanf(line, "%llx %c %1023s [%1023[^]]]", &addr, &type,
			 name, mod);
	assert_true(got >= 3);
	if (got == 3 && strcmp(name, "_etext") == 0) {
		r->etext = addr;
		return;
	}
	if (!strchr("tTwW", type) || addr == 0 ||
	    strncmp(name, "__pfx_", 6) == 0)
		return;
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 4096;
		r->s = realloc(r->s, r->cap * sizeof(*r->s));
		assert_non_null(r->s);
	}
	r->s[r->n++] = (struct ref_sym){
		.addr = addr, .order = order, .name = strdup(name),
		.module = got == 4 ? strdup(mod) : NULL };
}

static void ref_parse(struct ref *r, const char *buf, size_t len)
{
	size_t order = 0;
	for (const char *p = buf; p < buf + len;) {
		const char *nl = memchr(p, '\n', (size_t)(buf + len - p));
		size_t l = (size_t)((nl ? nl : buf + len) - p);
		char *line = strndup(p, l);
		assert_non_null(line);
		if (l)
			ref_line(r, line, order++);
		free(line);
		p += l + 1;
	}
	qsort(r->s, r->n, sizeof(*r->s), ref_cmp);
}

static void ref_free(struct ref *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->s[i].name);
		free(r->s[i].module);
	}
	free(r->s);
}

/* Every symbol, in order, with its module; then lookups inside each. */
static void check_same(const struct sym_kallsyms *k, const struct ref *r)
{
	uint64_t addr;
	const char *name, *mod;
	for (size_t i = 0; i < r->n; i++) {
		assert_int_equal(sym_kallsyms_nth(k, i, &addr, &name, &mod), 0);
		assert_int_equal(addr, r->s[i].addr);
		assert_string_equal(name, r->s[i].name);
		if (r->s[i].module)
			assert_string_equal(mod, r->s[i].module);
		else
			assert_null(mod);
	}
	assert_int_equal(sym_kallsyms_nth(k, r->n, &addr, &name, &mod), -ENOENT);
	for (size_t i = 0; i + 1 < r->n; i++) {
		if (r->s[i].addr == r->s[i + 1].addr)
			continue; /* the later alias names the address */
		uint64_t mid = r->s[i].addr + (r->s[i + 1].addr - r->s[i].addr) / 2;
		bool past_text = !r->s[i].module && r->etext &&
				 mid >= r->etext && r->s[i].addr < r->etext;
		int rc = sym_kallsyms_find(k, mid, &name, &mod);
		if (past_text) {
			assert_int_equal(rc, -ENOENT);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(name, r->s[i].name);
	}
}

static char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	ssize_t r;
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	assert_true(r == 0);
	close(fd);
	*len = n;
	return buf;
}

static void test_real_file_same_as_reference(void **state)
{
	(void)state;
	size_t len;
	/* one read, parsed both ways: modules and BPF programs come and go */
	char *buf = read_file("/proc/kallsyms", &len);
	struct ref r = { 0 };
	ref_parse(&r, buf, len);
	assert_true(r.n > 10000); /* run as root: addresses are visible */
	struct sym_kallsyms *k = sym_kallsyms_parse(buf, len);
	assert_non_null(k);
	check_same(k, &r);
	sym_kallsyms_free(k);
	ref_free(&r);
	free(buf);
	/* and the file read directly gives a table of the same size, within
	 * what may have been loaded in between */
	k = sym_kallsyms_load("/proc/kallsyms");
	assert_non_null(k);
	uint64_t addr;
	const char *name, *mod;
	assert_int_equal(sym_kallsyms_nth(k, r.n * 99 / 100, &addr, &name, &mod), 0);
	sym_kallsyms_free(k);
}

static const char unordered[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000010 T alias_first\n"
	"ffffffff81000010 t alias_second\n"
	"ffffffff81000020 d data_between\n"
	"ffffffff81000030 W weak_one\n"
	"ffffffff81000040 T _etext\n"
	"ffffffffc0002000 t m2_b\t[mod_two]\n"
	"ffffffffc0001000 t m2_a\t[mod_two]\n"
	"ffffffffc0000100 t m1_b\t[mod_one]\n"
	"ffffffffc0000000 T m1_a\t[mod_one]\n"
	"ffffffffc0003000 t bpf_prog_1_x\t[bpf]\n"
	"ffffffff80000000 t below_text\t[early]"; /* no newline at the end */

static void test_unordered_modules_and_aliases(void **state)
{
	(void)state;
	struct ref r = { 0 };
	ref_parse(&r, unordered, sizeof(unordered) - 1);
	struct sym_kallsyms *k = sym_kallsyms_parse(unordered,
						    sizeof(unordered) - 1);
	assert_non_null(k);
	assert_int_equal(r.n, 10);
	check_same(k, &r);
	const char *name, *mod;
	assert_int_equal(sym_kallsyms_find(k, 0xffffffff81000011ull, &name, &mod), 0);
	assert_string_equal(name, "alias_second");
	assert_int_equal(sym_kallsyms_find(k, 0xffffffff81000025ull, &name, &mod), 0);
	assert_string_equal(name, "alias_second"); /* data is not a function */
	assert_int_equal(sym_kallsyms_find(k, 0xffffffffc0000180ull, &name, &mod), 0);
	assert_string_equal(name, "m1_b");
	assert_string_equal(mod, "mod_one");
	assert_int_equal(sym_kallsyms_find(k, 0xffffffffc0002010ull, &name, &mod), 0);
	assert_string_equal(name, "m2_b");
	assert_string_equal(mod, "mod_two");
	assert_int_equal(sym_kallsyms_find(k, 0xffffffff80000004ull, &name, &mod), 0);
	assert_string_equal(name, "below_text");
	assert_string_equal(mod, "early");
	/* past _etext, before the modules */
	assert_int_equal(sym_kallsyms_find(k, 0xffffffff90000000ull, &name, &mod),
			 -ENOENT);
	sym_kallsyms_free(k);
	ref_free(&r);
}

static void test_malformed(void **state)
{
	(void)state;
#define BAD(s) { s, sizeof(s) - 1 }
	static const struct { const char *text; size_t len; } bad[] = {
		BAD("ffffffff81000000 T\n"),                   /* no name */
		BAD("ffffffff81000000 T \n"),                  /* empty name */
		BAD("fffffffff81000000 T too_long_address\n"), /* 17 digits */
		BAD("xyz T no_address\n"),
		BAD("ffffffff81000000T glued\n"),
		BAD("ffffffff81000000 T a\0b\n"),
		BAD("ffffffff81000000 d \tdata_without_name\n"),
		BAD("ffffffff81000000 t \t__pfx_without_name\n"),
	};
#undef BAD
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(sym_kallsyms_parse(bad[i].text, bad[i].len));
		assert_int_equal(errno, EINVAL);
	}
	errno = 0;
	assert_null(sym_kallsyms_parse("", 0));
	assert_int_equal(errno, ENODATA);
	errno = 0;
	assert_null(sym_kallsyms_parse("0000000000000000 T hidden\n", 26));
	assert_int_equal(errno, EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_file_same_as_reference),
		cmocka_unit_test(test_unordered_modules_and_aliases),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
