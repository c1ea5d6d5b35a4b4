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

#include "bpf/python.h"
#include "profile/profile.h"
#include "profile/waits.h"
#include "symbolize/symbolize.h"

/* The task that woke a wait (hearth record --waker). */
struct stack_waker {
	uint32_t tgid;
	const char *comm;     /* its process name */
	const uint64_t *uips; /* user stack, leaf first; may be NULL */
	size_t nu;
	const uint64_t *kips; /* kernel stack, leaf first; may be NULL */
	size_t nk;
};

/* The frame between a wait and the stack of the task that woke it. */
#define STACK_WAKER_FRAME PROF_WAKER_FRAME

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
	bool pid_row;     /* the process row carries tgid in its line field
			   * (hearthd's windows, whose thread rows the
			   * store's merges leave out but for a snapshot
			   * of threads) */
	/* The thread's Python frames at the sample, and its interpreter:
	 * they replace the evaluation loop's native frames. NULL = none. */
	const struct hearth_py_stack *py;
	const struct hearth_py_proc *pyproc;
	const char *mark; /* a waiting frame between the user and the kernel
			   * frames ("(blocked the whole snapshot)"), or NULL;
			   * stack_builder_add_memo() does not remember such
			   * a stack */
	/* Who woke the wait, or NULL: above the wait's frames come
	 * STACK_WAKER_FRAME, then the waker's kernel and user frames leaf
	 * first (its outermost caller at the top), then its process name,
	 * as offwaketime draws them. Not remembered by
	 * stack_builder_add_memo(). */
	const struct stack_waker *waker;
	bool lost;        /* the sampler lost the stack: one frame
			   * STACK_LOST_FRAME under the process (and thread)
			   * row instead of any other */
};

/* The frame of samples whose stack the kernel had no room for. */
#define STACK_LOST_FRAME "[lost: stack map full]"

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
 * input later, into this or another profile, costs a hash, a compare and a
 * copy of frames the profile does not have yet, instead of symbolizing
 * every frame again. Stacks with a frame that could be named otherwise
 * later (unresolved, JIT) are not remembered, and remembered ones are
 * symbolized again after STACK_MEMO_MAX_AGE epochs. The builder keeps the
 * profiles it was given until stack_builder_next_epoch(): call that before
 * any of them is freed or replaced, and stack_builder_forget_tgid() when a
 * process's mappings change (exec, exit). Returns 0 or a negative errno. */
int stack_builder_add_memo(struct stack_builder *b, struct sym_ctx *sym,
			   struct prof_profile *p, const struct stack_input *in,
			   uint64_t value);

/* Epochs (a drain each) after which a remembered stack is rebuilt. */
#define STACK_MEMO_MAX_AGE 30

/* Lets go of the profiles given since the last call (they may be freed or
 * replaced after it) and starts a new epoch; remembered stacks are kept. */
void stack_builder_next_epoch(struct stack_builder *b);

/* Forgets every remembered stack and the profiles given. */
void stack_builder_forget(struct stack_builder *b);

/* Forgets the remembered stacks of process @tgid, and the frames cached
 * for its addresses in this epoch (its addresses mean other code after an
 * exec, or another process reused its id): its stacks added after the
 * call are symbolized again. */
void stack_builder_forget_tgid(struct stack_builder *b, uint32_t tgid);

#endif
