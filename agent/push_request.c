/* SPDX-License-Identifier: MIT */
/* push_request: ingest URLs, their name and labels, percent-encoded. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/push_request.h"

#define NS_PER_S UINT64_C(1000000000)

void push_request_clean_value(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	if (!cap)
		return;
	for (; *in && n + 1 < cap; in++)
		out[n++] = (*in <= ' ' || *in > '~' || strchr(",{}=\"\\", *in)) ? '_' : *in;
	out[n] = 0;
}

/* Appends @s to @out at *@n (of @cap); false when it does not fit. */
static bool put(char *out, size_t cap, size_t *n, const char *s)
{
	size_t k = strlen(s);

	if (k >= cap - *n)
		return false;
	memcpy(out + *n, s, k + 1);
	*n += k;
	return true;
}

size_t push_request_name(const struct push_request *r, char *out, size_t cap)
{
	const struct push_label *order[CONFIG_PUSH_LABELS_MAX + 8];
	size_t k = 0, n = 0;

	if (!cap)
		return 0;
	/* Sorted by key, later duplicates winning: a small insertion sort. */
	for (size_t i = 0; i < r->nlabels && k < sizeof(order) / sizeof(order[0]); i++) {
		const struct push_label *l = &r->labels[i];
		size_t j = 0;

		while (j < k && strcmp(order[j]->key, l->key) < 0)
			j++;
		if (j < k && !strcmp(order[j]->key, l->key)) {
			order[j] = l;
			continue;
		}
		memmove(order + j + 1, order + j, (k - j) * sizeof(order[0]));
		order[j] = l;
		k++;
	}
	out[0] = 0;
	if (!put(out, cap, &n, r->service) || !put(out, cap, &n, "{"))
		return 0;
	for (size_t i = 0; i < k; i++)
		if ((i && !put(out, cap, &n, ",")) || !put(out, cap, &n, order[i]->key) ||
		    !put(out, cap, &n, "=") || !put(out, cap, &n, order[i]->value))
			return 0;
	return put(out, cap, &n, "}") ? n : 0;
}

/* Appends @s percent-encoded (RFC 3986 unreserved bytes kept). */
static bool put_escaped(char *out, size_t cap, size_t *n, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		bool keep = ('a' <= ch && ch <= 'z') || ('A' <= ch && ch <= 'Z') ||
			    ('0' <= ch && ch <= '9') || strchr("-._~", ch);

		if (cap - *n < 4)
			return false;
		if (keep) {
			out[(*n)++] = (char)ch;
		} else {
			out[(*n)++] = '%';
			out[(*n)++] = hex[ch >> 4];
			out[(*n)++] = hex[ch & 15];
		}
	}
	out[*n] = 0;
	return true;
}

size_t push_request_url(const struct push_request *r, char *out, size_t cap)
{
	char name[2048], tail[160];
	size_t n = 0;

	if (!cap || !push_request_name(r, name, sizeof(name)))
		return 0;
	out[0] = 0;
	if (r->kind == PUSH_OFFCPU)
		snprintf(tail, sizeof(tail), "&from=%" PRIu64 "&until=%" PRIu64
			 "&format=pprof&spyName=hearth&units=nanoseconds",
			 r->start_ns / NS_PER_S, r->end_ns / NS_PER_S);
	else if (r->kind == PUSH_GROWTH)
		snprintf(tail, sizeof(tail), "&from=%" PRIu64 "&until=%" PRIu64
			 "&format=pprof&spyName=hearth&units=objects&aggregationType=sum",
			 r->start_ns / NS_PER_S, r->end_ns / NS_PER_S);
	else
		snprintf(tail, sizeof(tail), "&from=%" PRIu64 "&until=%" PRIu64
			 "&format=pprof&spyName=hearth&units=samples&sampleRate=%" PRIu32,
			 r->start_ns / NS_PER_S, r->end_ns / NS_PER_S, r->hz);
	if (!put(out, cap, &n, r->base_url) || !put(out, cap, &n, "/ingest?name=") ||
	    !put_escaped(out, cap, &n, name) || !put(out, cap, &n, tail))
		return 0;
	return n;
}
