/* SPDX-License-Identifier: MIT */
/*
 * sampler: the eBPF sampler seen from user space.
 *
 * Opens, tunes, loads and attaches the on-CPU (cpu-clock perf event per
 * online CPU) and off-CPU (tp_btf/sched_switch) programs, follows process
 * exec/fork/exit so short-lived processes are still named, and drains the
 * in-kernel aggregation into symbolized profiles. Used in-process by
 * `hearth record` and continuously by hearthd.
 */
#ifndef HEARTH_SAMPLER_H
#define HEARTH_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../profile/profile.h"

#define SAMPLER_MAX_PIDS 64

struct sym_debuginfod;

enum sampler_unwind {
	SAMPLER_UNWIND_FP = 0,
	SAMPLER_UNWIND_DWARF = 1,
	SAMPLER_UNWIND_AUTO = 2, /* walk user stacks in the kernel with
				  * compiled CFI; copy and unwind with
				  * DWARF when it cannot */
};

struct sampler_opts {
	uint32_t hz;             /* on-CPU frequency, default 99 */
	bool on_cpu;
	bool off_cpu;
	uint64_t min_block_ns;   /* off-CPU: ignore shorter waits */
	pid_t pids[SAMPLER_MAX_PIDS]; /* only these processes (tgids) */
	size_t npids;            /* 0 = every process */
	bool follow_children;    /* with pids: and the processes they fork
				  * from now on, theirs too */
	bool wakers;             /* off-CPU: each wait keeps the stacks of
				  * the task that woke it, above a frame
				  * "--" */
	bool edges;              /* sampler_edges_begin() will be called:
				  * room for every chosen thread's wait */
	char comm[16];           /* only tasks of this comm ("" = any) */
	bool kernel_stacks;      /* include kernel frames */
	bool per_thread;         /* add a thread row under each process */
	bool pid_rows;           /* instead: the process row carries the
				  * process id in its line field (hearthd) */
	enum sampler_unwind unwind;
	pid_t exclude_tgid;      /* our own process, 0 = none */
	uint32_t stack_bytes;    /* DWARF: user stack bytes copied, 0 = 16384 */
	uint64_t symbol_cache;   /* bytes of cached modules, 0 = the
				  * symbolizer's default */
	struct sym_debuginfod *debuginfod; /* fetches missing debug files
				  * (not owned, outlives the sampler); NULL =
				  * none */
	uint32_t offcpu_copies;  /* auto: off-CPU fallback copies per second
				  * per CPU, 0 = 256 (and never past half the
				  * copy ring: on-CPU fallbacks keep the rest) */
	uint64_t cfi_bytes;      /* auto: kernel memory for the walker's
				  * tables, 0 = SAMPLER_CFI_BYTES */
	const char *cfi_cache_dir; /* auto: a trusted directory where compiled
				  * tables are kept, NULL = memory only */
	uint32_t stack_map_size; /* distinct stacks each side's stack map
				  * holds (the aggregation map 4 times as
				  * many entries), SAMPLER_STACK_MAP_MIN to
				  * _MAX; 0 = SAMPLER_STACK_MAP_SIZE, or an
				  * eighth of it for a few chosen tasks */
};

/* Stacks per window the kernel holds by default; past it (or on a slot
 * taken by another stack) samples are kept as lost. Each stack costs
 * about 3.5 KiB of kernel memory, allocated at load (the two stack maps'
 * 1 KiB entries, 4 aggregation entries and a signature count per side),
 * and stacks walked in the kernel (twice as many) up to 4.5 KiB more as
 * they come. */
#define SAMPLER_STACK_MAP_SIZE 16384u
#define SAMPLER_STACK_MAP_MIN 1024u
#define SAMPLER_STACK_MAP_MAX (1u << 20)

/* Default kernel memory for the in-kernel walker's tables: three
 * quarters rows (about 1.5 million: a hundred large libraries), one
 * quarter process mappings. */
#define SAMPLER_CFI_BYTES (24ULL << 20)

