/* SPDX-License-Identifier: MIT */
/*
 * The cost of fetching one debug file through hearth's debuginfod
 * fetcher: from the request (sym_debuginfod_get, as the symbolizer makes
 * it) until the file is READY in the cache, through the worker thread,
 * libdebuginfod and the server named by DEBUGINFOD_URLS. Prints
 * "ms state bytes path".
 *
 *   debuginfod_fetch BUILD-ID-HEX
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "symbolize/debuginfod.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	unsigned char id[64];
	size_t len = 0;
	char err[300], path[4096] = "";
	struct stat st = { 0 };

	if (argc != 2 || strlen(argv[1]) % 2 || strlen(argv[1]) / 2 > sizeof(id)) {
		fprintf(stderr, "usage: debuginfod_fetch BUILD-ID-HEX\n");
		return 2;
	}
	for (; len < strlen(argv[1]) / 2; len++)
		if (sscanf(argv[1] + 2 * len, "%2hhx", &id[len]) != 1)
			return 2;
	struct sym_debuginfod *d = sym_debuginfod_new(NULL, err, sizeof(err));
	if (!d) {
		fprintf(stderr, "debuginfod_fetch: %s\n", err);
		return 1;
	}
	double t0 = now_ms();
	int s = sym_debuginfod_get(d, id, len, "bench", path, sizeof(path));
	if (s == SYM_DEBUGINFOD_PENDING) {
		sym_debuginfod_wait(d, 120ull * 1000000000ull);
		s = sym_debuginfod_get(d, id, len, "bench", path, sizeof(path));
	}
	double t1 = now_ms();
	if (s == SYM_DEBUGINFOD_READY)
		stat(path, &st);
	printf("%.1f %s %lld %s\n", t1 - t0, s == SYM_DEBUGINFOD_READY ? "ready" : "failed",
	       (long long)st.st_size, path);
	sym_debuginfod_free(d);
	return s == SYM_DEBUGINFOD_READY ? 0 : 1;
}
