/* SPDX-License-Identifier: MIT */
/*
 * mem_growth: where memory grows: every request the processes make to
 * the kernel for more memory (brk that grows the heap, an anonymous
 * mmap, an mremap that grows), counted with its user stack, from fexit
 * programs on those system calls (bpf/growth.bpf.c). Each request's
 * stack is copied and unwound with DWARF here, within a budget of copies
 * per second; past it the frame-pointer walk stands in (counted).
 */
#ifndef HEARTH_MEM_GROWTH_H
#define HEARTH_MEM_GROWTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/profile.h"

#define GROWTH_MAX_PIDS 64
/* Default stack copies per second per CPU. */
#define GROWTH_COPIES_PER_SEC 1000

struct sym_debuginfod;

struct growth_opts {
	pid_t pids[GROWTH_MAX_PIDS]; /* only these processes */
	size_t npids;                /* 0 = every process */
	pid_t exclude_tgid;          /* our own, 0 = none */
	bool per_thread;             /* a thread row under each process */
	bool pid_rows;               /* process rows carry their pid (in the
				      * line field, no thread rows):
				      * hearthd's windows */
	uint32_t copies_per_sec;     /* per CPU, 0 = GROWTH_COPIES_PER_SEC */
	struct sym_debuginfod *debuginfod; /* not owned; NULL = none */
	size_t symbol_cache;         /* the symbolizer's module budget, 0 =
				      * its default (sym_options) */
	/* Leaves out the requests of processes it says true for (their
	 * name), as hearthd's exclude_comm does; NULL = none. */
	bool (*skip)(void *arg, const char *comm);
	void *skip_arg;
};

struct growth_stats {
	uint64_t requests;     /* requests seen */
	uint64_t bytes;        /* bytes they asked for */
	uint64_t brk, mmap, mremap; /* the requests by kind */
	uint64_t no_copy;      /* over the copy budget: frame pointers */
	uint64_t unwound;      /* unwound to the outermost frame */
	uint64_t drop_events;  /* requests lost: ring buffer full */
	uint64_t lost;         /* requests user space could not keep */
};

struct growth;

/* Checks privileges, loads and attaches the programs. Returns NULL with
 * one sentence in @err naming what is missing or what failed. */
struct growth *growth_open(const struct growth_opts *opts, char *err, size_t errlen);

/* Waits up to @timeout_ms for requests and keeps them. Returns 0 or a
 * negative errno (-EINTR when a signal arrived). */
int growth_poll(struct growth *g, int timeout_ms);

/* A descriptor that polls readable when requests wait for growth_poll(). */
int growth_poll_fd(const struct growth *g);

/* Adds the requests seen since the last call, symbolized, to @requests
 * (unit samples: how many) and @bytes (unit bytes); either may be NULL.
 * Returns 0 or a negative errno. */
int growth_drain(struct growth *g, struct prof_profile *requests, struct prof_profile *bytes);

/* Detaches the programs and takes what is still in the ring, so that a
 * last growth_drain() holds exactly what was counted. Idempotent. */
void growth_stop(struct growth *g);

/* With a pid filter: whether a chosen process still runs. */
bool growth_alive(const struct growth *g);

void growth_stats(const struct growth *g, struct growth_stats *st);

/* Detaches and frees everything. Accepts NULL. */
void growth_close(struct growth *g);

#endif