/* Counters since sampler_open(). */
struct sampler_stats {
	uint64_t samples;         /* on-CPU samples of the chosen tasks */
	uint64_t idle_samples;    /* on-CPU samples that hit the idle task */
	uint64_t offcpu_events;   /* off-CPU waits recorded */
	uint64_t offcpu_ns;       /* off-CPU nanoseconds recorded */
	uint64_t drop_stack;      /* samples and waits whose stack the stack
				   * map had no room for (lost_collision +
				   * lost_stack_full) */
	uint64_t drop_map_full;   /* aggregation map full (or the pid
				   * filter, for a child not followed, or
				   * the off-CPU start map: a wait lost) */
	uint64_t drop_events;     /* process event ring full (a short-lived
				   * process may go unnamed) */
	uint64_t processes;       /* distinct processes seen */
	uint64_t stack_copies;    /* samples unwound from a stack copy */
	uint64_t copy_fallbacks;  /* copies over budget: FP walk used */
	uint64_t python_procs;    /* CPython processes whose frames are read */
	uint64_t python_lost;     /* samples whose Python frames were gone */
	uint64_t sig_hits;        /* waits that reused an earlier unwind */
	uint64_t unwind_ns;       /* user-space time unwinding copies */
	uint64_t unwind_complete; /* unwinds that reached the outermost frame */
	uint64_t blocked_whole;   /* threads blocked from sampler_edges_begin()
				   * to sampler_edges_end() */
	uint64_t edge_pass_ns;    /* time those two passes over the threads
				   * took, unwinding and symbolizing included */
	uint64_t bpf_run_ns;      /* BPF program run time, when stats are on */
	uint64_t bpf_run_cnt;
	/* Per program (on_cpu, off_cpu), when kernel.bpf_stats_enabled. */
	uint64_t oncpu_run_ns, oncpu_run_cnt;
	uint64_t offcpu_run_ns, offcpu_run_cnt;
	uint64_t sample_ns;       /* on-CPU program time in the runs that
				   * recorded a sample (when stats were on
				   * at sampler_open()) */
	/* In-kernel unwinding (unwind auto). */
	uint64_t cfi_walks;        /* user stacks walked whole in the kernel */
	uint64_t cfi_no_table;     /* fell back: tables not loaded (yet) */
	uint64_t cfi_no_rule;      /* fell back: a row needs more, a read failed */
	uint64_t cfi_collisions;   /* fell back: walked map key taken or full */
	uint64_t waits_reused;     /* waits that replayed their last wait's walk */
	uint64_t cfi_replayed;     /* of cfi_walks: on-CPU samples that replayed
				    * their thread's last walk */
	uint64_t cfi_processes;    /* processes with tables loaded */
	uint64_t cfi_modules;      /* modules with rows loaded */
	uint64_t cfi_rows;
	uint64_t cfi_bytes;        /* kernel memory the tables use */
	uint64_t cfi_pool_bytes;   /* and may use */
	uint64_t cfi_evictions;
	/* Drops by cause (agent/drops.h gathers them): */
	uint64_t lost_collision;   /* recorded as lost: the stack's slot in
				    * the stack map held another stack */
	uint64_t lost_stack_full;  /* recorded as lost: the stack map was full */
	uint64_t lost_no_room;     /* the aggregation map was full: recorded
				    * per thread as lost */
	uint64_t lost_unkept;      /* and the overflow map too: in no profile */
	uint64_t copy_ring_full;   /* stack copies the ring had no room for
				    * (frame pointers used instead) */
	uint64_t unnamed;          /* samples and waits whose process was gone
				    * before its mappings were read: user
				    * frames unnamed */
	uint64_t stack_map_size;   /* the stack map's entries, as loaded */
};

struct sampler;

/* Checks what the sampler needs (privileges, BTF, perf events) and opens
 * it. Returns NULL with one sentence in @err naming what is missing or what
 * failed. */
struct sampler *sampler_open(const struct sampler_opts *opts, char *err,
			     size_t errlen);

/* Waits up to @timeout_ms for process events (exec/fork/exit) and handles
 * them: a new or forked process's mappings are cached before it can exit.
 * Returns 0, or a negative errno (-EINTR when a signal arrived). */
int sampler_poll(struct sampler *s, int timeout_ms);

/* A descriptor that polls readable while process events (or stack
 * copies) wait in the sampler's rings: take them with sampler_poll(s, 0).
 * Valid until sampler_close(). */
int sampler_poll_fd(const struct sampler *s);

