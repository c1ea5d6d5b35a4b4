/* SPDX-License-Identifier: MIT */
/*
 * memory: where the chosen processes allocate memory and what holds it,
 * from uprobes on their allocator (bpf/memory.bpf.c), seen from user
 * space.
 *
 * Only the processes chosen are probed (the kernel places breakpoints in
 * no other process), and only while the tracer is open: the probes are
 * links on descriptors, gone when they close, even when the process
 * holding them is killed. Allocations are sampled by bytes (one sample
 * every sample_bytes on average) and weighed (agent/mem_stacks.h).
 */
#ifndef HEARTH_MEMORY_H
#define HEARTH_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"

#define MEM_MAX_PIDS 64
/* Default mean bytes between samples, as tcmalloc's. */
#define MEM_SAMPLE_BYTES (512u * 1024)
/* Default most sampled allocations held at once the kernel tracks. */
#define MEM_LIVE_MAX 65536u

struct sym_debuginfod;

struct mem_opts {
	pid_t pids[MEM_MAX_PIDS]; /* the processes probed (at least one) */
	size_t npids;
	uint64_t sample_bytes;   /* mean bytes between samples, 0 = default */
	bool held;               /* watch frees: mem_held() answers */
	bool per_thread;         /* a thread row under each process */
	uint32_t live_max;       /* held: sampled allocations tracked at
				  * once, 0 = MEM_LIVE_MAX */
	struct sym_debuginfod *debuginfod; /* not owned; NULL = none */
};

/* Counters since mem_open(). */
struct mem_stats {
	uint64_t calls;        /* allocator calls that asked for bytes */
	uint64_t bytes;        /* bytes they asked for */
	uint64_t samples;      /* allocations sampled */
	uint64_t frees;        /* frees of sampled allocations */
	uint64_t drop_events;  /* samples lost: ring buffer full */
	uint64_t drop_live;    /* held samples lost: live map full */
	uint64_t drop_state;   /* calls not counted: no thread state */
	uint64_t lost;         /* samples user space could not keep */
	uint32_t procs;        /* processes probed */
	double mean;           /* mean bytes between samples, as drawn */
};

struct mem_tracer;

/* Checks privileges, loads the programs and probes the allocator each
 * chosen process calls (its executable's or a preloaded library's
 * malloc, else libc's). Returns NULL with one sentence in @err naming
 * what is missing or what failed. */
struct mem_tracer *mem_open(const struct mem_opts *opts, char *err, size_t errlen);

/* Waits up to @timeout_ms for samples and keeps them. Returns 0, or a
 * negative errno (-EINTR when a signal arrived). */
int mem_poll(struct mem_tracer *t, int timeout_ms);

/* Adds the allocations sampled since the last call, weighed and
 * symbolized, to @bytes and @objects (either may be NULL; units bytes
 * and samples). Returns 0 or a negative errno. */
int mem_drain(struct mem_tracer *t, struct prof_profile *bytes,
	      struct prof_profile *objects);

/* With opts.held: adds to @bytes and @objects (either may be NULL) what
 * the sampled allocations not freed yet hold, weighed the same way.
 * Returns 0, -EINVAL without opts.held, or a negative errno. */
int mem_held(struct mem_tracer *t, struct prof_profile *bytes,
	     struct prof_profile *objects);

/* Removes every probe (takes the samples still in the ring first), so
 * that a last mem_drain() and mem_held() see exactly what was counted.
 * Idempotent. */
void mem_stop(struct mem_tracer *t);

/* Whether a probed process still runs. */
bool mem_alive(const struct mem_tracer *t);

/* Current counters. */
void mem_stats(const struct mem_tracer *t, struct mem_stats *st);

/* Removes the probes and frees everything. Accepts NULL. */
void mem_close(struct mem_tracer *t);

#endif
