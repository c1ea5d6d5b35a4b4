/* SPDX-License-Identifier: MIT */
/*
 * The profile's inside, shared by profile.c (life cycle and tree), intern.c
 * (strings and frames), sort.c, build.c and the folded reader.
 * Not a public interface: other parts use profile.h.
 */
#ifndef HEARTH_PROFILE_IMPL_H
#define HEARTH_PROFILE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct str_chunk {
	struct str_chunk *next;
	size_t used;
	size_t cap;
	char data[];
};

/* An index: each slot holds an id in its low 32 bits and the low 32 bits
 * of the id's hash in its high 32 (0 = empty, ids are >= 1). The stored
 * hash filters probes and lets the table grow without looking at the
 * entries, whose memory is the cache miss that dominates big profiles.
 * Capacity is a power of two. */
struct id_table {
	uint64_t *slots;
	uint32_t cap;
	uint32_t used;
};

/* The tree's edge index: each slot holds the key (parent node, frame)
 * beside the child's id (0 = empty), so a lookup reads one slot and never
 * the node, whose memory is a second cache miss on big trees. Capacity is
 * a power of two; the load factor stays under 3/4. */
struct edge_slot {
	uint32_t parent;
	uint32_t frame;
	uint32_t id;
	uint32_t pad;
};

struct edge_table {
	struct edge_slot *slots;
	uint32_t cap;
	uint32_t used;
};

struct prof_profile {
	struct prof_meta meta;

	struct str_chunk *chunks;
	const char **strs;
	uint32_t *str_len;
	uint32_t nstr, str_cap;
	struct id_table str_index;

	struct prof_frame *frames;
	uint32_t nframes, frame_cap;
	struct id_table frame_index;

	struct prof_node *nodes;
	/* Per node: its last child, for appending; kept only once a node may
	 * be appended (prof_build() leaves it stale: rebuilt from the links
	 * when needed). Room for last_child_cap nodes. */
	uint32_t *last_child;
	uint32_t last_child_cap;
	int last_child_stale;
	uint32_t nnodes, node_cap;
	/* Nodes whose pages were faulted in ahead of being made (by the
	 * folded parser's helper); those past nnodes are given back by
	 * prof_nodes_release_unused(). */
	uint32_t nodes_faulted;
	struct edge_table edge_index;
	uint32_t edges_indexed; /* nodes 1..edges_indexed-1 are in edge_index */
	int sorted; /* 1 when no node was added since the last prof_sort() */
	/* 1 when the node ids follow the preorder of the sorted tree (as
	 * prof_build() makes them), so sorting relinks in id order; cleared
	 * when a node is appended. */
	int pre_sorted;

	/* The last stack added and its nodes: the next stack reuses the
	 * common prefix without lookups (sorted input shares long ones). */
	uint32_t *last_frames, *last_nodes;
	size_t last_n, last_cap;
};

/* Smallest capacity of an index table. */
#define MIN_TABLE 64u

/* A 64-bit mixer (splitmix64's finalizer): every input bit moves every
 * output bit, so low bits of the result index tables well. */
static inline uint64_t prof_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* calloc() that asks for huge pages when the array is big (random access
 * makes each 4 KiB page a TLB miss), at a cache line's start (64 bytes)
 * or more (but for n == 0); free with free(). NULL on ENOMEM. */
void *prof_big_calloc(size_t n, size_t size);

/* Grows an array of @size-byte elements to hold @need elements, doubling
 * *@cap; asks for huge pages with @huge (for arrays read and written in
 * random order). 0, or -ENOMEM with the array unchanged. */
int prof_grow_how(void **arr, uint32_t *cap, uint64_t need, size_t size,
		  int huge);

/* prof_grow_how() with huge pages asked for. */
int prof_grow(void **arr, uint32_t *cap, uint64_t need, size_t size);

/* A frame to intern by its name's bytes (prof_intern_frames()): its
 * other fields are 0. */
struct prof_frame_text {
	const char *name;
	size_t len;
	uint8_t kind; /* enum prof_frame_kind */
};

/* Interns the frames @in[0..n) as prof_intern() of each name then
 * prof_frame_intern() of each frame would, in that order (same ids);
 * @ids[i] gets the frame of @in[i]. For bulk loads: room is made once,
 * and index slots are asked for a few entries before they are read.
 * 0, or -ENOMEM (some may be interned then, @ids is undefined). */
