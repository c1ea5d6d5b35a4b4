/* SPDX-License-Identifier: MIT */
/* The store: append and scan, time ranges through the index, corrupt and
 * torn records skipped without hiding others, restarts, retention by size
 * and age, and marks. Every test works in its own temporary directory. */
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
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/store_dir.h"

#include "agent/store.h"

#define SEC 1000000000ull

struct seen {
	size_t n;
	uint64_t start[64];
	uint64_t end[64];
	char first_byte[64];
	size_t len[64];
};

static int collect(uint64_t start, uint64_t end, const void *payload,
		   size_t len, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64) {
		s->start[s->n] = start;
		s->end[s->n] = end;
		s->first_byte[s->n] = len ? ((const char *)payload)[0] : 0;
		s->len[s->n] = len;
	}
	s->n++;
	return 0;
}

/* Appends window i: [i s, i+1 s) with a 100-byte payload of letter 'a'+i. */
static void append_n(struct store *s, int from, int to)
{
	char payload[100];

	for (int i = from; i < to; i++) {
		memset(payload, 'a' + i, sizeof(payload));
		assert_int_equal(store_append(s, (uint64_t)i * SEC, (uint64_t)(i + 1) * SEC,
					      payload, sizeof(payload)), 0);
	}
}

static struct store *open_store(const char *dir, uint64_t max_bytes)
{
	struct store_limits l = { .max_bytes = max_bytes };
	int err = 0;
	struct store *s = store_open(dir, &l, &err);

	assert_non_null(s);
	assert_int_equal(err, 0);
	return s;
}

/* Path of the only (or first) segment, with extension @ext. */
static void first_segment(const char *dir, const char *ext, char *out, size_t len)
{
	char cmd[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/seg-*.%s | head -1", dir, ext);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, (int)len, p));
	out[strcspn(out, "\n")] = 0;
	pclose(p);
	(void)len;
}

static void test_append_and_scan(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	struct store_stats st;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);

	append_n(s, 1, 6);
	store_get_stats(s, &st);
	assert_int_equal(st.windows, 5);
	assert_int_equal(st.segments, 1);
	assert_int_equal(st.appended, 5);
	store_close(s);
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, &r), 0);
	assert_int_equal(seen.n, 5);
	assert_int_equal(r.windows, 5);
	assert_int_equal(r.corrupt + r.torn + r.bad_segments, 0);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(seen.start[i], (i + 1) * SEC);
		assert_int_equal(seen.end[i], (i + 2) * SEC);
		assert_int_equal(seen.first_byte[i], 'a' + (int)i + 1);
		assert_int_equal(seen.len[i], 100);
	}
}

static void test_time_range(void **state)
{
	const char *dir = *state;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);

	append_n(s, 1, 10);
	store_close(s);
	/* [3.5 s, 5.5 s) overlaps [3,4), [4,5), [5,6). */
	assert_int_equal(store_scan(dir, 3 * SEC + SEC / 2, 5 * SEC + SEC / 2, collect, &seen, NULL), 0);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.start[0], 3 * SEC);
	assert_int_equal(seen.start[2], 5 * SEC);
	/* The end is exclusive: [4 s, 5 s) is exactly one window. */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_scan(dir, 4 * SEC, 5 * SEC, collect, &seen, NULL), 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.start[0], 4 * SEC);
	/* Nothing after the last window. */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_scan(dir, 100 * SEC, 0, collect, &seen, NULL), 0);
	assert_int_equal(seen.n, 0);
}

static void test_corrupt_payload_skipped(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);
	char seg[512];

	append_n(s, 0, 3);
	store_close(s);
	first_segment(dir, "hst", seg, sizeof(seg));
	/* Second record's payload: 32 + (40 + 100) + 40 + 10. */
	flip_byte(seg, 32 + 140 + 40 + 10);
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, &r), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.first_byte[0], 'a');
	assert_int_equal(seen.first_byte[1], 'c');
	assert_int_equal(r.corrupt, 1);
	assert_int_equal(r.first_bad_off, 32 + 140);
	assert_non_null(strstr(seg, r.first_bad_seg));
}

static void test_corrupt_header_uses_index(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);
	char seg[512];

	append_n(s, 0, 4);
	store_close(s);
	first_segment(dir, "hst", seg, sizeof(seg));
	flip_byte(seg, 32 + 140 + 4); /* the second record's length field */
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, &r), 0);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.first_byte[1], 'c');
	assert_int_equal(seen.first_byte[2], 'd');
	assert_int_equal(r.corrupt, 1);
}

