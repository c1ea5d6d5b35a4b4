// SPDX-License-Identifier: GPL-2.0
/*
 * threads: every user thread of the chosen processes as it is now, from a
 * sleepable task iterator: its state, its switch count, its kernel stack,
 * its saved user registers and a copy of the top of its user stack. A
 * thread asleep since before a capture began never switches during it,
 * so the scheduler's tracepoints never see it: this is how it is found.
 */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpf/comm.h"
#include "bpf/sampler.h"
#include "bpf/threads.h"
#include "bpf/pid_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0
#define PF_EXITING 0x4
#define PF_KTHREAD 0x00200000
#define STACK_PAGE 4096

const volatile bool filter_comm = false;
const volatile char target_comm[HEARTH_THREAD_COMM] = {};
const volatile __u32 stack_bytes = HEARTH_THREAD_STACK;
/* Set by user space for the end's pass: a thread whose start is still
 * the one the start's pass gave it has the stacks noted then. */
bool skip_unmoved = false;
/* Set by user space for the start's pass: each thread off its CPU gets
 * a start in offcpu_start as of edge_ts, on the sampler's side
 * edge_gen, unless the sampler holds one. Given here, as the thread is
 * seen off its CPU, not later from user space: a thread that wakes
 * meanwhile would find no start, and the time it slept since edge_ts
 * would be lost. */
__u64 edge_ts = 0;
__u32 edge_gen = 0;


/* The sampler's open waits, shared with it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct hearth_offcpu_start);
	__uint(max_entries, 1);
} offcpu_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_thread);
	__uint(max_entries, 1);
} rec_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u8[HEARTH_THREAD_STACK + 2 * STACK_PAGE]);
	__uint(max_entries, 1);
} stack_scratch SEC(".maps");

static __always_inline bool wanted(struct task_struct *task, __u32 tgid,
				   struct hearth_thread *r)
{
	if (!pid_wanted(tgid))
		return false;
	return !filter_comm || hearth_comm_is(r->tcomm, target_comm, HEARTH_THREAD_COMM) ||
	       hearth_comm_is(r->comm, target_comm, HEARTH_THREAD_COMM);
}

/* Copies up to stack_bytes of @task's user stack from @sp into @dst, a
 * page at a time (one remote access each: most of what a pass costs), up
 * to the end of its mapping. Returns the bytes. */
static __always_inline __u32 copy_user_stack(struct task_struct *task, __u8 *dst, __u64 sp)
{
	__u32 got = 0;

	for (int i = 0; i < HEARTH_THREAD_STACK / STACK_PAGE + 1; i++) {
		__u64 at = sp + got;
		__u32 n = STACK_PAGE - (__u32)(at & (STACK_PAGE - 1));

		if (got >= stack_bytes || got >= HEARTH_THREAD_STACK)
			break;
		if (n > stack_bytes - got)
			n = stack_bytes - got;
		/* (masks the verifier follows: n is a page at most, and the
		 * scratch has two to spare past HEARTH_THREAD_STACK) */
		if (bpf_copy_from_user_task(dst + (got & (HEARTH_THREAD_STACK - 1)),
					    n & (2 * STACK_PAGE - 1), (void *)at, task, 0))
			break;
		got += n;
	}
	return got < HEARTH_THREAD_STACK ? got : HEARTH_THREAD_STACK;
}

SEC("iter.s/task")
int snap_threads(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct hearth_thread *r;
	struct pt_regs *regs;
	__u32 zero = 0, size;
	__u8 *data;
	long nk;

	if (!task || (task->flags & (PF_KTHREAD | PF_EXITING)) || !task->mm)
		return 0;
	r = bpf_map_lookup_elem(&rec_scratch, &zero);
	data = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!r || !data)
		return 0;
	r->tgid = task->tgid;
	r->tid = task->pid;
	BPF_CORE_READ_STR_INTO(&r->comm, task, group_leader, comm);
	BPF_CORE_READ_STR_INTO(&r->tcomm, task, comm);
	if (!wanted(task, r->tgid, r))
		return 0;
	r->switches = task->nvcsw + task->nivcsw;
	if (task->on_cpu)
		r->state = HEARTH_THREAD_RUNNING;
	else if (task->__state == TASK_RUNNING)
		r->state = HEARTH_THREAD_RUNNABLE;
	else
		r->state = HEARTH_THREAD_BLOCKED;
	r->nk = 0;
	r->size = 0;
	r->unmoved = 0;
	r->noted = HEARTH_THREAD_NOT_NOTED;
	if (edge_ts && r->state != HEARTH_THREAD_RUNNING) {
		struct hearth_offcpu_start st = {
			.ts = edge_ts, .kstack = -1, .ustack = -1,
			.kind = HEARTH_OFF_CPU_EDGE, .gen = edge_gen,
		};
		__u32 tid = r->tid;
		long err = bpf_map_update_elem(&offcpu_start, &tid, &st, BPF_NOEXIST);

		if (!err)
			r->noted = HEARTH_THREAD_NOTED;
		else if (err != -17 /* EEXIST: the sampler saw it stop */)
			r->noted = HEARTH_THREAD_NOTE_FULL;
	}
	if (skip_unmoved) {
		__u32 tid = r->tid;
		struct hearth_offcpu_start *st = bpf_map_lookup_elem(&offcpu_start, &tid);

		r->unmoved = st && st->kind == HEARTH_OFF_CPU_EDGE;
	}
	if (r->state != HEARTH_THREAD_RUNNING && !r->unmoved) {
		/* A running thread's stacks change under us: only a thread
		 * off its CPU has stacks worth reading. */
		nk = bpf_get_task_stack(task, r->kips, sizeof(r->kips), 0);
		r->nk = nk > 0 ? (__u32)(nk / sizeof(__u64)) : 0;
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		r->ip = BPF_CORE_READ(regs, ip);
		r->sp = BPF_CORE_READ(regs, sp);
		r->bp = BPF_CORE_READ(regs, bp);
		r->size = copy_user_stack(task, data, r->sp);
	}
	bpf_seq_write(seq, r, sizeof(*r));
	/* 1 to HEARTH_THREAD_STACK, in a form the verifier follows. */
	size = r->size;
	if (size > 0)
		bpf_seq_write(seq, data, ((size - 1) & (HEARTH_THREAD_STACK - 1)) + 1);
	return 0;
}
