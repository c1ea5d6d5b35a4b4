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

#include "bpf/comm.h"
#include "bpf/pid_filter.bpf.h"
#include "bpf/python.h"
#include "bpf/sampler.h"
#include "bpf/stack_copy.bpf.h"
#include "bpf/unwind.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0
#define TASK_DEAD 0x80
#define PF_EXITING 0x4
#define EFAULT 14 /* bpf_get_stackid: empty stack, not a loss */
/* FNV-1a, the hash of stacks and signatures. */
#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

/* -p follows the chosen processes' children forked after the start. */
const volatile bool follow_children = false;
const volatile bool filter_comm = false;
const volatile char target_comm[HEARTH_COMM_LEN] = {};
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile __u64 min_block_ns = 0;
/* User stack copies for DWARF unwinding (0 = frame pointers only). */
const volatile __u32 copy_oncpu_bytes = 0;
const volatile __u32 copy_offcpu_bytes = 0;
/* Most off-CPU copies per second per CPU (0 = no limit): switches can come
 * in the hundreds of thousands, copies must not. */
const volatile __u32 copy_offcpu_per_sec = 0;

/* In-kernel unwinding with compiled CFI: user stacks are walked with
 * the rows in cfi_rows; a walk that cannot finish falls back to the copy
 * path (copy_*_bytes), or to the FP walk when copies are off. */
const volatile bool cfi_walk = false;
/* Replay a thread's last walk when every word of user memory it read
 * still holds (see struct walk_memo). */
const volatile bool walk_replay = false;
/* Time the on-CPU runs that record a sample (HEARTH_CNT_SAMPLE_NS): what
 * a sample costs, apart from the cheap runs of tasks filtered out. */
const volatile bool time_samples = false;

/* A capture of hearth record's questions of time, CLOCK_MONOTONIC ns
 * (0: unbounded): the time of a wait before capture_from or after
 * capture_until, and the on-CPU samples outside, are not counted. The
 * sampler runs a little before and after the capture, whose edges the
 * task iterator's passes account for. */
__u64 capture_from = 0;
__u64 capture_until = 0;

/* Flipped by user space between drains. */
__u32 active = 0;
/* Bumped by user space before each flip of active: a remembered wait
 * site is valid only within one (flip_seq, active). */
__u64 flip_seq = 0;

#define STACK_MAP(name)                                                  \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                  \
		__uint(key_size, sizeof(__u32));                         \
		__uint(value_size, HEARTH_STACK_DEPTH * sizeof(__u64));  \
		__uint(max_entries, 16384);                              \
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);

/* User stacks walked in the kernel, by generation like the stack maps. */
#define WALKED_MAP(name)                                                 \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_HASH);                         \
		__uint(map_flags, BPF_F_NO_PREALLOC);                    \
		__type(key, __u32);                                      \
		__type(value, struct hearth_walked);                     \
		__uint(max_entries, 16384);                              \
	} name SEC(".maps")

WALKED_MAP(walked0);
WALKED_MAP(walked1);

/* The row pool: every loaded module's page index and rows, placed by
 * user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, union hearth_cfi_slot);
	__uint(max_entries, 1);
} cfi_rows SEC(".maps");

/* The vDSO's module, once user space loaded it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_cfi_vdso);
	__uint(max_entries, 1);
} cfi_vdso SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_cfi_module);
	__uint(max_entries, HEARTH_CFI_MAX_MODULES);
} cfi_modules SEC(".maps");

/* Executable mappings by tgid. Exec and exit remove a process here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct hearth_cfi_proc);
	__uint(max_entries, 1024);
} cfi_procs SEC(".maps");

/* Loaded modules by file: see struct hearth_cfi_file. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hearth_cfi_file_key);
	__type(value, struct hearth_cfi_file);
	__uint(max_entries, HEARTH_CFI_MAX_MODULES);
} cfi_files SEC(".maps");

/* Where a process's table is rebuilt with one mapping more (table_add). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_cfi_proc);
	__uint(max_entries, 1);
} cfi_build SEC(".maps");

/* When each process last asked user space for its tables. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 4096);
} cfi_asked SEC(".maps");

/* Most words of user memory a walk may read and still be remembered:
 * 128 frames' return addresses, or 64 frames' with their saved rbp. */
#define MEMO_WORDS 128

/*
 * A thread's last whole walk, one for on-CPU samples and one for waits:
 * the registers it started from and every word of user memory it read.
 * The walk is a function of those alone (the rows of code that stays
 * mapped while frames return into it do not change): a later walk of
 * the thread with equal sp and rbp, its leaf pc in the same row (so the
 * leaf frame takes the same rule), and every word still holding its
 * value would read the same words, take the same rules and end with the
 * same frames. It replays them instead, with its own leaf pc. Valid
 * within one (flip_seq, gen): the stack id names the walked map of gen,
 * cleared after a flip.
 */
struct walk_memo {
	__u64 seq;
	__u64 exec_id;
	__u64 lo, hi;     /* leaf pcs the leaf's row covers in its mapping */
	__u64 pc, sp, fp; /* registers (pc: of the last walk or replay) */
	__u32 tgid;
	__u32 gen;
	__s32 ustack;     /* the stack id, leaf pc = pc */
	__u32 n;          /* frames */
	__u32 nwords;     /* words read, in at[] and val[] */
	__u32 pad;
	__u64 at[MEMO_WORDS];
	__u64 val[MEMO_WORDS];
};

/* The memo of thread tid for samples, waits, or the wake-ups it makes
 * (--waker). */
struct memo_key {
	__u32 tid;
	__u32 kind;
};

#define MEMO_ONCPU 0
#define MEMO_OFFCPU 1
#define MEMO_WAKER 2

/* A walk's moving state lives in a map value, not on the stack: the
 * verifier then sees its fields as unknown and checks the loop body once,
 * instead of once per frame count. */
struct walk_state {
	struct hearth_walked out;
	__u64 pc, sp, fp;
	__u64 hash;   /* of out.ips[0, n), as store_walked wants it */
	__u32 n;
	__u32 fp_ok;  /* fp holds the caller's rbp */
	__u32 status; /* enum walk_status */
	__u32 by_vma; /* no table, or a frame was found through its file */
	__u32 seen_ok; /* seen holds the mapping found through its file */
	struct hearth_cfi_mapping seen;
	/* The last frame's mapping and module: a caller is most often in
	 * the same, and then costs no search and no lookup. */
	__u64 map_start, map_end, map_delta;
	__u32 map_module;
	__u32 mod_id;  /* whose entry mod is a copy of (~0: none) */
	__u32 row_at;  /* pool slot of the row find_row found */
	__u32 memo_full; /* read more words than memo holds */
	/* A replay's check (memo_step): its next word, and 0 once a
	 * word differs. In the map value for the reason above. */
	__u32 check_at, check_same;
	struct hearth_cfi_module mod;
	struct walk_memo memo; /* what the walk read, kept when whole */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct walk_state);
	__uint(max_entries, 1);
} walk_scratch SEC(".maps");

/* Each thread's last walks (struct walk_memo). Exit removes them; a
 * thread that finds the map full is walked every time. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct memo_key);
	__type(value, struct walk_memo);
	__uint(max_entries, 16384);
} walk_memos SEC(".maps");

#define COUNTS_MAP(name)                                                 \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_HASH);                         \
		__type(key, struct hearth_key);                          \
		__type(value, struct hearth_value);                      \
		__uint(max_entries, 65536);                              \
	} name SEC(".maps")

COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

/* Samples and waits a side's counts map had no room for, per thread, with
 * both ids HEARTH_STACK_NO_ROOM: the window keeps them, as lost. */
#define LOST_MAP(name)                                                   \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_HASH);                         \
		__uint(map_flags, BPF_F_NO_PREALLOC);                    \
		__type(key, struct hearth_key);                          \
		__type(value, struct hearth_value);                      \
		__uint(max_entries, 16384);                              \
	} name SEC(".maps")

