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
			       * undefined, a program's entry point without
			       * CFI): the stack is whole, stop */
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

/* ---- The walker's maps (agent/cfi_tables.c fills them) ---- */

/* Most executable file mappings of one process the walker knows; a
 * process with more has its highest ones left out (their frames fall
 * back to the copy path). */
#define HEARTH_CFI_MAX_MAPPINGS 128
/* Module ids index cfi_modules: at most this many tables at once. */
#define HEARTH_CFI_MAX_MODULES 8192
/* Most rows of one module. */
#define HEARTH_CFI_MAX_ROWS (1u << 24)

/* One executable mapping: an ip in [start, end) is row pc ip - delta of
 * module @module (delta folds the mapping's address, file offset, the
 * segment's load bias and the module's base together). */
struct hearth_cfi_mapping {
	__u64 start;
	__u64 end;
	__u64 delta;
	__u32 module;
	__u32 pad;
};

/* A process's executable mappings, sorted by start and disjoint. Valid
 * only while the process's task->self_exec_id equals @exec_id: an exec
 * (which maps another image) makes it stale without a race. @built: the
 * walker built it from the process's address space and cfi_files (the
 * loaded modules only, holding no reference user space counts): user
 * space deletes such a table when it evicts a module it lists. */
struct hearth_cfi_proc {
	__u64 exec_id;
	__u32 n;
	__u32 built;
	struct hearth_cfi_mapping m[HEARTH_CFI_MAX_MAPPINGS];
};

/*
 * The pool holds each module's page index, then its rows. The index cuts
 * the module's pc space in pages of 2^HEARTH_CFI_PAGE_SHIFT bytes: entry p
 * is the module's row (relative to its first) that covers pc p << shift,
 * the last row at or below it (0 when none is), for p in [0, npages];
 * npages is one past the page of the last row. A pc of page p then lies
 * in rows [entry p, entry p + 1]: at most 2^shift + 1 of them, a few
 * cache lines near each other, where a search over the whole module
 * touches a page of memory per halving. Entries are packed
 * HEARTH_CFI_INDEX_PER_SLOT to a pool slot.
 */
#define HEARTH_CFI_PAGE_SHIFT 8
#define HEARTH_CFI_PAGE_STEPS 9 /* halvings over 2^8 + 1 rows */
#define HEARTH_CFI_INDEX_PER_SLOT 3

/* A pool slot: one row, or HEARTH_CFI_INDEX_PER_SLOT index entries. */
union hearth_cfi_slot {
	struct hearth_cfi_row row;
	__u32 index[HEARTH_CFI_INDEX_PER_SLOT];
};

/* Where a module is in the pool: rows [first, first + n), its page index
 * from slot @index. n = 0: not loaded (yet, or evicted, or no CFI): its
 * frames fall back to the copy path. */
struct hearth_cfi_module {
	__u32 first;
	__u32 n;
	__u32 index;
	__u32 npages;
};

/* first of a module with n = 0 whose file has no usable CFI: its frames
 * fall back without asking user space again. */
#define HEARTH_CFI_NO_CFI 0xffffffffu

/* A loaded module by file, for addresses a process's mappings do not
 * cover yet (its first samples after exec, a library just loaded): the
 * walker asks the kernel which file maps the address (bpf_find_vma) and
 * finds the module here. dev is the kernel's encoding, major << 20 |
 * minor, as /proc/PID/maps prints it split. */
struct hearth_cfi_file_key {
	__u64 dev;
	__u64 ino;
};

struct hearth_cfi_file {
	__u64 seg_off;  /* page-aligned file offset of the executable segment */
	__u64 seg_bias; /* its p_vaddr - p_offset */
	__u64 base;     /* the module's base (see struct hearth_cfi_row) */
	__u32 module;
	__u32 pad;
};

/* The kernel's vDSO, which every 64-bit process maps (no file: the
 * walker knows it by the address the kernel keeps in the process's mm).
 * Its table is one module, compiled by user space from its own copy. A
 * process whose vDSO image has another size (a 32-bit one) is not
 * walked through it. */
struct hearth_cfi_vdso {
	__u64 size;   /* the image's bytes, as the kernel has it; 0: none */
	__u64 delta;  /* row pc = ip - (vDSO start + delta) */
	__u32 module;
	__u32 pad;
};

/* A user stack walked in the kernel, in the walked stack map of its
 * generation under the key (hash & HEARTH_WALKED_KEY_MASK); the hash
 * tells two stacks of the same key apart. ips as a stack map holds them:
 * leaf first, a zero ends a shorter stack. */
struct hearth_walked {
	__u64 hash;
	__u64 ips[127];
};

/* A user stack id with this bit set is a key of the walked stack map,
 * not a stack map id (stack map ids stay far below it). */
#define HEARTH_USTACK_WALKED (1 << 30)
#define HEARTH_WALKED_KEY_MASK (HEARTH_USTACK_WALKED - 1)

#endif /* HEARTH_BPF_UNWIND_H */
