/* SPDX-License-Identifier: MIT */
/*
 * stack_build: one sampled stack (raw instruction pointers) to one stack of
 * profile frames, root first: process row, optional thread row, user frames
 * from the outermost caller in, then kernel frames, then, for a wait, what
 * the thread waited for.
 */
#ifndef HEARTH_STACK_BUILD_H
#define HEARTH_STACK_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "symbolize/symbolize.h"

struct stack_input {
	uint32_t tgid, tid;
	const char *comm;  /* process name */
	const char *tcomm; /* thread name */
	const uint64_t *uips; /* user stack, leaf first; may be NULL */
	size_t nu;
	const uint64_t *kips; /* kernel stack, leaf first; may be NULL */
	size_t nk;
	bool off_cpu;
	bool involuntary; /* off-CPU: preempted, waiting for a CPU */
	bool per_thread;
};

struct stack_builder;

/* Returns a builder (scratch space reused across stacks), NULL on ENOMEM. */
struct stack_builder *stack_builder_new(void);

/* Frees @b. Accepts NULL. */
void stack_builder_free(struct stack_builder *b);

/* Symbolizes @in with @sym and adds @value to its stack in @p. BPF frames
 * (the sampler's own) are left out. Returns 0 or a negative errno. */
int stack_builder_add(struct stack_builder *b, struct sym_ctx *sym,
		      struct prof_profile *p, const struct stack_input *in,
		      uint64_t value);

/* As stack_builder_add(), and remembers the symbolized stack: the same
 * input into the same profile later costs a hash and a compare instead of
 * symbolizing every frame again. Remembered stacks hold frame ids of @p:
 * call stack_builder_forget() before @p is freed or replaced, and when a
 * process's mappings change (exec, exit). Returns 0 or a negative errno. */
int stack_builder_add_memo(struct stack_builder *b, struct sym_ctx *sym,
			   struct prof_profile *p, const struct stack_input *in,
			   uint64_t value);

/* Forgets every remembered stack. */
void stack_builder_forget(struct stack_builder *b);

/* Forgets the remembered stacks of process @tgid (its addresses mean
 * other code after an exec, or another process reused its id). */
void stack_builder_forget_tgid(struct stack_builder *b, uint32_t tgid);

#endif
