/* SPDX-License-Identifier: MIT */
/* What travels with a folded file hearth writes: its comment lines carry
 * the unit and the capture's metadata, and each frame's class, language,
 * module, file and (hottest) line and thread rows; the stacks after them
 * are byte for byte the plain output; every comment line is one that
 * flamegraph.pl's and inferno's line grammar skip; hearth reads them back
 * from a buffer and from a file (a block bigger than a read window too),
 * --unit still rules. */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/load.h"
#include "profile/profile.h"

static uint32_t frame(struct prof_profile *p, const char *name, int kind,
		      int cls, const char *module, const char *file, uint32_t line)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, name), .module = prof_intern_cstr(p, module),
		.file = prof_intern_cstr(p, file), .line = line, .kind = (uint8_t)kind,
		.cls = (uint8_t)cls, .lang = cls == PROF_CLASS_YOURS ? PROF_LANG_C : 0,
	};

	return prof_frame_intern(p, &f);
}

/* An off-CPU profile as record writes it: a process row, a thread row,
 * hot() at two lines (12 the hotter), a kernel frame, an inlined helper,
 * and a name with a tab and a backslash. */
static struct prof_profile *offcpu(void)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	struct prof_meta *m = prof_meta(p);
	uint32_t proc = frame(p, "app", PROF_KIND_PROCESS, 0, NULL, NULL, 0);
	uint32_t thr = frame(p, "app-42", PROF_KIND_THREAD, 0, NULL, NULL, 0);
	uint32_t mn = frame(p, "main", 0, PROF_CLASS_YOURS, "/usr/bin/app", "/src/app.c", 30);
	uint32_t h10 = frame(p, "hot", 0, PROF_CLASS_YOURS, "/usr/bin/app", "/src/app.c", 10);
	uint32_t h12 = frame(p, "hot", 0, PROF_CLASS_YOURS, "/usr/bin/app", "/src/app.c", 12);
	uint32_t k = frame(p, "schedule", PROF_KIND_KERNEL, PROF_CLASS_WAITING, "[kernel]", NULL, 0);
	uint32_t in = frame(p, "helper", PROF_KIND_INLINE, PROF_CLASS_YOURS, "/usr/bin/app", "/src/h.h", 3);
	uint32_t odd = frame(p, "odd\tname\\x", 0, PROF_CLASS_LIBRARY, "/lib/l\tib.so", "/src/o.c", 7);

	m->off_cpu = 1;
	m->hz = 0;
	m->start_ns = 1700000000123456789ull;
	m->duration_ns = 3000000000ull;
	m->drops = 5;
	assert_int_not_equal(prof_add_stack(p, (uint32_t[]){ proc, thr, mn, h10, k }, 5, 400), UINT32_MAX);
	assert_int_not_equal(prof_add_stack(p, (uint32_t[]){ proc, thr, mn, h12, k }, 5, 900), UINT32_MAX);
	assert_int_not_equal(prof_add_stack(p, (uint32_t[]){ proc, thr, mn, in }, 4, 70), UINT32_MAX);
	assert_int_not_equal(prof_add_stack(p, (uint32_t[]){ proc, thr, mn, odd }, 4, 30), UINT32_MAX);
	return p;
}

static char *written(struct prof_profile *p, unsigned flags, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(prof_folded_write(p, f, flags), 0);
	fclose(f);
	return buf;
}

/* @t without its lines that start with '#'. */
static char *stacks_of(const char *t)
{
	char *o = malloc(strlen(t) + 1), *w = o;

	for (const char *s = t; *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);

		if (*s != '#') {
			memcpy(w, s, n);
			w += n;
		}
		s += n;
	}
	*w = '\0';
	return o;
}