static void test_no_index_reads_headers(void **state)
{
	const char *dir = *state;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);
	char idx[512];

	append_n(s, 0, 4);
	store_close(s);
	first_segment(dir, "idx", idx, sizeof(idx));
	assert_int_equal(unlink(idx), 0);
	assert_int_equal(store_scan(dir, 2 * SEC, 0, collect, &seen, NULL), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.first_byte[0], 'c');
}

static void test_torn_tail(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);
	char seg[512];
	struct stat st;

	append_n(s, 0, 3);
	store_close(s);
	first_segment(dir, "hst", seg, sizeof(seg));
	assert_int_equal(stat(seg, &st), 0);
	/* A crash in the middle of the third record's payload. */
	assert_int_equal(truncate(seg, st.st_size - 30), 0);
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, &r), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(r.torn, 1);
	assert_int_equal(r.corrupt, 0);
	/* A restart appends to a new segment; everything complete is there. */
	s = open_store(dir, 0);
	append_n(s, 3, 5);
	store_close(s);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, &r), 0);
	assert_int_equal(seen.n, 4);
	assert_int_equal(r.segments, 2);
	assert_int_equal(seen.first_byte[2], 'd');
}

static void test_bad_segment_header(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);
	char seg[512];

	append_n(s, 0, 2);
	store_close(s);
	s = open_store(dir, 0);
	append_n(s, 2, 4);
	store_close(s);
	first_segment(dir, "hst", seg, sizeof(seg));
	flip_byte(seg, 3);
	/* Reported, and no window lost: the records describe themselves. */
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, &r), 0);
	assert_int_equal(r.bad_segments, 1);
	assert_int_equal(r.skipped_segments, 0);
	assert_int_equal(seen.n, 4);
	assert_int_equal(seen.first_byte[0], 'a');
	assert_int_equal(seen.first_byte[2], 'c');
}

/* A writer killed between creating a segment and writing its header
 * leaves an empty file: a torn tail, not damage; writing goes on. */
static void test_empty_segment(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	struct seen seen = { 0 };
	struct store *s = open_store(dir, 0);
	char path[512];
	int fd;

	append_n(s, 0, 2);
	store_close(s);
	snprintf(path, sizeof(path), "%s/seg-%020llu.hst", dir, 3 * SEC);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
	assert_true(fd >= 0);
	close(fd);
	s = open_store(dir, 0);
	append_n(s, 4, 6);
	store_close(s);
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, &r), 0);
	assert_int_equal(seen.n, 4);
	assert_int_equal(r.torn, 1);
	assert_int_equal(r.bad_segments + r.corrupt, 0);
}

static void test_restart_counts(void **state)
{
	const char *dir = *state;
	struct store_stats st;
	struct store *s = open_store(dir, 0);

	append_n(s, 0, 3);
	store_close(s);
	s = open_store(dir, 0);
	store_get_stats(s, &st);
	assert_int_equal(st.windows, 3);
	assert_int_equal(st.segments, 1);
	append_n(s, 3, 4);
	store_get_stats(s, &st);
	assert_int_equal(st.windows, 4);
	assert_int_equal(st.segments, 2);
	store_close(s);
}

static uint64_t dir_bytes(const char *dir)
{
	char cmd[256];
	unsigned long long b = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "cat %s/seg-* | wc -c", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%llu", &b), 1);
	pclose(p);
	return b;
}

static void test_retention_size(void **state)
{
	const char *dir = *state;
	struct store_stats st;
	struct seen seen = { 0 };
	/* 8 KiB limit: segments of 4 KiB (the minimum), 140-byte records. */
	struct store *s = open_store(dir, 8192);

	for (int round = 0; round < 10; round++) {
		append_n(s, round * 20, round * 20 + 20);
		store_get_stats(s, &st);
		assert_true(st.bytes <= 8192);
		assert_true(dir_bytes(dir) <= 8192);
		assert_int_equal(st.bytes, dir_bytes(dir));
	}
	assert_true(st.deleted_segs > 0);
	store_close(s);
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, NULL), 0);
	/* The newest windows survive, the oldest went with whole segments. */
	assert_true(seen.n > 10);
	assert_int_equal(seen.n, st.windows);
	assert_true(seen.n <= 64);
	assert_int_equal(seen.end[seen.n - 1], 200 * SEC);
	assert_true(seen.start[0] > 0);
}

