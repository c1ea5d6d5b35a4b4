/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the pprof reader: any bytes give 0 or -EINVAL/-ENOMEM with a
 * message, never a crash; a profile that was read writes and reads back
 * with the same total. Every sample type read at once (numeric labels
 * kept as rows) writes back too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile/pprof.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every type of @data, as export --pprof does, and writes them. */
static void all_types(const uint8_t *data, size_t size)
{
	struct prof_profile *ps[PROF_PPROF_MAX_TYPES];
	size_t n = 0, shown = 0;
	char err[256];
	void *buf = NULL;
	size_t len = 0;

	if (prof_pprof_decode_all(data, size, 16u << 20, ps, &n, &shown, err, sizeof(err)) < 0)
		return;
	if (n && prof_pprof_encode_types(ps, n, shown, &buf, &len) < 0)
		abort();
	free(buf);
	for (size_t i = 0; i < n; i++)
		prof_free(ps[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_profile *p = NULL, *q = NULL;
	char err[256];
	void *buf = NULL;
	size_t len = 0;
	int ret;

	ret = prof_pprof_decode(data, size, 16u << 20, &p, err, sizeof(err));
	if (ret < 0) {
		if ((ret != -EINVAL && ret != -ENOMEM) || err[0] == '\0' || p)
			abort();
		return 0;
	}
	if (prof_pprof_encode(p, &buf, &len) < 0)
		abort();
	if (prof_pprof_read(buf, len, &q, err, sizeof(err)) < 0)
		abort();
	/* Values above INT64_MAX are clamped on writing. */
	if (prof_total(p) < (uint64_t)INT64_MAX && prof_total(q) != prof_total(p))
		abort();
	free(buf);
	prof_free(q);
	prof_free(p);
	all_types(data, size);
	return 0;
}
