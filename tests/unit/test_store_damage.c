/* SPDX-License-Identifier: MIT */
/* The store against damage that one bad byte or a lying header does: a
 * flipped byte anywhere in a segment's header (both versions) loses no
 * window; a record header claiming 60 MiB with a valid checksum is damage,
 * not a torn tail, and the records after it are read, with the index and
 * without; damaged index headers and entries are reported and lose
 * nothing; a damaged marks header loses no mark, a damaged mark is
 * counted. Every test works in its own temporary directory. */
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

#include "agent/store_format.h"
#include "agent/store_verify.h"

#define SEC 1000000000ull
#define PAYLOAD 100u
#define REC (STORE_REC_HDR_SIZE + PAYLOAD)

static int count(uint64_t start, uint64_t end, const void *payload, size_t len, void *arg)
{
	(void)start;
	(void)end;
	(void)payload;
	(void)len;
	++*(size_t *)arg;
	return 0;
}

static int count_part(const struct store_part *part, const void *payload, size_t len,
		      void *arg)
{
	(void)payload;
	(void)len;
	*(size_t *)arg += part->windows;
	return 0;
}

/* Appends windows [i s, i+1 s) for i in [@from, @to), in a new segment. */
static void fill(const char *dir, int from, int to)
{
	struct store_limits l = { 0 };
	char payload[PAYLOAD];
	int err = 0;
	struct store *s = store_open(dir, &l, &err);

	assert_non_null(s);
	for (int i = from; i < to; i++) {
		memset(payload, 'a' + i, sizeof(payload));
		assert_int_equal(store_append(s, (uint64_t)i * SEC, (uint64_t)(i + 1) * SEC,
					      payload, sizeof(payload)), 0);
	}
	store_close(s);
}

static void path_of(const char *dir, uint64_t start, const char *ext, char *out, size_t len)
{
	snprintf(out, len, "%s/seg-%020llu.%s", dir, (unsigned long long)start, ext);
}

static void patch(const char *path, off_t off, const void *b, size_t n)
{
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, n, off), (ssize_t)n);
	close(fd);
}

/* Windows a plain scan, a merged scan and a writer's count find. */
static size_t windows(const char *dir, struct store_scan_report *r)
{
	struct store_scan_report m;
	struct store_limits l = { 0 };
	struct store_stats st;
	size_t n = 0, merged = 0;
	int err = 0;
	struct store *s;

	assert_int_equal(store_scan(dir, 0, 0, count, &n, r), 0);
	assert_int_equal(store_scan_merged(dir, 0, 0, count_part, &merged, &m), 0);
	assert_int_equal(merged, n);
	s = store_open(dir, &l, &err);
	assert_non_null(s);
	store_get_stats(s, &st);
	store_close(s);
	assert_int_equal(st.windows, n);
	return n;
}

static void test_segment_header_flips(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	char seg[512], idx[512];

	fill(dir, 0, 10);
	fill(dir, 10, 20);
	path_of(dir, 0, "hst", seg, sizeof(seg));
	path_of(dir, 0, "idx", idx, sizeof(idx));
	for (off_t b = 0; b < (off_t)STORE_SEG_HDR_SIZE; b++) {
		flip_byte(seg, b);
		assert_int_equal(windows(dir, &r), 20);
		assert_int_equal(r.bad_segments, 1);
		assert_int_equal(r.skipped_segments, 0);
		assert_int_equal(r.corrupt + r.torn + r.idx_bad, 0);
		/* Its index's header too: the entries still check out. */
		flip_byte(idx, b);
		assert_int_equal(windows(dir, &r), 20);
		assert_int_equal(r.idx_bad, 1);
		flip_byte(idx, b);
		flip_byte(seg, b);
	}
	assert_int_equal(windows(dir, &r), 20);
	assert_int_equal(r.bad_segments + r.idx_bad, 0);
}

/* A good header of a newer version: the segment is skipped, reported. */
static void test_newer_version_skipped(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	char seg[512];
	uint8_t h[32];

	fill(dir, 0, 5);
	fill(dir, 5, 10);
	path_of(dir, 0, "hst", seg, sizeof(seg));
	store_fhdr_put(h, STORE_SEG_MAGIC, STORE_SEG_VERSION + 1, 1);
	patch(seg, 0, h, sizeof(h));
	assert_int_equal(windows(dir, &r), 5);
	assert_int_equal(r.bad_segments, 1);
	assert_int_equal(r.skipped_segments, 1);
}

