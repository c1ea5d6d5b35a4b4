/* SPDX-License-Identifier: MIT */
/* Human-readable numbers. */
#include <stdio.h>
#include <string.h>

#include "render/format.h"

struct scale {
	double div;
	const char *suffix;
};

/* Prints @x with up to three significant digits, dropping ".0". */
static void sig3(char *buf, size_t n, double x, const char *suffix)
{
	char num[32];
	size_t l;

	if (x < 100)
		snprintf(num, sizeof(num), "%.1f", x);
	else
		snprintf(num, sizeof(num), "%.0f", x);
	l = strlen(num);
	if (l > 2 && strcmp(num + l - 2, ".0") == 0)
		num[l - 2] = '\0';
	snprintf(buf, n, "%s %s", num, suffix);
}

static char *scaled(char *buf, size_t n, uint64_t v, const struct scale *s,
		    size_t ns)
{
	double x = (double)v;
	size_t i = ns - 1;

	/* The largest unit the value reaches once rounded (999.96 ms = 1 s). */
	while (i > 0 && x < s[i].div * 0.9995)
		i--;
	if (s[i].div == 1) {
		snprintf(buf, n, "%llu %s", (unsigned long long)v, s[i].suffix);
		return buf;
	}
	sig3(buf, n, x / s[i].div, s[i].suffix);
	return buf;
}

char *rd_fmt_value(char *buf, size_t n, uint64_t v, enum prof_unit unit)
{
	static const struct scale ns[] = {
		{ 1, "ns" }, { 1e3, "\xc2\xb5s" }, { 1e6, "ms" }, { 1e9, "s" },
		{ 60e9, "min" }, { 3600e9, "h" },
	};
	static const struct scale bytes[] = {
		{ 1, "B" }, { 1024.0, "KiB" }, { 1048576.0, "MiB" },
		{ 1073741824.0, "GiB" }, { 1099511627776.0, "TiB" },
	};
	static const struct scale count[] = {
		{ 1, "" }, { 1e3, "K" }, { 1e6, "M" }, { 1e9, "G" }, { 1e12, "T" },
	};

	switch (unit) {
	case PROF_UNIT_NANOSECONDS:
		return scaled(buf, n, v, ns, sizeof(ns) / sizeof(ns[0]));
	case PROF_UNIT_BYTES:
		return scaled(buf, n, v, bytes, sizeof(bytes) / sizeof(bytes[0]));
	case PROF_UNIT_SAMPLES:
	default:
		if (v < 1000) {
			snprintf(buf, n, "%llu", (unsigned long long)v);
			return buf;
		}
		return scaled(buf, n, v, count, sizeof(count) / sizeof(count[0]));
	}
}

char *rd_fmt_pct(char *buf, size_t n, double pct)
{
	if (pct <= 0)
		snprintf(buf, n, "0%%");
	else if (pct < 0.1)
		snprintf(buf, n, "<0.1%%");
	else if (pct < 9.95)
		snprintf(buf, n, "%.1f%%", pct);
	else
		snprintf(buf, n, "%.0f%%", pct);
	return buf;
}

char *rd_fmt_count(char *buf, size_t n, uint64_t v)
{
	char digits[32], out[48];
	size_t l, o = 0;

	snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	l = strlen(digits);
	for (size_t i = 0; i < l; i++) {
		if (i > 0 && (l - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	snprintf(buf, n, "%s", out);
	return buf;
}
