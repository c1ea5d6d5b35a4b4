/* SPDX-License-Identifier: MIT */
/* store_rollup: merges the records of a stretch of a segment (windows and
 * smaller roll-ups) into one roll-up blob (see store.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/store_codec.h"
#include "agent/store_format.h"

struct rollup {
	struct store_window sum;  /* counters added, time range spanned */
	uint64_t last_start;
	uint32_t windows;
	uint32_t parts;
	struct store_codec_merge merge;
};

static int add_part(const struct store_part *part, const void *payload,
		    size_t len, void *arg)
{
	struct rollup *r = arg;
	struct store_window hdr;
	int rc;

	/* Process rows keep their pid, so a filtered snapshot of a roll-up is
	 * that of its windows; values go to leaves only (the blob is written
	 * from self values, so totals are never needed). */
	rc = store_codec_window_merge_both(payload, len, &r->merge, r->sum.oncpu,
					   r->sum.offcpu, &hdr);
	if (rc)
		return rc < 0 ? rc : -EBADMSG;
	if (!r->parts || part->start_ns < r->sum.start_ns)
		r->sum.start_ns = part->start_ns;
	if (!r->parts || r->sum.end_ns < part->end_ns)
		r->sum.end_ns = part->end_ns;
	if (!r->parts || r->last_start < part->last_start_ns)
		r->last_start = part->last_start_ns;
	r->sum.samples += hdr.samples;
	r->sum.idle_samples += hdr.idle_samples;
	r->sum.offcpu_ns += hdr.offcpu_ns;
	r->sum.drops += hdr.drops;
	r->windows += part->windows;
	r->parts++;
	return 0;
}

/* A profile that received nothing is left out of the blob, as a window
 * without it would be. */
static void drop_empty(struct prof_profile **p)
{
	if (*p && prof_node_count(*p) < 2 && prof_total(*p) == 0 &&
	    prof_node_get(*p, 0)->self == 0) {
		prof_free(*p);
		*p = NULL;
	}
}

int store_rollup_build(int dirfd, uint64_t seg, uint64_t lo, uint64_t hi,
		       void **blob, size_t *len, struct store_idx *e)
{
	struct rollup r = { .merge = { .defer_totals = true } };
	struct store_scan_report rep;
	int rc;

	r.sum.oncpu = prof_new(PROF_UNIT_SAMPLES);
	r.sum.offcpu = prof_new(PROF_UNIT_NANOSECONDS);
	if (!r.sum.oncpu || !r.sum.offcpu) {
		store_window_clear(&r.sum);
		return -ENOMEM;
	}
	prof_meta(r.sum.offcpu)->off_cpu = 1;
	rc = store_scan_range(dirfd, seg, lo, hi, add_part, &r, &rep);
	/* Something it would stand for is unreadable or undecodable: a roll-up
	 * would not be the merge of what a reader finds. */
	if (!rc && (rep.corrupt || rep.torn || rep.bad_segments || rep.rollups_bad))
		rc = -EBADMSG;
	if (!rc && r.parts < 2)
		rc = -ENODATA; /* one part alone: nothing to gain */
	if (!rc) {
		drop_empty(&r.sum.oncpu);
		drop_empty(&r.sum.offcpu);
		rc = store_codec_window_pack(&r.sum, blob, len);
	}
	if (!rc)
		*e = (struct store_idx){ .start_ns = r.sum.start_ns, .end_ns = r.sum.end_ns,
					 .windows = r.windows, .cover = lo,
					 .max_start = r.last_start };
	store_window_clear(&r.sum);
	return rc;
}
