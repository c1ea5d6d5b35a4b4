/* SPDX-License-Identifier: MIT */
/*
 * symbolize: DWARF lines and inline frames, separate debug files,
 * stripped binaries, classes and languages, JIT maps, mount namespaces,
 * eviction — checked against fixtures built by the suite. The
 * differential check against eu-addr2line is test_sym_diff.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"

static char fixdir[PATH_MAX];

static const char *fix(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", fixdir, name);
	return buf[k];
}

struct child {
	pid_t pid;
	int in_fd;
	FILE *out;
};

/* Starts @argv[0] with pipes on stdin and stdout. @pre runs in the child
 * before exec (may be NULL). */
static void child_start(struct child *c, char *const argv[],
			void (*pre)(void))
{
	int in[2], out[2];
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (pre)
			pre();
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out = fdopen(out[0], "r");
	assert_non_null(c->out);
}

static void child_stop(struct child *c)
{
	int st;
	close(c->in_fd);
	fclose(c->out);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static uint64_t child_addr(struct child *c, const char *want)
{
	char line[256], name[128];
	unsigned long long a;
	uint64_t found = 0;
	while (fgets(line, sizeof(line), c->out)) {
		if (strncmp(line, "ready", 5) == 0)
			break;
		if (sscanf(line, "%127s %llx", name, &a) == 2 &&
		    strcmp(name, want) == 0)
			found = a;
	}
	assert_true(found != 0);
	return found;
}

/* .symtab value and size of @name in @path. */
static int elf_symbol(const char *path, const char *name, uint64_t *value,
		      uint64_t *size)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int found = -1;
	Elf_Scn *scn = NULL;
	while (e && found != 0 && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			gelf_getsym(d, (int)i, &s);
			const char *n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0 && s.st_value) {
				*value = s.st_value;
				*size = s.st_size;
				found = 0;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

/* The text of line @line of @path, or "" when unreadable. */
static const char *source_line(const char *path, uint32_t line)
{
	static char buf[512];
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return buf;
	for (uint32_t i = 1; fgets(buf, sizeof(buf), f); i++)
		if (i == line)
			break;
	fclose(f);
	return buf;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* An always_inline helper is its own frame, innermost, marked inlined,
 * with the helper's line; its caller follows with the call's line. */
static void test_inline_helper(void **state)
{
	(void)state;
	const char *bin = fix("sym_funcs");
	uint64_t start, size;
	assert_int_equal(elf_symbol(bin, "sym_hot_loop", &start, &size), 0);
	struct sym_ctx *ctx = sym_new(NULL);
	int inlined = 0;
	for (uint64_t a = start; a < start + size; a++) {
		struct sym_frame f[8];
		int n = sym_file(ctx, bin, a, f, 8);
		assert_true(n >= 1);
		assert_string_equal(f[n - 1].name, "sym_hot_loop");
		assert_int_equal(f[n - 1].inlined, 0);
		assert_int_equal(f[n - 1].lang, PROF_LANG_C);
		if (n == 1)
			continue;
		assert_int_equal(n, 2);
		inlined++;
		assert_string_equal(f[0].name, "sym_inline_helper");
		assert_int_equal(f[0].inlined, 1);
		assert_non_null(f[0].file);
		assert_true(ends_with(f[0].file, "tests/fixtures/sym_funcs.c"));
		/* the helper's body line, and the caller's call line */
		assert_non_null(strstr(source_line(f[0].file, f[0].line),
				       "in-helper"));
		assert_non_null(strstr(source_line(f[1].file, f[1].line),
				       "sym_inline_helper(64)"));
		/* asked for fewer frames than the chain has: the function
		 * holding it stays */
		assert_int_equal(sym_file(ctx, bin, a, f, 1), 1);
		assert_string_equal(f[0].name, "sym_hot_loop");
	}
	assert_true(inlined > 4);
	sym_free(ctx);
}

static void mapped_lib(const char *prefix, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		const char *base = strrchr(p, '/') + 1;
		if (strncmp(base, prefix, strlen(prefix)) == 0) {
			snprintf(out, len, "%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
	assert_true(out[0] != '\0');
}

/* 10,000 addresses: names, files and lines equal eu-addr2line's for every
 * frame, inline frames included. The one tolerated difference: where
 * eu-addr2line prints "??" (no symbol at all) we print module+0xoffset,
 * which the test checks is marked unresolved. */
static void test_stripped_and_debug_files(void **state)
{
	(void)state;
	uint64_t v, sz;
	assert_int_equal(elf_symbol(fix("sym_funcs"), "sym_alpha", &v, &sz), 0);
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f[8];
	char want[64];

	/* stripped, no debug file: module+vaddr, and listed as stripped */
	int n = sym_file(ctx, fix("sym_stripped"), v + 2, f, 8);
	assert_int_equal(n, 1);
	snprintf(want, sizeof(want), "sym_stripped+0x%llx",
		 (unsigned long long)(v + 2));
	assert_string_equal(f[0].name, want);
	assert_true(f[0].flags & SYM_FRAME_STRIPPED);
	assert_true(f[0].flags & SYM_FRAME_UNRESOLVED);
	const char *list[4];
	assert_int_equal(sym_stripped_modules(ctx, list, 4), 1);
	assert_string_equal(list[0], fix("sym_stripped"));
	struct sym_stats st;
	sym_stats(ctx, &st);
	assert_int_equal(st.stripped, 1);
	assert_int_equal(st.misses, 1);
	/* an unstripped copy of the same build (same build-id) turns up:
	 * the shared module is read again from it, and names both */
	n = sym_file(ctx, fix("sym_funcs"), v + 2, f, 8);
	assert_string_equal(f[n - 1].name, "sym_alpha");
	n = sym_file(ctx, fix("sym_stripped"), v + 2, f, 8);
	assert_string_equal(f[n - 1].name, "sym_alpha");
	assert_int_equal(sym_stripped_modules(ctx, NULL, 0), 0);
	sym_free(ctx);

	/* The three copies share one build-id, so one context would take
	 * them for one module: a context each. */
	/* stripped with .gnu_debuglink: fully named, file and line */
	ctx = sym_new(NULL);
	n = sym_file(ctx, fix("sym_dbglink"), v + 2, f, 8);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].name, "sym_alpha");
	assert_non_null(f[0].file);
	assert_true(ends_with(f[0].file, "sym_funcs.c"));
	assert_true(f[0].line > 0);
	assert_int_equal(f[0].flags & SYM_FRAME_STRIPPED, 0);
	assert_int_equal(sym_stripped_modules(ctx, NULL, 0), 0);
	sym_free(ctx);

	/* stripped, debug file found by build-id under the debug root */
	char debugroot[PATH_MAX + 64];
	snprintf(debugroot, sizeof(debugroot), "%s/debugroot", fixdir);
	struct sym_options o = { .debug_root = debugroot };
	ctx = sym_new(&o);
	n = sym_file(ctx, fix("sym_buildid"), v + 2, f, 8);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].name, "sym_alpha");
	assert_true(f[0].line > 0);
	assert_int_equal(sym_stripped_modules(ctx, NULL, 0), 0);
	sym_free(ctx);
}

static int frame_of(struct sym_ctx *ctx, pid_t pid, uint64_t addr,
		    struct sym_frame *out)
{
	struct sym_frame f[16];
	int n = sym_user(ctx, pid, addr, f, 16);
	assert_true(n >= 1);
	*out = f[n - 1];
	return n;
}

/* The runtime address of symlib_work in process @pid: its ELF value plus
 * the bias of libsymlib.so's first mapping. */
static uint64_t symlib_addr(pid_t pid)
{
	uint64_t v, sz;
	assert_int_equal(elf_symbol(fix("libsymlib.so"), "symlib_work", &v, &sz), 0);
	char maps[64], line[1024], real[PATH_MAX];
	assert_non_null(realpath(fix("libsymlib.so"), real));
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	FILE *mf = fopen(maps, "r");
	assert_non_null(mf);
	uint64_t base = 0;
	while (!base && fgets(line, sizeof(line), mf)) {
		unsigned long long s, off;
		if (strstr(line, real) &&
		    sscanf(line, "%llx-%*x %*s %llx", &s, &off) == 2 && off == 0)
			base = s;
	}
	fclose(mf);
	assert_true(base != 0);
	return base + v + 1;
}

/* The main binary is your code; a library built by the test is your code
 * outside system folders, a library inside them, your code again under a
 * "yours" prefix. */
static void test_classes_by_folder(void **state)
{
	(void)state;
	char *argv[] = { (char *)fix("sym_uselib"), NULL };
	struct child c;
	child_start(&c, argv, NULL);
	uint64_t a_main = child_addr(&c, "main");
	uint64_t a_lib = symlib_addr(c.pid);
	struct sym_frame f;
	struct sym_ctx *ctx = sym_new(NULL);
	frame_of(ctx, c.pid, a_main, &f);
	assert_string_equal(f.name, "main");
	assert_int_equal(f.cls, PROF_CLASS_YOURS);
	assert_int_equal(f.lang, PROF_LANG_C);
	frame_of(ctx, c.pid, a_lib, &f);
	assert_string_equal(f.name, "symlib_work");
	assert_string_equal(f.module, "libsymlib.so");
	assert_int_equal(f.cls, PROF_CLASS_YOURS);
	sym_free(ctx);

	char dir[PATH_MAX + 2];
	snprintf(dir, sizeof(dir), "%s/", fixdir);
	const char *sys[] = { dir, NULL };
	struct sym_options o = { .system_prefixes = sys };
	ctx = sym_new(&o);
	frame_of(ctx, c.pid, a_lib, &f);
	assert_string_equal(f.name, "symlib_work");
	assert_int_equal(f.cls, PROF_CLASS_LIBRARY);
	frame_of(ctx, c.pid, a_main, &f);
	assert_int_equal(f.cls, PROF_CLASS_YOURS); /* the executable */
	sym_free(ctx);

	struct sym_options o2 = { .system_prefixes = sys, .yours_prefixes = sys };
	ctx = sym_new(&o2);
	frame_of(ctx, c.pid, a_lib, &f);
	assert_int_equal(f.cls, PROF_CLASS_YOURS);
	sym_free(ctx);
	child_stop(&c);
}

/* Configured rules come before the built-in table: by basename, and by
 * symbol (which wins over the module's class). */
static void test_classes_configured(void **state)
{
	(void)state;
	char *argv[] = { (char *)fix("sym_uselib"), NULL };
	struct child c;
	child_start(&c, argv, NULL);
	uint64_t a_main = child_addr(&c, "main");
	uint64_t a_lib = symlib_addr(c.pid);
	struct sym_frame f;
	const struct sym_class_rule by_base[] = {
		{ "libsymlib", SYM_MATCH_BASENAME, PROF_CLASS_RUNTIME },
	};
	struct sym_options o3 = { .class_rules = by_base, .nclass_rules = 1 };
	struct sym_ctx *ctx = sym_new(&o3);
	frame_of(ctx, c.pid, a_lib, &f);
	assert_int_equal(f.cls, PROF_CLASS_RUNTIME);
	sym_free(ctx);
	const struct sym_class_rule by_sym[] = {
		{ "symlib_", SYM_MATCH_SYMBOL, PROF_CLASS_LIBRARY },
		{ "/", SYM_MATCH_PATH, PROF_CLASS_SYSTEM },
	};
	struct sym_options o4 = { .class_rules = by_sym, .nclass_rules = 2 };
	ctx = sym_new(&o4);
	frame_of(ctx, c.pid, a_lib, &f);
	assert_int_equal(f.cls, PROF_CLASS_LIBRARY);
	frame_of(ctx, c.pid, a_main, &f);
	assert_int_equal(f.cls, PROF_CLASS_YOURS); /* the executable stays */
	sym_free(ctx);
	child_stop(&c);
}

/* libstdc++ is runtime, libc is system, the kernel is system. */
static void test_classes_system(void **state)
{
	(void)state;
	char libc[PATH_MAX], libstdcxx[PATH_MAX];
	mapped_lib("libc.so", libc, sizeof(libc));
	mapped_lib("libstdc++.so", libstdcxx, sizeof(libstdcxx));
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame fr[8];
	uint64_t v, sz;
	assert_int_equal(elf_symbol(libstdcxx, "_ZSt17__throw_bad_allocv", &v, &sz), 0);
	int n = sym_file(ctx, libstdcxx, v, fr, 8);
	assert_int_equal(fr[n - 1].cls, PROF_CLASS_RUNTIME);
	assert_int_equal(fr[n - 1].lang, PROF_LANG_CPP); /* from mangling */
	assert_int_equal(elf_symbol(libc, "qsort", &v, &sz), 0);
	n = sym_file(ctx, libc, v, fr, 8);
	assert_int_equal(fr[n - 1].cls, PROF_CLASS_SYSTEM);
	assert_int_equal(fr[n - 1].lang, PROF_LANG_C); /* from DWARF */
	assert_int_equal(sym_kernel(ctx, 0xffffffff81000000ull, fr), 1);
	assert_int_equal(fr[0].cls, PROF_CLASS_SYSTEM);
	sym_free(ctx);
}

/* The outermost frame of ELF symbol @name's first byte in @lib (@fr holds
 * up to 8 frames). */
static const struct sym_frame *outer_frame(struct sym_ctx *ctx,
					   const char *lib, const char *name,
					   struct sym_frame *fr)
{
	uint64_t v, sz;
	assert_int_equal(elf_symbol(lib, name, &v, &sz), 0);
	int n = sym_file(ctx, lib, v, fr, 8);
	assert_true(n >= 1);
	return &fr[n - 1];
}

static void test_cpp_language(void **state)
{
	(void)state;
	char *argv[] = { (char *)fix("sym_cpp"), NULL };
	struct child c;
	child_start(&c, argv, NULL);
	uint64_t a = child_addr(&c, "sort_work");
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f;
	frame_of(ctx, c.pid, a + 1, &f);
	assert_string_equal(f.name, "_ZN7fixture9sort_workEi");
	assert_int_equal(f.lang, PROF_LANG_CPP);
	assert_int_equal(f.cls, PROF_CLASS_YOURS);
	sym_free(ctx);

	/* demangled on request; language and class stay those of the
	 * mangled name */
	struct sym_options o = { .demangle = 1 };
	ctx = sym_new(&o);
	/* the demangler is loaded at the first mangled name, not before */
	char libc[PATH_MAX];
	struct sym_frame fr[8];
	mapped_lib("libc.so", libc, sizeof(libc));
	/* a C name */
	assert_non_null(strstr(outer_frame(ctx, libc, "qsort", fr)->name, "qsort"));
	assert_null(ctx->demangle_lib);
	frame_of(ctx, c.pid, a + 1, &f);
	assert_non_null(ctx->demangle_lib);
	assert_string_equal(f.name, "fixture::sort_work(int)");
	assert_int_equal(f.lang, PROF_LANG_CPP);
	assert_int_equal(f.cls, PROF_CLASS_YOURS);
	char libstdcxx[PATH_MAX];
	mapped_lib("libstdc++.so", libstdcxx, sizeof(libstdcxx));
	const struct sym_frame *o2 = outer_frame(ctx, libstdcxx,
						 "_ZSt17__throw_bad_allocv", fr);
	assert_string_equal(o2->name, "std::__throw_bad_alloc()");
	assert_int_equal(o2->cls, PROF_CLASS_RUNTIME);
	sym_free(ctx);
	child_stop(&c);
}

static void test_perf_map(void **state)
{
	(void)state;
	char *argv[] = { (char *)fix("sym_jit"), NULL };
	struct child c;
	child_start(&c, argv, NULL);
	uint64_t a = child_addr(&c, "jit_hot_loop");
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f[4];
	assert_int_equal(sym_user(ctx, c.pid, a + 6, f, 4), 1);
	assert_string_equal(f[0].name, "jit_hot_loop");
	assert_string_equal(f[0].module, "[jit]");
	assert_int_equal(f[0].lang, PROF_LANG_JIT);
	assert_true(f[0].flags & SYM_FRAME_JIT);
	/* outside the described range: the anonymous mapping + offset */
	assert_int_equal(sym_user(ctx, c.pid, a - 0x40 + 0x200, f, 4), 1);
	assert_string_equal(f[0].name, "[anon]+0x200");
	sym_free(ctx);
	child_stop(&c);
}

static char ns_dir[] = "/tmp/hearth-mntns-XXXXXX";

/* In the child: a private mount namespace where ns_dir is a tmpfs holding
 * a copy of the fixture; the host sees ns_dir empty. */
static void enter_namespace(void)
{
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", ns_dir, "tmpfs", 0, "size=16m") != 0)
		_exit(90);
	char cmd[PATH_MAX * 2 + 64];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/sym_funcs_ns'", fix("sym_funcs"),
		 ns_dir);
	if (system(cmd) != 0)
		_exit(91);
}