int prof_intern_frames(struct prof_profile *p,
		       const struct prof_frame_text *in, size_t n,
		       uint32_t *ids);

/* For bulk loads (the folded parser): finds or makes the path
 * @frames[0..n) like prof_add_stack() but leaves every total and self
 * alone, so the path's nodes need not be read. Returns the leaf (0 for
 * n == 0), or UINT32_MAX when out of memory or for an unknown frame. The
 * caller then passes the leaves to prof_add_values(). */
uint32_t prof_path_get(struct prof_profile *p, const uint32_t *frames,
		       size_t n);

/* Adds @values[i] to the self of node @leaves[i] (valid ids) and to the
 * total of it and every ancestor, for each i < @count, in one pass over
 * the nodes (walking up from each leaf when out of memory for it). Values
 * saturate. The result equals prof_add_stack() per leaf. */
void prof_add_values(struct prof_profile *p, const uint32_t *leaves,
		     const uint64_t *values, size_t count);

/* Makes room for @extra more nodes without touching the edge index or
 * the last children (which go stale). Returns 0 or -ENOMEM. */
int prof_nodes_room(struct prof_profile *p, size_t extra);

/* Makes room in last_child for @need nodes (at least every node) and,
 * with @rebuild, makes it hold every node's last child (rebuilt from the
 * links when stale). 0 or -ENOMEM. */
int prof_last_child_ready(struct prof_profile *p, uint64_t need, int rebuild);

/* Gives back the pages of the nodes faulted in ahead (nodes_faulted) that
 * hold no node, and forgets them. */
void prof_nodes_release_unused(struct prof_profile *p);

/* Builds the tree of @p, which has no node but the root, from @nstacks
 * stacks queued in @rec[0..len): per stack its frame count n, the low
 * and high 32 bits of its value, then its n frame ids, root first.
 * The stacks are sorted first, so each node is made once, in order, with
 * no lookup: node ids follow the preorder of the sorted tree, and sorting
 * later costs one pass. Totals and selves equal prof_add_stack() of each
 * stack in turn; so does the sibling order, unless @in_order, which links
 * siblings in prof_sort() order (for callers that sort anyway). The nodes
 * join the edge index when a lookup needs it. @rec is only read; @lend
 * (or NULL) is memory lent for the sort (struct prof_scratch).
 * Returns 0; -EINVAL when @p has nodes or a record is malformed or names
 * an unknown frame; -ENOMEM. On error @p is unchanged. */
struct prof_scratch;
int prof_build(struct prof_profile *p, const uint32_t *rec, size_t len,
	       size_t nstacks, int in_order, const struct prof_scratch *lend);

/* What a caller lends prof_build(). Memory for its sort, which then
 * needs no fresh memory (on this kind of machine the kernel's handing
 * out of fresh pages is a good part of a big load): @bytes at @mem, any
 * content, 8-byte aligned; prof_build() uses it when it holds the sort's
 * two arrays (32 bytes a stack), and never frees it. @ranks (or NULL):
 * the frames' ranks, started ahead (prof_ranks_start()); prof_build()
 * takes them (frees them) and uses them when they were started for
 * the profile it builds (else it ranks the frames itself). */
struct prof_ranks;
struct prof_scratch {
	void *mem;
	size_t bytes;
	struct prof_ranks *ranks;
};

/* Starts ranking the frames of @p (as prof_build() does first) on a
 * thread of its own, so that a caller with other work before
 * prof_build() of @nstacks stacks need not wait for it there: @p must
 * not change until the ranks go to prof_build() or prof_ranks_free()
 * (the thread reads its frames and names).
 * NULL when too few stacks are to come for a thread to pay, out of
 * memory, or no thread starts (prof_build() ranks the frames then). */
struct prof_ranks *prof_ranks_start(const struct prof_profile *p,
				    size_t nstacks);

/* Waits for the ranking @r (NULL: none) and frees it. */
void prof_ranks_free(struct prof_ranks *r);

/* The bytes of lent memory prof_build() uses for @nstacks stacks. */
size_t prof_build_scratch_bytes(size_t nstacks);

#endif /* HEARTH_PROFILE_IMPL_H */
