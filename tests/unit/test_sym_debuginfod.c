/* SPDX-License-Identifier: MIT */
/*
 * symbolize: debug files fetched by build-id. The pure parts (server
 * lists, the cache folder, the cache bound, what a failure means, the
 * pause) and the fetcher itself with real libdebuginfod over a file://
 * server: a stripped fixture is unnamed while its file is on the way,
 * named with file:line once it is there, a missing build-id is one note,
 * an unreachable server one note and a pause, and a profile taken before
 * is renamed after.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/debuginfod.h"
#include "symbolize/sym_internal.h"
#include "symbolize/symbolize.h"

#define NS 1000000000ull

static void test_urls(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(sym_debuginfod_urls_check("https://debuginfod.debian.net", err, sizeof(err)), 1);
	assert_int_equal(sym_debuginfod_urls_check("  http://127.0.0.1:8002 \t file:///srv/dbg  HTTPS://x/ ",
						   err, sizeof(err)), 3);
	assert_int_equal(sym_debuginfod_urls_check("ftp://x", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'ftp://x' is not a debuginfod server"));
	assert_int_equal(sym_debuginfod_urls_check("http://a http:// b", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'http://'"));
	assert_int_equal(sym_debuginfod_urls_check("http://a\"b", err, sizeof(err)), -EINVAL);
	assert_int_equal(sym_debuginfod_urls_check("   ", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "no debuginfod server is named");
	assert_int_equal(sym_debuginfod_urls_check(NULL, err, sizeof(err)), -EINVAL);
}

static void test_cache_dir(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(sym_debuginfod_cache_dir("/c", "/x", "/h", true, out, sizeof(out)), 0);
	assert_string_equal(out, "/c");
	assert_int_equal(sym_debuginfod_cache_dir("", "/x", "/h", true, out, sizeof(out)), 0);
	assert_string_equal(out, "/h/.debuginfod_client_cache");
	assert_int_equal(sym_debuginfod_cache_dir(NULL, "/x", "/h", false, out, sizeof(out)), 0);
	assert_string_equal(out, "/x/debuginfod_client");
	assert_int_equal(sym_debuginfod_cache_dir(NULL, "", "/h", false, out, sizeof(out)), 0);
	assert_string_equal(out, "/h/.cache/debuginfod_client");
	assert_int_equal(sym_debuginfod_cache_dir(NULL, NULL, NULL, false, out, sizeof(out)), 0);
	assert_string_equal(out, "/.cache/debuginfod_client");
	assert_int_equal(sym_debuginfod_cache_dir(NULL, NULL, "/h", false, out, 10), -ENAMETOOLONG);
}

static void test_cache_plan(void **state)
{
	struct sym_cache_file f[5] = {
		{ .bytes = 100, .used_ns = 5 },
		{ .bytes = 300, .used_ns = 1, .keep = true },
		{ .bytes = 200, .used_ns = 2 },
		{ .bytes = 50, .used_ns = 2 },
		{ .bytes = 400, .used_ns = 9 },
	};

	(void)state;
	/* under the bound: nothing goes */
	assert_int_equal(sym_debuginfod_cache_plan(f, 5, 1050), 1050);
	for (int i = 0; i < 5; i++)
		assert_false(f[i].evict);
	/* over: the oldest that is not kept (200 before 50 at a tie: the
	 * larger first), until under */
	assert_int_equal(sym_debuginfod_cache_plan(f, 5, 900), 850);
	assert_false(f[0].evict);
	assert_false(f[1].evict);
	assert_true(f[2].evict);
	assert_false(f[3].evict);
	assert_false(f[4].evict);
	/* a bound below the kept file: everything else goes */
	assert_int_equal(sym_debuginfod_cache_plan(f, 5, 10), 300);
	assert_true(f[0].evict && f[2].evict && f[3].evict && f[4].evict);
	assert_false(f[1].evict);
	assert_int_equal(sym_debuginfod_cache_plan(f, 0, 0), 0);
}

