/* SPDX-License-Identifier: MIT */
/* Formatting values for people. */
#include "units.h"

#include <stdio.h>

/* Prints @x (>= 1) with three significant digits and @suffix. */
static const char *sig3(double x, const char *suffix, char *buf, size_t len)
{
	int decimals = x < 9.995 ? 2 : x < 99.95 ? 1 : 0;

	snprintf(buf, len, "%.*f %s", decimals, x, suffix);
	return buf;
}

/* Prints @x with one decimal below 99.95, none above, and @suffix. */
static const char *dec1(double x, const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%.*f %s", x < 99.95 ? 1 : 0, x, suffix);
	return buf;
}

const char *prof_fmt_count(uint64_t v, char *buf, size_t len)
{
	static const char *const suffix[] = { "K", "M", "G", "T", "P", "E" };
	double x = (double)v;
	unsigned i = 0;

	if (v < 1000) {
		snprintf(buf, len, "%llu", (unsigned long long)v);
		return buf;
	}
	x /= 1000.0;
	while (999.5 <= x && i + 1 < sizeof(suffix) / sizeof(suffix[0])) {
		x /= 1000.0;
		i++;
	}
	return dec1(x, suffix[i], buf, len);
}

const char *prof_fmt_ns(uint64_t ns, char *buf, size_t len)
{
	double x = (double)ns;

	if (ns < 1000) {
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
		return buf;
	}
	if (x < 999.5e3)
		return sig3(x / 1e3, "\xc2\xb5s", buf, len);
	if (x < 999.5e6)
		return sig3(x / 1e6, "ms", buf, len);
	if (x < 59.95e9)
		return sig3(x / 1e9, "s", buf, len);
	if (x < 59.95 * 60e9)
		return dec1(x / 60e9, "min", buf, len);
	return dec1(x / 3600e9, "h", buf, len);
}

const char *prof_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const suffix[] = { "KiB", "MiB", "GiB", "TiB",
					      "PiB", "EiB" };
	double x = (double)bytes;
	unsigned i = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	x /= 1024.0;
	while (1023.5 <= x && i + 1 < sizeof(suffix) / sizeof(suffix[0])) {
		x /= 1024.0;
		i++;
	}
	return dec1(x, suffix[i], buf, len);
}

const char *prof_fmt_thousands(uint64_t v, char *buf, size_t len)
{
	char digits[24], out[32];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	snprintf(buf, len, "%s", out);
	return buf;
}

const char *prof_fmt_value(enum prof_unit unit, uint64_t v, char *buf,
			   size_t len)
{
	switch (unit) {
	case PROF_UNIT_NANOSECONDS:
		return prof_fmt_ns(v, buf, len);
	case PROF_UNIT_BYTES:
		return prof_fmt_bytes(v, buf, len);
	case PROF_UNIT_SAMPLES:
		break;
	}
	return prof_fmt_count(v, buf, len);
}
