/* SPDX-License-Identifier: MIT */
/*
 * What the sampler's BPF programs and user space both see: map keys,
 * values, events and limits. Types only, no logic.
 */
#ifndef HEARTH_BPF_SAMPLER_H
#define HEARTH_BPF_SAMPLER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define HEARTH_STACK_DEPTH 127
#define HEARTH_COMM_LEN 16

/* What a counts entry measures. */
enum hearth_sample_kind {
	HEARTH_ON_CPU = 0,
	HEARTH_OFF_CPU_VOLUNTARY = 1,   /* sleep, I/O, lock: the task chose to wait */
	HEARTH_OFF_CPU_INVOLUNTARY = 2, /* preempted: runnable, waiting for a CPU */
	/* A wait begun before the capture: user space put its start in
	 * offcpu_start (no stacks) and holds the thread's stacks. */
	HEARTH_OFF_CPU_EDGE = 3,
};

/* Who woke a wait (--waker): the waking task's stacks, in the stack maps
 * of gen (the side active at the wake-up, not the wait's), and its
 * process. All zero (seen 0) when no waker was noted. */
struct hearth_waker {
	__s32 kstack;
	__s32 ustack;
	__u32 tgid;
	__u16 seen;
	__u16 gen;
};

/* Aggregation key. Stack ids refer to the stack map of generation gen. */
struct hearth_key {
	__u32 tgid;
	__u32 pid;
	__s32 kstack; /* < 0: none or lost */
	__s32 ustack;
	__u32 kind;   /* enum hearth_sample_kind */
	__u32 gen;    /* 0 or 1: which stack map holds the ids */
	__u64 py;     /* Python stack: its key in py_stacks, 0 = none */
	struct hearth_waker waker; /* off-CPU with --waker, else zero */
};

struct hearth_value {
	__u64 count; /* samples, or waits */
	__u64 ns;    /* off-CPU: blocked nanoseconds */
	char comm[HEARTH_COMM_LEN];  /* process (group leader) name */
	char tcomm[HEARTH_COMM_LEN]; /* thread name */
};

/* Identifies a thread's user call path at a wait without copying its
 * stack: the registers plus a hash of the top of the stack, where the
 * return addresses of the innermost frames are. The first wait with a new
 * signature is copied and unwound; later ones reuse that unwind.
 * Limit: two call paths of one thread that reach the same wait with equal
 * registers and equal innermost 1 KiB (e.g. a frame with a large local
 * buffer right above the wait, entered from two callers at the same
 * depth) share a signature, and the second borrows the first's callers. */
#define HEARTH_SIG_WINDOW 1024

struct hearth_sig {
	__u32 tgid;
	__u32 tid;
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 hash;
};

/* Aggregation key of waits whose user stack is known by signature. */
struct hearth_sig_key {
	struct hearth_sig sig;
	__s32 kstack; /* in the stack map of gen */
	__s32 ustack; /* FP walk, when the signature's unwind is gone */
	__u32 kind;
	__u32 gen;
	__u64 py;     /* as in hearth_key */
	struct hearth_waker waker; /* as in hearth_key */
};

/* Where a thread went to sleep, kept until it runs again. */
struct hearth_offcpu_start {
	__u64 ts;
	__s32 kstack;
	__s32 ustack;
	__u32 gen;
	__u32 kind;
	__u32 has_copy; /* a hearth_stack_copy waits in offcpu_copies */
	__u32 sig_hit;  /* the user stack is the one unwound for sig */
	struct hearth_sig sig;
	__u64 py;       /* the Python stack where it stopped */
	struct hearth_waker waker; /* who woke it, once woken (--waker) */
};

/* DWARF mode: the most user stack bytes copied per sample, in chunks. */
#define HEARTH_STACK_CHUNK 1024
#define HEARTH_MAX_STACK_BYTES (16 * HEARTH_STACK_CHUNK)

/* User registers an unwinder starts from (x86-64). */
struct hearth_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp;
};

/* A sample whose user stack was copied for unwinding in user space. The
 * bytes are unwound and dropped: never stored, logged or sent. */
struct hearth_stack_event {
	__u32 tgid;
	__u32 pid;
	__u32 kind;   /* enum hearth_sample_kind */
	__u32 size;   /* bytes of data[] that are valid, from regs.sp up */
	__u64 value;  /* 1 sample, or blocked nanoseconds */
	struct hearth_regs regs;
	__u32 nk;     /* kernel frames in kips */
	__u32 nu;     /* frame-pointer walk frames in fp_ips */
	struct hearth_sig sig; /* off-CPU: remember this unwind (tgid != 0) */
	__u64 py;     /* Python stack in py_stacks, 0 = none */
	struct hearth_waker waker; /* off-CPU: who woke it (--waker) */
	char comm[HEARTH_COMM_LEN];
	char tcomm[HEARTH_COMM_LEN];
	__u64 kips[HEARTH_STACK_DEPTH];
	__u64 fp_ips[HEARTH_STACK_DEPTH]; /* the FP walk, to splice with */
	__u8 data[HEARTH_MAX_STACK_BYTES];
};

