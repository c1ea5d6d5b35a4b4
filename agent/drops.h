/* SPDX-License-Identifier: MIT */
/*
 * drops: what the sampler lost or walked worse than it could, by cause,
 * and the setting that would avoid each. One list for `hearth status`,
 * the summary of `hearth record` and hearthd's journal, so the three say
 * the same thing in the same words. Formats into the caller's buffer;
 * never prints.
 */
#ifndef HEARTH_DROPS_H
#define HEARTH_DROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/sampler.h"

enum drop_cause {
	DROP_STACK_COLLISION = 0, /* kept as lost: a stack's slot held another */
	DROP_STACK_FULL,          /* kept as lost: the stack map was full */
	DROP_MAP_FULL,            /* the aggregation map was full: kept as
				   * lost per thread, or gone */
	DROP_RING_FULL,           /* process events lost, stack copies not
				   * made (frame pointers used) */
	DROP_COPY_BUDGET,         /* waits past the copy budget: frame
				   * pointers used */
	DROP_UNNAMED,             /* symbolization gave up: the process was
				   * gone before its mappings were read */
	DROP_GROWTH_RING,         /* requests for more memory lost: their
				   * ring was full (hearthd's growth) */
	DROP_CAUSES
};

struct drop_counts {
	uint64_t n[DROP_CAUSES];
	uint64_t unkept; /* of DROP_MAP_FULL: in no profile at all */
	uint64_t events; /* of DROP_RING_FULL: process events (the rest are
			  * stack copies not made) */
};

/* Where advice points: hearthd.conf keys or `hearth record` options. */
enum drop_audience { DROP_FOR_DAEMON, DROP_FOR_RECORD };

/* The settings the advice names. */
struct drop_settings {
	enum drop_audience who;
	uint64_t stack_map_size;     /* as loaded */
	enum sampler_unwind unwind;
};

/* The counts of @st by cause, into @out (DROP_GROWTH_RING is not the
 * sampler's: 0, for the caller to fill). */
void drops_of(const struct sampler_stats *st, struct drop_counts *out);

/* @a - @b, cause by cause, into @out (counters only grow). */
void drops_sub(const struct drop_counts *a, const struct drop_counts *b,
	       struct drop_counts *out);

/* Samples, waits, process events and requests for more memory lost
 * (the figure hearth status and the profiles' drops= give): copies not
 * made and frames not named lose none. */
uint64_t drops_total(const struct drop_counts *c);

/* A cause in words: "stack map collisions", ... Never NULL. */
const char *drops_name(enum drop_cause c);

/* Writes into @buf (@len bytes, always terminated) one sentence on
 * cause @c: what became of the @n ones, and what setting avoids them,
 * e.g. "kept as [lost: stack map full]; a larger stack_map_size (now
 * 16384) or a shorter window avoids them". Returns @buf. */
const char *drops_advice(enum drop_cause c, const struct drop_counts *n,
			 const struct drop_settings *set, char *buf, size_t len);

/* Writes into @buf "12 stack map collisions, 3 ring full" (the causes
 * with drops in @c, or "none"). Returns @buf. */
const char *drops_list(const struct drop_counts *c, char *buf, size_t len);

#endif /* HEARTH_DROPS_H */
