/* SPDX-License-Identifier: MIT */
/* The store's roll-ups: on a store of real window blobs built here (10 s
 * windows off the minute grid, several processes, both profiles), a
 * merged scan of any range gives exactly the merge of its windows one by
 * one (every node's frame fields, total and self; window count, time
 * range, drops), with and without process filters, while reading far
 * fewer blobs; damaged roll-ups fall back to their records; roll-ups
 * never span segments, go with retention, and version 1 stores (no
 * roll-ups, 32-byte index entries) are still read. Frames' places (the
 * mapping and address pprof writes) come through roll-ups unchanged. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "tests/unit/store_dir.h"

#include "agent/store.h"
#include "agent/store_codec.h"
#include "profile/profile.h"

#define SEC 1000000000ull
/* Windows start 7 s past a 10-minute boundary: they straddle minutes. */
#define T0 (1700000400ull * SEC + 7 * SEC)
#define WIN (10 * SEC)
/* Minute and 10-minute roll-ups (the default is 10 minutes and an hour):
 * more levels and more roll-ups in a short store. */
#define MINUTES { .rollup_ns = { 60 * SEC, 600 * SEC } }

static const char *const comms[] = { "nginx", "postgres", "worker", "nginx" };
static const uint32_t pids[] = { 100, 200, 300, 101 };

static uint32_t next_rand(uint32_t *r)
{
	*r = *r * 1103515245u + 12345u;
	return (*r >> 8) & 0xffffff;
}

static uint32_t frame(struct prof_profile *p, const char *name, const char *mod,
		      uint32_t line, uint8_t kind)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, name), .module = prof_intern_cstr(p, mod),
		.file = prof_intern_cstr(p, kind == PROF_KIND_USER ? "x.c" : ""),
		.line = line, .kind = kind, .cls = PROF_CLASS_YOURS, .lang = PROF_LANG_C,
	};

	return prof_frame_intern(p, &f);
}

#define APP_START 0x555555554000ull

/* Gives user frame @f of @p a place in the app's mapping: the same in
 * every window (a frame keeps the first place it is given, so windows
 * that disagreed would merge differently by order). */
static void place(struct prof_profile *p, uint32_t f, uint32_t line, uint32_t k)
{
	struct prof_mapping m = { .start = APP_START, .limit = APP_START + 0x10000,
				  .offset = 0x1000, .file = prof_intern_cstr(p, "/usr/bin/app"),
				  .build_id = prof_intern_cstr(p, "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678") };
	uint32_t id = prof_mapping_intern(p, &m);

	assert_int_not_equal(id, UINT32_MAX);
	assert_int_equal(prof_frame_place(p, f, id, APP_START + 0x100 * line + 0x10 * k), 0);
}

/* A profile of window @i: stacks under four processes (two share a
 * name), drawn from a pool of functions so windows overlap but differ;
 * user frames have places. */
static struct prof_profile *window_profile(int i, bool off)
{
	struct prof_profile *p = prof_new(off ? PROF_UNIT_NANOSECONDS : PROF_UNIT_SAMPLES);
	uint32_t r = (uint32_t)i * 7919u + (off ? 17u : 3u);
	int n = 20 + (int)(next_rand(&r) % 30);

	assert_non_null(p);
	for (int k = 0; k < n; k++) {
		uint32_t st[8], depth = 2 + next_rand(&r) % 6, pi = next_rand(&r) % 4;
		char name[32];

		st[0] = frame(p, comms[pi], "", pids[pi], PROF_KIND_PROCESS);
		for (uint32_t d = 1; d < depth; d++) {
			uint32_t k = next_rand(&r) % 5;
			bool kernel = d == depth - 1 && off;

			snprintf(name, sizeof(name), "fn_%u_%u", d, k);
			st[d] = frame(p, name, kernel ? "" : "/usr/bin/app", d,
				      kernel ? PROF_KIND_KERNEL : PROF_KIND_USER);
			if (!kernel)
				place(p, st[d], d, k);
		}
		assert_int_not_equal(prof_add_stack(p, st, depth, 1 + next_rand(&r) % 1000),
				     UINT32_MAX);
	}
	prof_meta(p)->off_cpu = off;
	return p;
}

