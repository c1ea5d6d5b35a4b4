// SPDX-License-Identifier: GPL-2.0
/*
 * memory: where memory is allocated and what holds it, from uprobes on an
 * allocator's functions (malloc, calloc, realloc, posix_memalign,
 * aligned_alloc, memalign, free) in the chosen processes only.
 *
 * One uprobe session program serves every function (the attach cookie
 * says which). At a function's entry the thread's byte count goes down
 * by the size asked for; the call that takes it to zero or below is a
 * sample: its stack goes to user space and, when held memory is asked
 * for, the call's return is watched (the session's return half, for the
 * sampled calls only) to learn the address, kept in the live map until
 * it is freed. Every other call returns at once, its return unwatched.
 */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpf/memory.h"

char LICENSE[] SEC("license") = "GPL";

extern bool bpf_session_is_return(void) __ksym;
extern __u64 *bpf_session_cookie(void) __ksym;

/* Bytes between samples, drawn from quantiles of the exponential
 * distribution of the mean asked for (user space fills them). */
const volatile __u64 intervals[HEARTH_MEM_INTERVALS] = {};
/* Watch the sampled calls' returns and the frees: what is still held. */
const volatile bool track_held = false;

/* The next sample's number (0 is none). */
__u64 next_seq = 1;

struct mem_thread {
	__s64 left;   /* bytes until the next sample */
	__u32 started;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mem_thread);
} threads SEC(".maps");

/* Sampled allocations not freed yet: address to sample number. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hearth_mem_live_key);
	__type(value, __u64);
	__uint(max_entries, 1);
} live SEC(".maps");

/* posix_memalign's out-pointer, by sample number, from entry to return. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, __u64);
	__uint(max_entries, 1024);
} memptrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64[HEARTH_MEM_CNT_MAX]);
	__uint(max_entries, 1);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} events SEC(".maps");

static __always_inline __u64 *counts(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counters, &zero);
}

static __always_inline void count(__u32 idx)
{
	__u64 *c = counts();

	if (c && idx < HEARTH_MEM_CNT_MAX)
		c[idx]++;
}

static __always_inline __s64 draw(void)
{
	return (__s64)intervals[bpf_get_prandom_u32() & (HEARTH_MEM_INTERVALS - 1)];
}

/* Forgets the sampled allocation at @addr of the current process. */
static __always_inline void forget(__u64 addr)
{
	struct hearth_mem_live_key k = {
		.tgid = (__u32)(bpf_get_current_pid_tgid() >> 32),
		.addr = addr,
	};

	if (addr && bpf_map_delete_elem(&live, &k) == 0)
		count(HEARTH_MEM_CNT_FREES);
}

/* The bytes a call of @fn asks for; 0 for a call that allocates nothing
 * here (free; realloc to 0, a free; realloc of NULL, which calls malloc,
 * probed itself). Forgets the block a realloc gives back. */
static __always_inline __u64 call_size(struct pt_regs *ctx, __u32 fn)
{
	__u64 a = PT_REGS_PARM1(ctx), b = PT_REGS_PARM2(ctx), most;

	switch (fn) {
	case HEARTH_MEM_MALLOC:
		return a;
	case HEARTH_MEM_CALLOC:
		if (!b)
			return 0;
		/* (the barrier keeps the compiler from a 128-bit multiply) */
		most = ~0ULL / b;
		barrier_var(most);
		return a > most ? 0 : a * b;
	case HEARTH_MEM_REALLOC:
		if (track_held)
			forget(a);
		return a ? b : 0;
	case HEARTH_MEM_POSIX_MEMALIGN:
		return PT_REGS_PARM3(ctx);
	case HEARTH_MEM_ALIGNED_ALLOC:
	case HEARTH_MEM_MEMALIGN:
		return b;
	default:
		if (track_held)
			forget(a);
		return 0;
	}
}

