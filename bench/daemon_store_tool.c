/* SPDX-License-Identifier: MIT */
/*
 * Store measurements for bench/daemon_bench.sh.
 *
 *   daemon_store_tool sizes DIR
 *       For every window: its stored bytes (record payload: the compact
 *       encoding, zlib'd) and the same profiles as folded text (on-CPU and
 *       off-CPU), raw and gzip'd (level 6). Prints the totals and ratios.
 *   daemon_store_tool fill SRC DST COUNT [SECONDS [START]]
 *       Writes COUNT windows into the store DST, cycling through the
 *       windows of SRC, back to back and ending now, so DST looks like
 *       COUNT windows of a real host (for timing snapshots of long ranges);
 *       each SECONDS long when given, else as long as in SRC; from START
 *       (ns) instead of ending now when given. Prints "span FIRST_START
 *       LAST_END rollups N" (ns).
 *   daemon_store_tool merge DIR SINCE UNTIL [off] [pid PID] [comm NAME] [merged]
 *       The folded text of [SINCE, UNTIL) (ns) merged from the windows one
 *       by one, never from roll-ups, filtered as hearthd's snapshots are:
 *       what `hearth snapshot` must print byte for byte. Prints
 *       "windows N" on stderr. With "merged", read as hearthd does (with
 *       roll-ups), for timing.
 *   daemon_store_tool last SRC DST COUNT
 *       Fills like fill (ending now) but keeps the writer open, as hearthd
 *       does, then merges the last hour off-CPU through the roll-ups twice:
 *       with the writer's open 10 minutes from memory (merge_live) and
 *       without (merge_disk), for timing each with callgrind's
 *       --toggle-collect; prints both folded texts' sizes and whether they
 *       are identical.
 *   HEARTH_ROLLUP_SPANS=S1,S2 (seconds; 0 = off) sets fill's roll-up spans.
 *   daemon_store_tool plan DIR SINCE UNTIL
 *       How a snapshot of [SINCE, UNTIL) reads the store: "windows N
 *       blobs B rollups R".
 */
#include <errno.h>
#include <stdbool.h>
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

/* Fills DST (see the usage) and returns its writer, still open, with the
 * span in *@first and *@last; NULL after printing why. */
static struct store *fill_open(const char *src, const char *dst, long count,
			       uint64_t fixed_ns, uint64_t start_ns, uint64_t *first,
			       uint64_t *last)
{
	struct store_limits lim = { 0 };
	const char *spans = getenv("HEARTH_ROLLUP_SPANS");
	struct wins ws = { 0 };
	struct timespec ts;
	uint64_t span = 0, t;
	struct store *s;
	int err = 0;

	if (store_scan(src, 0, 0, keep, &ws, NULL) < 0 || ws.n == 0) {
		fprintf(stderr, "daemon_store_tool: no windows in %s\n", src);
		count = 0;
	}
	for (int l = 0; spans && *spans && l < STORE_ROLLUP_LEVELS; l++) {
		char *end;
		unsigned long long v = strtoull(spans, &end, 10);

		lim.rollup_ns[l] = v ? v * 1000000000ull : STORE_ROLLUP_OFF;
		spans = *end == ',' ? end + 1 : end;
	}
	for (size_t i = 0; fixed_ns && i < ws.n; i++)
		ws.w[i].len_ns = fixed_ns;
	for (long i = 0; i < count; i++)
		span += ws.w[i % ws.n].len_ns;
	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - span;
	if (start_ns)
		t = start_ns;
	s = count > 0 ? store_open(dst, &lim, &err) : NULL;
	if (!s && count > 0)
		fprintf(stderr, "daemon_store_tool: cannot open %s (%s)\n", dst, strerror(-err));
	*first = t;
	for (long i = 0; i < count && s; i++) {
		const struct win *w = &ws.w[i % ws.n];

		if (store_append(s, t, t + w->len_ns, w->payload, w->size) < 0) {
			fprintf(stderr, "daemon_store_tool: append failed\n");
			store_close(s);
			s = NULL;
		}
		t += w->len_ns;
	}
	*last = t;
	for (size_t i = 0; i < ws.n; i++)
		free(ws.w[i].payload);
	free(ws.w);
	return s;
}

static int fill(const char *src, const char *dst, long count, uint64_t fixed_ns,
		uint64_t start_ns)
{
	struct store_stats st;
	uint64_t first, last;
	struct store *s = fill_open(src, dst, count, fixed_ns, start_ns, &first, &last);

	if (!s)
		return 1;
	store_get_stats(s, &st);
	printf("span %llu %llu rollups %llu\n", (unsigned long long)first,
	       (unsigned long long)last, (unsigned long long)st.rollups);
	store_close(s);
	return 0;
}

/* ---- merge: the reference a snapshot is compared with ------------------ */

struct filter {
	bool off;
	uint32_t pid;       /* 0: any */
	const char *comm;   /* NULL: any */
};

struct ref {
	struct prof_profile *p;
	struct store_codec_merge m;
	unsigned long long windows, blobs, rollups;
};

/* The same rule as hearthd's snapshot filter (agent/daemon_requests.c). */
static bool ref_keep(void *arg, const char *comm, size_t len, uint32_t pid)
{
	const struct filter *f = arg;

	if (f->pid && f->pid != pid)
		return false;
	return !f->comm || (len == strlen(f->comm) && memcmp(comm, f->comm, len) == 0);
}