static void append_windows(struct store *s, int from, int to)
{
	for (int i = from; i < to; i++) {
		struct store_window w = {
			.start_ns = T0 + (uint64_t)i * WIN, .end_ns = T0 + (uint64_t)(i + 1) * WIN,
			.samples = 100 + (uint64_t)i, .drops = (uint64_t)i % 3,
			.oncpu = window_profile(i, false), .offcpu = window_profile(i, true),
		};
		void *blob = NULL;
		size_t len = 0;

		assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
		assert_int_equal(store_append(s, w.start_ns, w.end_ns, blob, len), 0);
		free(blob);
		store_window_clear(&w);
	}
}

static struct store *open_store(const char *dir, const struct store_limits *l)
{
	int err = 0;
	struct store *s = store_open(dir, l, &err);

	assert_non_null(s);
	return s;
}

/* ---- the two ways to merge a range --------------------------------- */

struct query {
	bool off;
	uint32_t pid;      /* 0: any */
	const char *comm;  /* NULL: any */
};

struct merged {
	struct prof_profile *p;
	struct store_codec_merge m;
	const struct query *q;
	uint32_t windows, parts;
	uint64_t first, last, drops;
};

static bool keep(void *arg, const char *comm, size_t len, uint32_t pid)
{
	const struct query *q = arg;

	if (q->pid && q->pid != pid)
		return false;
	return !q->comm || (len == strlen(q->comm) && memcmp(comm, q->comm, len) == 0);
}

static void merged_init(struct merged *r, const struct query *q)
{
	memset(r, 0, sizeof(*r));
	r->q = q;
	r->p = prof_new(q->off ? PROF_UNIT_NANOSECONDS : PROF_UNIT_SAMPLES);
	assert_non_null(r->p);
	r->m = (struct store_codec_merge){ .off_cpu = q->off, .keep = keep, .arg = (void *)q,
					   .clear_pid = true, .defer_totals = true };
}

static void note(struct merged *r, uint64_t start, uint64_t end, uint32_t windows,
		 const struct store_window *hdr)
{
	if (!r->windows || start < r->first)
		r->first = start;
	if (r->last < end)
		r->last = end;
	r->windows += windows;
	r->parts++;
	r->drops += hdr->drops;
}

static int by_window(uint64_t start, uint64_t end, const void *payload, size_t len, void *arg)
{
	struct merged *r = arg;
	struct store_window hdr;

	assert_int_equal(store_codec_window_merge(payload, len, &r->m, r->p, &hdr), 0);
	note(r, start, end, 1, &hdr);
	return 0;
}

static int by_part(const struct store_part *part, const void *payload, size_t len, void *arg)
{
	struct merged *r = arg;
	struct store_window hdr;

	assert_int_equal(store_codec_window_merge(payload, len, &r->m, r->p, &hdr), 0);
	note(r, part->start_ns, part->end_ns, part->windows, &hdr);
	return 0;
}

/* Every node, preorder after sorting: path depth, all frame fields, total
 * and self. Two profiles print the same only when they are the same. */
static void dump_node(struct prof_profile *p, uint32_t id, int depth, FILE *out)
{
	const struct prof_node *n = prof_node_get(p, id);
	const struct prof_frame *f = prof_frame_get(p, n->frame);
	uint64_t total = n->total, self = n->self;
	uint32_t child = n->child, sib, mid;
	uint64_t addr = prof_frame_addr(p, n->frame, &mid);
	const struct prof_mapping *m = prof_mapping_get(p, mid);

	fprintf(out, "%d %s|%s|%s|%u|%u|%u|%u %llu %llu", depth, prof_str(p, f->name),
		prof_str(p, f->module), prof_str(p, f->file), f->line, f->kind, f->cls,
		f->lang, (unsigned long long)total, (unsigned long long)self);
	/* user frames have their place, kernel and process rows none */
	assert_int_equal(m != NULL, n->frame && f->kind == PROF_KIND_USER);
	if (m)
		fprintf(out, " @%llx %llx/%llx/%llx %s %s", (unsigned long long)addr,
			(unsigned long long)m->start, (unsigned long long)m->limit,
			(unsigned long long)m->offset, prof_str(p, m->file), prof_str(p, m->build_id));
	fputc('\n', out);
	while (child) {
		sib = prof_node_get(p, child)->sibling;
		dump_node(p, child, depth + 1, out);
		child = sib;
	}
}

