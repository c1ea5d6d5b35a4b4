/* SPDX-License-Identifier: MIT */
/*
 * symbolize: Rust names. Fixtures in both manglings (legacy and v0),
 * linked by BFD and by LLD: their functions, looked up in the running
 * process, read as the source names them, language Rust; and every Rust
 * name of their symbol tables (the standard library's among them) reads
 * exactly as rustfilt prints it (rustc-demangle, built from Debian's
 * source of the crate), with the standard library's class.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"
#include "symbolize/symbolize.h"

#include "sym_child.h"

static const char *const fixtures[] = {
	"sym_rust_legacy_bfd", "sym_rust_legacy_lld",
	"sym_rust_v0_bfd", "sym_rust_v0_lld",
};

/* The functions the fixture prints, as rustfilt names them. */
static void test_fixture_names(void **state)
{
	(void)state;
	struct sym_options o = { .demangle = 1 };
	for (size_t k = 0; k < sizeof(fixtures) / sizeof(fixtures[0]); k++) {
		bool v0 = strstr(fixtures[k], "_v0_") != NULL;
		const char *want[][2] = {
			{ "area", "<sym_rust::shapes::Square as sym_rust::shapes::Area>::area" },
			/* legacy mangling has no generic arguments */
			{ "total", v0 ? "sym_rust::shapes::total::<u32>" : "sym_rust::shapes::total" },
			{ "churn", "sym_rust::shapes::churn" },
			{ "main", "sym_rust::main" },
		};
		char names[8][64];
		uint64_t addrs[8];
		struct child c;
		child_start(&c, fix(fixtures[k]));
		size_t n = child_read_addrs(&c, names, addrs, 8);
		assert_int_equal(n, 4);
		struct sym_ctx *ctx = sym_new(&o);
		for (size_t i = 0; i < n; i++) {
			struct sym_frame f[32];
			assert_string_equal(names[i], want[i][0]);
			int got = sym_user(ctx, c.pid, addrs[i], f, 32);
			assert_true(got >= 1);
			print_message("%s %s: %s\n", fixtures[k], names[i],
				      f[got - 1].name);
			assert_string_equal(f[got - 1].name, want[i][1]);
			assert_int_equal(f[got - 1].lang, PROF_LANG_RUST);
			assert_int_equal(f[got - 1].cls, PROF_CLASS_YOURS);
		}
		sym_free(ctx);
		child_stop(&c);
	}
}

/* The start and the middle of every function symbol of @path's .symtab,
 * at most @max addresses. */
static size_t function_starts(const char *path, uint64_t *out, size_t max)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	size_t n = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || n + 2 > max ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value)
				continue;
			out[n++] = s.st_value;
			if (s.st_size > 1) /* inside: more inline frames */
				out[n++] = s.st_value + s.st_size / 2;
		}
	}
	elf_end(e);
	close(fd);
	return n;
}

struct rust_name {
	char *mangled, *ours;
	uint8_t cls;
};

/* Every Rust frame at those addresses of @path: its mangled name
 * (as a context without demangling gives it) and ours, demangled. */
static size_t rust_names(const char *path, struct rust_name *out, size_t max)
{
	static uint64_t starts[40000];
	size_t ns = function_starts(path, starts, 40000), n = 0;
	struct sym_options o = { .demangle = 1 };
	struct sym_ctx *raw = sym_new(NULL), *dem = sym_new(&o);
	for (size_t i = 0; i < ns; i++) {
		struct sym_frame fr[32], fd[32];
		int a = sym_file(raw, path, starts[i], fr, 32);
		int b = sym_file(dem, path, starts[i], fd, 32);
		assert_int_equal(a, b);
		for (int k = 0; k < a && n < max; k++) {
			if (sym_lang_for_symbol(fr[k].name) != PROF_LANG_RUST)
				continue;
			assert_int_equal(fd[k].lang, PROF_LANG_RUST);
			out[n].mangled = strdup(fr[k].name);
			out[n].ours = strdup(fd[k].name);
			out[n].cls = fd[k].cls;
			assert_non_null(out[n].mangled);
			assert_non_null(out[n].ours);
			n++;
		}
	}
	sym_free(raw);
	sym_free(dem);
	return n;
}

/* Runs the rustfilt fixture on the mangled names; compares. */
static void compare_rustfilt(const char *fixture, struct rust_name *rn,
			     size_t n)
{
	char in[] = "/tmp/hearth-rustfilt-XXXXXX";
	int fd = mkstemp(in);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", rn[i].mangled);
	fclose(f);
	char cmd[PATH_MAX * 2];
	snprintf(cmd, sizeof(cmd), "'%s' < %s", fix("rustfilt"), in);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	static char line[65536];
	size_t i = 0, v0 = 0, std = 0;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		assert_true(i < n);
		if (strcmp(line, rn[i].ours) != 0) {
			print_error("%s: %s reads '%s', rustfilt '%s'\n", fixture,
				    rn[i].mangled, rn[i].ours, line);
			fail();
		}
		/* the standard library is runtime, in either mangling */
		bool rt = strncmp(line, "std::", 5) == 0 ||
			  strncmp(line, "core::", 6) == 0 ||
			  strncmp(line, "alloc::", 7) == 0;
		if (rt)
			assert_int_equal(rn[i].cls, PROF_CLASS_RUNTIME);
		std += rt;
		v0 += rn[i].mangled[1] == 'R';
		i++;
	}
	assert_int_equal(pclose(p), 0);
	unlink(in);
	assert_int_equal(i, n);
	print_message("%s: %zu Rust names as rustfilt prints them (%zu v0, "
		      "%zu of the standard library)\n", fixture, n, v0, std);
	assert_true(n > 1000);
	assert_true(std > 500);
	if (strstr(fixture, "_v0_"))
		assert_true(v0 > 20);
}

static void test_rustfilt(void **state)
{
	(void)state;
	static struct rust_name rn[60000];
	for (size_t k = 0; k < sizeof(fixtures) / sizeof(fixtures[0]); k++) {
		size_t n = rust_names(fix(fixtures[k]), rn, 60000);
		compare_rustfilt(fixtures[k], rn, n);
		for (size_t i = 0; i < n; i++) {
			free(rn[i].mangled);
			free(rn[i].ours);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_names),
		cmocka_unit_test(test_rustfilt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