static int ref_window(uint64_t start, uint64_t end, const void *payload, size_t len, void *arg)
{
	struct ref *r = arg;

	(void)start;
	(void)end;
	if (store_codec_window_merge(payload, len, &r->m, r->p, NULL) == 0)
		r->windows++;
	return 0;
}

static int ref_part(const struct store_part *part, const void *payload, size_t len,
		    void *arg)
{
	struct ref *r = arg;

	if (store_codec_window_merge(payload, len, &r->m, r->p, NULL) == 0)
		r->windows += part->windows;
	return 0;
}

static int merge(int argc, char **argv)
{
	struct filter f = { 0 };
	struct ref r = { 0 };
	uint64_t since = strtoull(argv[3], NULL, 10), until = strtoull(argv[4], NULL, 10);
	bool merged = false;
	int rc;

	for (int i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "off"))
			f.off = true;
		else if (!strcmp(argv[i], "pid") && i + 1 < argc)
			f.pid = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "comm") && i + 1 < argc)
			f.comm = argv[++i];
		else if (!strcmp(argv[i], "merged"))
			merged = true;
		else
			return 2;
	}
	r.p = prof_new(f.off ? PROF_UNIT_NANOSECONDS : PROF_UNIT_SAMPLES);
	if (!r.p)
		return 1;
	r.m = (struct store_codec_merge){ .off_cpu = f.off, .keep = ref_keep, .arg = &f,
					  .clear_pid = true, .defer_totals = true };
	if (merged)
		rc = store_scan_merged(argv[2], since, until, ref_part, &r, NULL);
	else
		rc = store_scan(argv[2], since, until, ref_window, &r, NULL);
	store_codec_merge_totals(r.p);
	if (!rc)
		rc = prof_folded_write(r.p, stdout, 0);
	fprintf(stderr, "windows %llu\n", r.windows);
	prof_free(r.p);
	return rc ? 1 : 0;
}

static int count_part(const struct store_part *part, const void *payload, size_t len,
		      void *arg)
{
	struct ref *r = arg;

	(void)payload;
	(void)len;
	r->windows += part->windows;
	r->blobs++;
	r->rollups += part->level > 0;
	return 0;
}

static int plan(char **argv)
{
	struct ref r = { 0 };

	if (store_scan_merged(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
			      count_part, &r, NULL) < 0)
		return 1;
	printf("windows %llu blobs %llu rollups %llu\n", r.windows, r.blobs, r.rollups);
	return 0;
}

static char *merged_folded(const char *dir, uint64_t since, uint64_t until,
			   const struct store_live *live)
{
	struct filter f = { .off = true };
	struct ref r = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	r.p = prof_new(PROF_UNIT_NANOSECONDS);
	r.m = (struct store_codec_merge){ .off_cpu = true, .keep = ref_keep, .arg = &f,
					  .clear_pid = true, .defer_totals = true };
	if (out && r.p &&
	    store_scan_merged_live(dir, since, until, live, ref_part, &r, NULL) == 0) {
		store_codec_merge_totals(r.p);
		prof_folded_write(r.p, out, 0);
	}
	if (out)
		fclose(out);
	prof_free(r.p);
	return buf;
}

/* Two names for callgrind's --toggle-collect. */
static __attribute__((noinline)) char *merge_live(const char *dir, uint64_t since,
						  uint64_t until, struct store *s)
{
	struct store_live live;

	return merged_folded(dir, since, until, store_live_part(s, &live) == 0 ? &live : NULL);
}

static __attribute__((noinline)) char *merge_disk(const char *dir, uint64_t since,
						  uint64_t until)
{
	return merged_folded(dir, since, until, NULL);
}

static int last_hour(const char *src, const char *dst, long count)
{
	uint64_t first, last;
	struct store *s = fill_open(src, dst, count, 0, 0, &first, &last);
	char *a, *b;
	int rc;

	if (!s)
		return 1;
	a = merge_live(dst, last - 3600000000000ull, last + 1, s);
	b = merge_disk(dst, last - 3600000000000ull, last + 1);
	rc = a && b && !strcmp(a, b) ? 0 : 1;
	printf("live %zu bytes, disk %zu bytes: %s\n", a ? strlen(a) : 0, b ? strlen(b) : 0,
	       rc ? "DIFFERENT" : "identical");
	free(a);
	free(b);
	store_close(s);
	return rc;
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
	if (argc >= 5 && argc <= 7 && !strcmp(argv[1], "fill"))
		return fill(argv[2], argv[3], atol(argv[4]),
			    argc >= 6 ? strtoull(argv[5], NULL, 10) * 1000000000ull : 0,
			    argc == 7 ? strtoull(argv[6], NULL, 10) : 0);
	if (argc >= 5 && !strcmp(argv[1], "merge"))
		return merge(argc, argv);
	if (argc == 5 && !strcmp(argv[1], "last"))
		return last_hour(argv[2], argv[3], atol(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "plan"))
		return plan(argv);
	fprintf(stderr, "usage: daemon_store_tool sizes DIR | fill SRC DST COUNT [SECONDS [START]] |"
		" merge DIR SINCE UNTIL [off] [pid PID] [comm NAME] [merged] |"
		" plan DIR SINCE UNTIL | last SRC DST COUNT\n");
	return 2;
}