LOST_MAP(lost0);
LOST_MAP(lost1);

/* pids (pid_filter.bpf.h): the processes chosen, and with follow_children
 * the ones they forked since; a process leaves when its last thread
 * exits. */

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

/* The walker's asks for tables, apart from the process events: a busy
 * host's asks must never crowd out an exec or an exit. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} cfi_asks SEC(".maps");

/* Samples with copied stacks, unwound in user space. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);
} stack_events SEC(".maps");

/* Stacks of threads off-CPU, copied at switch-out, by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct hearth_stack_copy);
	__uint(max_entries, 4096);
} offcpu_copies SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_stack_copy);
	__uint(max_entries, 1);
} copy_scratch SEC(".maps");

/* Signatures whose unwind user space holds: only user space adds them,
 * once it has the unwind, and removes them when it lets the unwind go. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct hearth_sig);
	__type(value, __u8);
	__uint(max_entries, 16384);
} sig_seen SEC(".maps");

/* Processes whose first on-CPU copy has woken user space (exec forgets). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 16384);
} copy_woken SEC(".maps");

#define SIG_COUNTS_MAP(name)                                             \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_HASH);                         \
		__type(key, struct hearth_sig_key);                      \
		__type(value, struct hearth_value);                      \
		__uint(max_entries, 16384);                              \
	} name SEC(".maps")

SIG_COUNTS_MAP(sig_counts0);
SIG_COUNTS_MAP(sig_counts1);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct copy_budget);
	__uint(max_entries, 1);
} copy_budget SEC(".maps");

/* Python processes user space found, by tgid: where their runtime is. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct hearth_py_proc);
	__uint(max_entries, 4096);
} py_procs SEC(".maps");

/* Python stacks by hash. Least recently used go first: a stack still
 * referenced by a count is read at the next drain, long before. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct hearth_py_stack);
	__uint(max_entries, 16384);
} py_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_py_stack);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += 1;
}

/* Adds the nanoseconds since @t0 to counter @idx. */
static __always_inline void count_ns(__u32 idx, __u64 t0)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += bpf_ktime_get_ns() - t0;
}

static __always_inline bool comm_matches(const char *comm)
{
	return hearth_comm_is(comm, target_comm, HEARTH_COMM_LEN);
}

/* Whether @task is one we profile. */
static __always_inline bool wanted(struct task_struct *task, __u32 tgid)
{
	if (!pid_wanted(tgid))
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

static __always_inline __u64 read_ptr(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* The Python stack of thread @tid of process @tgid, kept in py_stacks:
 * its key, or 0 when the process runs no Python or the thread none now.
 * Finds the thread's state in the interpreter's list (the thread holding
 * the GIL is not always the one sampled: a sleeping thread let it go),
 * then follows its frames inwards to outwards. */
static __always_inline __u64 py_walk(__u32 tgid, __u32 tid)
{
	struct hearth_py_proc *py = bpf_map_lookup_elem(&py_procs, &tgid);
	struct hearth_py_stack *st;
	__u64 ts, frame, h = FNV_OFFSET;
	__u32 zero = 0, n = 0;

	if (!py)
		return 0;
	st = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!st)
		return 0;
	ts = read_ptr(read_ptr(py->runtime + py->off.runtime_interp_head) +
		      py->off.interp_threads_head);
	for (int i = 0; i < HEARTH_PY_THREADS && ts; i++) {
		if (read_ptr(ts + py->off.tstate_native_tid) == tid)
			break;
		ts = read_ptr(ts + py->off.tstate_next);
	}
	if (!ts)
		return 0;
	frame = read_ptr(read_ptr(ts + py->off.tstate_cframe) + py->off.cframe_current);
	for (int i = 0; i < HEARTH_PY_DEPTH && frame; i++) {
		__u64 code = read_ptr(frame + py->off.frame_code);
		__u64 instr = read_ptr(frame + py->off.frame_prev_instr);
		__u8 entry = 0;

		bpf_probe_read_user(&entry, 1, (void *)(frame + py->off.frame_is_entry));
		if (!code)
			break;
		st->f[i & (HEARTH_PY_DEPTH - 1)].code = code;
		st->f[i & (HEARTH_PY_DEPTH - 1)].instr =
			instr > code + py->off.code_adaptive
				? (__u32)((instr - code - py->off.code_adaptive) / 2) : 0;
		st->f[i & (HEARTH_PY_DEPTH - 1)].flags = entry ? HEARTH_PY_ENTRY : 0;
		h = (h ^ code) * FNV_PRIME;
		h = (h ^ st->f[i & (HEARTH_PY_DEPTH - 1)].instr ^
		     ((__u64)entry << 32)) * FNV_PRIME;
		n = i + 1;
		frame = read_ptr(frame + py->off.frame_previous);
	}
	if (!n)
		return 0;
	st->n = n;
	h |= 1; /* never 0 */
	if (bpf_map_update_elem(&py_stacks, &h, st, BPF_ANY)) {
		count(HEARTH_CNT_DROP_PY);
		return 0;
	}
	count(HEARTH_CNT_PY_STACKS);
	return h;
}

/* Keeps the @n addresses of @ws->out, whose hash is @ws->hash, in the
 * walked map of @gen. Returns their id (HEARTH_USTACK_WALKED set), or
 * HEARTH_STACK_COLLISION when the key is another stack's,
 * HEARTH_STACK_FULL when the map is full (counted). */
static __always_inline __s32 store_walked(__u32 gen, struct walk_state *ws, __u32 n)
{
	void *map = gen ? (void *)&walked1 : (void *)&walked0;
	__u64 h = ws->hash;
	struct hearth_walked *old;
	__u32 key = (__u32)h & HEARTH_WALKED_KEY_MASK;

	/* Most stacks were seen before: a lookup (inlined, no lock) finds
	 * them without copying 1 KiB into a new element. */
	old = bpf_map_lookup_elem(map, &key);
	if (!old) {
		if (n < HEARTH_STACK_DEPTH)
			ws->out.ips[n] = 0;
		ws->out.hash = h;
		if (!bpf_map_update_elem(map, &key, &ws->out, BPF_NOEXIST))
			goto kept;
		old = bpf_map_lookup_elem(map, &key);
	}
	if (!old || old->hash != h) {
		count(HEARTH_CNT_CFI_COLLISION);
		return old ? HEARTH_STACK_COLLISION : HEARTH_STACK_FULL;
	}
kept:
	count(HEARTH_CNT_WRITES);
	return (__s32)(key | HEARTH_USTACK_WALKED);
}

/* The FNV-1a hash of @ips[0, @n). */
static __always_inline __u64 ips_hash(const __u64 *ips, __u32 n)
{
	__u64 h = FNV_OFFSET;

	for (int i = 0; i < HEARTH_STACK_DEPTH; i++) {
		if (i >= n)
			break;
		h = (h ^ ips[i]) * FNV_PRIME;
	}
	return h;
}

static __always_inline void get_stacks(void *ctx, __u32 gen, bool want_user,
				       __s32 *kstack, __s32 *ustack)
{
	void *map = gen ? (void *)&stacks1 : (void *)&stacks0;

	*kstack = -1;
	*ustack = -1;
	count(HEARTH_CNT_WRITES);
	if (kernel_stacks) {
		*kstack = bpf_get_stackid(ctx, map, 0);
		if (*kstack < 0 && *kstack != -EFAULT)
			count(HEARTH_CNT_DROP_KSTACK);
	}
	if (user_stacks && want_user && cfi_walk) {
		/* The walker's fallback: kept beside the walked stacks, whose
		 * keys are hashes, not in the stack map, whose few buckets
		 * collide under a busy host's many distinct frame-pointer
		 * walks. */
		__u32 zero = 0;
		struct walk_state *ws = bpf_map_lookup_elem(&walk_scratch, &zero);
		long got = ws ? bpf_get_stack(ctx, ws->out.ips, sizeof(ws->out.ips),
					      BPF_F_USER_STACK) : -1;

		if (ws && got > 0) {
			ws->hash = ips_hash(ws->out.ips, (__u32)(got / sizeof(__u64)));
			*ustack = store_walked(gen, ws, (__u32)(got / sizeof(__u64)));
		} else if (got != -EFAULT && got != 0)
			count(HEARTH_CNT_DROP_USTACK);
	} else if (user_stacks && want_user) {
		*ustack = bpf_get_stackid(ctx, map, BPF_F_USER_STACK);
		if (*ustack < 0 && *ustack != -EFAULT)
			count(HEARTH_CNT_DROP_USTACK);
	}
}

_Static_assert(HEARTH_MAX_STACK_BYTES % STACK_COPY_CHUNK == 0, "a copy is whole chunks");

/* Copies up to @want bytes of user stack from @sp (stack_copy()),
 * counting the copies the stack's end cut short. */
static __always_inline __u32 copy_stack(__u8 *dst, __u64 sp, __u32 want)
{
	bool cut = false;
	__u32 got = stack_copy(dst, sp, want, HEARTH_MAX_STACK_BYTES, &cut);

	if (cut)
		count(HEARTH_CNT_COPY_TRUNCATED);
	return got;
}

static __always_inline void read_regs(struct task_struct *task,
				      struct hearth_regs *r)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	r->ip = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->bp = BPF_CORE_READ(regs, bp);
}