static void test_mount_namespace(void **state)
{
	(void)state;
	/* root is required: the suite runs as root; say why when not */
	if (geteuid() != 0) {
		print_error("mount namespace test needs root\n");
		fail();
	}
	assert_non_null(mkdtemp(ns_dir));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/sym_funcs_ns", ns_dir);
	char *argv[] = { path, NULL };
	struct child c;
	child_start(&c, argv, enter_namespace);
	uint64_t a = child_addr(&c, "sym_beta");
	struct stat st;
	assert_int_not_equal(stat(path, &st), 0); /* not on the host */
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f;
	frame_of(ctx, c.pid, a + 1, &f);
	assert_string_equal(f.name, "sym_beta");
	assert_string_equal(f.module, "sym_funcs_ns");
	assert_int_equal(f.cls, PROF_CLASS_YOURS);
	assert_true(f.line > 0);
	sym_free(ctx);
	child_stop(&c);
	rmdir(ns_dir);
}

static void test_eviction(void **state)
{
	(void)state;
	char libc[PATH_MAX];
	mapped_lib("libc.so", libc, sizeof(libc));
	uint64_t v1, v2, sz;
	assert_int_equal(elf_symbol(fix("sym_funcs"), "sym_alpha", &v1, &sz), 0);
	assert_int_equal(elf_symbol(libc, "getpid", &v2, &sz), 0);
	struct sym_options o = { .max_module_bytes = 1 };
	struct sym_ctx *ctx = sym_new(&o);
	struct sym_frame f[8];
	for (int round = 0; round < 3; round++) {
		int n = sym_file(ctx, fix("sym_funcs"), v1, f, 8);
		assert_string_equal(f[n - 1].name, "sym_alpha");
		n = sym_file(ctx, libc, v2, f, 8);
		assert_true(strstr(f[n - 1].name, "getpid") != NULL);
	}
	struct sym_stats st;
	sym_stats(ctx, &st);
	/* each switch unloads the other module */
	assert_true(st.evictions >= 5);
	assert_int_equal(st.misses, 0);
	sym_free(ctx);
}

