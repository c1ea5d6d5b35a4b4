/* SPDX-License-Identifier: MIT */
/* The one loader (profile/load.h): a big file gives the profile its
 * bytes give; folded and pprof, gzip'd or not, told apart by content;
 * every member of a gzip file; one input limit on reading and on
 * inflating; a directory, a missing or malformed file, counts past 2^64
 * and negative pprof values each get their one sentence or note. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"
#include "profile/gzip.h"
#include "profile/load.h"
#include "profile/pprof.h"

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

/* A file big enough to be read on several threads loads as its bytes
 * parse, twice in a row. */
static void test_big_file(void **state)
{
	uint64_t sum;
	char *t = text((size_t)9 << 20, &sum), path[64], err[128];
	struct prof_profile *ref = prof_new(PROF_UNIT_SAMPLES);

	(void)state;
	assert_non_null(ref);
	assert_int_equal(prof_folded_parse_sorted(ref, t, strlen(t), 1, err,
						  sizeof(err)), 0);
	/* The last line without its line end, read in windows. */
	t[strlen(t) - 1] = '\0';
	write_temp(t, path, sizeof(path));
	for (int round = 0; round < 2; round++) {
		struct prof_profile *p = NULL;

		assert_int_equal(prof_load(path, NULL, &p, NULL, err, sizeof(err)), 0);
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
	assert_true(prof_load("/nonexistent/hearth.folded", NULL, &p, NULL, err,
			      sizeof(err)) < 0);
	assert_null(p);
	assert_non_null(strstr(err, "cannot open /nonexistent/hearth.folded"));
	write_temp("app;main 3\napp;main;oops x\n", path, sizeof(path));
	assert_int_equal(prof_load(path, NULL, &p, NULL, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, "line 2"));
	unlink(path);
}

/* Loads @buf[0..len) as a file would be: 0 and the profile, or the
 * error with its sentence in @err. */
static int load(const void *buf, size_t len, size_t max,
		struct prof_profile **p, struct prof_load_note *note, char *err)
{
	const struct prof_load_opts o = { max, 2, -1, 0, NULL };

	return prof_load_bytes(buf, len, "f", &o, p, note, err, 256);
}

/* The same profile, gzip'd or not, pprof raw or gzip'd: told apart by
 * content; two gzip members read one after the other, as gzip does. */
static void test_formats(void **state)
{
	static const char t[] = "a;b 3\na;c 4\n";
	struct prof_load_note note;
	struct prof_profile *p, *q;
	void *gz, *gz2, *pb, *raw;
	size_t gzlen, gz2len, pblen, rawlen;
	char err[256], *two;

	(void)state;
	assert_int_equal(load(t, strlen(t), 0, &p, &note, err), 0);
	assert_string_equal(note.format, "folded");
	assert_int_equal(note.gzip, 0);
	assert_true(prof_total(p) == 7);
	assert_int_equal(gz_deflate(t, strlen(t), &gz, &gzlen), 0);
	assert_int_equal(load(gz, gzlen, 0, &q, &note, err), 0);
	assert_string_equal(note.format, "folded");
	assert_int_equal(note.gzip, 1);
	assert_true(prof_total(q) == 7);
	prof_free(q);
	/* Two members: "a;b 3\n" then "a;c 4\n". */
	assert_int_equal(gz_deflate(t + 6, strlen(t) - 6, &gz2, &gz2len), 0);
	free(gz);
	assert_int_equal(gz_deflate(t, 6, &gz, &gzlen), 0);
	two = malloc(gzlen + gz2len);
	assert_non_null(two);
	memcpy(two, gz, gzlen);
	memcpy(two + gzlen, gz2, gz2len);
	assert_int_equal(load(two, gzlen + gz2len, 0, &q, &note, err), 0);
	assert_true(prof_total(q) == 7);
	prof_free(q);
	/* pprof, gzip'd and raw. */
	assert_int_equal(prof_pprof_encode(p, &pb, &pblen), 0);
	assert_int_equal(load(pb, pblen, 0, &q, &note, err), 0);
	assert_string_equal(note.format, "pprof");
	assert_true(prof_total(q) == 7);
	prof_free(q);
	assert_int_equal(gz_inflate(pb, pblen, 1 << 20, (uint8_t **)&raw, &rawlen), 0);
	assert_int_equal(load(raw, rawlen, 0, &q, &note, err), 0);
	assert_string_equal(note.format, "pprof");
	assert_int_equal(note.gzip, 0);
	assert_true(prof_total(q) == 7);
	prof_free(q);
	free(raw);
	free(pb);
	free(two);
	free(gz);
	free(gz2);
	prof_free(p);
}

/* One limit bounds what is read and what is inflated: a bomb (64 MiB of
 * zeros in 64 KiB) stops at the limit, holding at most the limit. */
static void test_limits(void **state)
{
	struct prof_profile *p = NULL;
	char err[256], path[64], *zeros = calloc(64 << 20, 1);
	void *gz;
	size_t gzlen;

	(void)state;
	assert_non_null(zeros);
	assert_int_equal(gz_deflate(zeros, 64 << 20, &gz, &gzlen), 0);
	assert_true(gzlen < 128 << 10);
	assert_int_equal(load(gz, gzlen, 1 << 20, &p, NULL, err), -EFBIG);
	assert_null(p);
	assert_string_equal(err, "f is larger than 1 MiB once decompressed "
			    "(--max-input raises the limit)");
	free(gz);
	write_temp("a 1\nb 2\n", path, sizeof(path));
	{
		const struct prof_load_opts o = { 4, 1, -1, 0, NULL };

		assert_int_equal(prof_load(path, &o, &p, NULL, err, sizeof(err)), -EFBIG);
		assert_non_null(strstr(err, "is larger than 0 MiB (--max-input raises the limit)"));
	}
	unlink(path);
	/* A device that never ends is read up to the limit, no further. */
	{
		const struct prof_load_opts o = { 8 << 20, 1, -1, 0, NULL };

		assert_int_equal(prof_load("/dev/zero", &o, &p, NULL, err, sizeof(err)),
				 -EFBIG);
		assert_string_equal(err, "/dev/zero is larger than 8 MiB (--max-input raises the limit)");
	}
	free(zeros);
}

/* A directory; counts that add up past 2^64; negative pprof values. */
static void test_small_cases(void **state)
{
	static const char big[] = "a 18446744073709551615\nb 1\n";
	struct prof_load_note note;
	struct prof_profile *p = NULL, *q;
	char err[256];

	(void)state;
	assert_int_equal(prof_load("/tmp", NULL, &p, NULL, err, sizeof(err)), -EISDIR);
	assert_string_equal(err, "/tmp is a directory");
	assert_int_equal(load(big, strlen(big), 0, &p, NULL, err), -EOVERFLOW);
	assert_null(p);
	assert_string_equal(err, "f has counts that add up to 2^64 or more, past what hearth can count");
	/* Raw pprof, built by hand: f with a sample of 3 and one of -5. */
	{
		static const unsigned char pb[] = {
			0x0a, 4, 0x08, 1, 0x10, 2,             /* sample_type */
			0x12, 4, 0x08, 1, 0x10, 3,             /* sample: 3 */
			0x12, 13, 0x08, 1, 0x10, 0xfb, 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff, 0xff, 0xff, 0x01,          /* sample: -5 */
			0x22, 6, 0x08, 1, 0x22, 2, 0x08, 1,    /* location 1 */
			0x2a, 4, 0x08, 1, 0x10, 3,             /* function 1: "f" */
			0x32, 0, 0x32, 7, 's', 'a', 'm', 'p', 'l', 'e', 's',
			0x32, 5, 'c', 'o', 'u', 'n', 't', 0x32, 1, 'f',
		};

		assert_int_equal(load(pb, sizeof(pb), 0, &q, &note, err), 0);
		assert_string_equal(note.format, "pprof");
		assert_true(prof_total(q) == 3);
		assert_true(note.negative == 1);
		prof_free(q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_file),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_small_cases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