/* Writes a record header at @off claiming @len payload bytes, valid CRC. */
static void lying_header(const char *seg, off_t off, uint32_t len, uint64_t start)
{
	struct store_rec rec = { .len = len, .start_ns = start, .end_ns = start + SEC,
				 .pcrc = 1, .kind = STORE_KIND_WINDOW };
	uint8_t h[STORE_REC_HDR_SIZE];

	store_rec_put(h, &rec);
	patch(seg, off, h, sizeof(h));
}

/* Record @k of 10 claims 60 MiB: damage, and the records after it read.
 * Without the index, the next record is found by its header; then only
 * the last record's looks like a crash while writing (a torn tail). */
static void huge_length(const char *dir, int k)
{
	struct store_scan_report r;
	char seg[512], idx[512];
	bool last = k == 9;

	fill(dir, 0, 10);
	path_of(dir, 0, "hst", seg, sizeof(seg));
	path_of(dir, 0, "idx", idx, sizeof(idx));
	lying_header(seg, 32 + k * REC, 60u << 20, (uint64_t)k * SEC);
	assert_int_equal(windows(dir, &r), 9);
	assert_int_equal(r.corrupt, 1);
	assert_int_equal(r.torn, 0);
	assert_int_equal(r.first_bad_off, 32 + k * REC);
	assert_int_equal(unlink(idx), 0);
	assert_int_equal(windows(dir, &r), 9);
	assert_int_equal(r.corrupt, last ? 0 : 1);
	assert_int_equal(r.torn, last ? 1 : 0);
	assert_int_equal(r.idx_missing, 1);
}

static void test_huge_length_is_damage(void **state)
{
	huge_length(*state, 4);
}

/* The index says the last record was whole: damage, not a tear. */
static void test_huge_length_last(void **state)
{
	huge_length(*state, 9);
}

/* A valid header whose record runs over the next one the index knows. */
static void test_length_over_next_record(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	char seg[512];

	fill(dir, 0, 10);
	path_of(dir, 0, "hst", seg, sizeof(seg));
	lying_header(seg, 32 + 2 * REC, 3 * PAYLOAD, 2 * SEC);
	assert_int_equal(windows(dir, &r), 9);
	assert_int_equal(r.corrupt, 1);
	assert_int_equal(r.torn, 0);
}

static void test_index_damage(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	struct store_idx e;
	uint8_t b[STORE_IDX2_ENTRY_SIZE];
	char idx[512];
	struct stat st;
	int fd;

	fill(dir, 0, 10);
	path_of(dir, 0, "idx", idx, sizeof(idx));
	/* An entry in the middle: damage; no window lost. */
	flip_byte(idx, 32 + 3 * STORE_IDX2_ENTRY_SIZE + 5);
	assert_int_equal(windows(dir, &r), 10);
	assert_int_equal(r.idx_bad, 1);
	assert_int_equal(r.idx_torn, 0);
	assert_non_null(strstr(idx, r.first_bad_idx));
	flip_byte(idx, 32 + 3 * STORE_IDX2_ENTRY_SIZE + 5);
	/* An entry that checks out but disagrees with its record. */
	fd = open(idx, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, b, sizeof(b), 32 + 6 * STORE_IDX2_ENTRY_SIZE), (ssize_t)sizeof(b));
	assert_int_equal(store_idx_get(b, 2, &e), 0);
	e.end_ns += SEC;
	store_idx_put(b, &e);
	assert_int_equal(pwrite(fd, b, sizeof(b), 32 + 6 * STORE_IDX2_ENTRY_SIZE), (ssize_t)sizeof(b));
	close(fd);
	assert_int_equal(windows(dir, &r), 10);
	assert_int_equal(r.idx_bad, 1);
	/* The last entry bad, or cut short: a torn tail (a crash). */
	assert_int_equal(stat(idx, &st), 0);
	flip_byte(idx, st.st_size - 3);
	assert_int_equal(windows(dir, &r), 10);
	assert_int_equal(r.idx_torn, 1);
	assert_int_equal(truncate(idx, st.st_size - 10), 0);
	assert_int_equal(windows(dir, &r), 10);
	assert_int_equal(r.idx_torn, 1);
	assert_int_equal(truncate(idx, 20), 0);
	assert_int_equal(windows(dir, &r), 10);
	assert_int_equal(r.idx_torn, 1);
}

