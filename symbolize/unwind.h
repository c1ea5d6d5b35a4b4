/* SPDX-License-Identifier: MIT */
/*
 * unwind: whole user stacks from a copy of the top of the stack and three
 * registers, with the DWARF call frame information (.eh_frame,
 * .debug_frame) of each mapped module, for code built without frame
 * pointers.
 *
 * One libdw session per process, built from /proc/PID/maps on first use
 * and kept until sym_unwind_forget(); libdw caches each module's CFI.
 * Modules are opened through /proc/PID/root, so processes in other mount
 * namespaces (containers) unwind through their own binaries.
 * The stack bytes are only read during the call: nothing keeps them.
 */
#ifndef HEARTH_UNWIND_H
#define HEARTH_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sym_regs {
	uint64_t ip;
	uint64_t sp;
	uint64_t bp;
};

/* One copied user stack: @size bytes from address regs.sp upwards. */
struct sym_stack_copy {
	struct sym_regs regs;
	const uint8_t *data;
	size_t size;
};

struct sym_unwinder;

/* Returns a new unwinder, or NULL when out of memory. */
struct sym_unwinder *sym_unwinder_new(void);

/* Frees @u and every per-process session. Accepts NULL. */
void sym_unwinder_free(struct sym_unwinder *u);

/* Unwinds the stack of thread @tid of process @pid. Writes at most @max
 * program counters to @pcs, leaf first (pcs[0] = regs.ip; the others are
 * return addresses). Returns how many (>= 1), and sets *@complete to 1 when
 * the unwind reached the outermost frame, 0 when it stopped early (copy too
 * short, unknown code). Returns a negative errno when the process cannot be
 * read (-ESRCH when it is gone). */
int sym_unwind(struct sym_unwinder *u, pid_t pid, pid_t tid,
	       const struct sym_stack_copy *copy, uint64_t *pcs, size_t max,
	       int *complete);

/* Joins an unwind that stopped early with the frame-pointer walk of the
 * same sample: the first return address they share is where the FP walk
 * takes over. Writes the result to @out (at most @max) and returns its
 * length. With nothing shared, keeps the longer of the two. */
size_t sym_unwind_splice(const uint64_t *dwarf, size_t nd, const uint64_t *fp,
			 size_t nf, uint64_t *out, size_t max);

/* Lets @child, just forked from @parent, unwind with the parent's session
 * until it execs: it has the same mappings, and may exit before its own
 * could be read. Returns 0 or -ENOMEM. */
int sym_unwind_fork(struct sym_unwinder *u, pid_t parent, pid_t child);

/* Drops the session of @pid (after exit, or when its mappings changed). */
void sym_unwind_forget(struct sym_unwinder *u, pid_t pid);

#endif /* HEARTH_UNWIND_H */