/* ---- In-kernel unwinding with compiled CFI ---- */

enum walk_status {
	WALK_GOING = 0,
	WALK_WHOLE,     /* reached the outermost frame (or the depth limit) */
	WALK_NO_TABLE,  /* an address outside the known mappings, or a
			 * module whose rows are not loaded */
	WALK_NO_RULE,   /* a row that needs more, or a failed read */
};

struct walk {
	struct hearth_cfi_proc *proc;
	struct walk_state *ws;
};

/* 1 when a <= b, without a branch. Both below 2^63. */
static __always_inline __u32 le_bit(__u64 a, __u64 b)
{
	return (__u32)(((b - a) >> 63) ^ 1);
}

/* The searches below halve a fixed number of times and choose with
 * arithmetic, not branches: the verifier then walks each once, where a
 * branch per halving would make it walk every path. */

/* The mapping of @p that holds @pc, or NULL. */
static __always_inline struct hearth_cfi_mapping *
find_mapping(struct hearth_cfi_proc *p, __u64 pc)
{
	struct hearth_cfi_mapping *m;
	__u32 lo = 0, len = p->n, half, ge;

	if (len == 0 || len > HEARTH_CFI_MAX_MAPPINGS)
		return NULL;
	/* the last mapping starting at or below pc */
	for (int i = 0; i < 7; i++) {
		half = len / 2;
		ge = le_bit(p->m[(lo + half) & (HEARTH_CFI_MAX_MAPPINGS - 1)].start, pc);
		lo += half & -ge;
		len = half + ge * (len - 2 * half);
	}
	m = &p->m[lo & (HEARTH_CFI_MAX_MAPPINGS - 1)];
	return m->start <= pc && pc < m->end ? m : NULL;
}

/* Entry @k of the page index that starts at pool slot @slot. */
static __always_inline bool index_entry(__u32 slot, __u32 k, __u32 *out)
{
	__u32 at = slot + k / HEARTH_CFI_INDEX_PER_SLOT, j = k % HEARTH_CFI_INDEX_PER_SLOT;
	union hearth_cfi_slot *v = bpf_map_lookup_elem(&cfi_rows, &at);

	/* hidden from the compiler, so that the verifier sees the bound */
	barrier_var(j);
	if (!v || j >= HEARTH_CFI_INDEX_PER_SLOT)
		return false;
	*out = v->index[j];
	return true;
}

/* The row of @module covering @rel: the last with pc <= rel. Sets
 * @w->status to WALK_NO_TABLE (module not loaded) or WALK_NO_RULE on
 * NULL. The module's entry is kept in @w for the next frame. */
static __always_inline struct hearth_cfi_row *find_row(struct walk_state *w, __u32 module,
						       __u64 rel)
{
	struct hearth_cfi_module *mod = &w->mod;
	union hearth_cfi_slot *v;
	__u32 lo, hi, len, half, ge, mid, page;

	if (w->mod_id != module) {
		struct hearth_cfi_module *m = bpf_map_lookup_elem(&cfi_modules, &module);

		if (!m || !m->n) {
			w->status = m && m->first == HEARTH_CFI_NO_CFI ? WALK_NO_RULE
								       : WALK_NO_TABLE;
			return NULL;
		}
		w->mod = *m;
		w->mod_id = module;
	}
	w->status = WALK_NO_RULE;
	if (mod->n > HEARTH_CFI_MAX_ROWS)
		return NULL;
	page = (__u32)(rel >> HEARTH_CFI_PAGE_SHIFT);
	if (page >= mod->npages) {
		lo = mod->n - 1; /* past the last row's page: the last row */
		hi = lo;
	} else if (!index_entry(mod->index, page, &lo) ||
		   !index_entry(mod->index, page + 1, &hi)) {
		return NULL;
	}
	if (hi < lo || hi >= mod->n || hi - lo > (1u << HEARTH_CFI_PAGE_SHIFT))
		return NULL;
	lo += mod->first;
	len = hi + mod->first - lo + 1;
	for (int i = 0; i < HEARTH_CFI_PAGE_STEPS; i++) {
		half = len / 2;
		mid = lo + half;
		v = bpf_map_lookup_elem(&cfi_rows, &mid);
		if (!v)
			return NULL;
		ge = le_bit(v->row.pc, rel);
		lo += half & -ge;
		len = half + ge * (len - 2 * half);
	}
	v = bpf_map_lookup_elem(&cfi_rows, &lo);
	if (!v || v->row.pc > rel)
		return NULL;
	w->row_at = lo;
	return &v->row;
}

struct table_merge {
	struct hearth_cfi_proc *old, *out;
	struct hearth_cfi_mapping add;
	__u32 placed;
};

static __always_inline void table_push(struct hearth_cfi_proc *out,
				       const struct hearth_cfi_mapping *m)
{
	__u32 i = out->n;

	if (i >= HEARTH_CFI_MAX_MAPPINGS)
		return;
	out->m[i & (HEARTH_CFI_MAX_MAPPINGS - 1)] = *m;
	out->n = i + 1;
}

/* Copies the old table's mapping @i to the new one, the added mapping
 * first when it comes before, and none it overlaps (it replaced them).
 * Returns 1 past the old table's end. */
static long merge_step(__u64 i, void *arg)
{
	struct table_merge *c = arg;
	struct hearth_cfi_mapping *e;

	if (i >= c->old->n || i >= HEARTH_CFI_MAX_MAPPINGS)
		return 1;
	e = &c->old->m[i & (HEARTH_CFI_MAX_MAPPINGS - 1)];
	if (e->start < c->add.end && c->add.start < e->end)
		return 0;
	if (!c->placed && c->add.start < e->start) {
		table_push(c->out, &c->add);
		c->placed = 1;
	}
	table_push(c->out, e);
	return 0;
}

/*
 * Adds mapping @add to process @tgid's table of image @exec_id (a new
 * one when it has none for that image), in a copy that replaces it:
 * walks on other CPUs read the old or the new, never half of one. The
 * table is marked built (struct hearth_cfi_proc): it holds modules user
 * space counts no reference for.
 */
static __always_inline void table_add(__u32 tgid, __u64 exec_id,
				      const struct hearth_cfi_mapping *add)
{
	struct table_merge c = {};
	struct hearth_cfi_proc *out;
	__u32 zero = 0;

	out = bpf_map_lookup_elem(&cfi_build, &zero);
	if (!out)
		return;
	c.old = bpf_map_lookup_elem(&cfi_procs, &tgid);
	out->exec_id = exec_id;
	out->n = 0;
	out->built = 1;
	c.out = out;
	c.add = *add;
	if (c.old && c.old->exec_id == exec_id)
		bpf_loop(HEARTH_CFI_MAX_MAPPINGS, merge_step, &c, 0);
	if (!c.placed)
		table_push(out, add);
	bpf_map_update_elem(&cfi_procs, &tgid, out, BPF_ANY);
}

