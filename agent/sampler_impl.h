/* SPDX-License-Identifier: MIT */
/* The sampler's private state, shared by sampler.c and drain.c only. */
#ifndef HEARTH_SAMPLER_IMPL_H
#define HEARTH_SAMPLER_IMPL_H

#include "agent/cfi_tables.h"
#include "agent/drain.h"
#include "agent/pid_set.h"
#include "agent/procmaps.h"
#include "agent/sampler.h"
#include "agent/sig_cache.h"
#include "agent/stack_build.h"
#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"

#define MAX_CPUS 1024
/* Time for programs that read the old `active` to finish: they run for
 * microseconds with preemption off. */
#define FLIP_GRACE_US 2000
/* Most exited processes kept (their mappings, to unwind their last
 * copies) while the copy ring has not been emptied since their exit. */
#define SAMPLER_GONE_HOLD 1024
/* Processes the pid filter holds when it follows children. */
#define SAMPLER_MAX_FOLLOWED 8192
/* Threads that may wait at once when a capture's edges are counted. */
#define SAMPLER_EDGE_THREADS 32768

struct sampler_bpf;
struct bpf_link;
struct ring_reader;

struct sampler {
	struct sampler_opts opts;
	struct sampler_bpf *skel;
	struct bpf_link *cpu_links[MAX_CPUS];
	int cpu_fds[MAX_CPUS];
	int ncpus;
	int npossible;
	struct ring_reader *rb;        /* process events and stack copies */
	struct ring_reader *rb_procs;  /* process events only, to run first */
	struct ring_reader *rb_events; /* forks, execs and exits alone: run
					* before each exit's mappings */
	uint64_t poll_until_ns;        /* CLOCK_MONOTONIC: sampler_poll()
					* stops taking copies after it; 0:
					* never (a drain takes them all) */
	bool stopped;                  /* sampler_stop(): nothing new comes */
	struct sym_ctx *sym;
	struct sym_unwinder *unw;
	struct cfi_tables *cfi; /* unwind auto: the walker's tables */
	/* Mappings of processes at their exit (NULL: this kernel cannot):
	 * then nothing reads /proc at an exec or a fork. */
	struct procmaps *pm;
	uint32_t cfi_pool_rows;
	int cfi_dirfd;          /* compiled tables on disk, -1: none */
	/* Off-CPU unwinds by wait signature. When full, the current
	 * generation becomes the old one (still read until the next
	 * rotation: waits counted just before it must find their unwind). */
	struct sig_cache *sigs, *sigs_old;
	/* Samples unwound from stack copies since the last drain; merged
	 * into the caller's profiles at sampler_drain(). */
	struct prof_profile *pend_on, *pend_off;
	struct stack_builder *builder;
	pid_t *gone; /* processes that exited: forgotten after a drain */
	size_t ngone, capgone;
	size_t gone_covered; /* the first ones, whose copies are all taken */
	struct sampler_stats stats;
	/* Processes left out of the profiles (sampler_set_exclude()). */
	char exclude[SAMPLER_MAX_EXCLUDE][16];
	size_t nexclude;
	struct drain_state drain;
	struct pid_set seen;
	struct sampler_edges *edges; /* sampler_edges_begin(), else NULL */
	uint64_t edge_full; /* threads asleep at the start whose wait found
			     * offcpu_start full: lost (a drop) */
};

/* Ring buffer callback body for a sample with a stack copy: unwinds,
 * symbolizes and adds it to the pending profiles. Returns 0 or -ENOMEM. */
int sampler_take_copy(struct sampler *s, const void *data, size_t len);

/* Returns the remembered user stack of @sig (length in *@n), or NULL. */
/* Python processes (py_procs.c). */
struct sampler_py_buf {
	struct hearth_py_stack stack;
	struct hearth_py_proc proc;
};

/* Tells the kernel @pid runs CPython, when it does: 0, or -ENOENT when
 * not, or another error. */
int sampler_py_track(struct sampler *s, pid_t pid);
/* Tracks every CPython process running now. */
void sampler_py_scan(struct sampler *s);
/* @pid exited. */
void sampler_py_forget(struct sampler *s, pid_t pid);
/* Points in->py and in->pyproc at the Python stack of @key (the sampler's
 * py field), read into @buf; leaves them NULL when there is none. */
void sampler_py_input(struct sampler *s, uint64_t key, uint32_t tgid,
		      struct stack_input *in, struct sampler_py_buf *buf);

/* Room for the stacks of a wait's waker. */
struct sampler_waker_buf {
	uint64_t uips[HEARTH_STACK_DEPTH], kips[HEARTH_STACK_DEPTH];
	char comm[HEARTH_COMM_LEN];
	struct stack_waker w;
};

/* The waker @w of a wait of process @tgid (named @comm), read into @buf,
 * as stack_input.waker takes it; NULL when none was noted. @in_drain:
 * within sampler_drain() (a drain's reads are remembered), else straight
 * from the maps. */
const struct stack_waker *sampler_waker_input(struct sampler *s, const struct hearth_waker *w,
					      uint32_t tgid, const char *comm, bool in_drain,
					      struct sampler_waker_buf *buf);

const uint64_t *sampler_sig_unwind(const struct sampler *s,
				   const struct hearth_sig *sig, size_t *n);

/* Adds a wait counted with kind HEARTH_OFF_CPU_EDGE (begun before the
 * capture) to @p with the stacks its thread had then, and @waker's above
 * them (NULL: none). Returns 0 or a negative errno. */
int sampler_edge_add(struct sampler *s, struct prof_profile *p, uint32_t tgid,
		     uint32_t tid, const struct hearth_value *val,
		     const struct stack_waker *waker);

/* Frees what sampler_edges_begin() made. Accepts NULL. */
void sampler_edges_free(struct sampler_edges *e);

/* Moves the pending profiles into @oncpu / @offcpu (either may be NULL)
 * and starts new empty ones. Returns 0 or -ENOMEM. */
int sampler_take_pending(struct sampler *s, struct prof_profile *oncpu,
			 struct prof_profile *offcpu);

/* Takes process events and stack copies from the rings for at most
 * @slice_ns (then the rest wait there), or until they are empty when
 * @slice_ns is 0. When the rings were emptied, the exits read before
 * the call are marked covered (gone_covered): their copies are all
 * taken. Returns 0 or a negative errno. */
int sampler_consume_for(struct sampler *s, uint64_t slice_ns);

#endif
