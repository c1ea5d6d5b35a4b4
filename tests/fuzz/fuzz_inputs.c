/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the readers of other tools' text: perf script and difffolded.
 * Whatever the bytes, each returns 0 or a negative errno with a sentence;
 * what it reads writes as folded text that reads back to the same total.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/difffolded.h"
#include "profile/folded.h"
#include "profile/perf_script.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* @p written as folded text reads back to the same total. */
static void round_trip(struct prof_profile *p)
{
	struct prof_profile *q = prof_new(PROF_UNIT_SAMPLES);
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!q || !f) {
		if (f)
			fclose(f);
		prof_free(q);
		free(text);
		return;
	}
	if (prof_folded_write(p, f, 0) < 0) {
		fclose(f);
		free(text);
		prof_free(q);
		return; /* out of memory */
	}
	fclose(f);
	if (prof_folded_parse(q, text, len, 1, err, sizeof(err)) == 0 &&
	    prof_total(q) != prof_total(p))
		abort();
	free(text);
	prof_free(q);
}

static void check(int rc, struct prof_profile *p, const char *err)
{
	if (rc == 0) {
		if (!p)
			abort();
		round_trip(p);
		prof_free(p);
	} else if (rc != -ENOMEM && (rc != -EINVAL || !err[0] || p)) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_profile *p = NULL;
	char err[256] = "";
	int rc;

	(void)prof_perf_script_sniff(data, size);
	rc = prof_perf_script_read((const char *)data, size, &p, err, sizeof(err));
	check(rc, p, err);
	(void)prof_difffolded_sniff(data, size);
	for (int side = 1; side <= 2; side++) {
		p = NULL;
		err[0] = '\0';
		rc = prof_difffolded_read((const char *)data, size, side, PROF_UNIT_SAMPLES,
					  &p, err, sizeof(err));
		check(rc, p, err);
	}
	return 0;
}
