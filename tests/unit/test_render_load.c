/* SPDX-License-Identifier: MIT */
/* Loading a profile from a file for the viewer: a big file (mapped in
 * on two threads, unmapped on a thread of its own) gives the profile its
 * bytes give; a file that is missing or malformed gives one sentence. */
#include <errno.h>
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
#include "profile/profile.h"
#include "render/load.h"

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A folded text of at least @size bytes: random stacks over a few
 * thousand names under four processes. */
static char *text(size_t size, uint64_t *sum)
{
	uint64_t s = 0x1234567887654321ull;
	size_t cap = size + 4096, len = 0;
	char *t = malloc(cap);

	assert_non_null(t);
	*sum = 0;
	while (len < size) {
		unsigned depth = 2 + (unsigned)(rng(&s) % 12);
		unsigned count = 1 + (unsigned)(rng(&s) % 50);

		len += (size_t)snprintf(t + len, cap - len, "proc%u",
					(unsigned)(rng(&s) % 4));
		for (unsigned d = 0; d < depth; d++)
			len += (size_t)snprintf(t + len, cap - len, ";fn_%u",
						(unsigned)(rng(&s) % 5000));
		len += (size_t)snprintf(t + len, cap - len, " %u\n", count);
		*sum += count;
	}
	return t;
}

/* Writes @t to a new temporary file; its path goes to @path. */
static void write_temp(const char *t, char *path, size_t n)
{
	FILE *f;
	int fd;

	snprintf(path, n, "/tmp/hearth-load-XXXXXX");
	fd = mkstemp(path);
	assert_true(0 <= fd);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(t, 1, strlen(t), f), strlen(t));
	assert_int_equal(fclose(f), 0);
}

/* A file over the size mapped in on two threads loads as its bytes
 * parse, twice in a row (the first load's pages go back on a thread of
 * their own meanwhile). */
static void test_big_file(void **state)
{
	uint64_t sum;
	char *t = text((size_t)9 << 20, &sum), path[64], err[128];
	struct prof_profile *ref = prof_new(PROF_UNIT_SAMPLES);

	(void)state;
	assert_non_null(ref);
	assert_int_equal(prof_folded_parse_sorted(ref, t, strlen(t), 1, err,
						  sizeof(err)), 0);
	write_temp(t, path, sizeof(path));
	for (int round = 0; round < 2; round++) {
		struct prof_profile *p = NULL;

		assert_int_equal(rd_load_profile(path, &p, err, sizeof(err)), 0);
		assert_non_null(p);
		assert_true(prof_total(p) == sum);
		assert_int_equal(prof_node_count(p), prof_node_count(ref));
		assert_int_equal(memcmp(prof_nodes(p), prof_nodes(ref),
					prof_node_count(p) *
						sizeof(struct prof_node)), 0);
		prof_free(p);
	}
	unlink(path);
	prof_free(ref);
	free(t);
}

/* A missing file and a malformed one: an error and one sentence naming
 * what is wrong, no profile. */
static void test_bad_files(void **state)
{
	char path[64], err[128] = "";
	struct prof_profile *p = NULL;

	(void)state;
	assert_true(rd_load_profile("/nonexistent/hearth.folded", &p, err,
				    sizeof(err)) < 0);
	assert_null(p);
	assert_non_null(strstr(err, "cannot open /nonexistent/hearth.folded"));
	write_temp("app;main 3\napp;main;oops x\n", path, sizeof(path));
	assert_int_equal(rd_load_profile(path, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, "line 2"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_file),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
