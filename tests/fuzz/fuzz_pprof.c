/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the pprof reader: any bytes give 0 or -EINVAL/-ENOMEM with a
 * message, never a crash; a profile that was read writes and reads back
 * with the same total.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile/pprof.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	return 0;
}
