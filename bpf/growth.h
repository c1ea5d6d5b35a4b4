/* SPDX-License-Identifier: MIT */
/*
 * growth: what bpf/growth.bpf.c (the memory system calls) and
 * agent/mem_growth.c both see. Types and limits only, no logic.
 *
 * Each request for more memory (brk that grows the heap, an anonymous
 * mmap, an mremap that grows) is sent with the user registers, a copy of
 * the top of the user stack (unwound with DWARF in user space, never
 * kept) and the frame-pointer walk to splice with.
 */
#ifndef HEARTH_BPF_GROWTH_H
#define HEARTH_BPF_GROWTH_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HEARTH_GROW_DEPTH 127
#define HEARTH_GROW_COMM 16
/* User stack bytes copied per request, in chunks. */
#define HEARTH_GROW_CHUNK 1024
#define HEARTH_GROW_STACK (8 * HEARTH_GROW_CHUNK)

enum hearth_grow_kind {
	HEARTH_GROW_BRK = 0,
	HEARTH_GROW_MMAP = 1,
	HEARTH_GROW_MREMAP = 2,
	HEARTH_GROW_KINDS = 3,
};

/* A request; a struct hearth_grow_copy when within the copy budget. */
struct hearth_grow_event {
	__u32 tgid;
	__u32 tid;
	__u32 kind;   /* enum hearth_grow_kind */
	__u32 size;   /* stack bytes in the copy's data, from sp up; 0: no
		       * copy, the frame-pointer walk alone */
	__u64 bytes;  /* how much more memory */
	__u64 ip, sp, bp; /* user registers at the system call */
	__u32 nfp;    /* addresses in fp_ips */
	__u32 pad;
	char comm[HEARTH_GROW_COMM];  /* process (group leader) name */
	char tcomm[HEARTH_GROW_COMM]; /* thread name */
	__u64 fp_ips[HEARTH_GROW_DEPTH]; /* frame-pointer walk, leaf first */
};

struct hearth_grow_copy {
	struct hearth_grow_event ev;
	__u8 data[HEARTH_GROW_STACK];
};

/* A process whose addresses change meaning (exec) or go (its exit):
 * what user space cached for it is dropped. */
enum hearth_grow_proc_type {
	HEARTH_GROW_EXEC = 1,
	HEARTH_GROW_EXIT = 2,
};

struct hearth_grow_proc {
	__u32 type;   /* enum hearth_grow_proc_type */
	__u32 pid;    /* its tgid */
};

/* Per-CPU counters, indexes into the counters array. */
enum hearth_grow_counter {
	HEARTH_GROW_CNT_BRK = 0,       /* requests sent, by kind */
	HEARTH_GROW_CNT_MMAP,
	HEARTH_GROW_CNT_MREMAP,
	HEARTH_GROW_CNT_BYTES,         /* bytes they asked for */
	HEARTH_GROW_CNT_NO_COPY,       /* sent over the copy budget: no copy */
	HEARTH_GROW_CNT_DROP_EVENTS,   /* ring buffer full: request lost */
	HEARTH_GROW_CNT_MAX,
};

#endif /* HEARTH_BPF_GROWTH_H */
