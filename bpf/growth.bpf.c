// SPDX-License-Identifier: GPL-2.0
/*
 * growth: every request a process makes to the kernel for more memory,
 * with its user stack: brk that grows the heap, an anonymous mmap, an
 * mremap that grows. The system calls' raw tracepoints: their exit sees
 * the three calls' arguments (the saved user registers) and results;
 * brk's entry notes where the heap ended. Every other call returns at the
 * first compare. (fentry programs on the calls themselves would cost
 * nothing elsewhere, but kernels built without them refuse them.)
 */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpf/growth.h"
#include "bpf/pid_filter.bpf.h"
#include "bpf/stack_copy.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* x86-64 system call numbers; a 32-bit task's are others (TS_COMPAT). */
#define NR_MMAP 9
#define NR_BRK 12
#define NR_MREMAP 25
#define TS_COMPAT 0x0002
#define MAP_ANONYMOUS 0x20
#define PROT_NONE 0
#define MAX_ERRNO 4095

/* Most stack copies per second per CPU; past it a request is sent with
 * its frame-pointer walk alone, unless its process has a share of its
 * own left (below; 0 = no limit). */
const volatile __u32 copies_per_sec = 0;


/* The end of the heap when brk was called, by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} brk_at SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct copy_budget);
	__uint(max_entries, 1);
} budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64[HEARTH_GROW_CNT_MAX]);
	__uint(max_entries, 1);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} procs SEC(".maps");

static __always_inline void count(__u32 idx, __u64 n)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&counters, &zero);

	if (c && idx < HEARTH_GROW_CNT_MAX)
		c[idx] += n;
}


/* Past the CPU's budget, a process older than a second still gets up to
 * OWN_COPIES copies a second of its own: the budget is there to bound an
 * exec storm (processes milliseconds old), and a service's requests must
 * not lose their callers to a busy neighbour's. */
#define OWN_COPIES 64
#define SETTLED_NS 1000000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct copy_budget);
	__uint(max_entries, 4096);
} own_budget SEC(".maps");

static __always_inline bool own_budget_allows(struct task_struct *task)
{
	__u64 now = bpf_ktime_get_ns();
	struct copy_budget *b, first = { .window = now, .used = 1 };
	__u32 tgid = task->tgid;

	if (now - BPF_CORE_READ(task, group_leader, start_time) < SETTLED_NS)
		return false;
	b = bpf_map_lookup_elem(&own_budget, &tgid);
	if (!b)
		return bpf_map_update_elem(&own_budget, &tgid, &first, BPF_NOEXIST) == 0;
	if (now - b->window >= 1000000000ULL) {
		b->window = now;
		b->used = 0;
	}
	if (b->used >= OWN_COPIES)
		return false;
	__sync_fetch_and_add(&b->used, 1);
	return true;
}

_Static_assert(HEARTH_GROW_STACK % STACK_COPY_CHUNK == 0, "a copy is whole chunks");

/* Sends a request for @bytes more of @kind, made with user registers
 * @regs. */
static __always_inline void send(void *ctx, struct pt_regs *regs, __u32 kind,
				 __u64 bytes)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct hearth_grow_copy *c = NULL;
	struct hearth_grow_event *e;
	bool cut = false;
	long n;

	/* Past the budget, a request goes without a copy, an eighth the
	 * size. */
	if (copy_budget_take(&budget, copies_per_sec, bpf_ktime_get_ns()) ||
	    own_budget_allows(task)) {
		c = bpf_ringbuf_reserve(&events, sizeof(*c), 0);
		e = c ? &c->ev : NULL;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
	if (!e) {
		count(HEARTH_GROW_CNT_DROP_EVENTS, 1);
		return;
	}
	e->tgid = (__u32)(id >> 32);
	e->tid = (__u32)id;
	e->kind = kind;
	e->bytes = bytes;
	e->ip = BPF_CORE_READ(regs, ip);
	e->sp = BPF_CORE_READ(regs, sp);
	e->bp = BPF_CORE_READ(regs, bp);
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
	bpf_get_current_comm(&e->tcomm, sizeof(e->tcomm));
	n = bpf_get_stack(ctx, e->fp_ips, sizeof(e->fp_ips), BPF_F_USER_STACK);
	e->nfp = n > 0 ? (__u32)(n / sizeof(__u64)) : 0;
	e->size = 0;
	if (c)
		e->size = stack_copy(c->data, e->sp, HEARTH_GROW_STACK, HEARTH_GROW_STACK, &cut);
	else
		count(HEARTH_GROW_CNT_NO_COPY, 1);
	count(HEARTH_GROW_CNT_BRK + kind, 1);
	count(HEARTH_GROW_CNT_BYTES, bytes);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline bool failed(long ret)
{
	return (unsigned long)ret >= (unsigned long)-MAX_ERRNO;
}

static __always_inline bool compat(struct task_struct *task)
{
	return task->thread_info.status & TS_COMPAT;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(growth_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task;
	__u64 *at;

	if (id != NR_BRK)
		return 0;
	task = bpf_get_current_task_btf();
	if (compat(task) || !regs->di || !pid_wanted(task->tgid))
		return 0;
	at = bpf_task_storage_get(&brk_at, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (at)
		*at = BPF_CORE_READ(task, mm, brk);
	return 0;
}

/* brk that moved the end of the heap up: by how much. */
static __always_inline __u64 brk_growth(struct task_struct *task, long ret)
{
	__u64 *at = bpf_task_storage_get(&brk_at, task, 0, 0), old;

	if (!at)
		return 0;
	old = *at;
	*at = 0;
	return old && (__u64)ret > old ? (__u64)ret - old : 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(growth_exit, struct pt_regs *regs, long ret)
{
	long id = regs->orig_ax;
	struct task_struct *task;
	__u64 more = 0;
	__u32 kind;

	if (id != NR_MMAP && id != NR_BRK && id != NR_MREMAP)
		return 0;
	task = bpf_get_current_task_btf();
	if (compat(task) || failed(ret) || !pid_wanted(task->tgid))
		return 0;
	if (id == NR_BRK) {
		kind = HEARTH_GROW_BRK;
		if (regs->di)
			more = brk_growth(task, ret);
	} else if (id == NR_MMAP) {
		kind = HEARTH_GROW_MMAP;
		/* (a reservation without access is no memory yet) */
		if ((regs->r10 & MAP_ANONYMOUS) && regs->dx != PROT_NONE)
			more = (regs->si + STACK_PAGE - 1) & ~(__u64)(STACK_PAGE - 1);
	} else {
		kind = HEARTH_GROW_MREMAP;
		if (regs->dx > regs->si)
			more = regs->dx - regs->si;
	}
	if (more)
		send(ctx, regs, kind, more);
	return 0;
}

static __always_inline void proc_event(__u32 type, __u32 pid)
{
	struct hearth_grow_proc *e;

	if (!pid_wanted(pid))
		return;
	e = bpf_ringbuf_reserve(&procs, sizeof(*e), 0);
	if (!e)
		return; /* its cache stays until the end: memory, not a loss */
	e->type = type;
	e->pid = pid;
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(growth_exec, struct task_struct *p)
{
	proc_event(HEARTH_GROW_EXEC, p->tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(growth_gone, struct task_struct *p)
{
	/* The process is gone when its last thread goes. */
	if (BPF_CORE_READ(p, signal, live.counter) == 0)
		proc_event(HEARTH_GROW_EXIT, p->tgid);
	return 0;
}
