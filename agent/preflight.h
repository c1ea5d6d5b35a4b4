/* SPDX-License-Identifier: MIT */
/* What the sampler needs from the machine, checked before anything loads. */
#ifndef HEARTH_PREFLIGHT_H
#define HEARTH_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Checks privileges (root, or CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN),
 * kernel BTF, and, when @perf, that a cpu-clock perf event can be opened.
 * Returns 0, or -1 with one sentence in @err saying what is missing. */
int preflight_check(bool perf, char *err, size_t errlen);

/* Has libbpf keep quiet: its long explanations of a load failure go to
 * stderr only with HEARTH_DEBUG_BPF=1 set (the caller says one
 * sentence). */
void preflight_libbpf_quiet(void);

/* Sums, over every possible CPU, the @n counters of element 0 of the
 * per-CPU array map @fd (whose value is __u64[@n]) into @out. Returns 0,
 * or a negative errno (@out zeroed). */
int preflight_percpu_sum(int fd, size_t n, uint64_t *out);

/* Writes the online CPU numbers to @cpus (at most @max). Returns how many,
 * or -1 when /sys/devices/system/cpu/online cannot be read. */
int preflight_online_cpus(int *cpus, int max);

#endif
