/* SPDX-License-Identifier: MIT */
/*
 * ksym: what bpf/ksym.bpf.c and symbolize/ksym_bpf.c share. The program
 * names a batch of kernel addresses with the kernel's own "%pS"
 * ("name+0xoff/0xsize [module]", or the bare address when no symbol
 * holds it), so user space never reads /proc/kallsyms whole.
 */
#ifndef HEARTH_BPF_KSYM_H
#define HEARTH_BPF_KSYM_H

#define KSYM_BATCH 64  /* addresses named per run */
/* bytes per answer, NUL included: a name of KSYM_NAME_LEN (512 since
 * 6.1, for Rust) plus "+0x../0x.. [module]" */
#define KSYM_STR 640

#endif /* HEARTH_BPF_KSYM_H */