/* Budget @max: a round of lookups in sym_funcs then libc, three times,
 * in one window. Returns the evictions. */
static uint64_t window_rounds(size_t max, uint64_t v1, uint64_t v2, const char *libc,
			      size_t *loaded)
{
	struct sym_options o = { .max_module_bytes = max };
	struct sym_ctx *ctx = sym_new(&o);
	struct sym_frame f[8];
	struct sym_stats st;

	assert_non_null(ctx);
	sym_window_begin(ctx);
	for (int round = 0; round < 3; round++) {
		int n = sym_file(ctx, fix("sym_funcs"), v1, f, 8);
		assert_string_equal(f[n - 1].name, "sym_alpha");
		n = sym_file(ctx, libc, v2, f, 8);
		assert_true(strstr(f[n - 1].name, "getpid") != NULL);
	}
	sym_stats(ctx, &st);
	*loaded = st.budget_bytes;
	uint64_t ev = st.evictions;
	/* the next window: what the last one used may go */
	if (max) {
		sym_window_begin(ctx);
		sym_stats(ctx, &st);
		if (ev == 0) /* both were kept: one goes now */
			assert_int_equal(st.evictions, 1);
		assert_true(st.budget_bytes <= max);
	}
	sym_free(ctx);
	return ev;
}

/* Over the budget, the modules the current window uses are kept (up to
 * twice the budget): alternating between two does not read them again. */
