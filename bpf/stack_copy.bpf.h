/* SPDX-License-Identifier: MIT */
/*
 * stack_copy: copying the top of a user stack for DWARF unwinding in user
 * space, within a per-CPU budget of copies a second, for the kernel side
 * of the programs that copy stacks (sampler.bpf.c, growth.bpf.c: one copy
 * for both). Kernel only: include once, after vmlinux.h and
 * bpf_helpers.h.
 */
#ifndef HEARTH_BPF_STACK_COPY_H
#define HEARTH_BPF_STACK_COPY_H

/* Bytes read at a time (a power of two: the last read's size is masked
 * with it). */
#define STACK_COPY_CHUNK 1024
/* x86-64 pages: a stack mapping ends on a multiple of this. */
#define STACK_PAGE 4096

/* Copies up to @want bytes (at most @max, a constant multiple of
 * STACK_COPY_CHUNK) of user stack from @sp into @dst, in chunks, stopping
 * at the end of the stack mapping. Returns the bytes copied; sets *@cut
 * when the stack ended first. */
static __always_inline __u32 stack_copy(__u8 *dst, __u64 sp, __u32 want, __u32 max, bool *cut)
{
	__u32 got = 0;

	for (int i = 0; i < max / STACK_COPY_CHUNK; i++) {
		if (got >= want)
			break;
		__u64 at = sp + i * STACK_COPY_CHUNK;

		if (bpf_probe_read_user(dst + i * STACK_COPY_CHUNK, STACK_COPY_CHUNK,
					(void *)at)) {
			/* The chunk crossed the stack's end, a page boundary:
			 * take the part before it, where the outermost frames
			 * live. (One read of a bounded size: the loop of small
			 * reads it replaces was half of what the verifier
			 * walked in on_cpu.) */
			__u32 n = (__u32)((at | (STACK_PAGE - 1)) + 1 - at);

			if (n < STACK_COPY_CHUNK &&
			    !bpf_probe_read_user(dst + i * STACK_COPY_CHUNK,
						 n & (STACK_COPY_CHUNK - 1), (void *)at))
				got += n;
			*cut = true;
			break;
		}
		got += STACK_COPY_CHUNK;
	}
	return got;
}

/* A budget of copies: those made in the second that began at window. */
struct copy_budget {
	__u64 window;
	__u64 used;
};

/* Takes a copy from the budget in @map (a one-entry per-CPU array of
 * struct copy_budget) of @per_sec copies a second (0: no limit), at
 * @now. Returns whether the copy may be made. */
static __always_inline bool copy_budget_take(void *map, __u32 per_sec, __u64 now)
{
	struct copy_budget *b;
	__u32 zero = 0;

	if (!per_sec)
		return true;
	b = bpf_map_lookup_elem(map, &zero);
	if (!b)
		return false;
	if (now - b->window >= 1000000000ULL) {
		b->window = now;
		b->used = 0;
	}
	if (b->used >= per_sec)
		return false;
	b->used++;
	return true;
}

#endif