/* A version 1 segment and index, written by hand: a flip in either header
 * loses nothing; the index's layout is told from its first entry. */
static void test_version1_header_flip(void **state)
{
	const char *dir = *state;
	struct store_scan_report r;
	char seg[512], idx[512];
	uint8_t h[32], payload[PAYLOAD];
	uint64_t off = 32;
	FILE *fs, *fi;

	path_of(dir, SEC, "hst", seg, sizeof(seg));
	path_of(dir, SEC, "idx", idx, sizeof(idx));
	fs = fopen(seg, "wb");
	fi = fopen(idx, "wb");
	assert_non_null(fs);
	assert_non_null(fi);
	store_fhdr_put(h, STORE_SEG_MAGIC, 1, 1);
	fwrite(h, 1, 32, fs);
	store_fhdr_put(h, STORE_IDX_MAGIC, 1, 1);
	fwrite(h, 1, 32, fi);
	for (int i = 1; i <= 6; i++) {
		struct store_rec rec = { .len = PAYLOAD, .start_ns = (uint64_t)i * SEC,
					 .end_ns = (uint64_t)(i + 1) * SEC };
		uint8_t rh[STORE_REC_HDR_SIZE], e[32];

		memset(payload, 'a' + i, sizeof(payload));
		rec.pcrc = store_crc(payload, sizeof(payload));
		store_rec_put(rh, &rec);
		fwrite(rh, 1, sizeof(rh), fs);
		fwrite(payload, 1, sizeof(payload), fs);
		le64_put(e, rec.start_ns);
		le64_put(e + 8, rec.end_ns);
		le64_put(e + 16, off);
		le32_put(e + 24, REC);
		le32_put(e + 28, store_crc(e, 28));
		fwrite(e, 1, sizeof(e), fi);
		off += REC;
	}
	fclose(fs);
	fclose(fi);
	assert_int_equal(windows(dir, &r), 6);
	assert_int_equal(r.bad_segments + r.idx_bad + r.corrupt, 0);
	flip_byte(seg, 9);
	flip_byte(idx, 9);
	assert_int_equal(windows(dir, &r), 6);
	assert_int_equal(r.bad_segments, 1);
	assert_int_equal(r.idx_bad, 1);
	assert_int_equal(r.corrupt + r.torn, 0);
}

static void test_marks_damage(void **state)
{
	const char *dir = *state;
	struct store_verify_report vr;
	struct store_marks_report mr;
	struct store_mark *m;
	char path[512];
	uint64_t at = 0;
	size_t n;

	assert_int_equal(store_mark_add(dir, "one", 1 * SEC), 0);
	assert_int_equal(store_mark_add(dir, "two", 2 * SEC), 0);
	assert_int_equal(store_mark_add(dir, "three", 3 * SEC), 0);
	snprintf(path, sizeof(path), "%s/marks", dir);
	/* A flipped header byte loses no mark, but is reported. */
	flip_byte(path, 10);
	assert_int_equal(store_marks_read(dir, &m, &n, &mr), 0);
	assert_int_equal(n, 3);
	assert_true(mr.header_bad);
	assert_int_equal(mr.bad, 0);
	free(m);
	/* A flipped mark is counted, never dropped silently. */
	flip_byte(path, 32 + STORE_MARK_REC_SIZE + 3);
	assert_int_equal(store_verify(dir, NULL, NULL, &vr), 0);
	assert_int_equal(vr.marks, 2);
	assert_int_equal(vr.mk.bad, 1);
	assert_true(vr.mk.header_bad);
	assert_int_equal(store_mark_find(dir, "three", &at), 0);
	assert_int_equal(at, 3 * SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_segment_header_flips, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_version_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_length_is_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_length_last, setup, teardown),
		cmocka_unit_test_setup_teardown(test_length_over_next_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version1_header_flip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marks_damage, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
