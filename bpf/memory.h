/* SPDX-License-Identifier: MIT */
/*
 * memory: what bpf/memory.bpf.c (uprobes on an allocator's functions)
 * and agent/memory.c both see. Types and limits only, no logic.
 *
 * Allocations are sampled by bytes: each thread counts down a random
 * number of bytes (exponential, mean sample_mean) and the allocation that
 * takes the count to zero or below is sampled, with its user stack, as
 * tcmalloc and Go do. User space weighs each sample by its size.
 */
#ifndef HEARTH_BPF_MEMORY_H
#define HEARTH_BPF_MEMORY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HEARTH_MEM_DEPTH 127
#define HEARTH_MEM_COMM 16
/* Intervals between samples drawn from this many quantiles of the
 * exponential distribution (a power of two). */
#define HEARTH_MEM_INTERVALS 4096
/* Sampled allocations still held that the kernel tracks at once. */
#define HEARTH_MEM_LIVE 262144

/* The functions probed; the attach cookie of each probe. */
enum hearth_mem_fn {
	HEARTH_MEM_MALLOC = 0,
	HEARTH_MEM_CALLOC = 1,
	HEARTH_MEM_REALLOC = 2,
	HEARTH_MEM_POSIX_MEMALIGN = 3,
	HEARTH_MEM_ALIGNED_ALLOC = 4,
	HEARTH_MEM_MEMALIGN = 5,
	HEARTH_MEM_FREE = 6,
	HEARTH_MEM_FN_COUNT = 7,
};

/* A sampled allocation, sent when it is made (at the function's entry).
 * ips: the user stack, leaf first: the allocator's entry, then its
 * caller (the return address the call left on the stack), then the
 * frame-pointer walk from the caller's frame. */
struct hearth_mem_event {
	__u32 tgid;
	__u32 tid;
	__u32 fn;       /* enum hearth_mem_fn */
	__u32 nu;       /* addresses in ips */
	__u64 size;     /* bytes asked for */
	__u64 seq;      /* this sample's number: the key of its address in
			 * the live map */
	char comm[HEARTH_MEM_COMM];  /* process (group leader) name */
	char tcomm[HEARTH_MEM_COMM]; /* thread name */
	__u64 ips[HEARTH_MEM_DEPTH];
};

/* A sampled allocation not freed yet, by process and address. */
struct hearth_mem_live_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;
};

struct hearth_mem_live {
	__u64 seq;  /* its hearth_mem_event */
	__u64 size;
};

/* Per-CPU counters, indexes into the counters array. */
enum hearth_mem_counter {
	HEARTH_MEM_CNT_CALLS = 0,    /* allocator calls seen */
	HEARTH_MEM_CNT_BYTES,        /* bytes those calls asked for */
	HEARTH_MEM_CNT_SAMPLES,      /* allocations sampled */
	HEARTH_MEM_CNT_FREES,        /* frees of a sampled allocation */
	HEARTH_MEM_CNT_DROP_EVENTS,  /* ring buffer full: sample lost */
	HEARTH_MEM_CNT_DROP_LIVE,    /* live map full: a held sample lost */
	HEARTH_MEM_CNT_DROP_STATE,   /* no per-thread state: call not counted */
	HEARTH_MEM_CNT_MAX,
};

#endif /* HEARTH_BPF_MEMORY_H */
