/* SPDX-License-Identifier: MIT */
/*
 * Diff arithmetic: two profiles merged on call paths, the change of share
 * of every frame, and whether a change is more than sampling noise.
 *
 * The diff tree is the union of both profiles' paths: a path that exists on
 * one side only is still there, with zero on the other side. Its own
 * profile's node values are before + after (the combined width); the
 * separate values per side come from prof_diff_values().
 *
 * Shares, not raw values, are compared, because two captures rarely have
 * the same length: p = 100·v/total rounded to two decimals, and
 *   Δ = clamp(100·(p_after − p_before)/p_before, −100, 100)
 * rounded to two decimals. A frame only after is +100 (PROF_DELTA_ADDED),
 * only before −100 (PROF_DELTA_REMOVED). When either total is zero, or the
 * frame is absent on both sides, the result is PROF_DELTA_NEUTRAL with
 * Δ = 0: "neutral" means "no colour", not "measured no change" (a measured
 * zero change is PROF_DELTA_CHANGED with Δ = 0).
 */
#ifndef HEARTH_DIFF_H
#define HEARTH_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

enum prof_delta_kind {
	PROF_DELTA_NEUTRAL = 0, /* a total is zero, or nothing on both sides */
	PROF_DELTA_CHANGED = 1, /* on both sides: Δ as computed */
	PROF_DELTA_ADDED = 2,   /* only after: Δ = +100 */
	PROF_DELTA_REMOVED = 3, /* only before: Δ = −100 */
};

struct prof_delta {
	enum prof_delta_kind kind;
	double p_before; /* share before, percent, two decimals */
	double p_after;  /* share after, percent, two decimals */
	double delta;    /* relative change of share, −100..100, two decimals */
};

/* Rounds @x to two decimals, halves away from zero. */
double prof_round2(double x);

/* The change of share of a frame with value @vb of total @tb before and
 * @va of total @ta after, as described above. When p_before rounds to
 * 0.00 but the frame exists before, Δ is +100 if p_after > 0, else 0. */
struct prof_delta prof_delta_share(uint64_t vb, uint64_t tb, uint64_t va,
				   uint64_t ta);

/* Δ of raw values (absolute mode): clamp(100·(va − vb)/vb, −100, 100)
 * rounded to two decimals; +100 when only @va is non-zero, −100 when only
 * @vb is. Kind as for shares; both zero is neutral; p_before and p_after
 * are left 0. */
struct prof_delta prof_delta_abs(uint64_t vb, uint64_t va);

/* A two-proportion z-test of a frame's sample counts: @xb of @nb samples
 * before, @xa of @na after. */
struct prof_signif {
	int valid;       /* 0 when a total is 0 (nothing to test) */
	int significant; /* 1 when |z| >= 1.959964 (two-sided, 95%) */
	double z;        /* pooled z statistic, > 0 when the share grew */
	double change;   /* share after − share before, percentage points */
	double ci_low;   /* 95% confidence interval of @change (unpooled */
	double ci_high;  /*   standard error), percentage points */
};

/* Fills @out for the counts above. Returns 0, or -EINVAL when a count
 * exceeds its total. */
int prof_signif_test(uint64_t xb, uint64_t nb, uint64_t xa, uint64_t na,
		     struct prof_signif *out);

/* ---- the diff tree ------------------------------------------------------- */

struct prof_diff;

struct prof_diff_values {
	uint64_t before_total, before_self;
	uint64_t after_total, after_self;
};

/* Merges @before and @after on call paths into a new diff stored in
 * *@out (free with prof_diff_free()). The inputs are only read. In the
 * union, a node's children are after's, in after's order, then those only
 * before has, in before's order. Returns 0, -EINVAL when their units
 * differ, or -ENOMEM. */
int prof_diff_build(const struct prof_profile *before,
		    const struct prof_profile *after, struct prof_diff **out);

/* Frees @d. Accepts NULL. */
void prof_diff_free(struct prof_diff *d);

/* The union tree, owned by @d: strings, frames and nodes to walk, with
 * node values before + after. The caller may sort it (prof_sort). */
struct prof_profile *prof_diff_tree(struct prof_diff *d);
const struct prof_profile *prof_diff_tree_const(const struct prof_diff *d);

/* The per-side values of node @node of the tree; all zero for an unknown
 * node. */
struct prof_diff_values prof_diff_values(const struct prof_diff *d,
					 uint32_t node);

/* The totals of the two sides (their roots' totals). */
uint64_t prof_diff_total_before(const struct prof_diff *d);
uint64_t prof_diff_total_after(const struct prof_diff *d);

/* The change of share of node @node's total (@self = 0) or self value. */
struct prof_delta prof_diff_node_delta(const struct prof_diff *d,
				       uint32_t node, int self);

/* The significance test of node @node's total (@self = 0) or self value,
 * for profiles in samples. Returns 0 or -EINVAL (unknown node). */
int prof_diff_node_signif(const struct prof_diff *d, uint32_t node, int self,
			  struct prof_signif *out);

/* The diff view's noise filter: 1 when node @node's change of total
 * (@self = 0) or self share is more than noise, else 0. In a profile of
 * samples, that is the two-proportion test at 95%; in other units, a
 * change of share of at least @threshold_pp percentage points (the view's
 * default is 0.1). A node absent on both sides, or a zero total, is never
 * a change. */
int prof_diff_node_real(const struct prof_diff *d, uint32_t node, int self,
			double threshold_pp);

/* ---- functions ranked by change ------------------------------------------ */

/* One function, merged by name from everywhere it appears (recursion
 * counted once in the totals). Process and thread rows are not functions
 * and are left out. */
struct prof_diff_fn {
	uint32_t name; /* string id in prof_diff_tree() */
	uint64_t self_before, self_after;
	uint64_t total_before, total_after;
	struct prof_delta self_delta, total_delta;
	double change; /* p_after − p_before of the ranked value, points */
};

enum prof_rank_by {
	PROF_RANK_TOTAL = 0,
	PROF_RANK_SELF = 1,
};

/* Ranks every function by the largest absolute change of share (in
 * percentage points) of its total or self value, largest first, ties by
 * name. Stores a malloc'd array in *@out (caller frees) and its length in
 * *@n. Returns 0 or -ENOMEM. */
int prof_diff_rank(const struct prof_diff *d, enum prof_rank_by by,
		   struct prof_diff_fn **out, size_t *n);

#endif /* HEARTH_DIFF_H */
