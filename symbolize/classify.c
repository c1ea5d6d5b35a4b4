/* SPDX-License-Identifier: MIT */
/*
 * classify: ownership classes and language guesses, as data.
 *
 * A module's class comes from, in order: a configured "yours" prefix
 * (your code); being the process's executable (your code), unless it is
 * a language's interpreter (runtime: python3.11 runs the user's code, it
 * is not that code); the rule table
 * below, matched on the file's basename; living under a system directory
 * (a library from a package); else your code (built and installed by the
 * user outside the package manager's folders). A symbol prefix rule
 * overrides the module's class per frame (Go and Rust runtimes, C++ std).
 * Rules from the configuration (sym_options.class_rules) come first.
 */
#include <string.h>

#include "sym_internal.h"

enum rule_match {
	MATCH_BASENAME, /* the file's basename starts with pattern */
	MATCH_SYMBOL,   /* the symbol starts with pattern */
};

struct class_rule {
	uint8_t match;
	uint8_t cls;
	const char *pattern;
};

static const struct class_rule class_rules[] = {
	/* the C library, the loader and what glibc splits off */
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libc.so" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libc-" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libc.musl" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "ld-linux" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "ld-musl" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "ld.so" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libpthread" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libm.so" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libm-" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libmvec" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libdl.so" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "librt.so" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libresolv" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "libnss_" },
	{ MATCH_BASENAME, PROF_CLASS_SYSTEM, "linux-vdso" },
	/* language runtimes and standard libraries */
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libstdc++" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libc++" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libgcc_s" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libgfortran" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libgomp" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libpython" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libjvm" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libruby" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libperl" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "liblua" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libnode" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libv8" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libgo.so" },
	{ MATCH_BASENAME, PROF_CLASS_RUNTIME, "libstd-" }, /* Rust dylib */
	/* runtime code linked into the program */
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "runtime." },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "std::" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "core::" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "alloc::" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "_ZN3std" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "_ZN4core" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "_ZN5alloc" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "_ZNSt" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "_ZNKSt" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "_ZSt" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "__cxa_" },
	{ MATCH_SYMBOL, PROF_CLASS_RUNTIME, "__gxx_personality" },
};

/* Folders a package manager installs into. */
static const char *const system_dirs[] = {
	"/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/",
	"/snap/", "/nix/store/", "/gnu/store/", NULL,
};

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* Interpreters by their executable's basename, which may carry a version
 * ("python3.11", "perl5.36.0", "ruby3.1") and nothing else. */
static const char *const interpreters[] = {
	"python", "perl", "ruby", "node", "nodejs", "php", "lua", "java", NULL,
};

static bool interpreter(const char *base)
{
	for (size_t i = 0; interpreters[i]; i++) {
		size_t n = strlen(interpreters[i]);
		if (!strncmp(base, interpreters[i], n) &&
		    strspn(base + n, "0123456789.") == strlen(base + n))
			return true;
	}
	return false;
}

static bool any_prefix(const char *path, const char *const *list)
{
	for (size_t i = 0; list && list[i]; i++)
		if (list[i][0] && has_prefix(path, list[i]))
			return true;
	return false;
}

/* The first configured rule of kind path or basename matching. */
static uint8_t configured_for_path(const struct sym_options *o,
				   const char *path, const char *base)
{
	for (size_t i = 0; i < o->nclass_rules && o->class_rules; i++) {
		const struct sym_class_rule *r = &o->class_rules[i];
		if (!r->pattern || r->cls >= PROF_CLASS_COUNT)
			continue;
		if ((r->match == SYM_MATCH_PATH && has_prefix(path, r->pattern)) ||
		    (r->match == SYM_MATCH_BASENAME && has_prefix(base, r->pattern)))
			return r->cls;
	}
	return PROF_CLASS_UNKNOWN;
}

