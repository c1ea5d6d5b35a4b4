/* SPDX-License-Identifier: MIT */
/*
 * sym_bench: symbolization throughput and cost.
 *
 *   sym_bench files OUTDIR N BIN...   N random text addresses per binary:
 *       writes OUTDIR/<i>.addrs (hex, one a line, for addr2line), then
 *       prints cold and warm addresses/s for sym_file() and the memory
 *       held per cached module.
 *   sym_bench proc FIXTURE N          starts FIXTURE (it must print
 *       "ready" and wait on stdin), and times a first symbolization of
 *       the process from a fresh context: maps, modules, N addresses
 *       spread over its executable mappings; then the warm rate of
 *       sym_user() on the same addresses.
 *
 *   sym_bench host N                  every process on the host: its maps
 *       and N addresses spread over its executable mappings, from one
 *       fresh context (what hearthd does when it starts); prints the
 *       time, the processes and modules, and the memory held.
 *
 * Output lines are "key value" for the script to format.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t nph = 0;
	*lo = *hi = 0;
	if (e && elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X)) {
				*lo = ph.p_vaddr;
				*hi = ph.p_vaddr + ph.p_filesz;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return *lo < *hi ? 0 : -ENOEXEC;
}

static int cmd_files(const char *outdir, long n, int nbins, char **bins)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint64_t *addrs = calloc((size_t)n * (size_t)nbins, sizeof(*addrs));
	if (!addrs)
		return 1;
	for (int b = 0; b < nbins; b++) {
		uint64_t lo = 0, hi = 0;
		if (text_range(bins[b], &lo, &hi) != 0) {
			fprintf(stderr, "sym_bench: %s: no executable segment\n",
				bins[b]);
			return 1;
		}
		char path[4096];
		snprintf(path, sizeof(path), "%s/%d.addrs", outdir, b);
		FILE *f = fopen(path, "w");
		if (!f)
			return 1;
		for (long i = 0; i < n; i++) {
			uint64_t a = lo + rng(&seed) % (hi - lo);
			addrs[(size_t)b * (size_t)n + (size_t)i] = a;
			fprintf(f, "0x%" PRIx64 "\n", a);
		}
		fclose(f);
	}
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame fr[16];
	uint64_t sink = 0;
	for (int b = 0; b < nbins; b++) {
		double t0 = now_s();
		for (long i = 0; i < n; i++)
			sink += (uint64_t)sym_file(ctx, bins[b],
				addrs[(size_t)b * (size_t)n + (size_t)i], fr, 16);
		double t1 = now_s();
		int rounds = 20;
		for (int r = 0; r < rounds; r++)
			for (long i = 0; i < n; i++)
				sink += (uint64_t)sym_file(ctx, bins[b],
					addrs[(size_t)b * (size_t)n + (size_t)i], fr, 16);
		double t2 = now_s();
		struct sym_stats st;
		sym_stats(ctx, &st);
		printf("file %d %s cold_per_s %.0f warm_per_s %.0f cold_s %.4f "
		       "bytes_after %" PRIu64 "\n",
		       b, bins[b], (double)n / (t1 - t0),
		       (double)n * rounds / (t2 - t1), t1 - t0, st.module_bytes);
	}
	struct sym_stats st;
	sym_stats(ctx, &st);
	printf("modules %" PRIu64 " module_bytes %" PRIu64 " per_module %" PRIu64
	       " sink %" PRIu64 "\n", st.modules, st.module_bytes,
	       st.modules ? st.module_bytes / st.modules : 0, sink % 2);
	sym_free(ctx);
	free(addrs);
	return 0;
}

struct region {
	uint64_t start, end;
};

static size_t exec_regions(pid_t pid, struct region *r, size_t max)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = 0;
	while (f && fgets(line, sizeof(line), f) && n < max) {
		unsigned long long s, e;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &s, &e, perms) == 3 &&
		    perms[2] == 'x' && strchr(line, '/'))
			r[n++] = (struct region){ s, e };
	}
	if (f)
		fclose(f);
	return n;
}

static int cmd_proc(const char *fixture, size_t naddr)
{
	int in[2], out[2];
	if (pipe(in) || pipe(out))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(fixture, fixture, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	FILE *o = fdopen(out[0], "r");
	char line[256];
	while (o && fgets(line, sizeof(line), o))
		if (strncmp(line, "ready", 5) == 0)
			break;
	struct region reg[64];
	size_t nr = exec_regions(pid, reg, 64);
	enum { NMAX = 100000 };
	static uint64_t addrs[NMAX];
	size_t N = naddr < NMAX ? naddr : NMAX;
	uint64_t seed = 12345;
	for (size_t i = 0; i < N && nr > 0; i++) {
		const struct region *r = &reg[i % nr];
		addrs[i] = r->start + rng(&seed) % (r->end - r->start);
	}
	struct sym_frame fr[16];
	uint64_t sink = 0;
	double t0 = now_s(), c0 = cpu_s();
	struct sym_ctx *ctx = sym_new(NULL);
	sym_proc_load(ctx, pid);
	for (size_t i = 0; i < N; i++)
		sink += (uint64_t)sym_user(ctx, pid, addrs[i], fr, 16);
	double t1 = now_s(), c1 = cpu_s();
	int rounds = (int)(1000000 / N) + 1;
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < N; i++)
			sink += (uint64_t)sym_user(ctx, pid, addrs[i], fr, 16);
	double t2 = now_s();
	struct sym_stats st;
	sym_stats(ctx, &st);
	printf("proc regions %zu addrs %zu cold_ms %.1f warm_per_s %.0f modules %"
	       PRIu64 " module_bytes %" PRIu64 " cold_cpu_ms %.1f sink %" PRIu64
	       "\n", nr, N, (t1 - t0) * 1e3, (double)N * rounds / (t2 - t1),
	       st.modules, st.module_bytes, (c1 - c0) * 1e3, sink % 2);
	sym_free(ctx);
	close(in[1]);
	if (o)
		fclose(o);
	waitpid(pid, NULL, 0);
	return 0;
}

static int cmd_host(size_t per_proc)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 1;
	struct sym_frame fr[16];
	uint64_t seed = 777, sink = 0, addrs = 0;
	size_t procs = 0;
	double t0 = now_s(), c0 = cpu_s();
	struct sym_ctx *ctx = sym_new(NULL);
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		struct region reg[256];
		size_t nr = exec_regions((pid_t)pid, reg, 256);
		if (nr == 0 || sym_proc_load(ctx, (pid_t)pid) != 0)
			continue;
		procs++;
		for (size_t i = 0; i < per_proc; i++) {
			const struct region *r = &reg[i % nr];
			uint64_t a = r->start + rng(&seed) % (r->end - r->start);
			sink += (uint64_t)sym_user(ctx, (pid_t)pid, a, fr, 16);
			addrs++;
		}
	}
	closedir(d);
	double t1 = now_s(), c1 = cpu_s();
	struct sym_stats st;
	sym_stats(ctx, &st);
	printf("host procs %zu addrs %" PRIu64 " wall_ms %.1f cpu_ms %.1f modules %"
	       PRIu64 " module_bytes %" PRIu64 " misses %" PRIu64 " sink %" PRIu64
	       "\n", procs, addrs, (t1 - t0) * 1e3, (c1 - c0) * 1e3, st.modules,
	       st.module_bytes, st.misses, sink % 2);
	sym_free(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "files") == 0) {
		char *end;
		long n = strtol(argv[3], &end, 10);
		if (*end || n <= 0) {
			fprintf(stderr, "sym_bench: N must be a positive number\n");
			return 2;
		}
		return cmd_files(argv[2], n, argc - 4, argv + 4);
	}
	if (argc == 4 && strcmp(argv[1], "proc") == 0) {
		char *end;
		long n = strtol(argv[3], &end, 10);
		if (*end || n <= 0) {
			fprintf(stderr, "sym_bench: N must be a positive number\n");
			return 2;
		}
		return cmd_proc(argv[2], (size_t)n);
	}
	if (argc == 3 && strcmp(argv[1], "host") == 0) {
		char *end;
		long n = strtol(argv[2], &end, 10);
		if (*end || n <= 0) {
			fprintf(stderr, "sym_bench: N must be a positive number\n");
			return 2;
		}
		return cmd_host((size_t)n);
	}
	fprintf(stderr, "usage: sym_bench files OUTDIR N BIN... | proc FIXTURE N | host N\n");
	return 2;
}
