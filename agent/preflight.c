/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/preflight.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

/* Effective capabilities from /proc/self/status; 0 when unreadable. */
static uint64_t effective_caps(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	uint64_t caps = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "CapEff:", 7) == 0) {
			caps = strtoull(line + 7, NULL, 16);
			break;
		}
	}
	fclose(f);
	return caps;
}

static int check_privileges(char *err, size_t errlen)
{
	uint64_t caps = effective_caps();
	int has_admin = !!(caps & (1ULL << CAP_SYS_ADMIN_BIT));
	int has_bpf = !!(caps & (1ULL << CAP_BPF_BIT));
	int has_perfmon = !!(caps & (1ULL << CAP_PERFMON_BIT));

	if (has_admin || (has_bpf && has_perfmon))
		return 0;
	snprintf(err, errlen,
		 "loading the BPF sampler needs root (or CAP_BPF and CAP_PERFMON); this process has %s%s%s; run it with sudo",
		 has_bpf ? "CAP_BPF" : "no CAP_BPF",
		 has_perfmon ? " and CAP_PERFMON" : " and no CAP_PERFMON",
		 geteuid() == 0 ? " although it runs as uid 0" : "");
	return -1;
}

static int check_perf_event(char *err, size_t errlen)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 10000000,
		.disabled = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	snprintf(err, errlen,
		 "perf events are unavailable (%s): the kernel refused a cpu-clock event; check kernel.perf_event_paranoid and CONFIG_PERF_EVENTS",
		 strerror(errno));
	return -1;
}

int preflight_check(bool perf, char *err, size_t errlen)
{
	const char *btf = getenv("HEARTH_BTF_PATH");

	if (!btf || !*btf)
		btf = "/sys/kernel/btf/vmlinux";
	if (check_privileges(err, errlen) < 0)
		return -1;
	if (access(btf, R_OK) != 0) {
		snprintf(err, errlen,
			 "this kernel has no BTF (%s is missing): the sampler needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
			 btf);
		return -1;
	}
	if (perf && check_perf_event(err, errlen) < 0)
		return -1;
	return 0;
}

int preflight_online_cpus(int *cpus, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char buf[4096], *p, *end;
	int n = 0;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	for (p = buf; *p && *p != '\n';) {
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -1;
		}
		for (long c = a; c <= b && n < max; c++)
			cpus[n++] = (int)c;
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* libbpf explains load failures at length; hearth reports one
	 * sentence, and HEARTH_DEBUG_BPF=1 shows libbpf's own words. */
	(void)level;
	if (getenv("HEARTH_DEBUG_BPF"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void preflight_libbpf_quiet(void)
{
	libbpf_set_print(libbpf_quiet);
}

int preflight_percpu_sum(int fd, size_t n, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t zero = 0;
	uint64_t *per;

	memset(out, 0, n * sizeof(*out));
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	per = calloc((size_t)ncpu * n, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, per) < 0) {
		free(per);
		return -errno;
	}
	for (int c = 0; c < ncpu; c++)
		for (size_t i = 0; i < n; i++)
			out[i] += per[(size_t)c * n + i];
	free(per);
	return 0;
}