static void test_eviction_keeps_window(void **state)
{
	(void)state;
	char libc[PATH_MAX];
	mapped_lib("libc.so", libc, sizeof(libc));
	uint64_t v1, v2, sz;
	size_t both;
	assert_int_equal(elf_symbol(fix("sym_funcs"), "sym_alpha", &v1, &sz), 0);
	assert_int_equal(elf_symbol(libc, "getpid", &v2, &sz), 0);
	assert_int_equal(window_rounds(0, v1, v2, libc, &both), 0);
	/* over the budget, under twice it: kept, then one goes */
	assert_int_equal(window_rounds(both - 1, v1, v2, libc, &sz), 0);
	/* past twice the budget: least recently used again */
	assert_true(window_rounds(both / 3, v1, v2, libc, &sz) >= 5);
}

int main(void)
{
	const char *d = getenv("FIXTURES");
	if (d)
		snprintf(fixdir, sizeof(fixdir), "%s", d);
	else if (!realpath("build-test/fixtures", fixdir))
		snprintf(fixdir, sizeof(fixdir), "build-test/fixtures");
	/* libstdc++ mapped here too, for the checks that read it */
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW);
	if (!cxx) {
		fprintf(stderr, "libstdc++.so.6 cannot be loaded\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_helper),
		cmocka_unit_test(test_eviction_keeps_window),
		cmocka_unit_test(test_stripped_and_debug_files),
		cmocka_unit_test(test_classes_by_folder),
		cmocka_unit_test(test_classes_configured),
		cmocka_unit_test(test_classes_system),
		cmocka_unit_test(test_cpp_language),
		cmocka_unit_test(test_perf_map),
		cmocka_unit_test(test_mount_namespace),
		cmocka_unit_test(test_eviction),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	dlclose(cxx);
	return rc;
}