static char *dump(struct prof_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	store_codec_merge_totals(p);
	assert_int_equal(prof_sort(p), 0);
	dump_node(p, 0, 0, f);
	fclose(f);
	return buf;
}

static int count_window(uint64_t start, uint64_t end, const void *payload, size_t len,
			void *arg)
{
	(void)start;
	(void)end;
	(void)payload;
	(void)len;
	(void)arg;
	return 0;
}

/* Merges [since, until) both ways (the merged one with the writer's open
 * run when @live) and checks they agree exactly. Returns how many blobs
 * the merged scan read. */
static uint32_t check_live(const char *dir, uint64_t since, uint64_t until,
			   const struct query *q, const struct store_live *live,
			   uint32_t *windows)
{
	struct merged a, b;
	struct store_scan_report ra, rb;
	char *da, *db;

	merged_init(&a, q);
	merged_init(&b, q);
	assert_int_equal(store_scan(dir, since, until, by_window, &a, &ra), 0);
	assert_int_equal(store_scan_merged_live(dir, since, until, live, by_part, &b, &rb), 0);
	assert_int_equal(a.windows, b.windows);
	assert_int_equal(ra.windows, rb.windows);
	assert_int_equal(ra.corrupt, rb.corrupt + rb.rollups_bad);
	assert_int_equal(a.drops, b.drops);
	if (a.windows) {
		assert_int_equal(a.first, b.first);
		assert_int_equal(a.last, b.last);
	}
	da = dump(a.p);
	db = dump(b.p);
	assert_string_equal(da, db);
	free(da);
	free(db);
	prof_free(a.p);
	prof_free(b.p);
	if (windows)
		*windows = a.windows;
	return b.parts;
}

static uint32_t check_range(const char *dir, uint64_t since, uint64_t until,
			    const struct query *q, uint32_t *windows)
{
	return check_live(dir, since, until, q, NULL, windows);
}

/* ---- tests ------------------------------------------------------------ */

static const struct query queries[] = {
	{ false, 0, NULL }, { true, 0, NULL }, { false, 100, NULL },
	{ true, 0, "nginx" }, { true, 101, "nginx" }, { false, 0, "absent" },
};

/* 150 windows (25 min): every range, every filter, both kinds. */
static void test_same_as_windows(void **state)
{
	const char *dir = *state;
	struct store_limits l = MINUTES;
	struct store *s = open_store(dir, &l);
	struct store_stats st;
	uint64_t end = T0 + 150 * WIN;
	const uint64_t ranges[][2] = {
		{ 1, 0 },                                  /* everything */
		{ T0, end },
		{ T0 + 3 * SEC, end - 4 * SEC },           /* edges inside windows */
		{ T0 + 125 * SEC, T0 + 1333 * SEC },       /* minutes and a 10 min */
		{ T0 + 60 * SEC, T0 + 70 * SEC },          /* one window */
		{ T0 + 593 * SEC, T0 + 1193 * SEC },       /* exactly a 10 min span */
		{ end - 3600 * SEC, end + 1 },             /* like --last 1h */
		{ end + SEC, 0 },                          /* nothing */
	};
	uint32_t parts, windows;

	append_windows(s, 0, 150);
	store_get_stats(s, &st);
	assert_int_equal(st.windows, 150);
	assert_true(st.rollups >= 25);
	assert_int_equal(st.rollups_skipped, 0);
	store_close(s);
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++)
			check_range(dir, ranges[i][0], ranges[i][1], &queries[k], NULL);
	/* The whole store: two 10 min roll-ups, minutes and a few windows. */
	parts = check_range(dir, 1, 0, &queries[1], &windows);
	assert_int_equal(windows, 150);
	assert_true(parts <= 12);
	parts = check_range(dir, end - 3600 * SEC, end + 1, &queries[0], &windows);
	assert_int_equal(windows, 150);
	assert_true(parts <= 12);
}