uint8_t sym_class_for_path(const struct sym_ctx *ctx, const char *path,
			   bool is_main)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (any_prefix(path, ctx->opts.yours_prefixes))
		return PROF_CLASS_YOURS;
	if (is_main)
		return interpreter(base) ? PROF_CLASS_RUNTIME : PROF_CLASS_YOURS;
	uint8_t c = configured_for_path(&ctx->opts, path, base);
	if (c != PROF_CLASS_UNKNOWN)
		return c;
	for (size_t i = 0; i < sizeof(class_rules) / sizeof(class_rules[0]);
	     i++) {
		const struct class_rule *r = &class_rules[i];
		if (r->match == MATCH_BASENAME && has_prefix(base, r->pattern))
			return r->cls;
	}
	const char *const *sys = ctx->opts.system_prefixes ?
		ctx->opts.system_prefixes : system_dirs;
	if (any_prefix(path, sys))
		return PROF_CLASS_LIBRARY;
	return PROF_CLASS_YOURS;
}

/* The crate of a v0 Rust symbol's path ("_RNvNtCs<hash>_3std2rt5f":
 * "std"), its length in *@len; NULL when it is not one. The path's
 * innermost part comes first: namespaces (N and a letter), impls (X, M,
 * Y) and generic arguments (I) lead to the crate root (C). */
static const char *v0_crate(const char *name, size_t *len)
{
	const char *p = name + 2;
	if (name[0] != '_' || name[1] != 'R')
		return NULL;
	for (;;) {
		if (*p == 'N' && p[1])
			p += 2;
		else if (*p && strchr("XMYI", *p))
			p++;
		else
			break;
	}
	if (*p++ != 'C')
		return NULL;
	if (*p == 's') { /* disambiguator: s<base62>_ */
		while (*p && *p != '_')
			p++;
		if (*p++ != '_')
			return NULL;
	}
	size_t n = 0;
	while (*p >= '0' && *p <= '9' && n < 4096)
		n = n * 10 + (size_t)(*p++ - '0');
	if (*p == '_')
		p++;
	if (n == 0 || strnlen(p, n) < n)
		return NULL;
	*len = n;
	return p;
}

/* Rust's standard library crates, whatever the mangling */
static bool rust_runtime(const char *name)
{
	static const char *const crates[] = { "std", "core", "alloc", NULL };
	size_t n;
	const char *c = v0_crate(name, &n);
	for (size_t i = 0; c && crates[i]; i++)
		if (strlen(crates[i]) == n && memcmp(c, crates[i], n) == 0)
			return true;
	return false;
}

uint8_t sym_class_for_symbol(const struct sym_ctx *ctx, const char *name)
{
	const struct sym_options *o = &ctx->opts;
	for (size_t i = 0; i < o->nclass_rules && o->class_rules; i++) {
		const struct sym_class_rule *r = &o->class_rules[i];
		if (r->pattern && r->match == SYM_MATCH_SYMBOL &&
		    r->cls < PROF_CLASS_COUNT && has_prefix(name, r->pattern))
			return r->cls;
	}
	for (size_t i = 0; i < sizeof(class_rules) / sizeof(class_rules[0]);
	     i++) {
		const struct class_rule *r = &class_rules[i];
		if (r->match == MATCH_SYMBOL && has_prefix(name, r->pattern))
			return r->cls;
	}
	return rust_runtime(name) ? PROF_CLASS_RUNTIME : PROF_CLASS_UNKNOWN;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Legacy Rust mangling: _ZN...17h<16 hex>E, maybe with LLVM's suffix
 * ".llvm.<n>" (a local it promoted) */
static bool rust_legacy(const char *name)
{
	const char *llvm = strstr(name, ".llvm.");
	size_t n = llvm ? (size_t)(llvm - name) : strlen(name);
	if (n < 4 + 20 || strncmp(name, "_ZN", 3) != 0 || name[n - 1] != 'E')
		return false;
	const char *h = name + n - 1 - 16;
	if (h[-3] != '1' || h[-2] != '7' || h[-1] != 'h')
		return false;
	for (int i = 0; i < 16; i++)
		if (!is_hex(h[i]))
			return false;
	return true;
}

uint8_t sym_lang_for_symbol(const char *name)
{
	if (name[0] == '_' && name[1] == 'R' && name[2] &&
	    strchr("NCMXYIB", name[2]))
		return PROF_LANG_RUST; /* v0 mangling */
	if (rust_legacy(name))
		return PROF_LANG_RUST;
	if (has_prefix(name, "_Z"))
		return PROF_LANG_CPP;
	if (has_prefix(name, "runtime.") || has_prefix(name, "main."))
		return PROF_LANG_GO;
	return PROF_LANG_UNKNOWN;
}
