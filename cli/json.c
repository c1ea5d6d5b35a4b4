/* SPDX-License-Identifier: MIT */
/* JSON for the commands' --json output (see json.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/metrics.h"
#include "cli/json.h"

void cli_json_start(struct cli_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

/* Writes @s as a JSON string: '"', '\' and control characters escaped,
 * valid UTF-8 kept, any other byte replaced by U+FFFD. */
static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		size_t i;

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
			continue;
		}
		if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
			p++;
			continue;
		}
		for (i = 1; i < n && (p[i] & 0xc0) == 0x80; i++)
			;
		/* Overlong forms and surrogates are not UTF-8 either. */
		if (n == 0 || i < n || (n == 2 && c < 0xc2) ||
		    (n == 3 && c == 0xe0 && p[1] < 0xa0) || (n == 3 && c == 0xed && p[1] >= 0xa0) ||
		    (n == 4 && (c > 0xf4 || (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))) {
			fputs("\xef\xbf\xbd", f);
			p += n && i < n ? i : 1;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

/* The separator and key before a value. */
static void before(struct cli_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

static void open_(struct cli_json *j, const char *key, char open, char close)
{
	before(j, key);
	if (j->depth + 1 >= CLI_JSON_DEPTH)
		abort();
	fputc(open, j->f);
	j->depth++;
	j->first[j->depth] = true;
	j->close[j->depth] = close;
}

void cli_json_object(struct cli_json *j, const char *key)
{
	open_(j, key, '{', '}');
}

void cli_json_array(struct cli_json *j, const char *key)
{
	open_(j, key, '[', ']');
}

void cli_json_end(struct cli_json *j)
{
	fputc(j->close[j->depth], j->f);
	j->depth--;
	if (j->depth == 0)
		fputc('\n', j->f);
}

void cli_json_u64(struct cli_json *j, const char *key, uint64_t v)
{
	before(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void cli_json_i64(struct cli_json *j, const char *key, int64_t v)
{
	before(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void cli_json_double(struct cli_json *j, const char *key, double v, int digits)
{
	before(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.*g", digits, v);
	else
		fputs("null", j->f);
}

void cli_json_fixed(struct cli_json *j, const char *key, uint64_t v, unsigned decimals)
{
	before(j, key);
	metrics_print_fixed(j->f, v, decimals);
}

void cli_json_bool(struct cli_json *j, const char *key, bool v)
{
	before(j, key);
	fputs(v ? "true" : "false", j->f);
}

void cli_json_str(struct cli_json *j, const char *key, const char *s)
{
	before(j, key);
	if (s)
		put_string(j->f, s);
	else
		fputs("null", j->f);
}
