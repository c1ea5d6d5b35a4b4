/* SPDX-License-Identifier: MIT */
/* Auto mode's verdict on a process's frame pointers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/fp_check.h"

/* DWARF sees main's callers in libc; the FP walk stops at the first. */
static const uint64_t dwarf[] = { 0x10, 0x20, 0x30, 0x40, 0xa0, 0xb0, 0xc0 };
static const uint64_t fp_same[] = { 0x10, 0x20, 0x30, 0x40, 0xa0 };
static const uint64_t fp_skips[] = { 0x10, 0x30, 0x40, 0xa0 }; /* lost 0x20 */

static void test_clean_after_threshold(void **state)
{
	struct fp_check c = { 0 };

	(void)state;
	for (int i = 1; i < FP_CHECK_SAMPLES; i++)
		assert_int_equal(fp_check_sample(&c, 42, dwarf, 7, fp_same, 5), FP_UNDECIDED);
	assert_int_equal(fp_check_sample(&c, 42, dwarf, 7, fp_same, 5), FP_CLEAN);
	assert_int_equal(fp_check_sample(&c, 42, dwarf, 7, fp_same, 5), FP_CLEAN);
	fp_check_free(&c);
}

static void test_one_disagreement_is_final(void **state)
{
	struct fp_check c = { 0 };

	(void)state;
	assert_int_equal(fp_check_sample(&c, 7, dwarf, 7, fp_same, 5), FP_UNDECIDED);
	assert_int_equal(fp_check_sample(&c, 7, dwarf, 7, fp_skips, 4), FP_NEEDS_DWARF);
	for (int i = 0; i < 2 * FP_CHECK_SAMPLES; i++)
		assert_int_equal(fp_check_sample(&c, 7, dwarf, 7, fp_same, 5), FP_NEEDS_DWARF);
	fp_check_free(&c);
}

static void test_forget_starts_over_and_keeps_others(void **state)
{
	struct fp_check c = { 0 };

	(void)state;
	/* Many processes, so deletion runs through probe chains. */
	for (uint32_t pid = 1; pid < 2000; pid++)
		fp_check_sample(&c, pid, dwarf, 7, fp_skips, 4);
	fp_check_forget(&c, 1000);
	assert_int_equal(fp_check_sample(&c, 1000, dwarf, 7, fp_same, 5), FP_UNDECIDED);
	for (uint32_t pid = 1; pid < 2000; pid++)
		if (pid != 1000)
			assert_int_equal(fp_check_sample(&c, pid, dwarf, 7, fp_same, 5), FP_NEEDS_DWARF);
	fp_check_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_after_threshold),
		cmocka_unit_test(test_one_disagreement_is_final),
		cmocka_unit_test(test_forget_starts_over_and_keeps_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
