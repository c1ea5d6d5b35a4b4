/* SPDX-License-Identifier: MIT */
/*
 * Store measurements for bench/daemon_bench.sh.
 *
 *   daemon_store_tool sizes DIR
 *       For every window: its stored bytes (record payload: the compact
 *       encoding, zlib'd) and the same profiles as folded text (on-CPU and
 *       off-CPU), raw and gzip'd (level 6). Prints the totals and ratios.
 *   daemon_store_tool fill SRC DST COUNT
 *       Writes COUNT windows into the store DST, cycling through the
 *       windows of SRC, back to back and ending now, so DST looks like
 *       COUNT windows of a real host (for timing snapshots of long ranges).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "agent/store.h"
#include "agent/store_codec.h"
#include "profile/folded.h"

struct sizes {
	unsigned long long windows, stored, folded, gz;
};

static size_t gzip_size(const char *buf, size_t len)
{
	z_stream z = { 0 };
	unsigned char out[1 << 16];
	size_t total = 0;
	int rc;

	if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, Z_FINISH);
		total += sizeof(out) - z.avail_out;
	} while (rc == Z_OK);
	deflateEnd(&z);
	return total;
}

static size_t folded_of(struct prof_profile *p, char **buf)
{
	size_t len = 0;
	FILE *f = open_memstream(buf, &len);

	if (!f)
		return 0;
	if (p)
		prof_folded_write(p, f, 0);
	fclose(f);
	return len;
}

static int measure(uint64_t start, uint64_t end, const void *payload, size_t len, void *arg)
{
	struct sizes *s = arg;
	struct store_window w;
	char *a = NULL, *b = NULL;
	size_t la, lb;

	(void)start;
	(void)end;
	if (store_codec_window_unpack(payload, len, &w) < 0)
		return 0;
	la = folded_of(w.oncpu, &a);
	lb = folded_of(w.offcpu, &b);
	s->windows++;
	s->stored += len;
	s->folded += la + lb;
	s->gz += gzip_size(a, la) + gzip_size(b, lb);
	free(a);
	free(b);
	store_window_clear(&w);
	return 0;
}

struct win {
	uint64_t len_ns;
	void *payload;
	size_t size;
};

struct wins {
	struct win *w;
	size_t n;
};

static int keep(uint64_t start, uint64_t end, const void *payload, size_t len, void *arg)
{
	struct wins *ws = arg;
	struct win *nw = realloc(ws->w, (ws->n + 1) * sizeof(*nw));

	if (!nw)
		return -ENOMEM;
	ws->w = nw;
	nw[ws->n].len_ns = end - start;
	nw[ws->n].payload = malloc(len);
	if (!nw[ws->n].payload)
		return -ENOMEM;
	memcpy(nw[ws->n].payload, payload, len);
	nw[ws->n].size = len;
	ws->n++;
	return 0;
}

static int fill(const char *src, const char *dst, long count)
{
	struct store_limits lim = { 0 };
	struct wins ws = { 0 };
	struct timespec ts;
	uint64_t span = 0, t;
	struct store *s;
	int err = 0;

	if (store_scan(src, 0, 0, keep, &ws, NULL) < 0 || ws.n == 0) {
		fprintf(stderr, "daemon_store_tool: no windows in %s\n", src);
		return 1;
	}
	for (long i = 0; i < count; i++)
		span += ws.w[i % ws.n].len_ns;
	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - span;
	s = store_open(dst, &lim, &err);
	if (!s) {
		fprintf(stderr, "daemon_store_tool: cannot open %s (%s)\n", dst, strerror(-err));
		return 1;
	}
	for (long i = 0; i < count; i++) {
		const struct win *w = &ws.w[i % ws.n];

		if (store_append(s, t, t + w->len_ns, w->payload, w->size) < 0) {
			fprintf(stderr, "daemon_store_tool: append failed\n");
			return 1;
		}
		t += w->len_ns;
	}
	store_close(s);
	for (size_t i = 0; i < ws.n; i++)
		free(ws.w[i].payload);
	free(ws.w);
	return 0;
}

int main(int argc, char **argv)
{
	struct sizes s = { 0 };

	if (argc == 3 && !strcmp(argv[1], "sizes")) {
		if (store_scan(argv[2], 0, 0, measure, &s, NULL) < 0 || !s.windows)
			return 1;
		printf("windows %llu stored %llu folded %llu folded_gz %llu\n", s.windows,
		       s.stored / s.windows, s.folded / s.windows, s.gz / s.windows);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "fill"))
		return fill(argv[2], argv[3], atol(argv[4]));
	fprintf(stderr, "usage: daemon_store_tool sizes DIR | fill SRC DST COUNT\n");
	return 2;
}