/* Swaps the in-kernel buffers and moves everything collected since the last
 * drain into @oncpu (samples) and @offcpu (nanoseconds), symbolized. Either
 * may be NULL when that kind is off. No sample is lost or counted twice
 * across drains. Returns 0 or a negative errno. */
int sampler_drain(struct sampler *s, struct prof_profile *oncpu,
		  struct prof_profile *offcpu);

/* Stops sampling (detaches every program) so that a last sampler_drain()
 * collects exactly what the counters counted. Idempotent. */
void sampler_stop(struct sampler *s);

/* Leaves out, from the next drain on, the stacks of processes named one
 * of @comms[0..n) (the process row's name: the group leader's comm, or
 * "[unknown]"); they are not symbolized. n > SAMPLER_MAX_EXCLUDE is cut
 * to that many. */
#define SAMPLER_MAX_EXCLUDE 32
void sampler_set_exclude(struct sampler *s, const char (*comms)[16], size_t n);

/* Whether the process row named @comm ("" for unknown) is left out. */
bool sampler_excluded(const struct sampler *s, const char *comm);

/* Waits at a capture's edges (off-CPU sampling only). The sampler counts
 * a wait when it ends, and knows where it began only when that was after
 * it was attached. Right after sampler_open(), sampler_edges_begin() reads
 * every chosen thread (a BPF task iterator) and notes those off their
 * CPU, with their stacks, so that their waits count from *@t0_ns (the
 * time of that pass, CLOCK_MONOTONIC) when they end. Returns 0, or a
 * negative errno with one sentence in @err. */
int sampler_edges_begin(struct sampler *s, uint64_t *t0_ns, char *err, size_t errlen);

/* Ends the capture begun by sampler_edges_begin() at @t1_ns
 * (CLOCK_MONOTONIC), before sampler_stop(): a wait that ends later counts
 * up to @t1_ns, a later sample not at all. Does nothing without
 * sampler_edges_begin(). */
void sampler_edges_close(struct sampler *s, uint64_t t1_ns);

/* After sampler_stop() at @t1_ns (CLOCK_MONOTONIC) and its last drain:
 * adds to @offcpu every wait still going at @t1_ns, from where it began
 * up to @t1_ns, with the stacks its thread has now; a thread that never
 * ran since sampler_edges_begin() gets a frame "(blocked the whole
 * snapshot)" between its user and its kernel frames. Returns 0 or a
 * negative errno (-EINVAL without sampler_edges_begin()). */
int sampler_edges_end(struct sampler *s, struct prof_profile *offcpu, uint64_t t1_ns);

/* What sampler_open_waits() looks for. */
struct sampler_open_req {
	const uint32_t *pids; /* only these processes (up to SAMPLER_MAX_PIDS) */
	size_t npids;         /* 0 = every process */
	const char *comm;     /* only processes named so; NULL = any */
	uint64_t from_ns, to_ns; /* the span (CLOCK_MONOTONIC) */
};

/* For a span [@q->from_ns, @q->to_ns) cut out of windows already
 * drained (hearthd's snapshots): reads every chosen thread as it is now
 * (a BPF task iterator) and adds to @offcpu, under a thread row and with
 * the process row's pid left out, the part in the span of each wait
 * still going since before @q->to_ns, with the stacks the thread has
 * now: the windows hold only the waits that ended. A thread asleep
 * since before @q->from_ns, or since before the sampler began (it never
 * saw it go), gets its whole span and a frame "(blocked the whole
 * snapshot)" between its user and its kernel frames; *@whole counts
 * them. Needs off-CPU sampling and per_thread. Returns 0, or a
 * negative errno with one sentence in @err. */
int sampler_open_waits(struct sampler *s, struct prof_profile *offcpu,
		       const struct sampler_open_req *q, uint64_t *whole, char *err,
		       size_t errlen);

/* With a pid filter: whether a chosen process, or one they forked since
 * (follow_children), still runs. A process leaves the filter when its last
 * thread exits (it may not be reaped yet). False without a pid filter. */
bool sampler_chosen_alive(const struct sampler *s);

/* Current counters. */
void sampler_stats(const struct sampler *s, struct sampler_stats *st);

/* Detaches and frees everything. Accepts NULL. */
void sampler_close(struct sampler *s);

#endif /* HEARTH_SAMPLER_H */
