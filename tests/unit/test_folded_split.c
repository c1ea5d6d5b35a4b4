/* SPDX-License-Identifier: MIT */
/*
 * Big folded texts are read by two threads, each starting on a half and
 * taking lines from the other when done: the frames, their ids, the tree
 * and the errors must be those of one pass. The reference reads the same
 * text in pieces under the split size, one after the other into the same
 * profile.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/folded.h"
#include "profile/folded_impl.h"
#include "profile/profile.h"
#include "same_profile.h"

#define PIECE ((size_t)200 << 10) /* well under the split size (1 MiB) */
/* How often a thread made the slower one looks whether the other has
 * run out of lines of its own (struct folded_how). */
#define WAIT_US 200u

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Names that exercise the text table: short, exactly 8 and 16 bytes,
 * longer than 16 (a second compare), kernel and inline marks. */
static void name(uint64_t *s, char *buf, size_t n, int first)
{
	unsigned k = (unsigned)(rng(s) % 4000);

	switch (rng(s) % 6) {
	case 0:
		snprintf(buf, n, "f%u", k);
		break;
	case 1:
		snprintf(buf, n, "k%u_[k]", k % 300);
		break;
	case 2:
		snprintf(buf, n, "i%u_[i]", k % 300);
		break;
	case 3:
		snprintf(buf, n, "a_long_name_past_sixteen_bytes_%u", k);
		break;
	case 4:
		snprintf(buf, n, "sixteen_chars%03u", k % 1000);
		break;
	default:
		/* A process name also seen as an ordinary frame. */
		snprintf(buf, n, "proc%u", k % 5);
		break;
	}
	if (first && rng(s) % 2)
		snprintf(buf, n, "proc%u", (unsigned)(rng(s) % 5));
}

/* About @size bytes of folded text; counts of lines before line @bad
 * (1-based; 0 = none) are summed into @sum_before, and line @bad reads
 * "@bad_text". */
static char *text(uint64_t *s, size_t size, size_t bad, const char *bad_text,
		  uint64_t *sum_before)
{
	size_t cap = size + 4096, len = 0, line = 0;
	char *t = malloc(cap), nm[64];

	assert_non_null(t);
	*sum_before = 0;
	while (len < size) {
		size_t n = 1 + rng(s) % 20;
		unsigned count = (unsigned)(rng(s) % 50);

		line++;
		if (line == bad) {
			len += (size_t)snprintf(t + len, cap - len, "%s\n", bad_text);
			continue;
		}
		if (rng(s) % 23 == 0) {
			len += (size_t)snprintf(t + len, cap - len, "\n");
			continue;
		}
		for (size_t j = 0; j < n; j++) {
			name(s, nm, sizeof(nm), j == 0);
			len += (size_t)snprintf(t + len, cap - len, "%s%s",
						j ? ";" : "", nm);
		}
		len += (size_t)snprintf(t + len, cap - len, "%s%u%s",
					rng(s) % 5 ? " " : "\t", count,
					rng(s) % 7 ? "\n" : "\r\n");
		if (!bad || line < bad)
			*sum_before += count;
	}
	t[len] = '\0';
	return t;
}

/* Reads @t into @p in pieces of about PIECE bytes, cut at line ends. */
static void read_pieces(struct prof_profile *p, const char *t, int procs)
{
	size_t len = strlen(t), at = 0;

	while (at < len) {
		size_t end = at + PIECE < len ? at + PIECE : len;
		const char *nl = end < len ? strchr(t + end, '\n') : NULL;

		end = nl ? (size_t)(nl - t) + 1 : len;
		assert_int_equal(prof_folded_parse(p, t + at, end - at, procs,
						   NULL, 0), 0);
		at = end;
	}
}

/* The reference: @t in pieces (read_pieces()) into a new profile. */
static struct prof_profile *by_pieces(const char *t, int procs)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);

	assert_non_null(p);
	read_pieces(p, t, procs);
	return p;
}

/* @t (counts summing to @sum) read unsorted and sorted as made, with the
 * fault helper as @helper[in order] says and shared as @how says (then
 * with takes), gives the same profile as read in pieces. */
