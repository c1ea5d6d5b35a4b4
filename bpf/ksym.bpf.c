// SPDX-License-Identifier: GPL-2.0
/*
 * ksym: names kernel addresses one batch at a time. User space writes
 * ksym_addr[0 .. ksym_n) and runs the program with BPF_PROG_TEST_RUN; each
 * address comes back in ksym_out[] as the kernel's "%pS" prints it (the
 * same binary search over its symbol table that stack traces use). The
 * other way round (ksym_mode 1), names come back as addresses, so user
 * space can tell which of several names an address has. The
 * bounds of the core kernel's text come back once, so user space can tell
 * the core kernel from BPF programs, which "%pS" prints without a module.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ksym.h"

char LICENSE[] SEC("license") = "GPL";

__u64 ksym_addr[KSYM_BATCH];
char ksym_out[KSYM_BATCH][KSYM_STR];
__u32 ksym_len[KSYM_BATCH]; /* bytes "%pS" wanted, NUL included */
__u32 ksym_n;
/* 0: print ksym_addr[i] into ksym_out[i]; 1: the address of the name in
 * ksym_out[i] (NUL-padded) into ksym_addr[i], 0 when there is none */
__u32 ksym_mode;
/* _stext, _etext, _sinittext, _einittext; 0 when not found */
__u64 ksym_text[4];

static long name_one(__u32 i, void *unused)
{
	if (i >= KSYM_BATCH)
		return 1;
	long r = bpf_snprintf(ksym_out[i], KSYM_STR, "%pS", &ksym_addr[i],
			      sizeof(ksym_addr[i]));
	ksym_len[i] = r < 0 ? 0 : (__u32)r;
	return 0;
}

static long look_one(__u32 i, void *unused)
{
	if (i >= KSYM_BATCH)
		return 1;
	ksym_out[i][KSYM_STR - 1] = '\0';
	if (bpf_kallsyms_lookup_name(ksym_out[i], KSYM_STR, 0, &ksym_addr[i]))
		ksym_addr[i] = 0;
	return 0;
}

static void text_bounds(void)
{
	static const char stext[] = "_stext", etext[] = "_etext",
			  sinit[] = "_sinittext", einit[] = "_einittext";
	bpf_kallsyms_lookup_name(stext, sizeof(stext), 0, &ksym_text[0]);
	bpf_kallsyms_lookup_name(etext, sizeof(etext), 0, &ksym_text[1]);
	bpf_kallsyms_lookup_name(sinit, sizeof(sinit), 0, &ksym_text[2]);
	bpf_kallsyms_lookup_name(einit, sizeof(einit), 0, &ksym_text[3]);
}

SEC("syscall")
int ksym_name(void *ctx)
{
	__u32 n = ksym_n;

	if (!ksym_text[1])
		text_bounds();
	if (n > KSYM_BATCH)
		n = KSYM_BATCH;
	if (ksym_mode)
		bpf_loop(n, look_one, NULL, 0);
	else
		bpf_loop(n, name_one, NULL, 0);
	return 0;
}