struct vma_seen {
	__u64 start, end, pgoff;
	struct hearth_cfi_file_key key;
	__u32 found;
};

static long vma_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_seen *v = data;
	struct file *f = vma->vm_file;

	(void)task;
	if (!f)
		return 0;
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	v->key.ino = BPF_CORE_READ(f, f_inode, i_ino);
	v->key.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	v->found = 1;
	return 0;
}

/* The mapping @m of a loaded module that holds @pc, through the file
 * mapped there, for an address the process's table does not cover.
 * Returns false when the file is no loaded module, or the lookup failed:
 * the mmap lock busy, or taken already since interrupts were last on
 * (the lock is released by an irq_work that must run before the next
 * take): one lookup per walk. */
static __always_inline bool module_by_vma(__u64 pc, struct hearth_cfi_mapping *m)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vma_seen v = {};
	struct hearth_cfi_file *f;

	if (bpf_find_vma(task, pc, vma_found, &v, 0) || !v.found)
		return false;
	f = bpf_map_lookup_elem(&cfi_files, &v.key);
	if (!f || v.pgoff << 12 != f->seg_off)
		return false;
	m->start = v.start;
	m->end = v.end;
	m->delta = v.start - f->seg_off - f->seg_bias + f->base;
	m->module = f->module;
	m->pad = 0;
	return true;
}

/* The vDSO's module and delta for @pc when the current task's vDSO
 * holds it, the one user space compiled. */
static __always_inline bool module_in_vdso(__u64 pc, __u64 *start, __u64 *end,
					   __u32 *module, __u64 *delta)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct hearth_cfi_vdso *vd;
	__u32 zero = 0;
	__u64 at;

	vd = bpf_map_lookup_elem(&cfi_vdso, &zero);
	if (!vd || !vd->size)
		return false;
	at = (__u64)BPF_CORE_READ(task, mm, context.vdso);
	if (pc - at >= vd->size || BPF_CORE_READ(task, mm, context.vdso_image, size) != vd->size)
		return false;
	*start = at;
	*end = at + vd->size;
	*module = vd->module;
	*delta = at + vd->delta;
	return true;
}

/* The module and delta of @w->pc: the last frame's mapping, else the
 * process's table, the mapping an earlier frame found through its file,
 * the vDSO, or the file mapped there (then @w->by_vma is set and the
 * mapping kept in @w->seen: the process's table lacks it). Returns false
 * when none holds it. */
static __always_inline bool frame_module(struct walk_state *w, struct hearth_cfi_proc *proc,
					 __u32 *module, __u64 *delta)
{
	struct hearth_cfi_mapping *m;
	__u64 pc = w->pc;

	if (pc - w->map_start < w->map_end - w->map_start) {
		*module = w->map_module;
		*delta = w->map_delta;
		return true;
	}
	m = proc ? find_mapping(proc, pc) : NULL;
	if (m) {
		w->map_start = m->start;
		w->map_end = m->end;
		*module = m->module;
		*delta = m->delta;
	} else if (w->seen_ok && pc - w->seen.start < w->seen.end - w->seen.start) {
		/* found through its file by an earlier frame: a walk gets
		 * one such lookup, and a library's frames often come back
		 * above the program's (libc's start code under main) */
		w->map_start = w->seen.start;
		w->map_end = w->seen.end;
		*module = w->seen.module;
		*delta = w->seen.delta;
	} else if (!module_in_vdso(pc, &w->map_start, &w->map_end, module, delta)) {
		if (!module_by_vma(pc, &w->seen))
			return false;
		w->by_vma = 1;
		w->seen_ok = 1;
		w->map_start = w->seen.start;
		w->map_end = w->seen.end;
		*module = w->seen.module;
		*delta = w->seen.delta;
	}
	w->map_module = *module;
	w->map_delta = *delta;
	return true;
}

/* Notes a word of user memory the walk read. */
static __always_inline void memo_word(struct walk_state *w, __u64 at, __u64 val)
{
	__u32 k = w->memo.nwords;

	if (k >= MEMO_WORDS) {
		w->memo_full = 1;
		return;
	}
	w->memo.at[k & (MEMO_WORDS - 1)] = at;
	w->memo.val[k & (MEMO_WORDS - 1)] = val;
	w->memo.nwords = k + 1;
}

/* Notes the leaf pcs that share the leaf's @row (of the module at
 * @delta): from its pc to the next row's, within the leaf's mapping. A
 * PLT row's rule depends on the pc itself: then only this pc. */
static __always_inline void memo_leaf_range(struct walk_state *w, struct hearth_cfi_row *row,
					    __u64 delta)
{
	union hearth_cfi_slot *next;
	__u32 at = w->row_at + 1;
	__u64 lo, hi;

	w->memo.lo = w->pc;
	w->memo.hi = w->pc + 1;
	/* by_vma: the mapping's bounds are unknown (and no memo is kept) */
	if (row->cfa_rule == HEARTH_CFA_PLT || w->by_vma ||
	    w->pc - w->map_start >= w->map_end - w->map_start)
		return;
	lo = row->pc + delta;
	hi = w->map_end;
	if (at < w->mod.first + w->mod.n) {
		next = bpf_map_lookup_elem(&cfi_rows, &at);
		if (!next)
			return;
		if (next->row.pc + delta < hi)
			hi = next->row.pc + delta;
	}
	if (lo < w->map_start)
		lo = w->map_start;
	if (lo <= w->pc && w->pc < hi) {
		w->memo.lo = lo;
		w->memo.hi = hi;
	}
}

/* One frame: from (pc, sp, fp) to the caller's, appending its return
 * address. Returns 1 to stop (status set), 0 to go on. */
static long walk_step(__u64 i, void *arg)
{
	struct walk_state *w = ((struct walk *)arg)->ws;
	struct hearth_cfi_row *row;
	__u64 rel, cfa, ra, fp, delta, pair[2];
	__u32 module;

	if (!frame_module(w, ((struct walk *)arg)->proc, &module, &delta)) {
		w->status = WALK_NO_TABLE;
		return 1;
	}
	/* A return address may be one past a call that never returns, the
	 * last instruction of its function: look up the call itself. */
	rel = (i ? w->pc - 1 : w->pc) - delta;
	if (rel >> 32) {
		w->status = WALK_NO_RULE;
		return 1;
	}
	row = find_row(w, module, rel);
	if (!row)
		return 1;
	if (i == 0)
		memo_leaf_range(w, row, delta);
	switch (row->cfa_rule) {
	case HEARTH_CFA_SP:
		cfa = w->sp + row->cfa_off;
		break;
	case HEARTH_CFA_FP:
		if (!w->fp_ok) {
			w->status = WALK_NO_RULE;
			return 1;
		}
		cfa = w->fp + row->cfa_off;
		break;
	case HEARTH_CFA_PLT:
		cfa = w->sp + (((w->pc - delta) & 15) >= 11 ? 16 : 8);
		break;
	case HEARTH_CFA_END:
		w->status = WALK_WHOLE;
		return 1;
	default:
		w->status = WALK_NO_RULE;
		return 1;
	}
	if (row->fp_rule == HEARTH_FP_AT_CFA && row->fp_off == -16) {
		/* rbp pushed right after the call, the usual prologue: one
		 * read for both */
		if (bpf_probe_read_user(pair, sizeof(pair), (void *)(cfa - 16))) {
			w->status = WALK_NO_RULE;
			return 1;
		}
		memo_word(w, cfa - 16, pair[0]);
		memo_word(w, cfa - 8, pair[1]);
		w->fp = pair[0];
		w->fp_ok = 1;
		ra = pair[1];
	} else {
		if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
			w->status = WALK_NO_RULE;
			return 1;
		}
		memo_word(w, cfa - 8, ra);
		if (row->fp_rule == HEARTH_FP_AT_CFA) {
			if (bpf_probe_read_user(&fp, sizeof(fp), (void *)(cfa + row->fp_off))) {
				w->status = WALK_NO_RULE;
				return 1;
			}
			memo_word(w, cfa + row->fp_off, fp);
			w->fp = fp;
			w->fp_ok = 1;
		} else if (row->fp_rule == HEARTH_FP_LOST) {
			w->fp_ok = 0;
		}
	}
	w->sp = cfa;
	w->pc = ra;
	if (ra == 0 || w->n >= HEARTH_STACK_DEPTH) {
		w->status = WALK_WHOLE;
		return 1;
	}
	w->out.ips[w->n & 127] = ra;
	w->hash = (w->hash ^ ra) * FNV_PRIME;
	w->n++;
	return 0;
}

