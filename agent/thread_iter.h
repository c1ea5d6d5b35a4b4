/* SPDX-License-Identifier: MIT */
/*
 * thread_iter: every user thread of the chosen processes as it is now,
 * read with a BPF task iterator (bpf/threads.bpf.c): state, switch count,
 * kernel stack, saved user registers and the top of its user stack.
 * The scheduler's tracepoints never see a thread that sleeps through a
 * whole capture; this pass does.
 */
#ifndef HEARTH_THREAD_ITER_H
#define HEARTH_THREAD_ITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/threads.h"

struct thread_iter_opts {
	int pids_fd;          /* a pid filter map (as the sampler's), or -1
			       * for every process */
	const char *comm;     /* only threads or processes named so; NULL
			       * or "" for any */
	pid_t exclude_tgid;   /* our own process, 0 = none */
	uint32_t stack_bytes; /* user stack copied per thread, at most
			       * HEARTH_THREAD_STACK; 0 = that */
	int offcpu_start_fd;  /* the sampler's open waits, for
			       * thread_iter_note_edges() and
			       * thread_iter_skip_unmoved(), or -1 */
};

struct thread_iter;

/* Loads the iterator. Returns NULL with one sentence in @err when the
 * kernel refuses it. */
struct thread_iter *thread_iter_open(const struct thread_iter_opts *o, char *err,
				     size_t errlen);

/* Called for each thread with its record and @t->size bytes of its user
 * stack (both valid during the call only). Non-zero stops the pass. */
typedef int (*thread_iter_fn)(const struct hearth_thread *t, const uint8_t *stack,
			      void *arg);

/* One pass over the threads. Returns 0, @fn's non-zero value, or a
 * negative errno (-EBADMSG when the records make no sense). */
int thread_iter_run(struct thread_iter *it, thread_iter_fn fn, void *arg);

/* The next pass gives each thread off its CPU a start of kind
 * HEARTH_OFF_CPU_EDGE as of @ts_ns (CLOCK_MONOTONIC) on the sampler's
 * side @gen in offcpu_start, unless it holds one, and says so in the
 * record's `noted`. Needs offcpu_start_fd. */
void thread_iter_note_edges(struct thread_iter *it, uint64_t ts_ns, uint32_t gen);

/* From now on (and no longer noting edges), a thread whose start in the sampler's offcpu_start is
 * still of kind HEARTH_OFF_CPU_EDGE comes with `unmoved` set and no
 * stacks (the caller has them). Needs offcpu_start_fd. */
void thread_iter_skip_unmoved(struct thread_iter *it);

/* Frees @it. Accepts NULL. */
void thread_iter_close(struct thread_iter *it);

#endif
