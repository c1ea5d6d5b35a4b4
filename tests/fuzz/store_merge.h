/* SPDX-License-Identifier: MIT */
/*
 * What the store's fuzz targets share: a scan callback that merges each
 * window or roll-up into the profile @arg, as a snapshot does (damaged
 * blobs are refused by the merge and skipped).
 */
#ifndef HEARTH_FUZZ_STORE_MERGE_H
#define HEARTH_FUZZ_STORE_MERGE_H

#include "agent/store.h"
#include "agent/store_codec.h"

static int merge_part(const struct store_part *part, const void *payload, size_t len,
		      void *arg)
{
	(void)part;
	store_codec_window_merge(payload, len, &(struct store_codec_merge){ .defer_totals = true },
				 arg, NULL);
	return 0;
}

#endif
