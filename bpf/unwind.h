/* SPDX-License-Identifier: MIT */
/*
 * In-kernel unwinding: what user space compiles from a module's CFI
 * (.eh_frame / .debug_frame) and the sampler's BPF walker reads. Types
 * only, no logic. x86-64: the return address is always at CFA - 8.
 */
#ifndef HEARTH_BPF_UNWIND_H
#define HEARTH_BPF_UNWIND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* How a row finds the canonical frame address (CFA). */
enum hearth_cfa_rule {
	HEARTH_CFA_SP = 0,    /* CFA = SP + cfa_off */
	HEARTH_CFA_FP = 1,    /* CFA = FP (rbp) + cfa_off */
	HEARTH_CFA_PLT = 2,   /* a PLT stub: CFA = SP + 8, or SP + 16 when
			       * (pc & 15) >= 11 (after the push) */
	HEARTH_CFA_END = 3,   /* outermost frame (_start, thread start, RA
			       * undefined): the stack is whole, stop */
	HEARTH_CFA_MORE = 4,  /* needs more than this table says (DWARF
			       * expression, signal frame, register other
			       * than SP/FP): fall back for this sample */
	HEARTH_CFA_NONE = 5,  /* no CFI covers this address */
};

/* Where the caller's frame pointer (rbp) is after this frame returns. */
enum hearth_fp_rule {
	HEARTH_FP_SAME = 0,   /* rbp is unchanged (not saved by this frame) */
	HEARTH_FP_AT_CFA = 1, /* rbp was saved at CFA + fp_off */
	HEARTH_FP_LOST = 2,   /* rbp was not recoverable: the walk may
			       * continue only while no row uses CFA_FP */
};

/*
 * One unwind rule, valid from @pc up to the next row's pc. A module's
 * rows are sorted by pc, unique, and cover its executable segments; a gap
 * is a HEARTH_CFA_NONE row. pc is the ELF virtual address (p_vaddr space)
 * minus the module's base, its lowest PT_LOAD p_vaddr rounded down to a
 * page (0 for shared objects and PIEs), so that 32 bits suffice. The
 * agent turns a sampled ip into that space with the mapping's load bias,
 * computed from the segment that holds the address (p_vaddr - p_offset).
 */
struct hearth_cfi_row {
	__u32 pc;
	__s16 cfa_off;  /* CFA_SP / CFA_FP: the offset */
	__s16 fp_off;   /* FP_AT_CFA: where rbp was saved, relative to CFA */
	__u8 cfa_rule;  /* enum hearth_cfa_rule */
	__u8 fp_rule;   /* enum hearth_fp_rule */
	__u8 pad[2];
};

#endif /* HEARTH_BPF_UNWIND_H */
