/* SPDX-License-Identifier: MIT */
/*
 * The cost of compiling a module's CFI for in-kernel unwinding, cold and
 * cached (bench/cfi_cost.sh prints the table).
 *
 *   cfi_cost RUNS FILE...   one line per file:
 *     file PATH rows N table_bytes B cfi_bytes C cold_ms WALL cold_cpu_ms CPU
 *     mem_hit_us U disk_hit_ms D disk_file_bytes F
 *   cfi_cost once FILE      compiles FILE once (for callgrind)
 *
 * Times are medians of RUNS. cfi_bytes: the .eh_frame and .debug_frame
 * the rows come from.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/cfi.h"

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static size_t cfi_bytes(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx, total = 0;

	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0) {
		if (e)
			elf_end(e);
		return 0;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && (!strcmp(n, ".eh_frame") || !strcmp(n, ".debug_frame")))
			total += sh.sh_size;
	}
	elf_end(e);
	return total;
}

/* Gets @fd's table from a new cache on folder @dirfd; returns the wall
 * seconds of the get. */
static double disk_get(int dirfd, int fd)
{
	struct sym_cfi_cache *c = sym_cfi_cache_new(dirfd, 256u << 20);
	const struct sym_cfi_table *t;
	struct sym_cfi_cache_stats st;
	double t0, t1;

	if (!c)
		exit(1);
	t0 = now(CLOCK_MONOTONIC);
	if (sym_cfi_cache_get(c, fd, &t) != 0)
		exit(1);
	t1 = now(CLOCK_MONOTONIC);
	sym_cfi_cache_stats(c, &st);
	if (st.compiles != 0) {
		fprintf(stderr, "cfi_cost: the table was compiled, not read from disk\n");
		exit(1);
	}
	sym_cfi_cache_free(c);
	return t1 - t0;
}

/* The size of @t's file in folder @dirfd, which is then removed. */
static off_t take_file(int dirfd, const struct sym_cfi_table *t)
{
	struct stat st = { 0 };
	char name[64];
	size_t k = 0;

	for (size_t i = 0; i < t->build_id_len; i++)
		k += (size_t)snprintf(name + k, sizeof(name) - k, "%02x", t->build_id[i]);
	snprintf(name + k, sizeof(name) - k, ".cfi");
	if (fstatat(dirfd, name, &st, 0) == 0)
		unlinkat(dirfd, name, 0);
	return st.st_size;
}

static void measure(const char *path, int runs)
{
	double wall[runs], cpu[runs], hit[runs], disk[runs];
	struct sym_cfi_table t;
	const struct sym_cfi_table *ct;
	struct sym_cfi_cache *c;
	char dir[] = "/tmp/hearth-cfi-cost-XXXXXX";
	int fd = open(path, O_RDONLY | O_CLOEXEC), dirfd;

	if (fd < 0 || !mkdtemp(dir) || (dirfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0) {
		fprintf(stderr, "cfi_cost: cannot open %s\n", path);
		exit(1);
	}
	for (int i = 0; i < runs; i++) {
		double w = now(CLOCK_MONOTONIC), p = now(CLOCK_PROCESS_CPUTIME_ID);

		if (sym_cfi_compile(fd, &t) != 0) {
			fprintf(stderr, "cfi_cost: %s has no CFI\n", path);
			exit(1);
		}
		wall[i] = now(CLOCK_MONOTONIC) - w;
		cpu[i] = now(CLOCK_PROCESS_CPUTIME_ID) - p;
		if (i + 1 < runs)
			sym_cfi_table_free(&t);
	}
	/* In memory: the cost of asking again (an fstat and a compare). */
	c = sym_cfi_cache_new(dirfd, 256u << 20);
	if (!c || sym_cfi_cache_get(c, fd, &ct) != 0)
		exit(1);
	for (int i = 0; i < runs; i++) {
		double w = now(CLOCK_MONOTONIC);

		for (int k = 0; k < 1000; k++)
			if (sym_cfi_cache_get(c, fd, &ct) != 0)
				exit(1);
		hit[i] = (now(CLOCK_MONOTONIC) - w) / 1000;
	}
	sym_cfi_cache_free(c);
	for (int i = 0; i < runs; i++)
		disk[i] = disk_get(dirfd, fd);
	printf("file %s rows %zu table_bytes %zu cfi_bytes %zu cold_ms %.2f cold_cpu_ms %.2f "
	       "mem_hit_us %.3f disk_hit_ms %.3f disk_file_bytes %lld\n",
	       path, t.n, t.n * sizeof(*t.rows), cfi_bytes(fd), median(wall, runs) * 1e3,
	       median(cpu, runs) * 1e3, median(hit, runs) * 1e6, median(disk, runs) * 1e3,
	       (long long)take_file(dirfd, &t));
	sym_cfi_table_free(&t);
	close(dirfd);
	rmdir(dir);
	close(fd);
}

int main(int argc, char **argv)
{
	int runs;

	elf_version(EV_CURRENT);
	if (argc == 3 && !strcmp(argv[1], "once")) {
		struct sym_cfi_table t;
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || sym_cfi_compile(fd, &t) != 0)
			return 1;
		printf("rows %zu\n", t.n);
		sym_cfi_table_free(&t);
		return 0;
	}
	if (argc < 3 || (runs = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: cfi_cost RUNS FILE... | cfi_cost once FILE\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		measure(argv[i], runs);
	return 0;
}
