/* SPDX-License-Identifier: MIT */
/*
 * Sorting and building helpers shared by sort.c, rank.c, build.c,
 * build_ahead.c and their tests. Not a public interface.
 */
#ifndef HEARTH_SORT_IMPL_H
#define HEARTH_SORT_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "profile_impl.h"

/* A sort item: a key and what it stands for (a frame, or a path's
 * record). */
struct kv {
	uint64_t key;
	uint64_t val;
};

/* A path's item (sort_paths(), prof_build()): its val holds where its
 * record starts in the low KV_REC_BITS bits and its frame count above
 * them, or KV_LEN_MAX when the count is that or more (the record then
 * says): once the items are sorted, a record read only for its count
 * was a cache miss of its own. */
#define KV_REC_BITS 40u
#define KV_LEN_MAX 0xffffffu

static inline uint64_t kv_path(uint64_t o, uint32_t n)
{
	return o | (uint64_t)(n < KV_LEN_MAX ? n : KV_LEN_MAX) << KV_REC_BITS;
}

static inline uint64_t kv_rec(uint64_t val)
{
	return val & ((1ull << KV_REC_BITS) - 1);
}

static inline uint32_t kv_len(const uint32_t *rec, uint64_t val)
{
	uint32_t n = (uint32_t)(val >> KV_REC_BITS);

	return n < KV_LEN_MAX ? n : rec[kv_rec(val)];
}

/* Sorts @a[0..n) by key, stable: least significant byte first, skipping
 * the bytes where every key agrees; 65,536 items or more are first split
 * by their top 11 differing key bits, each range then sorted by bytes in
 * the cache. @tmp has room for n. */
void sort_kv(struct kv *a, struct kv *tmp, size_t n);

/* Compares frames @a and @b of @p in prof_sort() order: by their folded
 * spelling (bytewise, as LC_ALL=C sort orders folded lines), then module,
 * file, line, kind, class and language. <0, 0 (the same frame) or >0. */
int sort_frame_cmp(const struct prof_profile *p, uint32_t a, uint32_t b);

/* Numbers every frame of @p in prof_sort() order (rank.c): @rank[f] (1-based;
 * frame 0, the root's, gets 0) and @by_rank[r] = f, each with room for
 * every frame. 0 or -ENOMEM. */
int sort_frame_ranks(const struct prof_profile *p, uint32_t *rank,
		     uint32_t *by_rank);

/* Codes of the frames met at depths 0 and 1 (processes, then their entry
 * points: few in real profiles), dense in rank order from 1: the first
 * key of sort_paths() holds them in few bits, so it holds more frames.
 * code[d] NULL: none for depth d. */
struct path_codes {
	const uint32_t *code[2];
	uint32_t count[2];
};

/* Numbers the frames @f with @seen[f] nonzero in rank order (@by_rank
 * from sort_frame_ranks(), @nframes frames) from 1 into @code[f] (0 for
 * the others). Returns how many. */
uint32_t sort_frame_codes(const uint8_t *seen, const uint32_t *by_rank,
			  uint32_t nframes, uint32_t *code);

/* Sorts the paths @a[0..n) (each val a kv_path() of the offset in @rec of
 * a record: its frame count n, its value's two 32-bit halves, then its n
 * frame ids) by
 * their frames' @rank (largest @top), in prof_sort() order, a path
 * before the paths it leads to. @codes (or NULL) must cover every frame
 * the paths hold at depths 0 and 1. Then each @a[i].key holds in its low 32
 * bits how many leading frames path i shares with path i - 1 (0 for
 * i = 0), in its high 32 bits path i's frame count. @tmp has
 * room for n. Uses a second thread on big inputs, after a first step on
 * one (*@first_done is set to 1 then, unless @first_done is NULL). 0 or
 * -ENOMEM (@a is then unchanged). */
int sort_paths(const uint32_t *rec, const uint32_t *rank, uint32_t top,
	       const struct path_codes *codes, struct kv *a, struct kv *tmp,
	       size_t n, atomic_int *first_done);

/* The helper thread that faults in the node array ahead of the builder
 * (build_ahead.c). */
struct build_ahead {
	char *nodes;
	size_t from, cap;   /* node indexes */
	atomic_size_t at;   /* nodes before it are faulted in */
	atomic_size_t made; /* nodes the builder made so far */
	/* While the sort's first step runs on one core (first_done 0), the
	 * helper may fault in up to @lead_first nodes; then AHEAD ahead of
	 * @made. */
	atomic_int first_done;
	size_t lead_first;
	atomic_int done;
	int running;
	pthread_t th;
};

/* Starts the helper for the node array of @p, which has room for @cap
 * nodes (at most @cap - nnodes new ones; a tree that big rarely makes
 * fewer than half as many), if the array is big enough to pay. 1 when it
 * runs, else 0. */
int build_ahead_start(struct build_ahead *h, struct prof_profile *p,
		      size_t cap);

/* Stops the helper (if it runs) and notes in @p what it faulted in, given
 * back by prof_nodes_release_unused(). Returns the node index below which
 * every page is faulted in (0 when it did not run). */
size_t build_ahead_stop(struct build_ahead *h, struct prof_profile *p);

/* Faults in the pages of nodes [@lo, @hi) of @p (room made already).
 * 0, or a negative errno (-ENOSYS where the kernel interface is missing). */
int build_populate(struct prof_profile *p, size_t lo, size_t hi);

/* prof_build() with the in-order stacks cut in two parts at stack @cut,
 * built on two threads (0: one part; BUILD_CUT_AUTO: as prof_build()
 * chooses). For tests, which compare the parts' tree with one part's. */
#define BUILD_CUT_AUTO ((size_t)-1)
int prof_build_cut(struct prof_profile *p, const uint32_t *rec, size_t len,
		   size_t nstacks, int in_order, size_t cut,
		   const struct prof_scratch *lend);

#endif /* HEARTH_SORT_IMPL_H */
