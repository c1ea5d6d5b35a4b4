/* SPDX-License-Identifier: MIT */
/*
 * What the sampler's BPF programs and user space both see: map keys,
 * values, events and limits. Types only, no logic.
 */
#ifndef HEARTH_BPF_SAMPLER_H
#define HEARTH_BPF_SAMPLER_H

#define HEARTH_STACK_DEPTH 127
#define HEARTH_COMM_LEN 16

/* What a counts entry measures. */
enum hearth_sample_kind {
	HEARTH_ON_CPU = 0,
	HEARTH_OFF_CPU_VOLUNTARY = 1,   /* sleep, I/O, lock: the task chose to wait */
	HEARTH_OFF_CPU_INVOLUNTARY = 2, /* preempted: runnable, waiting for a CPU */
};

/* Aggregation key. Stack ids refer to the stack map of generation gen. */
struct hearth_key {
	__u32 tgid;
	__u32 pid;
	__s32 kstack; /* < 0: none or lost */
	__s32 ustack;
	__u32 kind;   /* enum hearth_sample_kind */
	__u32 gen;    /* 0 or 1: which stack map holds the ids */
};

struct hearth_value {
	__u64 count; /* samples, or waits */
	__u64 ns;    /* off-CPU: blocked nanoseconds */
	char comm[HEARTH_COMM_LEN];  /* process (group leader) name */
	char tcomm[HEARTH_COMM_LEN]; /* thread name */
};

/* Where a thread went to sleep, kept until it runs again. */
struct hearth_offcpu_start {
	__u64 ts;
	__s32 kstack;
	__s32 ustack;
	__u32 gen;
	__u32 kind;
};

/* Per-CPU counters, indexes into the counters array. */
enum hearth_counter {
	HEARTH_CNT_SAMPLES = 0,      /* on-CPU samples recorded */
	HEARTH_CNT_IDLE,             /* on-CPU samples of the idle task */
	HEARTH_CNT_FILTERED,         /* samples outside the pid/comm filter */
	HEARTH_CNT_OFFCPU,           /* off-CPU waits recorded */
	HEARTH_CNT_DROP_KSTACK,      /* kernel stack lost (collision, full) */
	HEARTH_CNT_DROP_USTACK,      /* user stack lost */
	HEARTH_CNT_DROP_MAP_FULL,    /* counts map full: sample lost */
	HEARTH_CNT_DROP_START_FULL,  /* off-CPU start map full: wait lost */
	HEARTH_CNT_DROP_EVENTS,      /* ring buffer full: process event lost */
	HEARTH_CNT_MAX,
};

enum hearth_event_type {
	HEARTH_EV_EXEC = 1,
	HEARTH_EV_FORK = 2,
	HEARTH_EV_EXIT = 3,
};

/* A process lifecycle event, so user space caches mappings while the
 * process still lives. */
struct hearth_proc_event {
	__u32 type;
	__u32 pid;  /* tgid of the process concerned */
	__u32 ppid; /* fork: the parent's tgid */
	char comm[HEARTH_COMM_LEN];
};

#endif /* HEARTH_BPF_SAMPLER_H */