static void check_one_pass(const char *t, int procs, uint64_t sum,
			   const int helper[2], struct folded_how *how)
{
	struct prof_profile *ref = by_pieces(t, procs);
	char err[128];

	for (int in_order = 0; in_order < 2; in_order++) {
		struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);

		assert_non_null(p);
		if (how)
			how->segments = 0;
		assert_int_equal(folded_parse_with(p, t, strlen(t), procs, in_order,
						   helper[in_order], how, err,
						   sizeof(err)), 0);
		if (how)
			assert_true(2 < how->segments);
		assert_true(prof_total(p) == sum);
		assert_same_profile(p, ref);
		prof_free(p);
	}
	prof_free(ref);
}

/* A text over the split size gives what one pass gives, with and without
 * process rows, unsorted and sorted as made; so do texts of 6 MiB read
 * with the helper faulting memory in ahead (every round: with it, sorted;
 * rounds 4 and 5: with it, unsorted). */
static void test_split_same_as_one_pass(void **state)
{
	uint64_t s = 0x5eed5eed12345678ull, sum;

	(void)state;
	for (int round = 0; round < 6; round++) {
		char *t = text(&s, (size_t)(round < 4 ? 3 : 6) << 20, 0, NULL, &sum);
		const int helper[2] = { round >= 4, 1 };

		check_one_pass(t, round & 1, sum, helper, NULL);
		free(t);
	}
}

/* Read into a profile that already holds some of its frames (under other
 * ids than one pass over the text alone would give them), a text over
 * the split size still gives what reading it in small pieces gives: the
 * first part's frames, interned at its end, are found where they are;
 * also when one thread takes lines from the other. */
static void test_split_into_filled_profile(void **state)
{
	static const char before[] =
		"proc3;f77;a_long_name_past_sixteen_bytes_12 4\n"
		"proc1;k5_[k];sixteen_chars007;i9_[i] 2\n"
		"f3999;proc2 1\n";
	uint64_t s = 0x77aa55cc33ee1100ull, sum;

	(void)state;
	for (int round = 0; round < 6; round++) {
		int procs = round & 1;
		struct folded_how how = { 0, 32 << 10, 64 << 10, { 0, 0 }, 0, 0 };
		char *t = text(&s, (size_t)3 << 20, 0, NULL, &sum);
		struct prof_profile *ref = prof_new(PROF_UNIT_SAMPLES);
		struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
		size_t len = strlen(t);
		char err[128];

		assert_non_null(ref);
		assert_non_null(p);
		assert_int_equal(prof_folded_parse(ref, before, strlen(before), procs,
						   NULL, 0), 0);
		assert_int_equal(prof_folded_parse(p, before, strlen(before), procs,
						   NULL, 0), 0);
		read_pieces(ref, t, procs);
		/* Rounds 2-5: one thread slower, so the other takes from it. */
		if (2 <= round)
			how.wait_us[round / 2 - 1] = WAIT_US;
		assert_int_equal(folded_parse_with(p, t, len, procs, 1, 0, &how, err,
						   sizeof(err)), 0);
		assert_true(2 <= how.segments);
		if (2 <= round)
			assert_true(2 < how.segments);
		assert_true(prof_total(p) == sum + 7);
		assert_same_profile(p, ref);
		prof_free(p);
		prof_free(ref);
		free(t);
	}
}

/* A bad line in either half is reported with its line number, and the
 * lines before it are kept. */
static void check_bad_how(const char *t, size_t bad, const char *bad_text,
			  const char *what, uint64_t sum, int helper,
			  struct folded_how *how)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128], want[128];

	assert_non_null(p);
	assert_non_null(strstr(t, bad_text));
	assert_int_equal(folded_parse_with(p, t, strlen(t), 1, 1, helper, how,
					   err, sizeof(err)), -22);
	snprintf(want, sizeof(want), "line %zu %s", bad, what);
	assert_string_equal(err, want);
	assert_true(prof_total(p) == sum);
	prof_free(p);
}

static void check_bad_text(const char *t, size_t bad, const char *bad_text,
			   const char *what, uint64_t sum, int helper)
{
	check_bad_how(t, bad, bad_text, what, sum, helper, NULL);
}