static void test_retention_age(void **state)
{
	const char *dir = *state;
	struct store_limits l = { .max_age_ns = 100 * SEC };
	struct seen seen = { 0 };
	struct store *s;
	int err;

	for (int i = 0; i < 3; i++) {
		s = open_store(dir, 0);
		append_n(s, i * 100, i * 100 + 10);
		store_close(s);
	}
	s = store_open(dir, &l, &err);
	assert_non_null(s);
	/* At 250 s: segment 0 ends by 100 s (older than 150 s) and goes;
	 * segment 1 ends by 200 s and stays. */
	assert_int_equal(store_retain(s, 250 * SEC), 1);
	store_close(s);
	assert_int_equal(store_scan(dir, 0, 0, collect, &seen, NULL), 0);
	assert_int_equal(seen.n, 20);
	assert_int_equal(seen.start[0], 100 * SEC);
}

static void test_one_writer(void **state)
{
	struct store_limits l = { 0 };
	struct store *a = open_store(*state, 0), *b;
	int err = 0;

	b = store_open(*state, &l, &err);
	assert_null(b);
	assert_int_equal(err, -EBUSY);
	store_close(a);
	b = open_store(*state, 0);
	store_close(b);
}

static void test_too_large(void **state)
{
	struct store *s = open_store(*state, 4096);
	static char big[8192];
	struct store_stats st;

	assert_int_equal(store_append(s, 0, SEC, big, sizeof(big)), -EFBIG);
	store_get_stats(s, &st);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.last_error, -EFBIG);
	store_close(s);
}

static void test_marks(void **state)
{
	const char *dir = *state;
	struct store_mark *m;
	struct store_marks_report bad;
	uint64_t at = 0;
	size_t n;
	char path[512];
	int fd;

	assert_int_equal(store_marks_read(dir, &m, &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_null(m);
	assert_int_equal(store_mark_add(dir, "deploy-41", 10 * SEC), 0);
	assert_int_equal(store_mark_add(dir, "deploy-42", 20 * SEC), 0);
	assert_int_equal(store_mark_add(dir, "deploy-41", 30 * SEC), 0);
	assert_int_equal(store_mark_add(dir, "bad name", 1), -EINVAL);
	assert_int_equal(store_mark_add(dir, "", 1), -EINVAL);
	assert_int_equal(store_mark_find(dir, "deploy-41", &at), 0);
	assert_int_equal(at, 30 * SEC); /* the newest of that name */
	assert_int_equal(store_mark_find(dir, "nope", &at), -ENOENT);
	assert_int_equal(store_marks_read(dir, &m, &n, NULL), 0);
	assert_int_equal(n, 3);
	assert_string_equal(m[1].name, "deploy-42");
	assert_int_equal(m[1].at_ns, 20 * SEC);
	free(m);
	/* Damage the second record; add a torn tail. */
	snprintf(path, sizeof(path), "%s/marks", dir);
	flip_byte(path, 32 + 80 + 12);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "garbage", 7), 7);
	close(fd);
	assert_int_equal(store_marks_read(dir, &m, &n, &bad), 0);
	assert_int_equal(n, 2);
	assert_int_equal(bad.bad, 1);
	assert_int_equal(bad.torn_bytes, 7);
	assert_false(bad.header_bad);
	free(m);
	/* The next mark lands aligned after the torn bytes are cut. */
	assert_int_equal(store_mark_add(dir, "after-tear", 40 * SEC), 0);
	assert_int_equal(store_marks_read(dir, &m, &n, &bad), 0);
	assert_int_equal(n, 3);
	assert_string_equal(m[2].name, "after-tear");
	free(m);
}

static void test_mark_names(void **state)
{
	(void)state;
	assert_true(store_mark_name_valid("v1.2.3+build@host:x_y-z", 23));
	assert_false(store_mark_name_valid("a/b", 3));
	assert_false(store_mark_name_valid("a\nb", 3));
	assert_false(store_mark_name_valid("", 0));
	assert_false(store_mark_name_valid("0123456789012345678901234567890123456789012345678901234567890123", 64));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_append_and_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_payload_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_header_uses_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_index_reads_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_segment_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_segment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_age, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marks, setup, teardown),
		cmocka_unit_test(test_mark_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
