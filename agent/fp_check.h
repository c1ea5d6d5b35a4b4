/* SPDX-License-Identifier: MIT */
/*
 * fp_check: in auto mode, whether a process's frame pointers can be
 * trusted. Its first on-CPU samples are both copied and walked by frame
 * pointers; when the walk agrees with the DWARF unwind (but for the
 * process- or thread-start frames, which live in libc) for FP_CHECK_SAMPLES
 * samples in a row, the process is frame-pointer clean and its samples are
 * no longer copied. One disagreement and it is unwound with DWARF for good.
 */
#ifndef HEARTH_FP_CHECK_H
#define HEARTH_FP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define FP_CHECK_SAMPLES 32

enum fp_verdict {
	FP_UNDECIDED = 0,
	FP_CLEAN = 1,      /* frame pointers suffice */
	FP_NEEDS_DWARF = 2,
};

struct fp_check {
	uint32_t *pids;  /* 0 = empty slot */
	uint8_t *state;  /* agreeing samples so far, or FP_CHECK_SAMPLES+verdict */
	size_t cap, len;
};

/* Records one sample of @pid: @dwarf[0..nd) a complete unwind, @fp[0..nf)
 * the FP walk. Returns the verdict after it; FP_CLEAN is returned once,
 * when the process crosses the threshold (later calls keep returning it).
 * Returns FP_UNDECIDED on ENOMEM. */
enum fp_verdict fp_check_sample(struct fp_check *c, uint32_t pid,
				const uint64_t *dwarf, size_t nd,
				const uint64_t *fp, size_t nf);

/* Forgets @pid (exec: a new image; exit). */
void fp_check_forget(struct fp_check *c, uint32_t pid);

/* Frees the table; @c is empty and reusable afterwards. */
void fp_check_free(struct fp_check *c);

#endif
