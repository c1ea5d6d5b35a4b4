/* SPDX-License-Identifier: MIT */
/*
 * render/filter: derived profiles for the viewer's "Only my code" and
 * "Merge threads" toggles. Frames that are filtered out give their time to
 * the nearest kept caller (as its self), so totals never change; how much
 * of a node's self came from removed frames is reported per node, for the
 * hatched marker.
 */
#ifndef HEARTH_RENDER_FILTER_H
#define HEARTH_RENDER_FILTER_H

#include <stdint.h>

#include "profile/profile.h"

enum rd_filter_flags {
	RD_FILTER_YOURS = 1u << 0,   /* keep only your code (and process and
				      * thread rows) */
	RD_FILTER_THREADS = 1u << 1, /* drop thread rows: threads merge per
				      * process */
};

struct rd_filtered {
	struct prof_profile *p; /* the derived profile, owned */
	uint64_t *hidden;       /* per node of p: self that came from
				 * removed frames */
	uint32_t nhidden;
};

/* Builds the profile of @src under @flags into @out. Returns 0, -ENOMEM.
 * Free with rd_filtered_free(). */
int rd_filter(const struct prof_profile *src, unsigned flags,
	      struct rd_filtered *out);

/* Frees what @f owns. Accepts a zeroed struct. */
void rd_filtered_free(struct rd_filtered *f);

/* 1 when @p has frames of class "your code"; 2 bit set when it has thread
 * rows: returns (yours ? 1 : 0) | (threads ? 2 : 0). */
unsigned rd_filter_available(const struct prof_profile *p);

#endif /* HEARTH_RENDER_FILTER_H */
