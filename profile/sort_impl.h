/* SPDX-License-Identifier: MIT */
/*
 * Sorting helpers shared by sort.c and build.c. Not a public interface.
 */
#ifndef HEARTH_SORT_IMPL_H
#define HEARTH_SORT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* A sort item: a key and what it stands for (a frame, or a path's
 * record). */
struct kv {
	uint64_t key;
	uint64_t val;
};

/* Sorts @a[0..n) by key, stable: least significant byte first, skipping
 * the bytes where every key agrees. @tmp has room for n. */
void sort_kv(struct kv *a, struct kv *tmp, size_t n);

/* Numbers every frame of @p in prof_sort() order: @rank[f] (1-based;
 * frame 0, the root's, gets 0) and @by_rank[r] = f, each with room for
 * every frame. 0 or -ENOMEM. */
int sort_frame_ranks(const struct prof_profile *p, uint32_t *rank,
		     uint32_t *by_rank);

#endif /* HEARTH_SORT_IMPL_H */