/* A thread's stack copied at switch-out, kept until it runs again. */
struct hearth_stack_copy {
	struct hearth_regs regs;
	__u32 size;
	__u32 nk;
	__u32 nu;
	__u32 pad;
	__u64 py;
	__u64 kips[HEARTH_STACK_DEPTH];
	__u64 fp_ips[HEARTH_STACK_DEPTH];
	__u8 data[HEARTH_MAX_STACK_BYTES];
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
	HEARTH_CNT_STACK_COPIES,     /* samples sent with a user stack copy */
	HEARTH_CNT_COPY_FALLBACK,    /* copy wanted but full/limited: FP walk used */
	HEARTH_CNT_COPY_TRUNCATED,   /* copy shorter than asked (stack end) */
	HEARTH_CNT_SIG_HITS,         /* waits that reused an earlier unwind */
	HEARTH_CNT_WRITES,           /* program runs that wrote a counts or
				      * stack map: user space skips a side
				      * nothing wrote to */
	HEARTH_CNT_PY_STACKS,        /* samples of Python threads with their
				      * Python stack */
	HEARTH_CNT_DROP_PY,          /* a Python stack could not be read
				      * or kept */
	HEARTH_CNT_DROP_CHILD,       /* a chosen process's child not followed:
				      * the pid filter is full */
	HEARTH_CNT_CFI_WALKS,        /* user stacks walked whole in the kernel */
	HEARTH_CNT_CFI_NO_TABLE,     /* walk fell back: process or module table
				      * not loaded (yet) */
	HEARTH_CNT_CFI_NO_RULE,      /* walk fell back: a row needs more (or
				      * none covers the pc), or a read failed */
	HEARTH_CNT_CFI_COLLISION,    /* walk fell back: walked map key taken by
				      * another stack, or the map is full */
	HEARTH_CNT_WAIT_REUSED,      /* waits that replayed their thread's last
				      * wait's walk (struct walk_memo) */
	HEARTH_CNT_SAMPLE_NS,        /* time_samples: ns the on-CPU program
				      * spent in the runs that recorded a
				      * sample (filtered and idle runs left
				      * out) */
	/* Per sample or wait recorded (DROP_KSTACK/USTACK count stacks,
	 * also those of waits too short to record): */
	HEARTH_CNT_LOST_COLLISION,   /* a stack lost: its slot held another
				      * stack (HEARTH_STACK_COLLISION) */
	HEARTH_CNT_LOST_STACK_FULL,  /* a stack lost: the stack map was full
				      * (HEARTH_STACK_FULL) */
	HEARTH_CNT_LOST_UNKEPT,      /* counts map full and the lost map too:
				      * gone from every profile */
	HEARTH_CNT_COPY_RING_FULL,   /* of COPY_FALLBACK: the copy ring had
				      * no room (the rest: the copy budget) */
	HEARTH_CNT_CFI_REPLAYED,     /* on-CPU samples that replayed their
				      * thread's last walk (not in CFI_WALKS) */
	HEARTH_CNT_MAX,
};

/* A stack id that is no stack: why it was lost (any other negative id is
 * no stack at all, as a kernel thread's user stack). */
#define HEARTH_STACK_COLLISION (-17) /* -EEXIST: its slot held another */
#define HEARTH_STACK_FULL (-12)      /* -ENOMEM: the map was full */
/* Both ids of a lost-map key: the counts map was full, so the sample
 * or wait was counted per thread in the lost map instead. */
#define HEARTH_STACK_NO_ROOM (-28)   /* -ENOSPC */

enum hearth_event_type {
	HEARTH_EV_EXEC = 1,
	HEARTH_EV_FORK = 2,
	HEARTH_EV_EXIT = 3,
	HEARTH_EV_CFI_MISS = 4, /* the walker lacks this process's tables, or
				 * met an address outside them (dlopen) */
};

/* A process lifecycle event, so user space caches mappings while the
 * process still lives. */
struct hearth_proc_event {
	__u32 type;
	__u32 pid;  /* tgid of the process concerned */
	__u32 ppid; /* fork: the parent's tgid */
	char comm[HEARTH_COMM_LEN];
	__u64 exec_id; /* the process image's task->self_exec_id */
};

#endif /* HEARTH_BPF_SAMPLER_H */
