/* SPDX-License-Identifier: MIT */
/*
 * Values formatted for people: sample counts ("950", "1.2 K", "3.4 M"),
 * durations ("850 ns", "12.3 µs", "340 ms", "1.20 s", "2.5 min", "1.5 h")
 * and sizes ("512 B", "1.5 KiB", "1.5 MiB"). Durations below a minute keep
 * three significant digits; counts and sizes one decimal below 100 of
 * their unit. A value that rounds up to the next unit is shown in it
 * ("999.7 ms" is "1.00 s"). Every function writes a NUL-terminated string
 * into @buf (size @len, truncated if needed) and returns @buf.
 */
#ifndef HEARTH_UNITS_H
#define HEARTH_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* A buffer size every formatter below fits in. */
#define PROF_FMT_LEN 32

const char *prof_fmt_count(uint64_t v, char *buf, size_t len);
const char *prof_fmt_ns(uint64_t ns, char *buf, size_t len);
const char *prof_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* The full count with thousands separators: "1,234,567". */
const char *prof_fmt_thousands(uint64_t v, char *buf, size_t len);

/* @v in @unit with the formatter above that fits it. */
const char *prof_fmt_value(enum prof_unit unit, uint64_t v, char *buf,
			   size_t len);

#endif /* HEARTH_UNITS_H */
