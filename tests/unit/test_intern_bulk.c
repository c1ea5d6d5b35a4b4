/* SPDX-License-Identifier: MIT */
/*
 * Interning frames in bulk (prof_intern_frames) must give what interning
 * each name then each frame in turn gives: the same ids, strings and
 * frames, with names repeated inside the batch, names and frames the
 * profile holds already, the same name under several kinds, and empty
 * names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "profile/profile_impl.h"

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* @n names from a pool of @pool (so they repeat), of 0 to 40 bytes, in
 * @buf (n * 48 bytes), with kinds from the first four. */
static void make_texts(uint64_t *s, struct prof_frame_text *t, char *buf,
		       size_t n, unsigned pool)
{
	for (size_t i = 0; i < n; i++) {
		char *b = buf + i * 48;
		unsigned k = (unsigned)(rng(s) % pool);
		int len = snprintf(b, 48, "%.*sname_%u", (int)(k % 25),
				   "a_long_namespace::prefix_", k);

		t[i] = (struct prof_frame_text){ b, k % 97 == 0 ? 0 : (size_t)len,
						  (uint8_t)(rng(s) % 4) };
	}
}

/* The reference: each name, then its frame, one at a time. */
static uint32_t one_by_one(struct prof_profile *p, const struct prof_frame_text *t)
{
	struct prof_frame f = { .kind = t->kind };

	f.name = prof_intern(p, t->name, t->len);
	assert_int_not_equal(f.name, UINT32_MAX);
	return prof_frame_intern(p, &f);
}

static void assert_same_tables(const struct prof_profile *a,
			       const struct prof_profile *b)
{
	assert_int_equal(prof_str_count(a), prof_str_count(b));
	for (uint32_t i = 0; i < prof_str_count(a); i++)
		assert_string_equal(prof_str(a, i), prof_str(b, i));
	assert_int_equal(prof_frame_count(a), prof_frame_count(b));
	for (uint32_t i = 1; i < prof_frame_count(a); i++) {
		assert_int_equal(prof_frame_get(a, i)->name, prof_frame_get(b, i)->name);
		assert_int_equal(prof_frame_get(a, i)->kind, prof_frame_get(b, i)->kind);
	}
}

/* Batches of 1 to 20,000 frames into profiles that are empty or already
 * hold some of the same names and frames. */
static void test_bulk_same_as_one_by_one(void **state)
{
	uint64_t s = 0x1234abcd5678ef01ull;

	(void)state;
	for (int round = 0; round < 12; round++) {
		size_t n = round < 4 ? (size_t)round + 1 : (size_t)1 << (round + 3);
		size_t pre = round % 3 == 0 ? 0 : n / 2;
		struct prof_frame_text *t = malloc((n + pre) * sizeof(*t));
		char *buf = malloc((n + pre) * 48);
		uint32_t *ids = malloc(n * sizeof(*ids));
		struct prof_profile *a = prof_new(PROF_UNIT_SAMPLES);
		struct prof_profile *b = prof_new(PROF_UNIT_SAMPLES);
		unsigned pool = (unsigned)(n < 8 ? 8 : n / 3);

		assert_non_null(t);
		assert_non_null(buf);
		assert_non_null(ids);
		assert_non_null(a);
		assert_non_null(b);
		make_texts(&s, t, buf, n + pre, pool);
		for (size_t i = 0; i < pre; i++)
			assert_int_equal(one_by_one(a, &t[n + i]), one_by_one(b, &t[n + i]));
		assert_int_equal(prof_intern_frames(a, t, n, ids), 0);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(ids[i], one_by_one(b, &t[i]));
		assert_same_tables(a, b);
		/* The indexes still find what the batch added. */
		for (size_t i = 0; i < n; i++)
			assert_int_equal(one_by_one(a, &t[i]), ids[i]);
		assert_same_tables(a, b);
		prof_free(a);
		prof_free(b);
		free(ids);
		free(buf);
		free(t);
	}
}

/* An empty batch changes nothing. */
static void test_bulk_empty(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t frames, strs, id = 7;

	(void)state;
	assert_non_null(p);
	frames = prof_frame_count(p);
	strs = prof_str_count(p);
	assert_int_equal(prof_intern_frames(p, NULL, 0, &id), 0);
	assert_int_equal(id, 7);
	assert_int_equal(prof_frame_count(p), frames);
	assert_int_equal(prof_str_count(p), strs);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bulk_same_as_one_by_one),
		cmocka_unit_test(test_bulk_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
