/* SPDX-License-Identifier: MIT */
/*
 * unwind: whole user stacks from a copy of the top of the stack and three
 * registers, with the DWARF call frame information (.eh_frame,
 * .debug_frame) of each mapped module, for code built without frame
 * pointers.
 *
 * sym_unwind_shared() reads rules once per module; what they cannot say
 * takes a libdw session per process, built from /proc/PID/maps on first
 * use and kept until sym_unwind_forget() (a few at once, the least
 * recently used closed); libdw caches each module's CFI.
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

struct sym_ctx;

/* Unwinds @copy of process @pid with rules read once per module (its
 * .eh_frame) and shared by every process that maps it, over @ctx's view
 * of the process's mappings; their memory counts in @ctx's module budget.
 * Same output as sym_unwind(). Returns -EAGAIN when a frame needs more
 * than a simple rule (an expression, a signal frame, the vDSO, JIT code:
 * sym_unwind() then), -ESRCH when the process's mappings are unknown. */
int sym_unwind_shared(struct sym_ctx *ctx, pid_t pid, const struct sym_stack_copy *copy,
		      uint64_t *pcs, size_t max, int *complete);

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

/* ---- What the in-kernel walker's tables are built from ---- */

/* One executable file-backed mapping of a process. */
struct sym_exec_map {
	uint64_t start, end;
	uint64_t pgoff;      /* file offset of start */
	uint64_t dev, ino;   /* the file's identity, as /proc/PID/maps has it */
	const char *path;    /* as the process names it; valid in the call */
	int deleted;         /* the file is gone from its path (a memfd, an
			      * upgraded binary): open it by its mapping */
};

typedef int (*sym_exec_map_fn)(void *arg, const struct sym_exec_map *m);

/* Calls @fn for each executable file-backed mapping of @pid, in address
 * order (anonymous and special ones, [vdso] included, are left out).
 * Returns 0, -ESRCH when the process is gone, another negative errno, or
 * the first non-zero value @fn returned (which stops the walk). */
int sym_unwind_exec_maps(pid_t pid, sym_exec_map_fn fn, void *arg);

/* Opens the file of mapping @m of process @pid as the process sees it
 * (through its root, for containers; a deleted one through
 * /proc/PID/map_files); regular files only. Returns a descriptor or
 * -errno. */
int sym_unwind_open_mapped(pid_t pid, const struct sym_exec_map *m);

/* The load bias (p_vaddr - p_offset) of the PT_LOAD segment of the ELF
 * file on @fd whose file bytes hold offset @pgoff, in *@bias. Returns 0,
 * -ENOENT when no segment holds it, or -EINVAL when @fd is no ELF. */
int sym_unwind_seg_bias(int fd, uint64_t pgoff, uint64_t *bias);

#endif /* HEARTH_UNWIND_H */
