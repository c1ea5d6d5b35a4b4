/* SPDX-License-Identifier: MIT */
/*
 * threads: what bpf/threads.bpf.c, a task iterator, writes for each
 * thread it visits, and agent/thread_iter.c reads. Types only.
 *
 * Each record is a struct hearth_thread header followed by `size` bytes
 * of the thread's user stack, from its saved user stack pointer up,
 * which user space unwinds and drops (never stored, logged or sent).
 */
#ifndef HEARTH_BPF_THREADS_H
#define HEARTH_BPF_THREADS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HEARTH_THREAD_DEPTH 127
#define HEARTH_THREAD_COMM 16
#define HEARTH_THREAD_CHUNK 1024
#define HEARTH_THREAD_STACK (16 * HEARTH_THREAD_CHUNK)

/* What the thread was doing when the iterator saw it. */
enum hearth_thread_state {
	HEARTH_THREAD_RUNNING = 0,  /* on a CPU */
	HEARTH_THREAD_RUNNABLE = 1, /* ready, waiting for a CPU */
	HEARTH_THREAD_BLOCKED = 2,  /* asleep: waiting for something */
};

/* What the start's pass did with a thread's start (edge_ts set). */
enum hearth_thread_noted {
	HEARTH_THREAD_NOT_NOTED = 0,  /* running, or the sampler has one */
	HEARTH_THREAD_NOTED = 1,      /* given a start as of edge_ts */
	HEARTH_THREAD_NOTE_FULL = 2,  /* offcpu_start had no room */
};

struct hearth_thread {
	__u32 tgid;
	__u32 tid;
	__u32 state;    /* enum hearth_thread_state */
	__u32 nk;       /* kernel frames in kips (none while running) */
	__u64 switches; /* context switches so far, voluntary or not */
	__u64 ip, sp, bp; /* user registers saved at its kernel entry */
	__u32 size;     /* user stack bytes that follow the header */
	__u32 unmoved;  /* asleep since the start's pass noted it (its
			 * start in offcpu_start is still of that pass):
			 * stacks not read again */
	__u32 noted;    /* enum hearth_thread_noted */
	__u32 pad;
	char comm[HEARTH_THREAD_COMM];  /* its process's (group leader's) */
	char tcomm[HEARTH_THREAD_COMM]; /* its own */
	__u64 kips[HEARTH_THREAD_DEPTH];
};

#endif /* HEARTH_BPF_THREADS_H */