/* Reopening starts a new segment; runs never cross it, and results stay
 * exact across the boundary (also after a segment rolls by size). */
static void test_segments_and_restart(void **state)
{
	const char *dir = *state;
	struct store_limits l = MINUTES;
	struct store *s;
	struct store_stats st;
	uint64_t end = T0 + 130 * WIN;

	l.seg_bytes = 64u << 10;
	s = open_store(dir, &l);

	append_windows(s, 0, 40);
	store_close(s);
	s = open_store(dir, &l);
	append_windows(s, 40, 130);
	store_get_stats(s, &st);
	assert_true(st.segments >= 2);
	assert_true(st.rollups > 0);
	store_close(s);
	for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++) {
		check_range(dir, 1, 0, &queries[k], NULL);
		check_range(dir, T0 + 333 * SEC, end - 77 * SEC, &queries[k], NULL);
	}
}

/* Flips a byte in the payload of the last (10 min) roll-up: the merged
 * scan reports it and uses the minute roll-ups and windows it stood for. */
static void test_damaged_rollup(void **state)
{
	const char *dir = *state;
	struct store_limits l = MINUTES;
	struct store *s = open_store(dir, &l);
	struct store_scan_report r;
	struct merged m;
	struct query q = { true, 0, NULL };
	char cmd[512], path[400];
	FILE *p;
	long off;
	int fd;
	unsigned char c;

	append_windows(s, 0, 62);
	store_close(s);
	/* The 10 min roll-up is written after window 59 (its end reaches
	 * T0 - 7 s + 600 s); find it as the record with kind 2. */
	snprintf(cmd, sizeof(cmd), "ls %s/seg-*.hst", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(path, sizeof(path), p));
	pclose(p);
	path[strcspn(path, "\n")] = 0;
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	for (off = 32;;) {
		unsigned char h[40];
		uint32_t len;

		assert_int_equal(pread(fd, h, 40, off), 40);
		len = (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
		if (h[28] == 2)
			break;
		off += 40 + (long)len;
	}
	assert_int_equal(pread(fd, &c, 1, off + 100), 1);
	c ^= 0x5a;
	assert_int_equal(pwrite(fd, &c, 1, off + 100), 1);
	close(fd);
	merged_init(&m, &q);
	assert_int_equal(store_scan_merged(dir, 1, 0, by_part, &m, &r), 0);
	assert_int_equal(r.rollups_bad, 1);
	assert_int_equal(m.windows, 62);
	assert_int_equal(r.corrupt, 0);
	prof_free(m.p);
	for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++)
		check_range(dir, 1, 0, &queries[k], NULL);
	/* A plain scan with a callback (what --verify-store runs) checks the
	 * roll-ups too and reports the damaged one. */
	assert_int_equal(store_scan(dir, 0, 0, count_window, NULL, &r), 0);
	assert_int_equal(r.windows, 62);
	assert_int_equal(r.rollups_bad, 1);
	assert_true(r.rollups > 5);
	assert_int_equal(r.corrupt, 1);
}

/* Age retention deletes whole segments, roll-ups with their windows: what
 * remains still merges exactly. */
static void test_retention(void **state)
{
	const char *dir = *state;
	struct store_limits l = MINUTES;
	struct store *s;
	struct store_stats st;
	struct store_scan_report r;

	l.seg_bytes = 40u << 10;
	s = open_store(dir, &l);

	append_windows(s, 0, 120);
	store_get_stats(s, &st);
	assert_true(st.segments >= 3);
	l.max_age_ns = 700 * SEC;
	store_set_limits(s, &l);
	assert_true(store_retain(s, T0 + 120 * WIN) > 0);
	store_close(s);
	assert_int_equal(store_scan(dir, 0, 0, NULL, NULL, &r), 0);
	assert_true(r.windows < 120);
	for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++)
		check_range(dir, 1, 0, &queries[k], NULL);
}