/* Sends the sample; returns its number, 0 when the ring was full. */
static __always_inline __u64 send(struct pt_regs *ctx, __u32 fn, __u64 size)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct hearth_mem_event *e;
	__u64 id = bpf_get_current_pid_tgid(), ra = 0, seq;
	__u64 ip = PT_REGS_IP(ctx), sp = PT_REGS_SP(ctx);
	long got;
	__u32 n;

	/* (read before the ring's memory is: the compiler may not merge
	 * the two pointers into one the verifier refuses) */
	barrier_var(ip);
	barrier_var(sp);

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(HEARTH_MEM_CNT_DROP_EVENTS);
		return 0;
	}
	e->tgid = (__u32)(id >> 32);
	e->tid = (__u32)id;
	e->fn = fn;
	e->size = size;
	e->seq = seq = __sync_fetch_and_add(&next_seq, 1);
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
	bpf_get_current_comm(&e->tcomm, sizeof(e->tcomm));
	/* At the entry the caller's frame is not linked yet: the walk from
	 * the registers gives the entry, then the caller's caller. The
	 * caller is the return address on top of the stack. */
	got = bpf_get_stack(ctx, &e->ips[1], sizeof(e->ips) - sizeof(e->ips[0]),
			    BPF_F_USER_STACK);
	n = got > 0 ? (__u32)(got / sizeof(__u64)) : 0;
	e->ips[0] = n ? e->ips[1] : ip;
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)sp) == 0 && ra) {
		e->ips[1] = ra;
		n = n ? n + 1 : 2;
	} else {
		n = 1;
	}
	e->nu = n < HEARTH_MEM_DEPTH ? n : HEARTH_MEM_DEPTH;
	count(HEARTH_MEM_CNT_SAMPLES);
	bpf_ringbuf_submit(e, 0);
	return seq;
}

/* The return of a sampled call: its address goes into the live map. */
static __always_inline int on_return(struct pt_regs *ctx)
{
	struct hearth_mem_live_key k = {
		.tgid = (__u32)(bpf_get_current_pid_tgid() >> 32),
	};
	__u64 *cookie = bpf_session_cookie(), seq, *memptr;

	if (!cookie || !*cookie)
		return 0;
	seq = *cookie;
	if (bpf_get_attach_cookie(ctx) == HEARTH_MEM_POSIX_MEMALIGN) {
		memptr = bpf_map_lookup_elem(&memptrs, &seq);
		if (!memptr)
			return 0;
		if (PT_REGS_RC(ctx) == 0)
			bpf_probe_read_user(&k.addr, sizeof(k.addr), (void *)*memptr);
		bpf_map_delete_elem(&memptrs, &seq);
	} else {
		k.addr = PT_REGS_RC(ctx);
	}
	if (k.addr && bpf_map_update_elem(&live, &k, &seq, BPF_ANY))
		count(HEARTH_MEM_CNT_DROP_LIVE);
	return 0;
}

/* Entry and return of every probed function. An entry returning 0 asks
 * for its return; any other value lets the call return unwatched. */
SEC("uprobe")
int mem_call(struct pt_regs *ctx)
{
	__u32 fn;
	__u64 size, seq, *c, *cookie;
	struct mem_thread *t;

	if (bpf_session_is_return())
		return on_return(ctx);
	fn = (__u32)bpf_get_attach_cookie(ctx);
	size = call_size(ctx, fn);
	if (!size)
		return 1;
	c = counts();
	if (c) {
		c[HEARTH_MEM_CNT_CALLS]++;
		c[HEARTH_MEM_CNT_BYTES] += size;
	}
	t = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(HEARTH_MEM_CNT_DROP_STATE);
		return 1;
	}
	if (!t->started) {
		t->started = 1;
		t->left = draw();
	}
	t->left -= (__s64)size;
	if (t->left > 0)
		return 1;
	t->left = draw();
	seq = send(ctx, fn, size);
	if (!seq || !track_held)
		return 1;
	cookie = bpf_session_cookie();
	if (!cookie)
		return 1;
	*cookie = seq;
	if (fn == HEARTH_MEM_POSIX_MEMALIGN) {
		__u64 memptr = PT_REGS_PARM1(ctx);

		bpf_map_update_elem(&memptrs, &seq, &memptr, BPF_ANY);
	}
	return 0;
}
