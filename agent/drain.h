/* SPDX-License-Identifier: MIT */
/*
 * drain: what the sampler's drain keeps from one drain to the next, so a
 * drain skips the maps nothing wrote to and reads each stack once.
 * Private to the sampler (sampler.c, drain.c), but for
 * sampler_module_cache(), which hearthd's status asks.
 */
#ifndef HEARTH_DRAIN_H
#define HEARTH_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Stacks read in one drain, by side and stack id. */
struct stack_reads {
	uint32_t *at[2];  /* id -> 1 + offset in ips of its length, 0 = not read */
	uint32_t nids;    /* ids per side (the stack maps' size) */
	uint64_t *ips;    /* per stack read: its length, then its addresses */
	size_t len, cap;
};

struct drain_state {
	/* The BPF programs' write counter, read just before the flip that
	 * made each side active: a side is empty when the counter read after
	 * the next flip (and its grace) is still the same. */
	uint64_t writes_at_flip[2];
	bool known[2];      /* writes_at_flip[side] was read */
	struct stack_reads reads;
};

/* Frees what @d holds. */
void drain_state_free(struct drain_state *d);

struct sampler;

/* The symbolizer's module cache, for hearthd's status. */
struct sampler_module_cache {
	uint64_t modules;   /* modules held */
	uint64_t bytes;     /* memory they take, as the budget counts it */
	uint64_t limit;     /* the budget past which the least recently used go */
	uint64_t evictions; /* modules evicted to stay within it */
};

/* Fills @mc with what the sampler's symbolizer caches now. The sampler
 * must be open; reads only. */
void sampler_module_cache(const struct sampler *s, struct sampler_module_cache *mc);

#endif