/* A process asks for its tables again at most this often: right after
 * exec its libraries are mapped one by one, and each ask costs user space
 * a walk of its executable mappings. */
#define CFI_ASK_INTERVAL_NS 100000000ULL

/* Asks user space for @task's tables (CFI_ASK_INTERVAL_NS apart). */
static __always_inline void cfi_ask(struct task_struct *task, __u32 tgid)
{
	__u64 now, *last;
	struct hearth_proc_event *e;

	/* An exiting process is sampled past its exit event (which dropped
	 * its entries): it must not leave a new one. */
	if (task->flags & PF_EXITING)
		return;
	now = bpf_ktime_get_ns();
	last = bpf_map_lookup_elem(&cfi_asked, &tgid);
	if (last && now - *last < CFI_ASK_INTERVAL_NS)
		return;
	bpf_map_update_elem(&cfi_asked, &tgid, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(&cfi_asks, sizeof(*e), 0);
	if (!e)
		return; /* asked again at the next miss */
	e->type = HEARTH_EV_CFI_MISS;
	e->pid = tgid;
	e->ppid = 0;
	e->exec_id = task->self_exec_id;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

struct memo_check {
	struct walk_memo *m;
	struct walk_state *ws;
};

/* Checks the memo's next word (two when they are adjacent, as a saved
 * rbp and its return address are: one read). Returns 1 to stop. */
static long memo_step(__u64 i, void *arg)
{
	struct memo_check *c = arg;
	struct walk_memo *m = c->m;
	struct walk_state *ws = c->ws;
	__u32 k = ws->check_at, n = m->nwords;
	__u64 got[2];

	(void)i;
	if (k >= n || k >= MEMO_WORDS)
		return 1;
	if (k + 1 < n && k + 1 < MEMO_WORDS &&
	    m->at[(k + 1) & (MEMO_WORDS - 1)] == m->at[k & (MEMO_WORDS - 1)] + 8) {
		if (bpf_probe_read_user(got, sizeof(got), (void *)m->at[k & (MEMO_WORDS - 1)]) ||
		    got[0] != m->val[k & (MEMO_WORDS - 1)] ||
		    got[1] != m->val[(k + 1) & (MEMO_WORDS - 1)]) {
			ws->check_same = 0;
			return 1;
		}
		ws->check_at = k + 2;
		return 0;
	}
	if (bpf_probe_read_user(got, sizeof(got[0]), (void *)m->at[k & (MEMO_WORDS - 1)]) ||
	    got[0] != m->val[k & (MEMO_WORDS - 1)]) {
		ws->check_same = 0;
		return 1;
	}
	ws->check_at = k + 1;
	return 0;
}

/* The stack id of @task's user stack from its memo @m, when the memo
 * holds for registers @r (see struct walk_memo), or -1. */
static __always_inline __s32 replay_walk(struct task_struct *task, __u32 tgid, __u32 gen,
					 const struct hearth_regs *r, struct walk_memo *m,
					 struct walk_state *ws)
{
	void *map = gen ? (void *)&walked1 : (void *)&walked0;
	struct memo_check c = { .m = m, .ws = ws };
	struct hearth_walked *old;
	__u32 key;
	__s32 id;

	if (m->seq != flip_seq || m->gen != gen || m->tgid != tgid ||
	    m->exec_id != task->self_exec_id || m->sp != r->sp || m->fp != r->bp ||
	    r->ip - m->lo >= m->hi - m->lo || m->n == 0 || m->n > HEARTH_STACK_DEPTH)
		return -1;
	ws->check_at = 0;
	ws->check_same = 1;
	bpf_loop(MEMO_WORDS, memo_step, &c, 0);
	if (!ws->check_same || ws->check_at < m->nwords)
		return -1;
	if (r->ip == m->pc)
		return m->ustack;
	/* Another pc in the leaf's row: the same callers under a new leaf. */
	key = (__u32)m->ustack & HEARTH_WALKED_KEY_MASK;
	old = bpf_map_lookup_elem(map, &key);
	if (!old)
		return -1;
	bpf_probe_read_kernel(ws->out.ips, sizeof(ws->out.ips), old->ips);
	ws->out.ips[0] = r->ip;
	ws->hash = ips_hash(ws->out.ips, m->n);
	id = store_walked(gen, ws, m->n);
	if (id >= 0) {
		m->pc = r->ip;
		m->ustack = id;
	}
	return id;
}

/* Keeps the walk just made, whole and kept as @id, as the memo @key. */
static __always_inline void memo_keep(struct task_struct *task, __u32 tgid, __u32 gen,
				      const struct hearth_regs *r, struct walk_state *ws,
				      struct memo_key *key, struct walk_memo *m, __s32 id)
{
	ws->memo.seq = flip_seq;
	ws->memo.exec_id = task->self_exec_id;
	ws->memo.pc = r->ip;
	ws->memo.sp = r->sp;
	ws->memo.fp = r->bp;
	ws->memo.tgid = tgid;
	ws->memo.gen = gen;
	ws->memo.ustack = id;
	ws->memo.n = ws->n;
	if (m)
		bpf_probe_read_kernel(m, sizeof(*m), &ws->memo);
	else
		bpf_map_update_elem(&walk_memos, key, &ws->memo, BPF_ANY);
}

/* Walks the current task's user stack with the CFI rows and keeps it in
 * the walked map of @gen, or (walk_replay) replays the thread's last walk
 * of @kind (MEMO_ONCPU, MEMO_OFFCPU) when it still holds; @replayed says
 * which. Returns the stack id (HEARTH_USTACK_WALKED set), or -1 when the
 * walk could not finish (counted; the caller falls back). */
static __always_inline __s32 walk_user(struct task_struct *task, __u32 tgid, __u32 gen,
				       __u32 kind, bool *replayed)
{
	struct memo_key mkey = { .tid = task->pid, .kind = kind };
	struct walk_memo *m = NULL;
	struct walk_state *ws;
	struct hearth_regs r;
	struct walk w = {};
	__u32 zero = 0;
	__s32 id;

	*replayed = false;
	ws = w.ws = bpf_map_lookup_elem(&walk_scratch, &zero);
	if (!ws)
		return -1;
	read_regs(task, &r);
	if (walk_replay) {
		m = bpf_map_lookup_elem(&walk_memos, &mkey);
		if (m) {
			id = replay_walk(task, tgid, gen, &r, m, ws);
			if (id >= 0) {
				*replayed = true;
				return id;
			}
		}
	}
	/* Without a current table every frame is found by its file. */
	w.proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	if (w.proc && w.proc->exec_id != task->self_exec_id)
		w.proc = NULL;
	ws->pc = r.ip;
	ws->sp = r.sp;
	ws->fp = r.bp;
	ws->fp_ok = 1;
	ws->status = WALK_GOING;
	ws->by_vma = !w.proc;
	ws->seen_ok = 0;
	ws->out.ips[0] = r.ip;
	ws->hash = (FNV_OFFSET ^ r.ip) * FNV_PRIME;
	ws->n = 1;
	ws->map_start = ws->map_end = 0;
	ws->mod_id = ~0u;
	ws->memo.nwords = 0;
	ws->memo_full = 0;
	bpf_loop(HEARTH_STACK_DEPTH, walk_step, &w, 0);
	/* A module found by its file joins the process's table: the next
	 * walks find it there, and may look up another file. Only a file
	 * that is no loaded module needs user space. An exiting process is
	 * walked past its exit event, which dropped its table: it must not
	 * leave a new one. */
	if (ws->seen_ok && !(task->flags & PF_EXITING))
		table_add(tgid, task->self_exec_id, &ws->seen);
	if (ws->status == WALK_NO_TABLE)
		cfi_ask(task, tgid);
	if (ws->status == WALK_NO_TABLE) {
		count(HEARTH_CNT_CFI_NO_TABLE);
		return -1;
	}
	if (ws->status != WALK_WHOLE) {
		count(HEARTH_CNT_CFI_NO_RULE);
		return -1;
	}
	id = store_walked(gen, ws, ws->n);
	/* A walk through a file the process's table lacks is not kept:
	 * the next walks ask for the table again. An exiting thread is
	 * sampled past its exit event, which dropped its memos: it must
	 * not leave a new one. */
	if (walk_replay && id >= 0 && !ws->by_vma && !ws->memo_full &&
	    !(task->flags & PF_EXITING))
		memo_keep(task, tgid, gen, &r, ws, &mkey, m, id);
	return id;
}

static __always_inline __u32 ips_len(long bytes)
{
	return bytes > 0 ? (__u32)(bytes / sizeof(__u64)) : 0;
}

/* On-CPU copies come at the sampling rate and user space takes them in
 * batches at each poll, so a copy wakes it only when the ring is half full
 * or when it is its process's first (user space then reads the process's
 * mappings at once: it may be short-lived). */
static __always_inline __u64 oncpu_wakeup(__u32 tgid)
{
	__u64 used = bpf_ringbuf_query(&stack_events, BPF_RB_AVAIL_DATA);
	__u8 one = 1;

	if (used >= bpf_ringbuf_query(&stack_events, BPF_RB_RING_SIZE) / 2)
		return BPF_RB_FORCE_WAKEUP;
	if (!bpf_map_lookup_elem(&copy_woken, &tgid)) {
		bpf_map_update_elem(&copy_woken, &tgid, &one, BPF_ANY);
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/* Sends an on-CPU sample with a copy of the user stack. Returns false when
 * the ring buffer is full (the caller falls back to the FP walk). */
static __always_inline bool send_oncpu_copy(void *ctx, struct task_struct *task,
					    const struct hearth_key *key)
{
	struct hearth_stack_event *e;

	e = bpf_ringbuf_reserve(&stack_events, sizeof(*e), 0);
	if (!e)
		return false;
	e->tgid = key->tgid;
	e->pid = key->pid;
	e->kind = HEARTH_ON_CPU;
	e->value = 1;
	e->py = key->py;
	__builtin_memset(&e->sig, 0, sizeof(e->sig));
	read_regs(task, &e->regs);
	e->nk = kernel_stacks ? ips_len(bpf_get_stack(ctx, e->kips, sizeof(e->kips), 0)) : 0;
	e->nu = ips_len(bpf_get_stack(ctx, e->fp_ips, sizeof(e->fp_ips), BPF_F_USER_STACK));
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
	BPF_CORE_READ_STR_INTO(&e->tcomm, task, comm);
	e->size = copy_stack(e->data, e->regs.sp, copy_oncpu_bytes);
	bpf_ringbuf_submit(e, oncpu_wakeup(key->tgid));
	count(HEARTH_CNT_STACK_COPIES);
	return true;
}

/* Fills @sig for the current task from its user registers and a hash of
 * the top of its stack. Returns false when the stack cannot be read. */
static __always_inline bool make_sig(struct task_struct *task, __u32 tid,
				     struct hearth_sig *sig)
{
	struct hearth_regs r;
	__u64 *win, h = FNV_OFFSET;
	__u32 zero = 0;
	struct hearth_stack_copy *c = bpf_map_lookup_elem(&copy_scratch, &zero);

	if (!c)
		return false;
	read_regs(task, &r);
	win = (__u64 *)c->data;
	if (bpf_probe_read_user(win, HEARTH_SIG_WINDOW, (void *)r.sp))
		return false;
	for (int i = 0; i < HEARTH_SIG_WINDOW / 8; i++)
		h = (h ^ win[i]) * FNV_PRIME;
	sig->tgid = task->tgid;
	sig->tid = tid;
	sig->ip = r.ip;
	sig->sp = r.sp;
	sig->bp = r.bp;
	sig->hash = h;
	return true;
}

/* At switch-out: copies the current task's stacks into offcpu_copies.
 * Returns whether a copy is kept for the wait. */
static __always_inline bool keep_offcpu_copy(void *ctx, struct task_struct *task,
					     __u32 tid, __u64 now, __u64 py)
{
	struct hearth_stack_copy *c;
	__u32 zero = 0;

	/* Waits can come in the hundreds of thousands a second: they leave
	 * the ring's second half to on-CPU samples, which are few. */
	if (!copy_budget_take(&copy_budget, copy_offcpu_per_sec, now)) {
		count(HEARTH_CNT_COPY_FALLBACK);
		return false;
	}
	if (bpf_ringbuf_query(&stack_events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&stack_events, BPF_RB_RING_SIZE) / 2) {
		count(HEARTH_CNT_COPY_FALLBACK);
		count(HEARTH_CNT_COPY_RING_FULL);
		return false;
	}
	c = bpf_map_lookup_elem(&copy_scratch, &zero);
	if (!c)
		return false;
	read_regs(task, &c->regs);
	c->py = py;
	c->nk = kernel_stacks ? ips_len(bpf_get_stack(ctx, c->kips, sizeof(c->kips), 0)) : 0;
	c->nu = ips_len(bpf_get_stack(ctx, c->fp_ips, sizeof(c->fp_ips), BPF_F_USER_STACK));
	c->size = copy_stack(c->data, c->regs.sp, copy_offcpu_bytes);
	if (bpf_map_update_elem(&offcpu_copies, &tid, c, BPF_ANY)) {
		count(HEARTH_CNT_COPY_FALLBACK);
		return false;
	}
	return true;
}

/* At switch-in: sends the wait with the stacks copied at switch-out.
 * Returns false when it could not (the caller falls back to the FP walk
 * taken at switch-out, so the wait is not lost). */
static __always_inline bool send_offcpu_copy(struct task_struct *task, __u32 tid,
					     __u32 kind, __u64 ns,
					     const struct hearth_sig *sig,
					     const struct hearth_waker *waker)
{
	struct hearth_stack_copy *c = bpf_map_lookup_elem(&offcpu_copies, &tid);
	struct hearth_stack_event *e;

	if (!c)
		return false;
	e = bpf_ringbuf_reserve(&stack_events, sizeof(*e), 0);
	if (!e)
		return false;
	e->tgid = task->tgid;
	e->pid = tid;
	e->kind = kind;
	e->value = ns;
	e->regs = c->regs;
	e->nk = c->nk;
	e->nu = c->nu;
	e->size = c->size;
	e->py = c->py;
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
	BPF_CORE_READ_STR_INTO(&e->tcomm, task, comm);
	bpf_probe_read_kernel(e->kips, sizeof(e->kips), c->kips);
	bpf_probe_read_kernel(e->fp_ips, sizeof(e->fp_ips), c->fp_ips);
	bpf_probe_read_kernel(e->data, sizeof(e->data), c->data);
	e->sig = *sig;
	e->waker = *waker;
	/* Forced: on-CPU copies before it may not have woken user space,
	 * and a wait's unwind should be remembered soon (until then, each
	 * wait with its signature is copied again). */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	count(HEARTH_CNT_STACK_COPIES);
	return true;
}

/* Adds (count, ns) to @key in @map, creating the entry. Returns false
 * when the map is full. */
static __always_inline bool add_to(void *map, void *key,
				   struct task_struct *task, __u64 ns)
{
	struct hearth_value *val, zero = {};

	count(HEARTH_CNT_WRITES);
	val = bpf_map_lookup_elem(map, key);
	if (!val) {
		BPF_CORE_READ_STR_INTO(&zero.comm, task, group_leader, comm);
		BPF_CORE_READ_STR_INTO(&zero.tcomm, task, comm);
		if (bpf_map_update_elem(map, key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(map, key))
			return false;
		val = bpf_map_lookup_elem(map, key);
		if (!val)
			return false;
	}
	__sync_fetch_and_add(&val->count, 1);
	if (ns)
		__sync_fetch_and_add(&val->ns, ns);
	return true;
}

/* Counts a sample or wait recorded with a stack lost to the stack map. */
static __always_inline void count_lost(__s32 kstack, __s32 ustack)
{
	if (kstack == HEARTH_STACK_COLLISION || ustack == HEARTH_STACK_COLLISION)
		count(HEARTH_CNT_LOST_COLLISION);
	else if (kstack == HEARTH_STACK_FULL || ustack == HEARTH_STACK_FULL)
		count(HEARTH_CNT_LOST_STACK_FULL);
}

/* The counts map of @side was full: keeps the sample or wait of thread
 * @tid of @tgid in the lost map of @side, or counts it gone. */
static __always_inline void add_lost(__u32 side, __u32 tgid, __u32 tid, __u32 kind,
				     struct task_struct *task, __u64 ns)
{
	struct hearth_key key = { .tgid = tgid, .pid = tid, .kind = kind,
				  .kstack = HEARTH_STACK_NO_ROOM,
				  .ustack = HEARTH_STACK_NO_ROOM };

	count(HEARTH_CNT_DROP_MAP_FULL);
	if (!add_to(side ? (void *)&lost1 : (void *)&lost0, &key, task, ns))
		count(HEARTH_CNT_LOST_UNKEPT);
}

/* Adds to @key in the counts map of @side: the side active when the
 * program started, not the stacks' gen (a wait can span a flip). */
static __always_inline void add(__u32 side, struct hearth_key *key,
				struct task_struct *task, __u64 ns)
{
	count_lost(key->kstack, key->ustack);
	if (!add_to(side ? (void *)&counts1 : (void *)&counts0, key, task, ns))
		add_lost(side, key->tgid, key->pid, key->kind, task, ns);
}

static __always_inline bool in_capture(__u64 now)
{
	return now >= capture_from && (!capture_until || now <= capture_until);
}

static long vma_any(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	(void)task;
	(void)vma;
	*(__u32 *)data = 1;
	return 0;
}

/* True when @task is in execve past the switch to its new image's memory:
 * its user registers still hold the old image's (the execve call), whose
 * code the new memory no longer maps, and the new image has no frames of
 * its own until it first returns to user space. Its user frames would be
 * addresses of a program that is gone. A lookup that cannot tell (the
 * mmap lock held: the new image being mapped) counts as past the switch.
 * A kernel without the in_execve bit keeps the old behaviour. */
static __always_inline bool exec_stale(struct task_struct *task)
{
	struct pt_regs *regs;
	__u32 found = 0;

	if (!bpf_core_field_exists(task->in_execve) || !BPF_CORE_READ_BITFIELD(task, in_execve))
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	return bpf_find_vma(task, BPF_CORE_READ(regs, ip), vma_any, &found, 0) || !found;
}

SEC("perf_event")
int on_cpu(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct hearth_key key = {};
	__u32 side = active;
	__u64 t0 = time_samples ? bpf_ktime_get_ns() : 0;
	bool user;

	key.tgid = id >> 32;
	key.pid = (__u32)id;
	if (capture_from && !in_capture(bpf_ktime_get_ns()))
		return 0;
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
	key.py = py_walk(key.tgid, key.pid);
	user = task->mm && !exec_stale(task);
	if (cfi_walk && user) {
		bool replayed;
		__s32 u = walk_user(task, key.tgid, key.gen, MEMO_ONCPU, &replayed);

		if (u >= 0) {
			get_stacks(ctx, key.gen, false, &key.kstack, &key.ustack);
			key.ustack = u;
			add(side, &key, task, 0);
			count(replayed ? HEARTH_CNT_CFI_REPLAYED : HEARTH_CNT_CFI_WALKS);
			count(HEARTH_CNT_SAMPLES);
			if (time_samples)
				count_ns(HEARTH_CNT_SAMPLE_NS, t0);
			return 0;
		}
	}
	if (copy_oncpu_bytes && user) {
		if (send_oncpu_copy(ctx, task, &key)) {
			count(HEARTH_CNT_SAMPLES);
			if (time_samples)
				count_ns(HEARTH_CNT_SAMPLE_NS, t0);
			return 0;
		}
		count(HEARTH_CNT_COPY_FALLBACK);
		count(HEARTH_CNT_COPY_RING_FULL);
	}
	get_stacks(ctx, key.gen, user, &key.kstack, &key.ustack);
	add(side, &key, task, 0);
	count(HEARTH_CNT_SAMPLES);
	if (time_samples)
		count_ns(HEARTH_CNT_SAMPLE_NS, t0);
	return 0;
}

/* Off-CPU in CFI mode: the stacks of @prev's wait in @st. The user stack
 * is walked, or its last wait's replayed when every word that walk read
 * still holds (walk_user). The kernel stack is taken every time: one
 * place can wait in several kernel paths (a read() blocks on the pipe's
 * mutex, then for data), and the path says what the wait was. Returns
 * false when the user walk fell back: the caller copies or walks frame
 * pointers. */
static __always_inline bool cfi_switch_out(void *ctx, struct task_struct *prev,
					   __u32 side, struct hearth_offcpu_start *st)
{
	bool replayed;
	__s32 u = walk_user(prev, prev->tgid, side, MEMO_OFFCPU, &replayed), none;

	if (u < 0)
		return false;
	count(replayed ? HEARTH_CNT_WAIT_REUSED : HEARTH_CNT_CFI_WALKS);
	get_stacks(ctx, side, false, &st->kstack, &none);
	st->ustack = u;
	return true;
}

/* Notes where the current task @prev stops: time, kind, stacks (or a
 * signature already unwound, or a copy to unwind). A preempted task, or one
 * still runnable, waits for a CPU: involuntary. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev,
				       bool involuntary, __u64 now, __u32 side)
{
	struct hearth_offcpu_start st = {};
	__u32 pid = prev->pid;
	/* A wait in execve past the memory switch (a page of the new image
	 * read in) has no user frames of its own yet (exec_stale). */
	bool user = prev->mm && !exec_stale(prev);

	st.ts = now;
	st.gen = side;
	st.kind = involuntary ? HEARTH_OFF_CPU_INVOLUNTARY : HEARTH_OFF_CPU_VOLUNTARY;
	st.py = py_walk(prev->tgid, pid);
	if (cfi_walk && user && cfi_switch_out(ctx, prev, side, &st))
		goto keep;
	if (copy_offcpu_bytes && user && make_sig(prev, pid, &st.sig)) {
		if (bpf_map_lookup_elem(&sig_seen, &st.sig))
			st.sig_hit = 1;
		else
			st.has_copy = keep_offcpu_copy(ctx, prev, pid, now, st.py);
	}
	/* A known signature's user stack is already unwound: only the
	 * kernel side is walked. A copied wait keeps the FP walk too, in
	 * case the ring is full when it ends. */
	get_stacks(ctx, st.gen, user && !st.sig_hit, &st.kstack, &st.ustack);
keep:
	if (bpf_map_update_elem(&offcpu_start, &pid, &st, BPF_ANY)) {
		count(HEARTH_CNT_DROP_START_FULL);
		if (st.has_copy)
			bpf_map_delete_elem(&offcpu_copies, &pid);
	}
}

/* @next runs again: adds the time it waited, from where it stopped, to
 * the counts of @side, or sends the copy of its stack. */
static __always_inline void switch_in(struct task_struct *next, __u64 now, __u32 side)
{
	struct hearth_offcpu_start *start;
	__u64 from, ns;
	__u32 pid;
	bool long_enough, sent = false;

	pid = next->pid;
	start = bpf_map_lookup_elem(&offcpu_start, &pid);
	if (!start)
		return;
	from = start->ts > capture_from ? start->ts : capture_from;
	if (capture_until && now > capture_until)
		now = capture_until;
	ns = now > from ? now - from : 0;
	long_enough = ns && ns >= min_block_ns;
	if (start->has_copy) {
		sent = long_enough &&
		       send_offcpu_copy(next, pid, start->kind, ns, &start->sig,
					    &start->waker);
		bpf_map_delete_elem(&offcpu_copies, &pid);
		if (long_enough && !sent) {
			count(HEARTH_CNT_COPY_FALLBACK);
			count(HEARTH_CNT_COPY_RING_FULL);
		}
	}
	if (!long_enough)
		goto out;
	count(HEARTH_CNT_OFFCPU);
	if (sent)
		goto out;
	if (start->sig_hit) {
		struct hearth_sig_key sk = {
			.sig = start->sig,
			.kstack = start->kstack,
			.ustack = start->ustack,
			.kind = start->kind,
			.gen = start->gen,
			.py = start->py,
			.waker = start->waker,
		};

		count_lost(sk.kstack, sk.ustack);
		if (!add_to(side ? (void *)&sig_counts1 : (void *)&sig_counts0, &sk, next, ns))
			add_lost(side, next->tgid, pid, start->kind, next, ns);
		count(HEARTH_CNT_SIG_HITS);
	} else {
		struct hearth_key key = {
			.tgid = next->tgid,
			.pid = pid,
			.kstack = start->kstack,
			.ustack = start->ustack,
			.kind = start->kind,
			.gen = start->gen,
			.py = start->py,
			.waker = start->waker,
		};

		add(side, &key, next, ns);
	}
out:
	bpf_map_delete_elem(&offcpu_start, &pid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(off_cpu, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 side = active;

	/* prev is still current here: its stacks are where it stops. A
	 * dying thread's last switch is no wait: it never runs again. */
	if (prev->pid != 0 && !(prev_state & TASK_DEAD) && !(prev->flags & PF_EXITING) &&
	    wanted(prev, prev->tgid))
		switch_out(ctx, prev, preempt || prev_state == TASK_RUNNING, now, side);

	/* The idle task never waits in offcpu_start. */
	if (next->pid != 0)
		switch_in(next, now, side);
	return 0;
}

#define VM_EXEC 0x00000004

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym __weak;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;

/* Adds @vma to @out when it maps the executable segment of a loaded
 * module (as module_by_vma finds one). */
static __always_inline void exec_vma(struct hearth_cfi_proc *out, struct vm_area_struct *vma)
{
	struct file *file = BPF_CORE_READ(vma, vm_file);
	struct hearth_cfi_file_key k;
	struct hearth_cfi_mapping m;
	struct hearth_cfi_file *f;

	if (!file || !(BPF_CORE_READ(vma, vm_flags) & VM_EXEC))
		return;
	k.ino = BPF_CORE_READ(file, f_inode, i_ino);
	k.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	f = bpf_map_lookup_elem(&cfi_files, &k);
	if (!f || BPF_CORE_READ(vma, vm_pgoff) << 12 != f->seg_off)
		return;
	m.start = BPF_CORE_READ(vma, vm_start);
	m.end = BPF_CORE_READ(vma, vm_end);
	m.delta = m.start - f->seg_off - f->seg_bias + f->base;
	m.module = f->module;
	m.pad = 0;
	table_push(out, &m);
}

/*
 * At exec: @task's table for its new image from the mappings the kernel
 * made (the program and its loader) whose files are loaded modules, so
 * that a program run again walks from its first switch on, not only once
 * user space has read its maps (an exec event away: a short-lived
 * process has done most of its switches by then). Marked built (struct
 * hearth_cfi_proc). The mappings come in address order: sorted and
 * disjoint. Without the task VMA iterator, nothing.
 */
static __always_inline void table_at_exec(struct task_struct *task, __u32 tgid)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct hearth_cfi_proc *out;
	__u32 zero = 0;

	if (!bpf_iter_task_vma_new)
		return;
	out = bpf_map_lookup_elem(&cfi_build, &zero);
	if (!out)
		return;
	out->exec_id = task->self_exec_id;
	out->n = 0;
	out->built = 1;
	if (bpf_iter_task_vma_new(&it, task, 0) == 0)
		while ((vma = bpf_iter_task_vma_next(&it)))
			exec_vma(out, vma);
	bpf_iter_task_vma_destroy(&it);
	if (out->n)
		bpf_map_update_elem(&cfi_procs, &tgid, out, BPF_ANY);
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
	e->exec_id = task->self_exec_id;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	/* A new image: its first copy wakes user space again, its old
	 * tables are stale (the walker checks self_exec_id too: this frees
	 * them) and it may ask for new ones at once. */
	bpf_map_delete_elem(&copy_woken, &tgid);
	bpf_map_delete_elem(&cfi_procs, &tgid);
	bpf_map_delete_elem(&cfi_asked, &tgid);
	if (cfi_walk && wanted(p, tgid))
		table_at_exec(p, tgid);
	emit(HEARTH_EV_EXEC, p, 0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, tgid = child->tgid;
	__u8 one = 1;

	/* Threads share their process's mappings: only new processes. */
	if (child->pid != child->tgid)
		return 0;
	/* A chosen process's child is chosen too (as perf record -p does). */
	if (filter_pid && follow_children && bpf_map_lookup_elem(&pids, &ptgid) &&
	    bpf_map_update_elem(&pids, &tgid, &one, BPF_ANY))
		count(HEARTH_CNT_DROP_CHILD);
	emit(HEARTH_EV_FORK, child, parent->tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	__u32 pid = p->pid;
	struct memo_key mk = { .tid = pid, .kind = MEMO_ONCPU };

	bpf_map_delete_elem(&offcpu_start, &pid);
	bpf_map_delete_elem(&offcpu_copies, &pid);
	bpf_map_delete_elem(&walk_memos, &mk);
	mk.kind = MEMO_OFFCPU;
	bpf_map_delete_elem(&walk_memos, &mk);
	mk.kind = MEMO_WAKER;
	bpf_map_delete_elem(&walk_memos, &mk);
	/* The process is gone when its last thread goes, not its leader. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	pid = p->tgid;
	bpf_map_delete_elem(&copy_woken, &pid);
	bpf_map_delete_elem(&cfi_procs, &pid);
	bpf_map_delete_elem(&cfi_asked, &pid);
	emit(HEARTH_EV_EXIT, p, 0);
	/* Its id may be reused by a process nobody chose. */
	if (filter_pid)
		bpf_map_delete_elem(&pids, &pid);
	return 0;
}

/* --waker only (loaded on demand, off the switch path): @p, waiting where
 * the sampler saw it stop, is woken by the current task, whose stacks its
 * wait keeps. The last wake-up before it runs is the one that counts. */
SEC("tp_btf/sched_waking")
int BPF_PROG(waking, struct task_struct *p)
{
	struct task_struct *task = (void *)bpf_get_current_task_btf();
	struct hearth_offcpu_start *st;
	__u32 pid = p->pid, side = active;
	bool user = task->pid != 0 && task->mm != NULL, replayed;
	__s32 u = -1;

	st = bpf_map_lookup_elem(&offcpu_start, &pid);
	if (!st)
		return 0;
	if (user && cfi_walk)
		u = walk_user(task, task->tgid, side, MEMO_WAKER, &replayed);
	get_stacks(ctx, side, user && u < 0, &st->waker.kstack, &st->waker.ustack);
	if (u >= 0)
		st->waker.ustack = u;
	st->waker.tgid = task->tgid;
	st->waker.gen = side;
	st->waker.seen = 1;
	return 0;
}