static void test_stacks_unchanged(void **state)
{
	struct prof_profile *p = offcpu();
	size_t lm, lp;
	char *meta = written(p, PROF_FOLDED_META, &lm), *plain = written(p, 0, &lp);
	char *st = stacks_of(meta);
	regex_t fg;
	int comments = 0;

	(void)state;
	assert_string_equal(st, plain);
	assert_true(lm > lp);
	assert_non_null(strstr(meta, "# hearth-frame\todd\\tname\\\\x\tuser\tlibrary\tunknown\t"
				     "/lib/l\\tib.so\t/src/o.c\t7 #\n"));
	/* flamegraph.pl: a stack is a line ending in whitespace and a number;
	 * inferno: the text after the last space is a number. Neither holds
	 * for a comment line. */
	assert_int_equal(regcomp(&fg, "[[:space:]][0-9]+(\\.[0-9]*)?$", REG_EXTENDED | REG_NOSUB), 0);
	for (char *s = meta; *s;) {
		char *nl = strchr(s, '\n'), *sp;

		*nl = '\0';
		if (*s == '#') {
			comments++;
			assert_int_not_equal(regexec(&fg, s, 0, NULL, 0), 0);
			sp = strrchr(s, ' ');
			assert_non_null(sp);
			assert_true(strspn(sp + 1, "0123456789") < strlen(sp + 1));
		} else {
			assert_int_equal(regexec(&fg, s, 0, NULL, 0), 0);
		}
		s = nl + 1;
	}
	assert_int_equal(comments, 1 + 6); /* the profile, 6 frames (no process row) */
	regfree(&fg);
	free(st);
	free(meta);
	free(plain);
	prof_free(p);
}

static const struct prof_frame *named(const struct prof_profile *p,
				      const char *name)
{
	for (uint32_t i = 1; i < prof_frame_count(p); i++)
		if (!strcmp(prof_str(p, prof_frame_get(p, i)->name), name))
			return prof_frame_get(p, i);
	fail_msg("no frame %s", name);
	return NULL;
}

/* What @p read back must hold; @total: its total. */
static void check_back(const struct prof_profile *p, uint64_t total)
{
	const struct prof_meta *m = prof_meta_const(p);
	const struct prof_frame *f;

	assert_int_equal(m->unit, PROF_UNIT_NANOSECONDS);
	assert_int_equal(m->off_cpu, 1);
	assert_int_equal(m->start_ns, 1700000000123456789ull);
	assert_int_equal(m->duration_ns, 3000000000ull);
	assert_int_equal(m->drops, 5);
	assert_int_equal(prof_total(p), total);
	f = named(p, "hot");
	assert_int_equal(f->cls, PROF_CLASS_YOURS);
	assert_int_equal(f->lang, PROF_LANG_C);
	assert_string_equal(prof_str(p, f->module), "/usr/bin/app");
	assert_string_equal(prof_str(p, f->file), "/src/app.c");
	assert_int_equal(f->line, 12); /* the hotter of its lines */
	f = named(p, "schedule");
	assert_int_equal(f->kind, PROF_KIND_KERNEL);
	assert_int_equal(f->cls, PROF_CLASS_WAITING);
	assert_int_equal(named(p, "app-42")->kind, PROF_KIND_THREAD);
	assert_int_equal(named(p, "app")->kind, PROF_KIND_PROCESS);
	assert_int_equal(named(p, "helper")->line, 3);
	f = named(p, "odd\tname\\x");
	assert_int_equal(f->cls, PROF_CLASS_LIBRARY);
	assert_string_equal(prof_str(p, f->module), "/lib/l\tib.so");
}

static void test_read_back(void **state)
{
	struct prof_profile *p = offcpu(), *q;
	struct prof_load_opts o = { .unit = -1 };
	size_t len;
	char *t = written(p, PROF_FOLDED_META, &len), err[256];

	(void)state;
	assert_int_equal(prof_load_bytes(t, len, "t", &o, &q, NULL, err, sizeof(err)), 0);
	check_back(q, 1400);
	prof_free(q);
	/* --unit says otherwise: it rules. */
	o.unit = PROF_UNIT_SAMPLES;
	assert_int_equal(prof_load_bytes(t, len, "t", &o, &q, NULL, err, sizeof(err)), 0);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_SAMPLES);
	prof_free(q);
	/* Plain output: no unit, no classes. */
	free(t);
	t = written(p, 0, &len);
	o.unit = -1;
	assert_int_equal(prof_load_bytes(t, len, "t", &o, &q, NULL, err, sizeof(err)), 0);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_SAMPLES);
	assert_int_equal(named(q, "hot")->cls, PROF_CLASS_UNKNOWN);
	prof_free(q);
	free(t);
	prof_free(p);
}

/* From a file, read by parts: with a comment block bigger than the first
 * window (64 KiB), so it is read again in a bigger one. */
