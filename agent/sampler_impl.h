/* SPDX-License-Identifier: MIT */
/* The sampler's private state, shared by sampler.c and drain.c only. */
#ifndef HEARTH_SAMPLER_IMPL_H
#define HEARTH_SAMPLER_IMPL_H

#include "agent/pid_set.h"
#include "agent/sampler.h"
#include "agent/stack_build.h"
#include "symbolize/symbolize.h"

#define MAX_CPUS 1024
/* Time for programs that read the old `active` to finish: they run for
 * microseconds with preemption off. */
#define FLIP_GRACE_US 2000

struct sampler_bpf;
struct bpf_link;
struct ring_buffer;

struct sampler {
	struct sampler_opts opts;
	struct sampler_bpf *skel;
	struct bpf_link *cpu_links[MAX_CPUS];
	int cpu_fds[MAX_CPUS];
	int ncpus;
	int npossible;
	struct ring_buffer *rb;
	struct sym_ctx *sym;
	struct stack_builder *builder;
	pid_t *gone; /* processes that exited: forgotten after the next drain */
	size_t ngone, capgone;
	struct sampler_stats stats;
	struct pid_set seen;
};

#endif
