// SPDX-License-Identifier: GPL-2.0
/*
 * hearth's sampler: on-CPU stacks from a cpu-clock perf event, off-CPU
 * blocked time from sched_switch, aggregated in the kernel.
 *
 * Counts go into one of two hash maps and stacks into one of two stack maps,
 * chosen by `active`; user space flips `active`, lets in-flight programs
 * finish, then drains the other side, so nothing is lost or counted twice.
 */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpf/sampler.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0
#define EFAULT 14 /* bpf_get_stackid: empty stack, not a loss */

const volatile bool filter_pid = false;
const volatile bool filter_comm = false;
const volatile char target_comm[HEARTH_COMM_LEN] = {};
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile __u32 exclude_tgid = 0;
const volatile __u64 min_block_ns = 0;

/* Flipped by user space between drains. */
__u32 active = 0;

#define STACK_MAP(name)                                                  \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                  \
		__uint(key_size, sizeof(__u32));                         \
		__uint(value_size, HEARTH_STACK_DEPTH * sizeof(__u64));  \
		__uint(max_entries, 16384);                              \
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);

#define COUNTS_MAP(name)                                                 \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_HASH);                         \
		__type(key, struct hearth_key);                          \
		__type(value, struct hearth_value);                      \
		__uint(max_entries, 65536);                              \
	} name SEC(".maps")

COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 64);
} pids SEC(".maps");

/* Threads currently off-CPU, by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct hearth_offcpu_start);
	__uint(max_entries, 32768);
} offcpu_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, HEARTH_CNT_MAX);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += 1;
}

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < HEARTH_COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

/* Whether @task is one we profile. */
static __always_inline bool wanted(struct task_struct *task, __u32 tgid)
{
	if (tgid == exclude_tgid)
		return false;
	if (filter_pid && !bpf_map_lookup_elem(&pids, &tgid))
		return false;
	if (filter_comm) {
		char comm[HEARTH_COMM_LEN];

		BPF_CORE_READ_STR_INTO(&comm, task, comm);
		if (comm_matches(comm))
			return true;
		BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm);
		return comm_matches(comm);
	}
	return true;
}

/* Captures the current task's stacks into the stack map of @gen. */
static __always_inline void get_stacks(void *ctx, __u32 gen, bool has_mm,
				       __s32 *kstack, __s32 *ustack)
{
	void *map = gen ? (void *)&stacks1 : (void *)&stacks0;

	*kstack = -1;
	*ustack = -1;
	if (kernel_stacks) {
		*kstack = bpf_get_stackid(ctx, map, 0);
		if (*kstack < 0 && *kstack != -EFAULT)
			count(HEARTH_CNT_DROP_KSTACK);
	}
	if (user_stacks && has_mm) {
		*ustack = bpf_get_stackid(ctx, map, BPF_F_USER_STACK);
		if (*ustack < 0 && *ustack != -EFAULT)
			count(HEARTH_CNT_DROP_USTACK);
	}
}

/* Adds (count, ns) to @key in the counts map of @side. */
static __always_inline void add(__u32 side, struct hearth_key *key,
				struct task_struct *task, __u64 ns)
{
	/* The side is the one active when the program started, not the
	 * stacks' gen: an off-CPU interval can span a flip. */
	void *map = side ? (void *)&counts1 : (void *)&counts0;
	struct hearth_value *val, zero = {};

	val = bpf_map_lookup_elem(map, key);
	if (!val) {
		BPF_CORE_READ_STR_INTO(&zero.comm, task, group_leader, comm);
		BPF_CORE_READ_STR_INTO(&zero.tcomm, task, comm);
		if (bpf_map_update_elem(map, key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(map, key)) {
			count(HEARTH_CNT_DROP_MAP_FULL);
			return;
		}
		val = bpf_map_lookup_elem(map, key);
		if (!val) {
			count(HEARTH_CNT_DROP_MAP_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&val->count, 1);
	if (ns)
		__sync_fetch_and_add(&val->ns, ns);
}

SEC("perf_event")
int on_cpu(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct hearth_key key = {};
	__u32 side = active;

	key.tgid = id >> 32;
	key.pid = (__u32)id;
	if (key.pid == 0) {
		count(HEARTH_CNT_IDLE);
		return 0;
	}
	if (!wanted(task, key.tgid)) {
		count(HEARTH_CNT_FILTERED);
		return 0;
	}
	key.kind = HEARTH_ON_CPU;
	key.gen = side;
	get_stacks(ctx, key.gen, task->mm != NULL, &key.kstack, &key.ustack);
	add(side, &key, task, 0);
	count(HEARTH_CNT_SAMPLES);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(off_cpu, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct hearth_offcpu_start *start, st = {};
	__u32 tgid, pid;
	__u64 now = bpf_ktime_get_ns();
	__u32 side = active;

	/* prev is still current here: its stacks are where it stops. */
	pid = prev->pid;
	tgid = prev->tgid;
	if (pid != 0 && wanted(prev, tgid)) {
		st.ts = now;
		st.gen = side;
		st.kind = prev_state == TASK_RUNNING ? HEARTH_OFF_CPU_INVOLUNTARY
						     : HEARTH_OFF_CPU_VOLUNTARY;
		get_stacks(ctx, st.gen, prev->mm != NULL, &st.kstack, &st.ustack);
		if (bpf_map_update_elem(&offcpu_start, &pid, &st, BPF_ANY))
			count(HEARTH_CNT_DROP_START_FULL);
	}

	pid = next->pid;
	start = bpf_map_lookup_elem(&offcpu_start, &pid);
	if (!start)
		return 0;
	if (now > start->ts && now - start->ts >= min_block_ns) {
		struct hearth_key key = {
			.tgid = next->tgid,
			.pid = pid,
			.kstack = start->kstack,
			.ustack = start->ustack,
			.kind = start->kind,
			.gen = start->gen,
		};

		add(side, &key, next, now - start->ts);
		count(HEARTH_CNT_OFFCPU);
	}
	bpf_map_delete_elem(&offcpu_start, &pid);
	return 0;
}

static __always_inline void emit(__u32 type, struct task_struct *task,
				 __u32 ppid)
{
	struct hearth_proc_event *e;
	__u32 tgid = task->tgid;

	if (!wanted(task, tgid))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(HEARTH_CNT_DROP_EVENTS);
		return;
	}
	e->type = type;
	e->pid = tgid;
	e->ppid = ppid;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	emit(HEARTH_EV_EXEC, p, 0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	/* Threads share their process's mappings: only new processes. */
	if (child->pid != child->tgid)
		return 0;
	emit(HEARTH_EV_FORK, child, parent->tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	__u32 pid = p->pid;

	bpf_map_delete_elem(&offcpu_start, &pid);
	if (p->pid != p->tgid)
		return 0;
	emit(HEARTH_EV_EXIT, p, 0);
	return 0;
}