static void test_read_file(void **state)
{
	struct prof_profile *p = offcpu(), *q;
	struct prof_load_opts o = { .unit = -1, .threads = 2 };
	uint32_t proc = frame(p, "app", PROF_KIND_PROCESS, 0, NULL, NULL, 0);
	char path[] = "/tmp/hearth-meta-XXXXXX", name[64], file[300], err[256];
	size_t len;
	char *t;
	int fd;

	(void)state;
	memset(file, 'd', sizeof(file) - 1);
	file[sizeof(file) - 1] = '\0';
	for (int i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "fill_%d", i);
		assert_int_not_equal(prof_add_stack(p, (uint32_t[]){ proc,
				     frame(p, name, 0, PROF_CLASS_LIBRARY, "/lib/x.so", file, (uint32_t)i + 1) },
				     2, 1), UINT32_MAX);
	}
	t = written(p, PROF_FOLDED_META, &len);
	assert_true(strlen(t) - strlen(strstr(t, "\napp;")) > 128 * 1024);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, len), (ssize_t)len);
	close(fd);
	assert_int_equal(prof_load(path, &o, &q, NULL, err, sizeof(err)), 0);
	unlink(path);
	check_back(q, 1800);
	assert_int_equal(named(q, "fill_399")->line, 400);
	assert_int_equal(named(q, "fill_399")->cls, PROF_CLASS_LIBRARY);
	prof_free(q);
	free(t);
	prof_free(p);
}

static void test_comment_lines(void **state)
{
	static const char counted[] = "#weird;frame 3\nmain;a 2\n";
	static const char bad[] = "# a comment #\n# another\nmain;a 1\nbroken\n";
	static const char middle[] = "main;a 1\n# not hearth's, skipped\nmain;b 2\n";
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[256];

	(void)state;
	/* A '#' line that ends in a count is a stack. */
	assert_int_equal(prof_folded_parse(p, counted, strlen(counted), 0, err, sizeof(err)), 0);
	assert_int_equal(prof_total(p), 5);
	prof_free(p);
	/* Errors are numbered counting the comment lines. */
	p = prof_new(PROF_UNIT_SAMPLES);
	assert_int_equal(prof_folded_parse(p, bad, strlen(bad), 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 4 has no sample count after the stack");
	prof_free(p);
	p = prof_new(PROF_UNIT_SAMPLES);
	assert_int_equal(prof_folded_parse(p, middle, strlen(middle), 0, err, sizeof(err)), 0);
	assert_int_equal(prof_total(p), 3);
	prof_free(p);
}

/* Every class, language and kind has its key: each reads back as
 * written. */
static void test_every_key(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q;
	struct prof_load_opts o = { .unit = -1 };
	uint32_t proc = frame(p, "app", PROF_KIND_PROCESS, 0, NULL, NULL, 0);
	char name[32], err[256];
	size_t len;
	char *t;

	(void)state;
	for (unsigned c = 0; c < PROF_CLASS_COUNT; c++)
		for (unsigned l = 0; l < PROF_LANG_COUNT; l++) {
			struct prof_frame f = { .module = prof_intern_cstr(p, "m"),
						.cls = (uint8_t)c, .lang = (uint8_t)l };

			snprintf(name, sizeof(name), "f_%u_%u", c, l);
			f.name = prof_intern_cstr(p, name);
			assert_int_not_equal(prof_add_stack(p, (uint32_t[]){ proc,
					     prof_frame_intern(p, &f) }, 2, 1), UINT32_MAX);
		}
	t = written(p, PROF_FOLDED_META, &len);
	assert_null(strstr(t, "(null)"));
	assert_int_equal(prof_load_bytes(t, len, "t", &o, &q, NULL, err, sizeof(err)), 0);
	for (unsigned c = 0; c < PROF_CLASS_COUNT; c++)
		for (unsigned l = 0; l < PROF_LANG_COUNT; l++) {
			snprintf(name, sizeof(name), "f_%u_%u", c, l);
			assert_int_equal(named(q, name)->cls, c);
			assert_int_equal(named(q, name)->lang, l);
		}
	prof_free(q);
	free(t);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacks_unchanged),
		cmocka_unit_test(test_read_back),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_comment_lines),
		cmocka_unit_test(test_every_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
