/* SPDX-License-Identifier: MIT */
/*
 * The profile's inside, shared by profile.c (tables and tree) and sort.c.
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
	uint32_t *last_child; /* per node: its last child, for appending */
	uint32_t nnodes, node_cap;
	struct edge_table edge_index;
	uint32_t edges_indexed; /* nodes 1..edges_indexed-1 are in edge_index */
	int sorted; /* 1 when no node was added since the last prof_sort() */

	/* The last stack added and its nodes: the next stack reuses the
	 * common prefix without lookups (sorted input shares long ones). */
	uint32_t *last_frames, *last_nodes;
	size_t last_n, last_cap;
};

#endif /* HEARTH_PROFILE_IMPL_H */
