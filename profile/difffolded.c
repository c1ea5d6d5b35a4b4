/* SPDX-License-Identifier: MIT */
/* difffolded.pl's two-column folded text (see difffolded.h): one column
 * becomes folded text, which the folded reader reads. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difffolded.h"
#include "folded.h"

/* Splits the line [s, e) into its stack and its two trailing counts,
 * each a run of digits after whitespace. */
static bool two_counts(const char *s, const char *e, const char **stack_end,
		       const char *count[2], size_t count_len[2])
{
	for (int i = 1; i >= 0; i--) {
		const char *d = e;

		while (d > s && isdigit((unsigned char)d[-1]))
			d--;
		if (d == e || d == s || !(d[-1] == ' ' || d[-1] == '\t'))
			return false;
		count[i] = d;
		count_len[i] = (size_t)(e - d);
		e = d;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
	}
	*stack_end = e;
	return e > s;
}

/* The next line [*s, *e) after *p, without '\n' or '\r'; false at the end. */
static bool next_line(const char **p, const char *end, const char **s, const char **e)
{
	const char *nl;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	*s = *p;
	*e = nl ? nl : end;
	*p = nl ? nl + 1 : end;
	if (*e > *s && (*e)[-1] == '\r')
		(*e)--;
	return true;
}

static bool all_zero(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '0')
			return false;
	return true;
}

static bool skipped(const char *s, const char *e)
{
	while (s < e && isspace((unsigned char)*s))
		s++;
	return s == e || *s == '#';
}

int prof_difffolded_sniff(const void *buf, size_t len)
{
	const char *p = buf, *end = p + len, *s, *e, *se, *c[2];
	size_t cl[2];

	/* The first line with a stack decides; the reader then holds every
	 * other line to two counts, and names one that has not. */
	while (next_line(&p, end, &s, &e))
		if (!skipped(s, e))
			return two_counts(s, e, &se, c, cl);
	return 0;
}

int prof_difffolded_read(const char *buf, size_t len, int side, enum prof_unit unit,
			 struct prof_profile **out, char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len, *s, *e, *se, *c[2];
	size_t cl[2], n = 0, line = 0;
	char *text = malloc(len + 1);
	struct prof_profile *prof;
	int rc;

	*out = NULL;
	if (!text)
		return -ENOMEM;
	while (next_line(&p, end, &s, &e)) {
		line++;
		if (skipped(s, e))
			continue;
		if (!two_counts(s, e, &se, c, cl)) {
			snprintf(err, errlen, "line %zu has not two counts after the stack, as the "
				 "other lines of this difffolded file have", line);
			free(text);
			return -EINVAL;
		}
		if (all_zero(c[side - 1], cl[side - 1]))
			continue; /* not on this side */
		/* The stack, a space and the side's count, in place of the
		 * line: never longer than it. */
		memcpy(text + n, s, (size_t)(se - s));
		n += (size_t)(se - s);
		text[n++] = ' ';
		memcpy(text + n, c[side - 1], cl[side - 1]);
		n += cl[side - 1];
		text[n++] = '\n';
	}
	if (!(prof = prof_new(unit))) {
		free(text);
		return -ENOMEM;
	}
	rc = prof_folded_parse_sorted(prof, text, n, 1, err, errlen);
	free(text);
	if (rc < 0) {
		prof_free(prof);
		return rc;
	}
	*out = prof;
	return 0;
}