static void check_bad_line(size_t bad, const char *bad_text, const char *what,
			   int second_half)
{
	uint64_t s = 0xabcdef0123456789ull ^ bad, sum;
	char *t = text(&s, (size_t)3 << 20, bad, bad_text, &sum);

	check_bad_text(t, bad, bad_text, what, sum, 0);
	assert_int_equal(strlen(t) / 2 < (size_t)(strstr(t, bad_text) - t),
			 second_half);
	free(t);
}

static void test_split_errors(void **state)
{
	(void)state;
	/* 3 MiB of lines of about 180 bytes: some 17,000 lines, so line 40
	 * is in the first half and 14,000 in the second (checked). */
	check_bad_line(40, "a;b;c x", "has a count that is not a decimal integer", 0);
	check_bad_line(14000, "a;;c 1", "has an empty frame", 1);
	check_bad_line(14001, "no_count_here", "has no sample count after the stack", 1);
}

/* The same in a text read with the helper (6 MiB, some 35,000 lines):
 * the first line, one in the second half, and the last, which has no
 * line end. */
static void test_helped_errors(void **state)
{
	static const char bad_text[] = "a;b;c 1x";
	static const char *what = "has a count that is not a decimal integer";
	uint64_t s = 0x0123456789abcdefull, sum;
	size_t n = 0, len;
	char *t;

	(void)state;
	t = text(&s, (size_t)6 << 20, 1, bad_text, &sum);
	check_bad_text(t, 1, bad_text, what, sum, 1);
	free(t);
	t = text(&s, (size_t)6 << 20, 25000, bad_text, &sum);
	assert_true(strlen(t) / 2 < (size_t)(strstr(t, bad_text) - t));
	check_bad_text(t, 25000, bad_text, what, sum, 1);
	free(t);
	t = text(&s, (size_t)6 << 20, SIZE_MAX, NULL, &sum);
	len = strlen(t);
	for (size_t i = 0; i < len; i++)
		n += t[i] == '\n';
	t = realloc(t, len + sizeof(bad_text));
	assert_non_null(t);
	memcpy(t + len, bad_text, sizeof(bad_text));
	check_bad_text(t, n + 1, bad_text, what, sum, 1);
	free(t);
}

/* With one thread slower, the other takes lines from it, more than once
 * and from either end: the frames, their ids and the tree are still
 * those of one pass, sorted as made or not. */
static void test_takes_same_as_one_pass(void **state)
{
	uint64_t s = 0x0badcafe0badcafeull, sum;

	(void)state;
	for (int round = 0; round < 6; round++) {
		struct folded_how how = { 0, 32 << 10, 64 << 10, { 0, 0 }, 0, 0 };
		char *t = text(&s, (size_t)4 << 20, 0, NULL, &sum);
		const int helper[2] = { 0, 0 };

		/* Rounds 4-5: thread 0 starts when thread 1 is done, which has
		 * taken from it before its first claim. */
		if (round < 4)
			how.wait_us[round / 2] = WAIT_US;
		else
			how.hold0 = 1;
		check_one_pass(t, round & 1, sum, helper, &how);
		free(t);
	}
}

/* A bad line first in the second thread's half, found before the first
 * thread claims anything (and also when it does not wait): the line's
 * number, and the lines before it kept. */