static void put_file(const char *path, size_t bytes, time_t atime)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	fclose(f);
	struct timespec t[2] = { { .tv_sec = atime }, { .tv_nsec = UTIME_OMIT } };
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static void test_cache_trim(void **state)
{
	char dir[] = "/tmp/hearth-dbgd-cache.XXXXXX", p[256];
	struct stat st;
	uint64_t freed = 0;
	time_t later = time(NULL) + 3600; /* after any ctime of the files */

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/aa01", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/aa01/debuginfo", dir);
	put_file(p, 1000, later);
	snprintf(p, sizeof(p), "%s/bb02", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/bb02/debuginfo", dir);
	put_file(p, 1000, later + 10);
	snprintf(p, sizeof(p), "%s/bb02/executable", dir);
	put_file(p, 0, later - 100); /* "not on the servers": counts nothing */
	snprintf(p, sizeof(p), "%s/cc03", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/cc03/debuginfo", dir);
	put_file(p, 1000, later - 50); /* the oldest, but kept */
	snprintf(p, sizeof(p), "%s/not-an-id", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/not-an-id/big", dir);
	put_file(p, 5000, 1);
	snprintf(p, sizeof(p), "%s/cache_clean_interval_s", dir);
	put_file(p, 5, 1);

	snprintf(p, sizeof(p), "%s/cc03/debuginfo", dir);
	assert_int_equal(sym_debuginfod_cache_trim(dir, 2500, p, &freed), 0);
	assert_int_equal(freed, 1000);
	snprintf(p, sizeof(p), "%s/aa01", dir);
	assert_int_not_equal(stat(p, &st), 0); /* the oldest went, its folder too */
	snprintf(p, sizeof(p), "%s/bb02/debuginfo", dir);
	assert_int_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/cc03/debuginfo", dir);
	assert_int_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/not-an-id/big", dir);
	assert_int_equal(stat(p, &st), 0); /* not libdebuginfod's: left */
	/* under the bound now: nothing more */
	freed = 0;
	assert_int_equal(sym_debuginfod_cache_trim(dir, 2500, NULL, &freed), 0);
	assert_int_equal(freed, 0);
	assert_int_equal(sym_debuginfod_cache_trim("/nonexistent/hearth", 1, NULL, &freed), -ENOENT);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_classify_backoff(void **state)
{
	(void)state;
	assert_int_equal(sym_debuginfod_classify(-ENOENT, false), SYM_DEBUGINFOD_NOT_FOUND);
	assert_int_equal(sym_debuginfod_classify(-ENOENT, true), SYM_DEBUGINFOD_UNREACHABLE);
	assert_int_equal(sym_debuginfod_classify(-ECONNREFUSED, false), SYM_DEBUGINFOD_UNREACHABLE);
	assert_int_equal(sym_debuginfod_classify(-EHOSTUNREACH, false), SYM_DEBUGINFOD_UNREACHABLE);
	assert_int_equal(sym_debuginfod_classify(-ETIME, false), SYM_DEBUGINFOD_UNREACHABLE);
	assert_int_equal(sym_debuginfod_classify(-EFBIG, false), SYM_DEBUGINFOD_ERROR);
	assert_int_equal(sym_debuginfod_classify(-EACCES, false), SYM_DEBUGINFOD_ERROR);
	assert_int_equal(sym_debuginfod_backoff_ns(1), 30 * NS);
	assert_int_equal(sym_debuginfod_backoff_ns(2), 60 * NS);
	assert_int_equal(sym_debuginfod_backoff_ns(5), 480 * NS);
	assert_int_equal(sym_debuginfod_backoff_ns(6), 600 * NS);
	assert_int_equal(sym_debuginfod_backoff_ns(100), 600 * NS);
}

/* ---- the fetcher, over file:// ---- */

/* The absolute path of fixture @name (sym_file() takes no relative
 * one). */
static const char *fixture(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("FIXTURES");
	char rel[4096], *abs;

	if (dir)
		snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	else
		snprintf(rel, sizeof(rel), "%s/fixtures/%s",
			 getenv("BUILD") ? getenv("BUILD") : "build-test", name);
	abs = realpath(rel, NULL);
	assert_non_null(abs);
	snprintf(buf, len, "%s", abs);
	free(abs);
	return buf;
}

struct notes {
	char text[8][512];
	int n;
};

static void on_note(void *arg, const char *sentence)
{
	struct notes *ns = arg;

	if (ns->n < 8)
		snprintf(ns->text[ns->n], sizeof(ns->text[0]), "%s", sentence);
	ns->n++;
}

/* The ELF address of @name in the symbol table of @path. */
static uint64_t symbol(const char *path, const char *name)
{
	struct sym_symtab t = { 0 };
	bool has = false;
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(sym_elf_load_symbols(fd, &t, &has), 0);
	close(fd);
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(sym_symtab_name(&t, &t.syms[i]), name) == 0)
			v = t.syms[i].addr;
	sym_symtab_free(&t);
	assert_int_not_equal(v, 0);
	return v;
}

struct served {
	char root[64];     /* a temporary folder: srv/ and cache/ */
	char bin[4096];    /* the stripped fixture */
	char dbg[4096];    /* its debug file */
};

/* Serves the fixture's debug file from ROOT/srv/buildid/<id>/debuginfo
 * (what a file:// server is) and points libdebuginfod there, its cache
 * at ROOT/cache. */
static void serve(struct served *s)
{
	struct sym_module m = { .fd = -1, .debug_fd = -1 };
	char id[2 * SYM_BUILD_ID_MAX + 1], path[4300], cmd[13000];
	int fd;

	snprintf(s->root, sizeof(s->root), "/tmp/hearth-dbgd.XXXXXX");
	assert_non_null(mkdtemp(s->root));
	fixture("sym_dbgd", s->bin, sizeof(s->bin));
	fixture("dbgd-served/sym_dbgd.debug", s->dbg, sizeof(s->dbg));
	fd = open(s->bin, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(sym_elf_read_header(fd, &m), 0);
	close(fd);
	free(m.segs);
	assert_true(m.build_id_len > 0);
	for (size_t i = 0; i < m.build_id_len; i++)
		sprintf(id + 2 * i, "%02x", m.build_id[i]);
	snprintf(path, sizeof(path), "%s/srv/buildid/%s", s->root, id);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/debuginfo", path, s->dbg, path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "file://%s/srv", s->root);
	setenv("DEBUGINFOD_URLS", path, 1);
	snprintf(path, sizeof(path), "%s/cache", s->root);
	setenv("DEBUGINFOD_CACHE_PATH", path, 1);
}

static void unserve(struct served *s)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", s->root);
	assert_int_equal(system(cmd), 0);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
}

static void test_fetch_names(void **state)
{
	struct served s;
	struct notes notes = { .n = 0 };
	struct sym_debuginfod_opts o = { .note = on_note, .note_arg = &notes };
	struct sym_frame f[8];
	char err[300], stripped[4096];

	(void)state;
	serve(&s);
	uint64_t hot = symbol(s.dbg, "sym_hot_loop");
	struct sym_debuginfod *d = sym_debuginfod_new(&o, err, sizeof(err));
	assert_non_null(d);
	struct sym_options so = { .debuginfod = d };
	struct sym_ctx *ctx = sym_new(&so);
	assert_non_null(ctx);
	uint64_t gen0 = sym_debuginfod_generation(d);

	/* first sight: unnamed, marked as waiting for its file */
	int n = sym_file(ctx, s.bin, hot + 4, f, 8);
	assert_true(n >= 1);
	assert_true(f[0].flags & SYM_FRAME_UNRESOLVED);
	assert_true(f[0].flags & SYM_FRAME_PENDING);
	/* a build-id the server does not have: sym_stripped's */
	sym_file(ctx, fixture("sym_stripped", stripped, sizeof(stripped)), hot, f, 8);
	assert_int_equal(sym_debuginfod_wait(d, 20 * NS), 0);
	assert_true(sym_debuginfod_generation(d) >= gen0 + 2);

	/* once there: named, with file and line */
	n = sym_file(ctx, s.bin, hot + 4, f, 8);
	assert_true(n >= 1);
	assert_string_equal(f[n - 1].name, "sym_hot_loop");
	assert_false(f[n - 1].flags & (SYM_FRAME_UNRESOLVED | SYM_FRAME_PENDING));
	assert_non_null(f[n - 1].file);
	assert_non_null(strstr(f[n - 1].file, "sym_funcs.c"));
	assert_true(f[n - 1].line > 0);
	assert_string_equal(f[n - 1].module, "sym_dbgd");
	/* the other stays unnamed, no longer waiting */
	n = sym_file(ctx, stripped, hot, f, 8);
	assert_true(f[0].flags & SYM_FRAME_UNRESOLVED);
	assert_false(f[0].flags & SYM_FRAME_PENDING);

	struct sym_debuginfod_progress p;
	sym_debuginfod_progress(d, &p);
	assert_int_equal(p.fetched, 1);
	assert_int_equal(p.failed, 1);
	assert_int_equal(p.waiting, 0);
	assert_false(p.unreachable);
	/* one note: the missing one, named */
	assert_int_equal(notes.n, 1);
	assert_non_null(strstr(notes.text[0], "no debug file for sym_stripped (build-id "));
	/* asked again: answered at once, no second fetch or note */
	char path[4096];
	uint8_t id[SYM_BUILD_ID_MAX];
	struct sym_module m = { .fd = -1, .debug_fd = -1 };
	int fd = open(stripped, O_RDONLY);
	assert_int_equal(sym_elf_read_header(fd, &m), 0);
	close(fd);
	free(m.segs);
	memcpy(id, m.build_id, m.build_id_len);
	assert_int_equal(sym_debuginfod_get(d, id, m.build_id_len, "x", path, sizeof(path)),
			 SYM_DEBUGINFOD_FAILED);
	assert_int_equal(notes.n, 1);

	/* a profile taken before the file came: renamed after */
	struct prof_profile *pr = prof_new(PROF_UNIT_SAMPLES);
	char name[64];
	snprintf(name, sizeof(name), "sym_dbgd+0x%llx", (unsigned long long)(hot + 4));
	struct prof_frame pf = { .name = prof_intern_cstr(pr, "sym_dbgd"), .kind = PROF_KIND_PROCESS };
	uint32_t st[3];
	st[0] = prof_frame_intern(pr, &pf);
	pf = (struct prof_frame){ .name = prof_intern_cstr(pr, name),
				  .module = prof_intern_cstr(pr, "sym_dbgd"),
				  .kind = PROF_KIND_USER, .cls = PROF_CLASS_YOURS };
	st[1] = prof_frame_intern(pr, &pf);
	pf.name = prof_intern_cstr(pr, "sym_stripped+0x10");
	pf.module = prof_intern_cstr(pr, "sym_stripped");
	st[2] = prof_frame_intern(pr, &pf);
	assert_int_not_equal(prof_add_stack(pr, st, 2, 7), UINT32_MAX);
	assert_int_not_equal(prof_add_stack(pr, (uint32_t[]){ st[0], st[2] }, 2, 3), UINT32_MAX);
	size_t renamed = 0;
	struct prof_profile *q = sym_debuginfod_rename(d, pr, 0, &renamed);
	assert_non_null(q);
	assert_int_equal(renamed, 1);
	assert_int_equal(prof_total(q), 10);
	bool named = false, kept = false;
	for (uint32_t i = 1; i < prof_frame_count(q); i++) {
		const struct prof_frame *g = prof_frame_get(q, i);
		if (!strcmp(prof_str(q, g->name), "sym_hot_loop")) {
			named = g->line > 0 && strstr(prof_str(q, g->file), "sym_funcs.c") &&
				!strcmp(prof_str(q, g->module), "sym_dbgd") &&
				g->cls == PROF_CLASS_YOURS;
		}
		if (!strcmp(prof_str(q, g->name), "sym_stripped+0x10"))
			kept = true;
	}
	assert_true(named);
	assert_true(kept);
	prof_free(q);
	prof_free(pr);

	sym_free(ctx);
	sym_debuginfod_free(d);
	/* the fetched file is in the cache, under the build-id */
	char cached[4200];
	snprintf(cached, sizeof(cached), "%s/cache", s.root);
	struct stat cst;
	assert_int_equal(stat(cached, &cst), 0);
	unserve(&s);
}

/* A server that refuses: one note, a pause, the queue kept; waiting
 * ends at once; frames no longer say they wait (stacks through them may
 * be remembered meanwhile); cancel gives the queue up. */
static void test_unreachable(void **state)
{
	struct served s;
	struct notes notes = { .n = 0 };
	struct sym_debuginfod_opts o = { .note = on_note, .note_arg = &notes };
	char err[300], path[256];
	const uint8_t id1[20] = { 1, 2, 3 }, id2[20] = { 4, 5, 6 };

	(void)state;
	serve(&s);
	/* port 1 on loopback: nothing listens there */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	struct sym_debuginfod *d = sym_debuginfod_new(&o, err, sizeof(err));
	assert_non_null(d);
	struct sym_options so = { .debuginfod = d };
	struct sym_ctx *ctx = sym_new(&so);
	struct sym_frame f[4];
	assert_non_null(ctx);
	assert_true(sym_file(ctx, s.bin, 0x1000, f, 4) >= 1);
	assert_true(f[0].flags & SYM_FRAME_PENDING);
	assert_int_equal(sym_debuginfod_get(d, id1, 20, "liba.so", path, sizeof(path)),
			 SYM_DEBUGINFOD_PENDING);
	assert_int_equal(sym_debuginfod_get(d, id2, 20, "libb.so", path, sizeof(path)),
			 SYM_DEBUGINFOD_PENDING);
	assert_int_equal(sym_debuginfod_wait(d, 20 * NS), 3);
	struct sym_debuginfod_progress p;
	sym_debuginfod_progress(d, &p);
	assert_true(p.unreachable);
	assert_true(sym_debuginfod_unreachable(d));
	assert_int_equal(p.waiting, 3);
	assert_true(sym_file(ctx, s.bin, 0x1000, f, 4) >= 1);
	assert_true(f[0].flags & SYM_FRAME_UNRESOLVED);
	assert_false(f[0].flags & SYM_FRAME_PENDING);
	sym_free(ctx);
	assert_int_equal(notes.n, 1);
	assert_non_null(strstr(notes.text[0], "debuginfod: cannot reach http://127.0.0.1:1 (Connection refused)"));
	/* paused: still PENDING, nothing more tried */
	assert_int_equal(sym_debuginfod_get(d, id1, 20, NULL, path, sizeof(path)),
			 SYM_DEBUGINFOD_PENDING);
	sym_debuginfod_cancel(d);
	sym_debuginfod_progress(d, &p);
	assert_int_equal(p.waiting, 0);
	assert_int_equal(notes.n, 1);
	sym_debuginfod_free(d);

	/* no servers named: refused with a sentence */
	setenv("DEBUGINFOD_URLS", "", 1);
	assert_null(sym_debuginfod_new(&o, err, sizeof(err)));
	assert_string_equal(err, "no debuginfod server is named");
	unserve(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_cache_dir),
		cmocka_unit_test(test_cache_plan),
		cmocka_unit_test(test_cache_trim),
		cmocka_unit_test(test_classify_backoff),
		cmocka_unit_test(test_fetch_names),
		cmocka_unit_test(test_unreachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
