/* SPDX-License-Identifier: MIT */
/* daemon_window_copy(): thread rows fold into their process's pid (one
 * process frame per pid, values of its threads added), excluded comms and
 * stacks without a process row are dropped, every other frame is kept. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/daemon_window.h"
#include "profile/folded.h"
#include "profile/profile.h"

static uint32_t frame(struct prof_profile *p, const char *name, uint32_t line,
		      uint8_t kind)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, name),
		.module = prof_intern_cstr(p, kind == PROF_KIND_USER ? "/usr/bin/app" : ""),
		.line = line, .kind = kind,
	};

	return prof_frame_intern(p, &f);
}

/* Threads 11 and 12 belong to process 10, thread 21 to 20; others are
 * unknown (0). Counts the lookups. */
static uint32_t fake_tgid(void *arg, uint32_t tid)
{
	(*(int *)arg)++;
	return tid == 11 || tid == 12 ? 10 : tid == 21 ? 20 : 0;
}

static void add(struct prof_profile *p, const uint32_t *f, size_t n, uint64_t v)
{
	assert_int_not_equal(prof_add_stack(p, f, n, v), UINT32_MAX);
}

/* The process frame's line of the top-level node named @comm with pid
 * @pid, and its total; -1 when there is none. */
static int64_t proc_total(const struct prof_profile *p, const char *comm, uint32_t pid)
{
	for (uint32_t c = prof_node_get(p, 0)->child; c; c = prof_node_get(p, c)->sibling) {
		const struct prof_frame *f = prof_frame_get(p, prof_node_get(p, c)->frame);

		if (f->kind == PROF_KIND_PROCESS && f->line == pid &&
		    strcmp(prof_str(p, f->name), comm) == 0)
			return (int64_t)prof_node_get(p, c)->total;
	}
	return -1;
}

static void test_fold_threads(void **state)
{
	struct prof_profile *src = prof_new(PROF_UNIT_SAMPLES), *dst = prof_new(PROF_UNIT_SAMPLES);
	static const char exclude[][16] = { "noisy" };
	int lookups = 0;
	struct window_filter f = { .exclude = exclude, .nexclude = 1, .tgid_of = fake_tgid,
				   .arg = &lookups };
	uint32_t app = frame(src, "app", 0, PROF_KIND_PROCESS);
	uint32_t other = frame(src, "other", 0, PROF_KIND_PROCESS);
	uint32_t noisy = frame(src, "noisy", 0, PROF_KIND_PROCESS);
	uint32_t t11 = frame(src, "app-11", 0, PROF_KIND_THREAD);
	uint32_t t12 = frame(src, "worker-12", 0, PROF_KIND_THREAD);
	uint32_t t21 = frame(src, "other-21", 0, PROF_KIND_THREAD);
	uint32_t t31 = frame(src, "noisy-31", 0, PROF_KIND_THREAD);
	uint32_t mainf = frame(src, "main", 5, PROF_KIND_USER);
	uint32_t work = frame(src, "work", 6, PROF_KIND_USER);
	uint32_t loose = frame(src, "loose", 7, PROF_KIND_USER);
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	add(src, (uint32_t[]){ app, t11, mainf, work }, 4, 5);
	add(src, (uint32_t[]){ app, t11, mainf }, 3, 1);
	add(src, (uint32_t[]){ app, t12, mainf, work }, 4, 7);
	add(src, (uint32_t[]){ other, t21, mainf }, 3, 2);
	add(src, (uint32_t[]){ other, mainf }, 2, 4); /* no thread row: pid 0 */
	add(src, (uint32_t[]){ noisy, t31, mainf }, 3, 100);
	add(src, (uint32_t[]){ loose, work }, 2, 50); /* no process row */
	assert_int_equal(daemon_window_copy(dst, src, &f), 0);

	assert_int_equal(prof_total(dst), 19);
	assert_int_equal(proc_total(dst, "app", 10), 13);
	assert_int_equal(proc_total(dst, "other", 20), 2);
	assert_int_equal(proc_total(dst, "other", 0), 4);
	assert_int_equal(proc_total(dst, "noisy", 31), -1);
	/* one lookup per thread row, the excluded one not asked */
	assert_int_equal(lookups, 3);
	out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(prof_folded_write(dst, out, 0), 0);
	fclose(out);
	assert_string_equal(text,
			    "app;main 1\n"
			    "app;main;work 12\n"
			    "other;main 6\n");
	free(text);
	/* units must match */
	prof_free(dst);
	dst = prof_new(PROF_UNIT_NANOSECONDS);
	assert_int_equal(daemon_window_copy(dst, src, &f), -EINVAL);
	prof_free(dst);
	prof_free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