static void test_bad_first_in_second_half(void **state)
{
	static const char *bad[] = { "a;;c 1", "no_count_here" };
	static const char *what[] = { "has an empty frame",
				      "has no sample count after the stack" };

	(void)state;
	for (int k = 0; k < 4; k++) {
		struct folded_how how = { 0, 0, 0, { 0, 0 }, k / 2, 0 };
		uint64_t s = 0x3c3c3c3c3c3c3c3cull ^ (uint64_t)k, sum;
		char *t = text(&s, (size_t)3 << 20, 0, NULL, &sum);
		size_t len = strlen(t), mid = (size_t)(strchr(t + len / 2, '\n') - t) + 1;
		size_t blen = strlen(bad[k % 2]), ulen = len + blen + 1, line = 1;
		struct prof_profile *ref = prof_new(PROF_UNIT_SAMPLES);
		char *u = malloc(ulen + 1);

		assert_non_null(u);
		assert_non_null(ref);
		memcpy(u, t, mid);
		memcpy(u + mid, bad[k % 2], blen);
		u[mid + blen] = '\n';
		memcpy(u + mid + blen + 1, t + mid, len - mid + 1);
		/* The bad line starts the second half. */
		assert_int_equal((size_t)(strchr(u + ulen / 2, '\n') - u) + 1, mid);
		for (size_t i = 0; i < mid; i++)
			line += t[i] == '\n';
		assert_int_equal(prof_folded_parse(ref, t, mid, 1, NULL, 0), 0);
		check_bad_how(u, line, bad[k % 2], what[k % 2], prof_total(ref), 0, &how);
		prof_free(ref);
		free(u);
		free(t);
	}
}

/* Lines longer than a claim (up to 150 KiB, steps of 16 KiB): a claim
 * ends at the end of the line it reaches, and a take that would cut no
 * line is not made. */
static void test_long_lines(void **state)
{
	uint64_t s = 0x1e1e1e1e2f2f2f2full;

	(void)state;
	for (int slow = 0; slow < 2; slow++) {
		struct folded_how how = { 0, 16 << 10, 32 << 10, { 0, 0 }, 0, 0 };
		size_t cap = (size_t)4 << 20, len = 0;
		char *t = malloc(cap), nm[64];
		struct prof_profile *ref, *p = prof_new(PROF_UNIT_SAMPLES);
		uint64_t sum = 0;
		char err[128];

		assert_non_null(t);
		assert_non_null(p);
		while (len < ((size_t)3 << 20)) {
			/* Mostly short lines, one in 40 of 2,000 to 15,000 frames. */
			size_t n = rng(&s) % 40 ? 1 + rng(&s) % 20 : 2000 + rng(&s) % 13000;
			unsigned count = 1 + (unsigned)(rng(&s) % 9);

			for (size_t j = 0; j < n; j++) {
				name(&s, nm, sizeof(nm), j == 0);
				len += (size_t)snprintf(t + len, cap - len, "%s%s",
							j ? ";" : "", nm);
			}
			len += (size_t)snprintf(t + len, cap - len, " %u\n", count);
			sum += count;
		}
		ref = by_pieces(t, 1);
		how.wait_us[slow] = WAIT_US;
		assert_int_equal(folded_parse_with(p, t, len, 1, 1, 0, &how, err,
						   sizeof(err)), 0);
		assert_true(2 <= how.segments);
		assert_true(prof_total(p) == sum);
		assert_same_profile(p, ref);
		prof_free(p);
		prof_free(ref);
		free(t);
	}
}

/* A bad line in lines one thread may have taken from the other (4 MiB,
 * some 23,000 lines: line 7,000 and 10,500 in the first half, 19,000 in
 * the second), with either thread slower: its number, and the lines
 * before it kept. */
static void test_take_errors(void **state)
{
	static const char bad_text[] = "a;;c 1";
	static const char *what = "has an empty frame";
	static const size_t lines[] = { 7000, 10500, 19000 };

	(void)state;
	for (int slow = 0; slow < 2; slow++)
		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
			struct folded_how how = { 0, 32 << 10, 64 << 10, { 0, 0 }, 0, 0 };
			uint64_t s = 0x5151515151515151ull ^ lines[i], sum;
			char *t = text(&s, (size_t)4 << 20, lines[i], bad_text, &sum);

			assert_int_equal(strlen(t) / 2 < (size_t)(strstr(t, bad_text) - t),
					 i == 2);
			how.wait_us[slow] = WAIT_US;
			check_bad_how(t, lines[i], bad_text, what, sum, 0, &how);
			free(t);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_same_as_one_pass),
		cmocka_unit_test(test_split_into_filled_profile),
		cmocka_unit_test(test_split_errors),
		cmocka_unit_test(test_helped_errors),
		cmocka_unit_test(test_takes_same_as_one_pass),
		cmocka_unit_test(test_take_errors),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_bad_first_in_second_half),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
