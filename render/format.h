/* SPDX-License-Identifier: MIT */
/* render/format: numbers for people (1.2 K, 340 ms, 12 MiB, 62%). */
#ifndef HEARTH_RENDER_FORMAT_H
#define HEARTH_RENDER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Writes @v in @unit to @buf (size @n, NUL-terminated, truncated if short):
 * samples "950", "1.2 K", "34.5 M"; nanoseconds "812 ns", "340 ms", "30 s",
 * "5 min", "2 h"; bytes "512 B", "1.5 KiB", "12 MiB". At most three
 * significant digits, a trailing ".0" dropped. Returns @buf. */
char *rd_fmt_value(char *buf, size_t n, uint64_t v, enum prof_unit unit);

/* Writes a percentage: "62%" from 10 up, "4.5%" from 0.1, "<0.1%" above 0,
 * "0%" for 0. Returns @buf. */
char *rd_fmt_pct(char *buf, size_t n, double pct);

/* Writes @v in full with thousands separators: "1,234,567". Returns @buf. */
char *rd_fmt_count(char *buf, size_t n, uint64_t v);

#endif /* HEARTH_RENDER_FORMAT_H */