/* The default spans (10 minutes, an hour) on 25 minutes of windows. */
static void test_defaults(void **state)
{
	const char *dir = *state;
	struct store_limits l = { 0 };
	struct store *s = open_store(dir, &l);
	struct store_stats st;
	uint32_t parts, windows;

	append_windows(s, 0, 150);
	store_get_stats(s, &st);
	assert_int_equal(st.rollups, 2); /* windows 0-59 and 60-119 */
	store_close(s);
	for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++) {
		check_range(dir, 1, 0, &queries[k], NULL);
		check_range(dir, T0 + 44 * SEC, T0 + 1444 * SEC, &queries[k], NULL);
	}
	parts = check_range(dir, 1, 0, &queries[0], &windows);
	assert_int_equal(windows, 150);
	assert_int_equal(parts, 2 + 30);
}

/* The writer's open 10 minutes, merged in memory, stand for their windows
 * while no roll-up on disk holds them; exactly. */
static void test_live(void **state)
{
	const char *dir = *state;
	struct store_limits l = { 0 };
	struct store *s = open_store(dir, &l);
	struct store_live live;
	uint64_t end = T0 + 151 * WIN;
	uint32_t parts, windows;

	append_windows(s, 0, 121);
	/* One window in the open run: nothing to gain. */
	assert_int_equal(store_live_part(s, &live), -ENODATA);
	append_windows(s, 121, 150);
	assert_int_equal(store_live_part(s, &live), 0);
	assert_int_equal(live.part.windows, 30);
	assert_int_equal(live.part.start_ns, T0 + 120 * WIN);
	assert_int_equal(live.part.end_ns, T0 + 150 * WIN);
	for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++) {
		check_live(dir, 1, 0, &queries[k], &live, NULL);
		check_live(dir, T0 + 333 * SEC, end + 1, &queries[k], &live, NULL);
		check_live(dir, T0 + 1203 * SEC, 0, &queries[k], &live, NULL); /* inside it */
		check_live(dir, 1, T0 + 1444 * SEC, &queries[k], &live, NULL);
	}
	parts = check_live(dir, 1, 0, &queries[1], &live, &windows);
	assert_int_equal(windows, 150);
	assert_int_equal(parts, 3);
	/* After one more window the blob is made again. */
	append_windows(s, 150, 151);
	assert_int_equal(store_live_part(s, &live), 0);
	assert_int_equal(live.part.windows, 31);
	parts = check_live(dir, 1, 0, &queries[3], &live, &windows);
	assert_int_equal(windows, 151);
	assert_int_equal(parts, 3);
	store_close(s);
}

/* A bound on the open merge's memory: runs end early, an hour that would
 * not fit is not rolled up, and every range still merges exactly as its
 * windows do, the writer's open run too; nothing is lost. */
static void test_bounded(void **state)
{
	const char *dir = *state;
	struct store_limits l = { .rollup_bytes = 256 << 10 };
	struct store *s = open_store(dir, &l);
	struct store_stats st;
	struct store_live live;
	uint64_t end = T0 + 400 * WIN;
	uint32_t parts, windows;
	char other[256];

	append_windows(s, 0, 400);
	store_get_stats(s, &st);
	assert_int_equal(st.windows, 400);
	assert_int_equal(st.rollups_skipped, 0);
	/* Each 10 minutes (60 windows) is cut into roll-ups of a few windows,
	 * and the hour would not fit. */
	assert_true(st.rollups_bounded >= 6 + 2);
	assert_true(st.rollups >= 6 * 2);
	assert_int_equal(store_live_part(s, &live), 0);
	assert_true(live.part.windows >= 2 && live.part.windows < 40);
	for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++) {
		check_live(dir, 1, 0, &queries[k], &live, NULL);
		check_live(dir, T0 + 333 * SEC, end - 5 * SEC, &queries[k], &live, NULL);
		check_range(dir, T0 + 593 * SEC, T0 + 1193 * SEC, &queries[k], NULL);
		check_range(dir, end - 3600 * SEC, end + 1, &queries[k], NULL);
	}
	parts = check_live(dir, 1, 0, &queries[1], &live, &windows);
	assert_int_equal(windows, 400);
	/* Still far fewer reads than windows. */
	assert_true(parts < 400 / 8);
	store_close(s);

	snprintf(other, sizeof(other), "%s/unbounded", dir);
	assert_int_equal(mkdir(other, 0700), 0);
	l.rollup_bytes = 0;
	s = open_store(other, &l);
	append_windows(s, 0, 400);
	store_get_stats(s, &st);
	assert_int_equal(st.rollups_bounded, 0);
	store_close(s);
	assert_int_equal(st.rollups, 7); /* six 10 minutes and an hour */
}

