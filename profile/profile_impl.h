/* SPDX-License-Identifier: MIT */
/*
 * The profile's inside, shared by profile.c (life cycle and tree), intern.c
 * (strings and frames), build.c (sorting and bulk building) and the folded
 * reader and writer.
 * Not a public interface: other parts use profile.h.
 */
#ifndef HEARTH_PROFILE_IMPL_H
#define HEARTH_PROFILE_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* A frame's place: an address in one of the profile's mappings. */
struct prof_place {
	uint64_t addr;
	uint32_t mapping; /* 0 = not placed */
	uint32_t pad;
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

	/* Where frames were seen (intern.c): mappings interned like frames
	 * (id 0 unused), and per frame id its place; NULL until a frame is
	 * placed, so profiles read from text cost nothing more. */
	struct prof_mapping *mappings;
	uint32_t nmappings, mapping_cap;
	struct id_table mapping_index;
	struct prof_place *places;
	uint32_t place_cap;

	struct prof_node *nodes;
	/* Per node: its last child, for appending; kept only once a node may
	 * be appended (prof_build() leaves it stale: rebuilt from the links
	 * when needed). Room for last_child_cap nodes. */
	uint32_t *last_child;
	uint32_t last_child_cap;
	int last_child_stale;
	uint32_t nnodes, node_cap;
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

/* Asks the kernel to back the 2 MiB-aligned part of @a[0..size) with
 * huge pages when it is big (4 MiB or more); a hint only. */
void prof_want_huge(void *a, size_t size);

/* calloc() that asks for huge pages when the array is big (random access
 * makes each 4 KiB page a TLB miss), at a cache line's start (64 bytes)
 * or more (but for n == 0); free with free(). NULL on ENOMEM. */
void *prof_big_calloc(size_t n, size_t size);

/* Grows an array of @size-byte elements to hold @need elements, doubling
 * *@cap; asks for huge pages with @huge (for arrays read and written in
 * random order). 0, or -ENOMEM with the array unchanged. */
int prof_grow_how(void **arr, uint32_t *cap, uint64_t need, size_t size,
		  int huge);

/* Grows *@arr (capacity *@cap elements of @size bytes, size_t counts)
 * to hold @need elements, doubling; 0, or -ENOMEM with the array
 * unchanged. */
int prof_grow_size(void **arr, size_t *cap, size_t need, size_t size);

/* prof_grow_how() with huge pages asked for. */
int prof_grow(void **arr, uint32_t *cap, uint64_t need, size_t size);

/* Byte @i of frame @f's folded spelling: its name, "_[k]" for a kernel
 * frame, then ';'; -1 past the end. */
int prof_spelled_at(const struct prof_profile *p, const struct prof_frame *f,
		    size_t i);

/* Compares frames @a and @b in prof_sort() order: their folded spellings
 * bytewise (so sorted siblings give folded lines in LC_ALL=C sort order),
 * then module, file, line, kind, class and language. <0, 0 or >0. */
int prof_frame_cmp(const struct prof_profile *p, uint32_t a, uint32_t b);

/* Makes room for @extra more nodes without touching the edge index or
 * the last children (which go stale). Returns 0 or -ENOMEM. */
int prof_nodes_room(struct prof_profile *p, size_t extra);

/* Makes room in last_child for @need nodes (at least every node) and,
 * with @rebuild, makes it hold every node's last child (rebuilt from the
 * links when stale). 0 or -ENOMEM. */
int prof_last_child_ready(struct prof_profile *p, uint64_t need, int rebuild);

/* Stacks queued for prof_build(): each a record of words in one array,
 * its frame count, its value's low and high halves, then its frame ids,
 * root first; a sort item per stack says where its record starts. */
struct prof_item {
	uint64_t key; /* prof_build()'s own */
	uint64_t at;  /* prof_item_at() */
};

/* An item's @at: where its record starts (the low PROF_ITEM_BITS bits)
 * and its frame count, or PROF_ITEM_LEN_MAX when that or more (the
 * record says): once sorted, reading a record only for its count would
 * be a cache miss of its own. */
#define PROF_ITEM_BITS 40u
#define PROF_ITEM_LEN_MAX 0xffffffu

static inline uint64_t prof_item_at(uint64_t word, uint32_t n)
{
	return word | (uint64_t)(n < PROF_ITEM_LEN_MAX ? n : PROF_ITEM_LEN_MAX)
			      << PROF_ITEM_BITS;
}

/* Builds the tree of @p, which has no node but the root, from the stacks
 * @items[0..n) in @rec (each frame id valid): sorted first by their
 * frames in prof_sort() order, so each node is made once, in order, with
 * no lookup. Node ids follow the preorder of the sorted tree; totals and
 * selves equal prof_add_stack() of each stack; so does the sibling order,
 * unless @in_order, which links siblings in prof_sort() order. Records
 * must lie in the stacks' order in @rec. @items is reordered. Returns 0;
 * -EINVAL when @p has nodes; -ENOMEM (then @p is unchanged). */
int prof_build(struct prof_profile *p, const uint32_t *rec,
	       struct prof_item *items, size_t n, int in_order);

/* Runs @fn on each of @n arguments, @size bytes apart from @args, on
 * @n threads (the caller's one of them), and waits for all. A thread that
 * cannot start is run on the caller's after the others. The one place
 * the profile part starts threads: the caller of a bulk load chooses @n. */
void prof_run_parts(void *(*fn)(void *), void *args, size_t size, unsigned n);

/* Folded text's marks, shared by the reader and the writer. */
#define KERNEL_SUFFIX "_[k]"
#define INLINE_SUFFIX "_[i]"
#define SUFFIX_LEN 4
#define UTF8_BOM "\xef\xbb\xbf"

/* 1 when @s[0..len) ends with the 4-byte @suffix after at least one
 * byte of name. */
static inline int prof_ends_with(const char *s, size_t len, const char *suffix)
{
	return SUFFIX_LEN < len &&
	       memcmp(s + len - SUFFIX_LEN, suffix, SUFFIX_LEN) == 0;
}

#endif /* HEARTH_PROFILE_IMPL_H */
