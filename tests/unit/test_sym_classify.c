/* SPDX-License-Identifier: MIT */
/*
 * symbolize: ownership classes and language guesses as pure functions of
 * paths and symbol names, and the perf map parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"

static void test_languages_from_mangling(void **state)
{
	(void)state;
	assert_int_equal(sym_lang_for_symbol("_ZN7fixture9sort_workEi"),
			 PROF_LANG_CPP);
	assert_int_equal(sym_lang_for_symbol("_ZSt17__throw_bad_allocv"),
			 PROF_LANG_CPP);
	/* Rust, legacy mangling: _ZN ... 17h<16 hex>E */
	assert_int_equal(sym_lang_for_symbol(
				 "_ZN4core3fmt5write17h0123456789abcdefE"),
			 PROF_LANG_RUST);
	/* Rust v0 mangling */
	assert_int_equal(sym_lang_for_symbol("_RNvCs1234_7mycrate4main"),
			 PROF_LANG_RUST);
	assert_int_equal(sym_lang_for_symbol("runtime.mallocgc"), PROF_LANG_GO);
	assert_int_equal(sym_lang_for_symbol("main.main"), PROF_LANG_GO);
	/* plain names say nothing */
	assert_int_equal(sym_lang_for_symbol("malloc"), PROF_LANG_UNKNOWN);
	assert_int_equal(sym_lang_for_symbol("_Rare_c_name"), PROF_LANG_UNKNOWN);
	assert_int_equal(sym_lang_for_symbol("_ZN3fooE17hnothexatallxxxxE"),
			 PROF_LANG_CPP);
}

static void test_classes_from_paths(void **state)
{
	(void)state;
	struct sym_ctx *ctx = sym_new(NULL);
	assert_non_null(ctx);
	static const struct {
		const char *path;
		bool main;
		uint8_t cls;
	} cases[] = {
		{ "/usr/bin/bash", true, PROF_CLASS_YOURS },
		{ "/srv/app/bin/server", true, PROF_CLASS_YOURS },
		/* an interpreter runs the user's code; its own is runtime */
		{ "/usr/bin/python3.11", true, PROF_CLASS_RUNTIME },
		{ "/usr/bin/perl5.36.0", true, PROF_CLASS_RUNTIME },
		{ "/opt/node/bin/node", true, PROF_CLASS_RUNTIME },
		{ "/usr/bin/python-config", true, PROF_CLASS_YOURS },
		{ "/srv/app/bin/nodes", true, PROF_CLASS_YOURS },
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", false, PROF_CLASS_SYSTEM },
		{ "/lib64/ld-linux-x86-64.so.2", false, PROF_CLASS_SYSTEM },
		{ "/usr/lib/x86_64-linux-gnu/libm.so.6", false, PROF_CLASS_SYSTEM },
		{ "/lib/ld-musl-x86_64.so.1", false, PROF_CLASS_SYSTEM },
		{ "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", false,
		  PROF_CLASS_RUNTIME },
		{ "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1", false,
		  PROF_CLASS_RUNTIME },
		{ "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", false,
		  PROF_CLASS_RUNTIME },
		{ "/usr/lib/jvm/java-17/lib/server/libjvm.so", false,
		  PROF_CLASS_RUNTIME },
		{ "/usr/lib/x86_64-linux-gnu/libssl.so.3", false,
		  PROF_CLASS_LIBRARY },
		{ "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", false,
		  PROF_CLASS_LIBRARY },
		/* built and installed outside the package folders */
		{ "/opt/acme/lib/libacme.so", false, PROF_CLASS_YOURS },
		{ "/home/dev/build/libwidget.so", false, PROF_CLASS_YOURS },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t c = sym_class_for_path(ctx, cases[i].path, cases[i].main);
		if (c != cases[i].cls)
			print_error("%s: class %u, expected %u\n", cases[i].path,
				    c, cases[i].cls);
		assert_int_equal(c, cases[i].cls);
	}
	sym_free(ctx);
}

static void test_classes_from_symbols(void **state)
{
	(void)state;
	struct sym_ctx *ctx = sym_new(NULL);
	assert_int_equal(sym_class_for_symbol(ctx, "runtime.gcBgMarkWorker"),
			 PROF_CLASS_RUNTIME);
	assert_int_equal(sym_class_for_symbol(ctx, "_ZN3std2rt10lang_start17h0123456789abcdefE"),
			 PROF_CLASS_RUNTIME);
	assert_int_equal(sym_class_for_symbol(ctx, "_ZNSt6vectorIiSaIiEE9push_backERKi"),
			 PROF_CLASS_RUNTIME);
	assert_int_equal(sym_class_for_symbol(ctx, "std::sort"), PROF_CLASS_RUNTIME);
	assert_int_equal(sym_class_for_symbol(ctx, "main.handler"),
			 PROF_CLASS_UNKNOWN); /* the module decides */
	assert_int_equal(sym_class_for_symbol(ctx, "_ZN7fixture9sort_workEi"),
			 PROF_CLASS_UNKNOWN);
	sym_free(ctx);
}

static void test_perf_map_parse(void **state)
{
	(void)state;
	static const char text[] =
		"7f0000001000 40 LazyCompile:*hot /app/x.js:3\n"
		"0x7f0000002000 0x20 stub\r\n"
		"garbage line\n"
		"7f0000003000 0 zero_size\n"
		"7f0000001000 10 recompiled_hot\n"
		"7f0000004000 10\n"
		"7f0000005000 10 last_without_newline";
	struct sym_perfmap *pm = sym_perfmap_new();
	assert_int_equal(sym_perfmap_parse(pm, text, sizeof(text) - 1), 0);
	/* a later line for the same start wins (the JIT recompiled it) */
	assert_string_equal(sym_perfmap_find(pm, 0x7f0000001005), "recompiled_hot");
	/* the older, longer entry at that start is obsolete: past the newer
	 * one's end nothing is named (the JIT reused the memory) */
	assert_null(sym_perfmap_find(pm, 0x7f0000001020));
	assert_string_equal(sym_perfmap_find(pm, 0x7f000000201f), "stub");
	assert_null(sym_perfmap_find(pm, 0x7f0000002020));
	assert_null(sym_perfmap_find(pm, 0x7f0000003000)); /* size 0 */
	assert_null(sym_perfmap_find(pm, 0x7f0000004000)); /* no name */
	assert_string_equal(sym_perfmap_find(pm, 0x7f0000005001),
			    "last_without_newline");
	sym_perfmap_free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_languages_from_mangling),
		cmocka_unit_test(test_classes_from_paths),
		cmocka_unit_test(test_classes_from_symbols),
		cmocka_unit_test(test_perf_map_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
