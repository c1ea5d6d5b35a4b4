/* SPDX-License-Identifier: MIT */
/*
 * push_request: the URL of one request to Pyroscope's HTTP ingest API,
 *   POST {push_url}/ingest?name=...&from=...&until=...&format=pprof
 *        &spyName=hearth&units=...[&sampleRate=HZ]
 * with a gzip'd pprof profile as its body.
 *
 * `name` is the application and its labels, as the API spells them:
 * "SERVICE{container_id=ID,hearth_version=V,hostname=H,KEY=VALUE...}"
 * (for pprof the backend adds the profile type from the sample types).
 * `from` and `until` are whole Unix seconds, both rounded down, so the
 * windows that follow each other also do in the backend, without a gap.
 * On-CPU profiles give units=samples and the sampling rate, off-CPU ones
 * units=nanoseconds, growth (requests for more memory, a count like
 * Pyroscope's alloc_objects, their bytes beside) units=objects and
 * aggregationType=sum. Pure code: nothing here prints or allocates.
 */
#ifndef HEARTH_PUSH_REQUEST_H
#define HEARTH_PUSH_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"
#include "agent/push_split.h"

#define PUSH_URL_MAX 4096u

/* A label: key and value, both printable and free of ",{}=". */
struct push_label {
	const char *key;
	const char *value;
};

struct push_request {
	const char *base_url;          /* push_url, no trailing '/' */
	const char *service;           /* cleaned (push_service.h) */
	const struct push_label *labels; /* static and host labels */
	size_t nlabels;
	uint64_t start_ns, end_ns;     /* the window */
	enum push_kind kind;           /* what the profile holds */
	uint32_t hz;                   /* on-CPU sampling rate */
};

/* Writes the application name with its labels (sorted by key; a later
 * label with the same key replaces an earlier one) into @out of @cap
 * bytes. Returns the length, or 0 when it does not fit. */
size_t push_request_name(const struct push_request *r, char *out, size_t cap);

/* Writes the request's whole URL into @out of @cap bytes. Returns the
 * length, or 0 when it does not fit. */
size_t push_request_url(const struct push_request *r, char *out, size_t cap);

/* Copies @in into @out (@cap bytes) with every byte that the ingest
 * API's name cannot carry (",{}=\"\\", spaces, controls, non-ASCII)
 * replaced by '_'. */
void push_request_clean_value(const char *in, char *out, size_t cap);

#endif /* HEARTH_PUSH_REQUEST_H */