/* Roll-ups off: no roll-up is written and merged scans read windows. */
static void test_off(void **state)
{
	const char *dir = *state;
	struct store_limits l = { .rollup_ns = { STORE_ROLLUP_OFF, 0 } };
	struct store *s = open_store(dir, &l);
	struct store_stats st;
	uint32_t windows;

	append_windows(s, 0, 70);
	store_get_stats(s, &st);
	assert_int_equal(st.rollups, 0);
	store_close(s);
	assert_int_equal(check_range(dir, 1, 0, &queries[0], &windows), 70);
	assert_int_equal(windows, 70);
}

/* ---- version 1 stores ------------------------------------------------- */

static void le32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc(const uint8_t *b, size_t n)
{
	return (uint32_t)crc32(0, b, (uInt)n);
}

static void v1_header(uint8_t b[32], const char *magic)
{
	memset(b, 0, 32);
	memcpy(b, magic, 8);
	le32(b + 8, 1);
	le32(b + 12, 32);
	le32(b + 28, crc(b, 28));
}

/* Writes a version 1 segment and index by hand (the layout this build
 * wrote before roll-ups) and reads it both ways. */
static void test_version1(void **state)
{
	const char *dir = *state;
	char path[512];
	uint8_t h[32];
	FILE *seg, *idx;
	uint64_t off = 32;
	uint32_t windows;

	snprintf(path, sizeof(path), "%s/seg-%020llu.hst", dir, (unsigned long long)T0);
	seg = fopen(path, "wb");
	snprintf(path, sizeof(path), "%s/seg-%020llu.idx", dir, (unsigned long long)T0);
	idx = fopen(path, "wb");
	assert_non_null(seg);
	assert_non_null(idx);
	v1_header(h, "HEARTHSG");
	fwrite(h, 1, 32, seg);
	v1_header(h, "HEARTHIX");
	fwrite(h, 1, 32, idx);
	for (int i = 0; i < 20; i++) {
		struct store_window w = {
			.start_ns = T0 + (uint64_t)i * WIN, .end_ns = T0 + (uint64_t)(i + 1) * WIN,
			.oncpu = window_profile(i, false), .offcpu = window_profile(i, true),
		};
		uint8_t rh[40] = { 0 }, e[32];
		void *blob = NULL;
		size_t len = 0;

		assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
		le32(rh, 0x31435248u);
		le32(rh + 4, (uint32_t)len);
		le64(rh + 8, w.start_ns);
		le64(rh + 16, w.end_ns);
		le32(rh + 24, crc(blob, len));
		le32(rh + 36, crc(rh, 36));
		fwrite(rh, 1, 40, seg);
		fwrite(blob, 1, len, seg);
		le64(e, w.start_ns);
		le64(e + 8, w.end_ns);
		le64(e + 16, off);
		le32(e + 24, (uint32_t)(40 + len));
		le32(e + 28, crc(e, 28));
		fwrite(e, 1, 32, idx);
		off += 40 + len;
		free(blob);
		store_window_clear(&w);
	}
	fclose(seg);
	fclose(idx);
	assert_int_equal(check_range(dir, 1, 0, &queries[1], &windows), 20);
	assert_int_equal(windows, 20);
	check_range(dir, T0 + 55 * SEC, T0 + 123 * SEC, &queries[3], NULL);
	/* A writer opening it counts its windows and appends version 2. */
	{
		struct store_limits l = { 0 };
		struct store *s = open_store(dir, &l);
		struct store_stats st;

		store_get_stats(s, &st);
		assert_int_equal(st.windows, 20);
		append_windows(s, 20, 90);
		store_close(s);
	}
	assert_true(check_range(dir, 1, 0, &queries[1], &windows) < 60);
	assert_int_equal(windows, 90);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_as_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segments_and_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_rollup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version1, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
