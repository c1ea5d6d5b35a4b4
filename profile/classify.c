/* SPDX-License-Identifier: MIT */
/* Classes and languages of frames from elsewhere, from their names and
 * source paths. */
#include "classify.h"

#include <string.h>

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* The length of the Go package a function name starts with:
 * "net/http.(*conn).serve" gives that of "net/http"; 0 when the name
 * has no package before a dot. */
static size_t go_package(const char *name)
{
	const char *slash = strrchr(name, '/');
	const char *start = slash ? slash + 1 : name;
	const char *dot = strchr(start, '.');

	return dot && dot != start ? (size_t)(dot - name) : 0;
}

/* 1 when @file is GOROOT/src/PKG/... for the standard package @name is
 * in: the package's first element has no dot (modules' do) and is not
 * "main". */
static int go_standard(const char *name, const char *file)
{
	size_t n = go_package(name), first = strcspn(name, "/.");
	const char *at;

	if (!n || memchr(name, '.', first < n ? first : n) ||
	    (n == 4 && !memcmp(name, "main", 4)))
		return 0;
	for (at = strstr(file, "/src/"); at; at = strstr(at + 1, "/src/"))
		if (!strncmp(at + 5, name, n) && at[5 + n] == '/')
			return 1;
	return 0;
}

/* Where dependencies are fetched to: Go's module cache and vendor
 * directories, Cargo's registry and git checkouts, npm's, pip's. */
static const char *const dependency_dirs[] = {
	"/pkg/mod/", "/vendor/", "/.cargo/registry/", "/.cargo/git/",
	"/node_modules/", "/site-packages/", "/dist-packages/", NULL,
};

/* Standard libraries' sources: Rust's (as rustc records them, or from
 * rustup's rust-src), C++'s headers, Python's. */
static const char *const runtime_dirs[] = {
	"/lib/rustlib/src/rust/library/", "/usr/include/c++/", "/usr/lib/python",
	"/usr/local/lib/python", NULL,
};

/* Runtimes by the name of their functions. */
static const char *const runtime_names[] = {
	"runtime.", "std::", "core::", "alloc::", "__gnu_cxx::", "__cxa_",
	"__cxxabiv1::", NULL,
};

static int any_in(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strstr(s, list[i]))
			return 1;
	return 0;
}

/* 1 when @name starts with a runtime's prefix; most names are ruled out
 * by their first letter (a folded file of 200,000 names is read without
 * a string compared for most). */
static int runtime_name(const char *name)
{
	if (!strchr("rsca_", name[0]) || !name[0])
		return 0;
	for (size_t i = 0; runtime_names[i]; i++)
		if (has_prefix(name, runtime_names[i]))
			return 1;
	return 0;
}

uint8_t prof_guess_class(const char *name, const char *file)
{
	if (!*file)
		return runtime_name(name) ? PROF_CLASS_RUNTIME : PROF_CLASS_UNKNOWN;
	if (go_standard(name, file))
		return PROF_CLASS_RUNTIME;
	if (any_in(file, dependency_dirs))
		return PROF_CLASS_LIBRARY;
	if ((has_prefix(file, "/rustc/") && strstr(file, "/library/")) ||
	    any_in(file, runtime_dirs) || runtime_name(name))
		return PROF_CLASS_RUNTIME;
	return PROF_CLASS_YOURS;
}

/* Extensions of source files, by language. */
static const struct {
	const char *ext;
	uint8_t lang;
} exts[] = {
	{ ".go", PROF_LANG_GO }, { ".rs", PROF_LANG_RUST }, { ".c", PROF_LANG_C },
	{ ".h", PROF_LANG_C }, { ".cc", PROF_LANG_CPP }, { ".cpp", PROF_LANG_CPP },
	{ ".cxx", PROF_LANG_CPP }, { ".c++", PROF_LANG_CPP }, { ".hpp", PROF_LANG_CPP },
	{ ".hh", PROF_LANG_CPP }, { ".hxx", PROF_LANG_CPP }, { ".tcc", PROF_LANG_CPP },
	{ ".s", PROF_LANG_ASM }, { ".S", PROF_LANG_ASM }, { ".asm", PROF_LANG_ASM },
	{ ".py", PROF_LANG_PYTHON },
};

uint8_t prof_guess_lang(const char *name, const char *file)
{
	const char *slash, *dot;

	if (!*file)
		goto by_name;
	slash = strrchr(file, '/');
	dot = strrchr(slash ? slash : file, '.');
	if (strstr(file, "/c++/"))
		return PROF_LANG_CPP; /* <vector> has no extension, bits/ use .h */
	for (size_t i = 0; dot && i < sizeof(exts) / sizeof(exts[0]); i++)
		if (!strcmp(dot, exts[i].ext))
			return exts[i].lang;
by_name:
	if (name[0] != 'r' && name[0] != '_')
		return PROF_LANG_UNKNOWN;
	if (has_prefix(name, "runtime."))
		return PROF_LANG_GO;
	if (has_prefix(name, "_Z"))
		return PROF_LANG_CPP;
	return PROF_LANG_UNKNOWN;
}

void prof_guess_frame(const struct prof_profile *p, struct prof_frame *f)
{
	const char *name, *file;

	if (f->kind != PROF_KIND_USER && f->kind != PROF_KIND_INLINE)
		return;
	name = prof_str(p, f->name);
	file = prof_str(p, f->file);
	if (f->cls == PROF_CLASS_UNKNOWN)
		f->cls = prof_guess_class(name, file);
	if (f->lang == PROF_LANG_UNKNOWN)
		f->lang = prof_guess_lang(name, file);
}
