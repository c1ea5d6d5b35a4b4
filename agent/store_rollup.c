/* SPDX-License-Identifier: MIT */
/* store_rollup: merges the records of a stretch of a segment (windows and
 * smaller roll-ups) into one roll-up blob (see store.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/store_codec.h"
#include "agent/store_format.h"

/* Process rows keep their pid, so a filtered snapshot of a roll-up is that
 * of its windows; values go to leaves only (a blob is written from self
 * values, so totals are never needed). */
static const struct store_codec_merge acc_merge = { .defer_totals = true };

int store_acc_add(struct store_acc *a, const struct store_part *part,
		  const void *payload, size_t len)
{
	struct store_window hdr;
	int rc;

	free(a->blob);
	a->blob = NULL;
	if (a->bad)
		return -EBADMSG;
	if (!a->sum.oncpu)
		a->sum.oncpu = prof_new(PROF_UNIT_SAMPLES);
	if (!a->sum.offcpu)
		a->sum.offcpu = prof_new(PROF_UNIT_NANOSECONDS);
	if (!a->sum.growth_req)
		a->sum.growth_req = prof_new(PROF_UNIT_SAMPLES);
	if (!a->sum.growth_bytes)
		a->sum.growth_bytes = prof_new(PROF_UNIT_BYTES);
	rc = a->sum.oncpu && a->sum.offcpu && a->sum.growth_req && a->sum.growth_bytes ?
	     0 : -ENOMEM;
	if (!rc) {
		struct store_codec_dst d = { a->sum.oncpu, a->sum.offcpu, a->sum.growth_req,
					     a->sum.growth_bytes };

		rc = store_codec_window_merge_all(payload, len, &acc_merge, &d, &hdr);
	}
	if (rc) {
		a->bad = true; /* it may hold part of this one */
		return rc;
	}
	prof_meta(a->sum.offcpu)->off_cpu = 1;
	if (!a->parts || part->start_ns < a->sum.start_ns)
		a->sum.start_ns = part->start_ns;
	if (!a->parts || a->sum.end_ns < part->end_ns)
		a->sum.end_ns = part->end_ns;
	if (!a->parts || a->last_start < part->last_start_ns)
		a->last_start = part->last_start_ns;
	a->sum.samples += hdr.samples;
	a->sum.idle_samples += hdr.idle_samples;
	a->sum.offcpu_ns += hdr.offcpu_ns;
	a->sum.drops += hdr.drops;
	a->windows += part->windows;
	a->parts++;
	return 0;
}

/* A profile that received nothing is left out of the blob, as a window
 * without it would be. */
static bool empty(const struct prof_profile *p)
{
	return !p || (prof_node_count(p) < 2 && prof_node_get(p, 0)->self == 0);
}

int store_acc_pack(struct store_acc *a, bool stored, void **blob, size_t *len,
		   struct store_idx *e)
{
	struct store_window w = a->sum;
	int rc;

	if (a->bad)
		return -EBADMSG;
	if (a->parts < 2)
		return -ENODATA; /* one part alone: nothing to gain */
	if (empty(w.oncpu))
		w.oncpu = NULL;
	if (empty(w.offcpu))
		w.offcpu = NULL;
	if (empty(w.growth_req))
		w.growth_req = NULL;
	if (empty(w.growth_bytes))
		w.growth_bytes = NULL;
	rc = stored ? store_codec_window_pack_stored(&w, blob, len)
		    : store_codec_window_pack(&w, blob, len);
	if (!rc)
		*e = (struct store_idx){ .start_ns = w.start_ns, .end_ns = w.end_ns,
					 .windows = a->windows, .max_start = a->last_start };
	return rc;
}

void store_acc_clear(struct store_acc *a)
{
	store_window_clear(&a->sum);
	free(a->blob);
	memset(a, 0, sizeof(*a));
}

size_t store_acc_memory(const struct store_acc *a)
{
	const struct prof_profile *p[] = { a->sum.oncpu, a->sum.offcpu, a->sum.growth_req,
					   a->sum.growth_bytes };
	size_t b = 0;

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		b += p[i] ? prof_memory(p[i]) : 0;
	return b;
}

struct build {
	struct store_acc acc;
	size_t max_bytes;
};

static int add_part(const struct store_part *part, const void *payload,
		    size_t len, void *arg)
{
	struct build *b = arg;
	int rc = store_acc_add(&b->acc, part, payload, len);

	if (rc < 0)
		return rc;
	return b->max_bytes && b->acc.parts >= 2 && store_acc_memory(&b->acc) > b->max_bytes
	       ? -E2BIG : 0;
}

int store_rollup_build(int dirfd, uint64_t seg, uint64_t lo, uint64_t hi,
		       size_t max_bytes, void **blob, size_t *len, struct store_idx *e)
{
	struct build b = { .max_bytes = max_bytes };
	struct store_acc *a = &b.acc;
	struct store_scan_report rep;
	int rc = store_scan_range(dirfd, seg, lo, hi, add_part, &b, &rep);

	/* Something it would stand for is unreadable or undecodable: a roll-up
	 * would not be the merge of what a reader finds. */
	if (!rc && (rep.corrupt || rep.torn || rep.bad_segments || rep.rollups_bad))
		rc = -EBADMSG;
	if (!rc)
		rc = store_acc_pack(a, false, blob, len, e);
	if (!rc)
		e->cover = lo;
	store_acc_clear(a);
	return rc;
}
