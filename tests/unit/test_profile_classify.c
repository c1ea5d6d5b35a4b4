/* SPDX-License-Identifier: MIT */
/* Frames of profiles from elsewhere get a class and a language from
 * their names and source paths: Go's standard library under GOROOT (its
 * vendored packages too) is runtime, the module cache and vendor
 * directories are libraries, Rust's, C++'s and Python's standard
 * libraries are runtime, their package caches libraries, any other known
 * file your code; without a file only runtime names say something. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "profile/classify.h"

static void test_guess(void **state)
{
	static const struct {
		const char *name, *file;
		uint8_t cls, lang;
	} c[] = {
		{ "runtime.mallocgc", "/usr/lib/go-1.19/src/runtime/malloc.go", PROF_CLASS_RUNTIME, PROF_LANG_GO },
		{ "net/http.(*conn).serve", "/usr/local/go/src/net/http/server.go", PROF_CLASS_RUNTIME, PROF_LANG_GO },
		{ "vendor/golang.org/x/net/http2/hpack.(*Decoder).Write",
		  "/usr/local/go/src/vendor/golang.org/x/net/http2/hpack/hpack.go", PROF_CLASS_RUNTIME, PROF_LANG_GO },
		{ "main.main", "/home/u/app/main.go", PROF_CLASS_YOURS, PROF_LANG_GO },
		{ "main.grow", "/home/u/go/src/main/grow.go", PROF_CLASS_YOURS, PROF_LANG_GO },
		{ "github.com/a/b.F", "/home/u/go/pkg/mod/github.com/a/b@v1.2.0/f.go", PROF_CLASS_LIBRARY, PROF_LANG_GO },
		{ "example.com/lib.Fill", "/home/u/app/vendor/example.com/lib/lib.go", PROF_CLASS_LIBRARY, PROF_LANG_GO },
		{ "example.com/app/store.Put", "/home/u/app/store/put.go", PROF_CLASS_YOURS, PROF_LANG_GO },
		{ "core::ptr::drop_in_place", "/rustc/90c541806f23a127002de5b4038be731ba1458ca/library/core/src/ptr/mod.rs",
		  PROF_CLASS_RUNTIME, PROF_LANG_RUST },
		{ "serde::de::f", "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0/src/de.rs",
		  PROF_CLASS_LIBRARY, PROF_LANG_RUST },
		{ "std::vector<int>::push_back", "/usr/include/c++/12/bits/stl_vector.h", PROF_CLASS_RUNTIME, PROF_LANG_CPP },
		{ "std::__sort", "", PROF_CLASS_RUNTIME, PROF_LANG_UNKNOWN },
		{ "json.decoder.decode", "/usr/lib/python3.11/json/decoder.py", PROF_CLASS_RUNTIME, PROF_LANG_PYTHON },
		{ "requests.get", "/usr/lib/python3/dist-packages/requests/api.py", PROF_CLASS_LIBRARY, PROF_LANG_PYTHON },
		{ "render", "/srv/app/node_modules/react/index.js", PROF_CLASS_LIBRARY, PROF_LANG_UNKNOWN },
		{ "parse_args", "/src/cli.cc", PROF_CLASS_YOURS, PROF_LANG_CPP },
		{ "fn_12", "", PROF_CLASS_UNKNOWN, PROF_LANG_UNKNOWN },
		{ "foo.cold", "", PROF_CLASS_UNKNOWN, PROF_LANG_UNKNOWN },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (prof_guess_class(c[i].name, c[i].file) != c[i].cls ||
		    prof_guess_lang(c[i].name, c[i].file) != c[i].lang)
			fail_msg("%s in %s: class %u language %u", c[i].name, c[i].file,
				 prof_guess_class(c[i].name, c[i].file),
				 prof_guess_lang(c[i].name, c[i].file));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guess),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
