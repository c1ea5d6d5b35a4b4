/* SPDX-License-Identifier: MIT */
/*
 * pid_filter: the processes a program watches, for the kernel side of
 * the programs with a pid filter (sampler.bpf.c, growth.bpf.c and
 * threads.bpf.c, which reuses the sampler's map: one shape for all). Kernel
 * only: include once, after vmlinux.h and bpf_helpers.h.
 */
#ifndef HEARTH_BPF_PID_FILTER_H
#define HEARTH_BPF_PID_FILTER_H

const volatile bool filter_pid = false;
const volatile __u32 exclude_tgid = 0;

/* The processes chosen (when filter_pid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 64);
} pids SEC(".maps");

/* Whether process @tgid is watched: not hearth's own, and chosen when
 * there is a filter. */
static __always_inline bool pid_wanted(__u32 tgid)
{
	if (tgid == exclude_tgid)
		return false;
	return !filter_pid || bpf_map_lookup_elem(&pids, &tgid);
}

#endif
