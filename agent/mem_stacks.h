/* SPDX-License-Identifier: MIT */
/*
 * mem_stacks: sampled allocations as user space keeps them. Each distinct
 * stack is kept once with the bytes and objects allocated there, each
 * weighed for the chance that its allocation was sampled; each sample
 * keeps its stack and size while it may still be held. Pure code: no
 * BPF, no /proc.
 *
 * Weights: with a mean of N bytes between samples (exponentially
 * distributed), an allocation of s bytes is sampled with probability
 * p = 1 - exp(-s/N); a sample stands for s/p bytes and 1/p objects, so
 * the totals are unbiased.
 */
#ifndef HEARTH_MEM_STACKS_H
#define HEARTH_MEM_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/memory.h"

/* What a sample of @size bytes stands for at a mean of @mean bytes
 * between samples: *@bytes and *@objects (both 0 for size 0). */
void mem_weight(uint64_t size, double mean, double *bytes, double *objects);

/* Fills @out[0..n) with the quantiles (i + 1/2)/n of the exponential
 * distribution of mean @mean, rounded up to whole bytes; the intervals
 * the kernel draws from. Returns their mean, the one weights use. */
double mem_intervals(uint64_t *out, size_t n, uint64_t mean);

/* One distinct stack: of a process (and thread, when per thread). */
struct mem_stack {
	uint32_t tgid, tid;
	char comm[HEARTH_MEM_COMM];
	char tcomm[HEARTH_MEM_COMM];
	uint32_t nu;
	uint32_t next;      /* hash chain: index + 1, 0 = end */
	size_t at;          /* its addresses: ips[at .. at + nu) */
	uint64_t hash;
	double bytes, objects; /* allocated since the last take */
	double held_bytes, held_objects; /* mem_stacks_held()'s */
};

struct mem_sample {
	uint64_t seq;
	uint64_t size;
	uint32_t stack;
	uint32_t passes;    /* held passes it was not live in */
};

struct mem_stacks {
	double mean;
	bool per_thread;
	struct mem_stack *stacks;
	size_t n, cap;
	uint32_t *slots;    /* index + 1, 0 = empty */
	size_t nslots;
	uint64_t *ips;
	size_t nips, capips;
	struct mem_sample *samples;
	size_t nsamples, capsamples;
	bool keep_samples;  /* held is asked for */
};

/* Starts an empty set: weights at @mean bytes between samples; thread
 * rows with @per_thread; samples kept for mem_stacks_held() with
 * @keep_samples. */
void mem_stacks_init(struct mem_stacks *m, double mean, bool per_thread,
		     bool keep_samples);

/* Adds sample @e (ips clamped to HEARTH_MEM_DEPTH). Returns 0 or
 * -ENOMEM (the sample is lost then). */
int mem_stacks_add(struct mem_stacks *m, const struct hearth_mem_event *e);

/* Called with a stack, its addresses (leaf first) and a value. Returns 0
 * to go on, else that value stops the walk and is returned. */
typedef int (*mem_stack_fn)(void *arg, const struct mem_stack *s, const uint64_t *ips,
			    uint64_t bytes, uint64_t objects);

/* Calls @fn for each stack with bytes allocated since the last take,
 * rounded to whole bytes and objects (the fractions are carried to the
 * next take), and starts them again from there. */
int mem_stacks_take(struct mem_stacks *m, mem_stack_fn fn, void *arg);

/* Calls @fn for each stack holding memory: the samples whose numbers are
 * in @live[0..n) (the kernel's live map; any order). Then forgets the
 * samples that were not live in this pass nor the one before (a sample
 * becomes live only when its call returns, after it was sent). Returns
 * 0, -ENOMEM, or what @fn returned. */
int mem_stacks_held(struct mem_stacks *m, const uint64_t *live, size_t n,
		    mem_stack_fn fn, void *arg);

/* Frees everything; @m may be started again. */
void mem_stacks_free(struct mem_stacks *m);

#endif
