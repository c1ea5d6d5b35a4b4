/* SPDX-License-Identifier: MIT */
/* Joining a short DWARF unwind to the frame-pointer walk of the same sample. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolize/unwind.h"

static void assert_stack(const uint64_t *got, size_t n, const uint64_t *want, size_t m)
{
	assert_int_equal(n, m);
	for (size_t i = 0; i < m; i++)
		assert_int_equal(got[i], want[i]);
}

/* The copy ended after the FP-less frames; the FP walk knows the rest. */
static void test_splice_joins_at_shared_frame(void **state)
{
	const uint64_t dwarf[] = { 0x10, 0x21, 0x32, 0x43 };
	const uint64_t fp[] = { 0x10, 0x43, 0x54, 0x65 }; /* lost 0x21, 0x32 */
	const uint64_t want[] = { 0x10, 0x21, 0x32, 0x43, 0x54, 0x65 };
	uint64_t out[16];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 4, fp, 4, out, 16), want, 6);
}

/* Recursion repeats a return address: the join keeps the depth. */
static void test_splice_recursion_keeps_depth(void **state)
{
	const uint64_t dwarf[] = { 0x1, 0x7, 0x7 };
	const uint64_t fp[] = { 0x1, 0x7, 0x7, 0x7, 0x7, 0x9 };
	const uint64_t want[] = { 0x1, 0x7, 0x7, 0x7, 0x7, 0x9 };
	uint64_t out[16];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 3, fp, 6, out, 16), want, 6);
}

/* Nothing shared: the longer walk is kept. */
static void test_splice_nothing_shared(void **state)
{
	const uint64_t dwarf[] = { 0x1, 0x2, 0x3 };
	const uint64_t fp[] = { 0x1, 0x99 };
	uint64_t out[16];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 3, fp, 2, out, 16), dwarf, 3);
	assert_stack(out, sym_unwind_splice(fp, 2, dwarf, 3, out, 16), dwarf, 3);
}

/* The output never exceeds its room. */
static void test_splice_bounded(void **state)
{
	const uint64_t dwarf[] = { 0x10, 0x21, 0x32 };
	const uint64_t fp[] = { 0x10, 0x32, 0x54, 0x65, 0x76 };
	const uint64_t want[] = { 0x10, 0x21, 0x32, 0x54 };
	uint64_t out[4];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 3, fp, 5, out, 4), want, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splice_joins_at_shared_frame),
		cmocka_unit_test(test_splice_recursion_keeps_depth),
		cmocka_unit_test(test_splice_nothing_shared),
		cmocka_unit_test(test_splice_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
