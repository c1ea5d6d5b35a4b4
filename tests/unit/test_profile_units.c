/* SPDX-License-Identifier: MIT */
/* Values formatted for people: exact strings, including the boundaries
 * where rounding moves a value into the next unit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "profile/units.h"

static char buf[PROF_FMT_LEN];

static void test_count(void **state)
{
	(void)state;
	assert_string_equal(prof_fmt_count(0, buf, sizeof(buf)), "0");
	assert_string_equal(prof_fmt_count(999, buf, sizeof(buf)), "999");
	assert_string_equal(prof_fmt_count(1000, buf, sizeof(buf)), "1.0 K");
	assert_string_equal(prof_fmt_count(1234, buf, sizeof(buf)), "1.2 K");
	assert_string_equal(prof_fmt_count(12345, buf, sizeof(buf)), "12.3 K");
	assert_string_equal(prof_fmt_count(99949, buf, sizeof(buf)), "99.9 K");
	assert_string_equal(prof_fmt_count(99950, buf, sizeof(buf)), "100 K");
	assert_string_equal(prof_fmt_count(999499, buf, sizeof(buf)), "999 K");
	assert_string_equal(prof_fmt_count(999500, buf, sizeof(buf)), "1.0 M");
	assert_string_equal(prof_fmt_count(3400000, buf, sizeof(buf)), "3.4 M");
	assert_string_equal(prof_fmt_count(5600000000ull, buf, sizeof(buf)), "5.6 G");
	assert_string_equal(prof_fmt_count(UINT64_MAX, buf, sizeof(buf)), "18.4 E");
}

static void test_ns(void **state)
{
	(void)state;
	assert_string_equal(prof_fmt_ns(0, buf, sizeof(buf)), "0 ns");
	assert_string_equal(prof_fmt_ns(850, buf, sizeof(buf)), "850 ns");
	assert_string_equal(prof_fmt_ns(1000, buf, sizeof(buf)), "1.00 \xc2\xb5s");
	assert_string_equal(prof_fmt_ns(12345, buf, sizeof(buf)), "12.3 \xc2\xb5s");
	assert_string_equal(prof_fmt_ns(999400, buf, sizeof(buf)), "999 \xc2\xb5s");
	assert_string_equal(prof_fmt_ns(999600, buf, sizeof(buf)), "1.00 ms");
	assert_string_equal(prof_fmt_ns(340000000, buf, sizeof(buf)), "340 ms");
	assert_string_equal(prof_fmt_ns(999700000, buf, sizeof(buf)), "1.00 s");
	assert_string_equal(prof_fmt_ns(1200000000, buf, sizeof(buf)), "1.20 s");
	assert_string_equal(prof_fmt_ns(12340000000ull, buf, sizeof(buf)), "12.3 s");
	assert_string_equal(prof_fmt_ns(59940000000ull, buf, sizeof(buf)), "59.9 s");
	assert_string_equal(prof_fmt_ns(59960000000ull, buf, sizeof(buf)), "1.0 min");
	assert_string_equal(prof_fmt_ns(150000000000ull, buf, sizeof(buf)), "2.5 min");
	assert_string_equal(prof_fmt_ns(5400000000000ull, buf, sizeof(buf)), "1.5 h");
}

static void test_bytes(void **state)
{
	(void)state;
	assert_string_equal(prof_fmt_bytes(0, buf, sizeof(buf)), "0 B");
	assert_string_equal(prof_fmt_bytes(1023, buf, sizeof(buf)), "1023 B");
	assert_string_equal(prof_fmt_bytes(1024, buf, sizeof(buf)), "1.0 KiB");
	assert_string_equal(prof_fmt_bytes(512 * 1024, buf, sizeof(buf)), "512 KiB");
	assert_string_equal(prof_fmt_bytes(1572864, buf, sizeof(buf)), "1.5 MiB");
	assert_string_equal(prof_fmt_bytes(1023 * 1024 + 600, buf, sizeof(buf)), "1.0 MiB");
	assert_string_equal(prof_fmt_bytes(3ull << 30, buf, sizeof(buf)), "3.0 GiB");
}

static void test_thousands_and_value(void **state)
{
	(void)state;
	assert_string_equal(prof_fmt_thousands(0, buf, sizeof(buf)), "0");
	assert_string_equal(prof_fmt_thousands(999, buf, sizeof(buf)), "999");
	assert_string_equal(prof_fmt_thousands(1000, buf, sizeof(buf)), "1,000");
	assert_string_equal(prof_fmt_thousands(1234567, buf, sizeof(buf)), "1,234,567");
	assert_string_equal(prof_fmt_thousands(UINT64_MAX, buf, sizeof(buf)),
			    "18,446,744,073,709,551,615");
	assert_string_equal(prof_fmt_value(PROF_UNIT_SAMPLES, 1234, buf, sizeof(buf)), "1.2 K");
	assert_string_equal(prof_fmt_value(PROF_UNIT_NANOSECONDS, 340000000, buf, sizeof(buf)), "340 ms");
	assert_string_equal(prof_fmt_value(PROF_UNIT_BYTES, 1572864, buf, sizeof(buf)), "1.5 MiB");
	/* A short buffer truncates but stays a C string. */
	char small[4];
	assert_string_equal(prof_fmt_thousands(1234567, small, sizeof(small)), "1,2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_ns),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_thousands_and_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
