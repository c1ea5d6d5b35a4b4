/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the folded parser. Whatever the bytes, parsing returns 0 or a
 * negative errno with a message; read on 2 and 4 threads (each a part of
 * the text), it gives the same result, message, strings, frames and tree
 * size; and when it
 * succeeds, the written text parses again into a profile with the same
 * total (the writer's output is always valid folded text) and writes
 * again as the same bytes; written with hearth's comment lines first, it
 * reads back into the same stacks (written plain, the same bytes).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* @data read on @threads threads gives what one gave @p (@ret, @err). */
static void same_as_split(const uint8_t *data, size_t size, unsigned threads,
			  const struct prof_profile *p, int ret, const char *err)
{
	const struct prof_folded_opts o = { (int)(size & 1), threads == 4, threads };
	struct prof_profile *q = prof_new(PROF_UNIT_SAMPLES);
	char err2[128];
	int ret2;

	if (!q)
		return;
	ret2 = prof_folded_read(q, (const char *)data, size, &o, err2, sizeof(err2));
	if (ret == -ENOMEM || ret2 == -ENOMEM) {
		prof_free(q);
		return;
	}
	if (ret2 != ret || (ret < 0 && strcmp(err, err2) != 0) ||
	    prof_total(q) != prof_total(p) ||
	    prof_frame_count(q) != prof_frame_count(p) ||
	    prof_str_count(q) != prof_str_count(p) ||
	    prof_node_count(q) != prof_node_count(p))
		abort();
	for (uint32_t i = 1; i < prof_frame_count(p); i++)
		if (prof_frame_get(q, i)->kind != prof_frame_get(p, i)->kind ||
		    strcmp(prof_str(q, prof_frame_get(q, i)->name),
			   prof_str(p, prof_frame_get(p, i)->name)) != 0)
			abort();
	prof_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q;
	char err[128], *out = NULL;
	size_t outlen = 0;
	FILE *f;
	int ret;

	if (!p)
		return 0;
	ret = prof_folded_parse(p, (const char *)data, size, size & 1, err,
				sizeof(err));
	same_as_split(data, size, 2, p, ret, err);
	same_as_split(data, size, 4, p, ret, err);
	if (ret < 0) {
		if (ret != -EINVAL && ret != -ENOMEM)
			abort();
		if (ret == -EINVAL && err[0] == '\0')
			abort();
		prof_free(p);
		return 0;
	}
	f = open_memstream(&out, &outlen);
	if (!f || prof_folded_write(p, f, PROF_FOLDED_ANNOTATE) < 0)
		abort();
	fclose(f);
	q = prof_new(PROF_UNIT_SAMPLES);
	if (!q)
		abort();
	if (prof_folded_parse(q, out, outlen, size & 1, err, sizeof(err)) < 0)
		abort();
	/* The root's own self (empty stacks) is not written. */
	if (prof_total(q) != prof_total(p) - prof_node_get(p, 0)->self)
		abort();
	/* Written text reproduces itself byte for byte. */
	{
		char *out2 = NULL;
		size_t len2 = 0;

		f = open_memstream(&out2, &len2);
		if (!f || prof_folded_write(q, f, PROF_FOLDED_ANNOTATE) < 0)
			abort();
		fclose(f);
		if (len2 != outlen || memcmp(out, out2, outlen) != 0)
			abort();
		free(out2);
	}
	/* With hearth's comment lines: the same stacks read back. */
	{
		struct prof_profile *m = prof_new(PROF_UNIT_SAMPLES);
		char *meta = NULL, *out3 = NULL;
		size_t mlen = 0, len3 = 0;

		f = open_memstream(&meta, &mlen);
		if (!m || !f || prof_folded_write(p, f, PROF_FOLDED_ANNOTATE | PROF_FOLDED_META) < 0)
			abort();
		fclose(f);
		if (prof_folded_parse(m, meta, mlen, size & 1, err, sizeof(err)) < 0 ||
		    prof_total(m) != prof_total(q))
			abort();
		f = open_memstream(&out3, &len3);
		if (!f || prof_folded_write(m, f, PROF_FOLDED_ANNOTATE) < 0)
			abort();
		fclose(f);
		if (len3 != outlen || memcmp(out, out3, outlen) != 0)
			abort();
		free(out3);
		free(meta);
		prof_free(m);
	}
	free(out);
	prof_free(q);
	prof_free(p);
	return 0;
}
