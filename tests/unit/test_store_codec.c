/* SPDX-License-Identifier: MIT */
/* The store's profile and window encoding: exact round trips (every frame
 * field, values, metadata), merging with a process filter, compactness of
 * shared prefixes, and rejection of truncated, altered and foreign bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/store_codec.h"
#include "profile/folded.h"
#include "profile/profile.h"

static uint32_t frame(struct prof_profile *p, const char *name, const char *mod,
		      const char *file, uint32_t line, uint8_t kind, uint8_t cls)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, name), .module = prof_intern_cstr(p, mod),
		.file = prof_intern_cstr(p, file), .line = line, .kind = kind,
		.cls = cls, .lang = PROF_LANG_C,
	};

	return prof_frame_intern(p, &f);
}

static struct prof_profile *sample_profile(enum prof_unit unit)
{
	struct prof_profile *p = prof_new(unit);
	uint32_t proc, mainf, a, b, k;

	assert_non_null(p);
	proc = frame(p, "app", "", "", 1234, PROF_KIND_PROCESS, PROF_CLASS_UNKNOWN);
	mainf = frame(p, "main", "/usr/bin/app", "main.c", 10, PROF_KIND_USER, PROF_CLASS_YOURS);
	a = frame(p, "work_a", "/usr/bin/app", "a.c", 20, PROF_KIND_USER, PROF_CLASS_YOURS);
	b = frame(p, "inl_b", "/usr/bin/app", "b.h", 30, PROF_KIND_INLINE, PROF_CLASS_YOURS);
	k = frame(p, "do_syscall_64", "", "", 0, PROF_KIND_KERNEL, PROF_CLASS_SYSTEM);
	{
		uint32_t s1[] = { proc, mainf, a };
		uint32_t s2[] = { proc, mainf, a, b };
		uint32_t s3[] = { proc, mainf, b, k };
		uint32_t s4[] = { proc, mainf };

		assert_int_not_equal(prof_add_stack(p, s1, 3, 70), UINT32_MAX);
		assert_int_not_equal(prof_add_stack(p, s2, 4, 20), UINT32_MAX);
		assert_int_not_equal(prof_add_stack(p, s3, 4, 9), UINT32_MAX);
		assert_int_not_equal(prof_add_stack(p, s4, 2, 1), UINT32_MAX);
	}
	prof_meta(p)->start_ns = 1700000000123456789ull;
	prof_meta(p)->duration_ns = 10000000000ull;
	prof_meta(p)->hz = 99;
	prof_meta(p)->drops = 3;
	return p;
}

static char *folded(struct prof_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(prof_folded_write(p, f, PROF_FOLDED_ANNOTATE), 0);
	fclose(f);
	return buf;
}

/* Every stack with its full frames, as text, for exact comparison. */
static int describe(const struct prof_profile *p, const uint32_t *fr, size_t n,
		    uint64_t v, void *arg)
{
	FILE *out = arg;

	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = prof_frame_get(p, fr[i]);

		fprintf(out, "%s|%s|%s|%u|%u|%u|%u;", prof_str(p, f->name),
			prof_str(p, f->module), prof_str(p, f->file), f->line, f->kind,
			f->cls, f->lang);
	}
	fprintf(out, " %llu\n", (unsigned long long)v);
	return 0;
}

static char *full_text(struct prof_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(prof_sort(p), 0);
	assert_int_equal(prof_walk_stacks(p, describe, f), 0);
	fclose(f);
	return buf;
}

static void test_profile_round_trip(void **state)
{
	struct prof_profile *p = sample_profile(PROF_UNIT_SAMPLES), *q;
	char *a, *b;
	void *blob;
	size_t len;
	int err = 1;

	(void)state;
	assert_int_equal(store_codec_profile_pack(p, &blob, &len), 0);
	q = store_codec_profile_unpack(blob, len, &err);
	assert_non_null(q);
	assert_int_equal(err, 0);
	a = full_text(p);
	b = full_text(q);
	assert_string_equal(a, b);
	assert_int_equal(prof_total(q), 100);
	assert_int_equal(prof_meta(q)->start_ns, 1700000000123456789ull);
	assert_int_equal(prof_meta(q)->duration_ns, 10000000000ull);
	assert_int_equal(prof_meta(q)->hz, 99);
	assert_int_equal(prof_meta(q)->drops, 3);
	free(a);
	free(b);
	a = folded(p);
	b = folded(q);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(blob);
	prof_free(p);
	prof_free(q);
}

/* @r holds the time range and counters of test_window_round_trip()'s
 * window, both profiles, the off-CPU one in nanoseconds. */
static void assert_window_header(const struct store_window *r)
{
	assert_int_equal(r->start_ns, 5);
	assert_int_equal(r->end_ns, 10000000005ull);
	assert_int_equal(r->samples, 100);
	assert_int_equal(r->idle_samples, 7);
	assert_int_equal(r->offcpu_ns, 123456);
	assert_int_equal(r->drops, 2);
	assert_non_null(r->oncpu);
	assert_non_null(r->offcpu);
	assert_int_equal(prof_meta(r->offcpu)->unit, PROF_UNIT_NANOSECONDS);
	assert_int_equal(prof_meta(r->offcpu)->off_cpu, 1);
}

/* @p and @q hold the same stacks, frame for frame. */
static void assert_same(struct prof_profile *p, struct prof_profile *q)
{
	char *a = full_text(p), *b = full_text(q);

	assert_string_equal(a, b);
	free(a);
	free(b);
}

static void test_window_round_trip(void **state)
{
	struct store_window w = { .start_ns = 5, .end_ns = 10000000005ull, .samples = 100,
				  .idle_samples = 7, .offcpu_ns = 123456, .drops = 2 };
	struct store_window r;
	void *blob;
	size_t len;

	(void)state;
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	w.offcpu = sample_profile(PROF_UNIT_NANOSECONDS);
	prof_meta(w.offcpu)->off_cpu = 1;
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_window_header(&r);
	assert_same(w.offcpu, r.offcpu);
	store_window_clear(&r);
	assert_null(r.oncpu);
	/* A window with only on-CPU data. */
	prof_free(w.offcpu);
	w.offcpu = NULL;
	free(blob);
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_non_null(r.oncpu);
	assert_null(r.offcpu);
	store_window_clear(&r);
	store_window_clear(&w);
	free(blob);
}

/* The growth sections: a window with all four profiles reads back whole,
 * a merge of the growth profiles alone takes nothing else, and a snapshot
 * reply carries a profile with its second values. */
static void test_growth_sections(void **state)
{
	struct store_window w = { .start_ns = 5, .end_ns = 10 }, r;
	struct prof_profile *req = prof_new(PROF_UNIT_SAMPLES), *bytes = prof_new(PROF_UNIT_BYTES);
	struct prof_profile *p, *second = NULL;
	struct store_codec_dst d = { .growth_req = req, .growth_bytes = bytes };
	struct store_codec_merge m = { 0 };
	char *a, *b;
	void *blob;
	size_t len;
	int err;

	(void)state;
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	w.offcpu = sample_profile(PROF_UNIT_NANOSECONDS);
	w.growth_req = sample_profile(PROF_UNIT_SAMPLES);
	w.growth_bytes = sample_profile(PROF_UNIT_BYTES);
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_non_null(r.growth_req);
	assert_non_null(r.growth_bytes);
	assert_int_equal(prof_meta(r.growth_bytes)->unit, PROF_UNIT_BYTES);
	a = full_text(w.growth_bytes);
	b = full_text(r.growth_bytes);
	assert_string_equal(a, b);
	free(a);
	free(b);
	store_window_clear(&r);
	assert_int_equal(store_codec_window_merge_all(blob, len, &m, &d, NULL), 0);
	assert_int_equal(prof_total(req), 100);
	assert_int_equal(prof_total(bytes), 100);
	free(blob);
	/* a window written before growth was recorded has none */
	prof_free(w.growth_req);
	prof_free(w.growth_bytes);
	w.growth_req = w.growth_bytes = NULL;
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_null(r.growth_req);
	assert_null(r.growth_bytes);
	store_window_clear(&r);
	free(blob);
	/* a reply: the first profile and its second values */
	assert_int_equal(store_codec_pair_pack(w.oncpu, w.offcpu, &blob, &len), 0);
	assert_null(store_codec_profile_unpack(blob, len, &err));
	assert_int_equal(err, -EBADMSG);
	p = store_codec_pair_unpack(blob, len, &second, &err);
	assert_non_null(p);
	assert_non_null(second);
	assert_int_equal(prof_meta(second)->unit, PROF_UNIT_NANOSECONDS);
	assert_int_equal(prof_total(second), 100);
	prof_free(p);
	prof_free(second);
	free(blob);
	store_window_clear(&w);
	prof_free(req);
	prof_free(bytes);
}

/* Leaves bytes other than 0 where the next calls keep their locals. */
static void __attribute__((noinline)) dirty_stack(void)
{
	volatile unsigned char junk[65536];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0x5a;
}

/* What the store does not keep (the question, the negative count) reads
 * as 0, whatever the stack held: a stray question names an off-CPU
 * window's pprof sample type "wall" or "threads". */
static void test_unkept_meta_is_zero(void **state)
{
	struct store_window w = { .start_ns = 5, .end_ns = 10 }, r;
	void *blob;
	size_t len;

	(void)state;
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	w.offcpu = sample_profile(PROF_UNIT_NANOSECONDS);
	prof_meta(w.offcpu)->off_cpu = 1;
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	dirty_stack();
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_int_equal(prof_meta(r.offcpu)->question, PROF_Q_USUAL);
	assert_int_equal(prof_meta(r.offcpu)->negative, 0);
	assert_int_equal(prof_meta(r.oncpu)->question, PROF_Q_USUAL);
	assert_int_equal(prof_meta(r.oncpu)->negative, 0);
	store_window_clear(&r);
	store_window_clear(&w);
	free(blob);
}

static void test_empty_profile(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_BYTES), *q;
	void *blob;
	size_t len;
	int err;

	(void)state;
	assert_int_equal(store_codec_profile_pack(p, &blob, &len), 0);
	q = store_codec_profile_unpack(blob, len, &err);
	assert_non_null(q);
	assert_int_equal(prof_total(q), 0);
	assert_int_equal(prof_meta(q)->unit, PROF_UNIT_BYTES);
	free(blob);
	prof_free(p);
	prof_free(q);
}

static void test_rejects_damage(void **state)
{
	struct prof_profile *p = sample_profile(PROF_UNIT_SAMPLES), *q;
	struct store_window w = { .start_ns = 1, .end_ns = 2 };
	unsigned char *blob;
	void *vb;
	size_t len;
	int err;

	(void)state;
	assert_int_equal(store_codec_profile_pack(p, &vb, &len), 0);
	blob = vb;
	/* Every truncation fails cleanly. */
	for (size_t n = 0; n < len; n++) {
		q = store_codec_profile_unpack(blob, n, &err);
		assert_null(q);
		assert_int_equal(err, -EBADMSG);
	}
	/* A trailing byte is refused too. */
	blob = realloc(blob, len + 1);
	assert_non_null(blob);
	blob[len] = 0;
	assert_null(store_codec_profile_unpack(blob, len + 1, &err));
	assert_int_equal(err, -EBADMSG);
	/* Altered compressed bytes: zlib's check catches them. */
	blob[len - 1] ^= 0xff;
	assert_null(store_codec_profile_unpack(blob, len, &err));
	assert_int_equal(err, -EBADMSG);
	free(blob);
	/* A window with a time range or two profiles is not a profile. */
	w.oncpu = p;
	w.offcpu = p;
	assert_int_equal(store_codec_window_pack(&w, &vb, &len), 0);
	assert_null(store_codec_profile_unpack(vb, len, &err));
	assert_int_equal(err, -EBADMSG);
	free(vb);
	/* A section longer than the limit is refused before allocating. */
	{
		unsigned char huge[] = { 'H', 'W', 'W', '2', 2, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0 };

		assert_int_equal(store_codec_window_unpack(huge, sizeof(huge), &w), -EBADMSG);
	}
	prof_free(p);
}

/* Keeps process "app" only. */
static bool keep_app(void *arg, const char *comm, size_t len, uint32_t pid)
{
	(*(int *)arg)++;
	assert_int_equal(pid, 1234);
	return len == 3 && memcmp(comm, "app", 3) == 0;
}

static void test_merge(void **state)
{
	struct store_window w = { .start_ns = 10, .end_ns = 20, .drops = 4 }, hdr;
	struct prof_profile *dst = prof_new(PROF_UNIT_SAMPLES), *other;
	struct store_codec_merge m = { .keep = keep_app, .clear_pid = true };
	uint32_t f[2];
	int calls = 0;
	void *blob;
	size_t len;
	char *text;

	(void)state;
	m.arg = &calls;
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	w.offcpu = prof_new(PROF_UNIT_NANOSECONDS);
	other = w.oncpu;
	/* A second process the filter drops. */
	f[0] = frame(other, "other", "", "", 1234, PROF_KIND_PROCESS, PROF_CLASS_UNKNOWN);
	f[1] = frame(other, "main", "/usr/bin/other", "o.c", 1, PROF_KIND_USER, PROF_CLASS_YOURS);
	assert_int_not_equal(prof_add_stack(other, f, 2, 500), UINT32_MAX);
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	/* Twice into one profile: values add, the filter ran per stack. */
	assert_int_equal(store_codec_window_merge(blob, len, &m, dst, &hdr), 0);
	assert_int_equal(store_codec_window_merge(blob, len, &m, dst, NULL), 0);
	assert_int_equal(hdr.start_ns, 10);
	assert_int_equal(hdr.drops, 4);
	assert_null(hdr.oncpu);
	assert_int_equal(calls, 10);
	assert_int_equal(prof_total(dst), 200);
	text = folded(dst);
	assert_string_equal(text,
			    "app;main 2\n"
			    "app;main;inl_b_[i];do_syscall_64_[k] 18\n"
			    "app;main;work_a 140\n"
			    "app;main;work_a;inl_b_[i] 40\n");
	free(text);
	/* The pid is cleared: one process frame, line 0. */
	assert_int_equal(prof_frame_get(dst, prof_node_get(dst, prof_node_get(dst, 0)->child)->frame)->line, 0);
	/* Units must match; the off-CPU side is empty and adds nothing. */
	m.off_cpu = true;
	assert_int_equal(store_codec_window_merge(blob, len, &m, dst, NULL), -EINVAL);
	prof_free(dst);
	dst = prof_new(PROF_UNIT_NANOSECONDS);
	assert_int_equal(store_codec_window_merge(blob, len, &m, dst, NULL), 0);
	assert_int_equal(prof_total(dst), 0);
	prof_free(dst);
	free(blob);
	store_window_clear(&w);
}

/* @a and @b are the same tree: every node's total and self. */
static void same_tree(const struct prof_profile *a, const struct prof_profile *b)
{
	assert_int_equal(prof_node_count(a), prof_node_count(b));
	for (uint32_t i = 0; i < prof_node_count(a); i++) {
		assert_int_equal(prof_node_get(a, i)->total, prof_node_get(b, i)->total);
		assert_int_equal(prof_node_get(a, i)->self, prof_node_get(b, i)->self);
	}
}

/* Keeps every process. */
static bool keep_all(void *arg, const char *comm, size_t len, uint32_t pid)
{
	(void)arg;
	(void)comm;
	(void)len;
	(void)pid;
	return true;
}

/* Merging with totals deferred, then fixed once, gives the same tree as
 * merging stack by stack: every node's total and self. */
static void test_merge_deferred(void **state)
{
	struct store_window w = { .start_ns = 10, .end_ns = 20 };
	struct prof_profile *a = prof_new(PROF_UNIT_SAMPLES), *b = prof_new(PROF_UNIT_SAMPLES);
	struct store_codec_merge m = { .keep = keep_all };
	struct store_codec_merge md = { .keep = keep_all, .defer_totals = true };
	uint32_t f[3];
	char *ta, *tb;
	void *blob;
	size_t len;

	(void)state;
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	/* a stack ending at a process row, and a value on the root */
	f[0] = frame(w.oncpu, "other", "", "", 77, PROF_KIND_PROCESS, PROF_CLASS_UNKNOWN);
	f[1] = frame(w.oncpu, "run", "/usr/bin/other", "o.c", 3, PROF_KIND_USER, PROF_CLASS_YOURS);
	f[2] = frame(w.oncpu, "deeper", "/usr/bin/other", "o.c", 4, PROF_KIND_USER, PROF_CLASS_YOURS);
	assert_int_not_equal(prof_add_stack(w.oncpu, f, 1, 7), UINT32_MAX);
	assert_int_not_equal(prof_add_stack(w.oncpu, f, 3, 11), UINT32_MAX);
	assert_int_not_equal(prof_add_stack(w.oncpu, f, 0, 5), UINT32_MAX);
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(store_codec_window_merge(blob, len, &m, a, NULL), 0);
		assert_int_equal(store_codec_window_merge(blob, len, &md, b, NULL), 0);
	}
	store_codec_merge_totals(b);
	assert_int_equal(prof_total(a), 3 * prof_total(w.oncpu));
	same_tree(a, b);
	ta = folded(a);
	tb = folded(b);
	assert_string_equal(ta, tb);
	free(ta);
	free(tb);
	free(blob);
	prof_free(a);
	prof_free(b);
	store_window_clear(&w);
}

/* ---- places ----------------------------------------------------------- */

#define APP_START 0x555555550000ull
#define APP_LIMIT (APP_START + 0x4000) /* a 3-byte varint: see below */
#define APP_ID "4e4f54414255494c4449443a61707020686561727468"

/* The frame named @name in @p, 0 when none. */
static uint32_t named(const struct prof_profile *p, const char *name)
{
	for (uint32_t i = 1; i < prof_frame_count(p); i++)
		if (strcmp(prof_str(p, prof_frame_get(p, i)->name), name) == 0)
			return i;
	return 0;
}

static uint32_t mapping(struct prof_profile *p, uint64_t start, uint64_t limit,
			uint64_t offset, const char *file, const char *id)
{
	struct prof_mapping m = { .start = start, .limit = limit, .offset = offset,
				  .file = prof_intern_cstr(p, file),
				  .build_id = prof_intern_cstr(p, id) };
	uint32_t mid = prof_mapping_intern(p, &m);

	assert_int_not_equal(mid, UINT32_MAX);
	return mid;
}

/* Places for sample_profile()'s frames, as hearthd's stack builder gives
 * them: main and work_a in the app's mapping (at @start), inl_b at
 * work_a's address (inlined there); a kernel frame placed outside any
 * mapping it could be in (no reader could use it: not kept); a mapping
 * no frame is at (not written). */
static void place_sample(struct prof_profile *p, uint64_t start)
{
	uint32_t app = mapping(p, start, start + 0x4000, 0x1000, "/usr/bin/app", APP_ID);
	uint32_t unused = mapping(p, 0x7f0000000000ull, 0x7f0000200000ull, 0, "/lib/libc.so.6", "");

	assert_int_equal(prof_frame_place(p, named(p, "main"), app, start + 0x1234), 0);
	assert_int_equal(prof_frame_place(p, named(p, "work_a"), app, start + 0x2345), 0);
	assert_int_equal(prof_frame_place(p, named(p, "inl_b"), app, start + 0x2345), 0);
	assert_int_equal(prof_frame_place(p, named(p, "do_syscall_64"), app, 0x10), 0);
	(void)unused;
}

/* Frame @name of @p is at @addr of the app's mapping at @start. */
static void assert_placed(const struct prof_profile *p, const char *name, uint64_t start,
			  uint64_t addr)
{
	uint32_t mid;
	uint64_t a = prof_frame_addr(p, named(p, name), &mid);
	const struct prof_mapping *m = prof_mapping_get(p, mid);

	assert_non_null(m);
	assert_int_equal(a, addr);
	assert_int_equal(m->start, start);
	assert_int_equal(m->limit, start + 0x4000);
	assert_int_equal(m->offset, 0x1000);
	assert_string_equal(prof_str(p, m->file), "/usr/bin/app");
	assert_string_equal(prof_str(p, m->build_id), APP_ID);
}

static void assert_sample_places(const struct prof_profile *p, uint64_t start)
{
	uint32_t mid = 1;

	assert_placed(p, "main", start, start + 0x1234);
	assert_placed(p, "work_a", start, start + 0x2345);
	assert_placed(p, "inl_b", start, start + 0x2345);
	assert_int_equal(prof_frame_addr(p, named(p, "do_syscall_64"), &mid), 0);
	assert_int_equal(mid, 0);
	assert_int_equal(prof_frame_addr(p, named(p, "app"), &mid), 0);
	assert_int_equal(mid, 0);
}

/* A window keeps each frame's place: both profiles (one string table),
 * a snapshot reply, and merges, where the first place a frame is given
 * stays. */
static void test_places_round_trip(void **state)
{
	struct store_window w = { .start_ns = 5, .end_ns = 10 }, r;
	struct store_codec_merge m = { .keep = keep_all, .clear_pid = true, .defer_totals = true };
	struct prof_profile *q, *second = NULL, *dst = prof_new(PROF_UNIT_SAMPLES);
	const uint64_t other = APP_START + 0x100000;
	void *blob, *blob2;
	size_t len, len2;
	int err;

	(void)state;
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	w.offcpu = sample_profile(PROF_UNIT_NANOSECONDS);
	place_sample(w.oncpu, APP_START);
	place_sample(w.offcpu, other);
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_sample_places(r.oncpu, APP_START);
	assert_sample_places(r.offcpu, other);
	/* only the mapping in use came */
	assert_int_equal(prof_mapping_count(r.oncpu), 2);
	assert_same(w.oncpu, r.oncpu);
	store_window_clear(&r);
	/* a snapshot reply */
	assert_int_equal(store_codec_pair_pack(w.oncpu, w.offcpu, &blob2, &len2), 0);
	q = store_codec_pair_unpack(blob2, len2, &second, &err);
	assert_non_null(q);
	assert_sample_places(q, APP_START);
	assert_sample_places(second, other);
	prof_free(q);
	prof_free(second);
	free(blob2);
	/* merged as a snapshot is, twice: the places come once */
	assert_int_equal(store_codec_window_merge(blob, len, &m, dst, NULL), 0);
	assert_int_equal(store_codec_window_merge(blob, len, &m, dst, NULL), 0);
	assert_sample_places(dst, APP_START);
	assert_int_equal(prof_mapping_count(dst), 2);
	/* a later window where the code sits elsewhere: the first place stays */
	store_window_clear(&w);
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	place_sample(w.oncpu, other);
	assert_int_equal(store_codec_window_pack(&w, &blob2, &len2), 0);
	assert_int_equal(store_codec_window_merge(blob2, len2, &m, dst, NULL), 0);
	assert_sample_places(dst, APP_START);
	store_codec_merge_totals(dst);
	assert_int_equal(prof_total(dst), 300);
	free(blob2);
	free(blob);
	prof_free(dst);
	store_window_clear(&w);
}

/* A window as version 2 wrote it (before places were kept): the
 * sample_profile() window of test_window_round_trip, on- and off-CPU,
 * from store_codec_window_pack() of commit 323d539. */
static const unsigned char window_v2[] = {
	0x48, 0x57, 0x57, 0x32, 0x02, 0x05, 0x85, 0xc8, 0xaf, 0xa0, 0x25, 0x64,
	0x07, 0xc0, 0xc4, 0x07, 0x02, 0x03, 0x41, 0x42, 0x78, 0x5e, 0xe3, 0x64,
	0x66, 0xe1, 0x61, 0x63, 0x63, 0x66, 0x65, 0xe6, 0x4d, 0x2c, 0x28, 0xc8,
	0x4d, 0xcc, 0xcc, 0xd3, 0x2f, 0x2d, 0x2e, 0xd2, 0x4f, 0x02, 0xd2, 0x50,
	0xbe, 0x5e, 0x72, 0x79, 0x7e, 0x51, 0x76, 0x7c, 0x62, 0xa2, 0x5e, 0x72,
	0x66, 0x5e, 0x4e, 0x7c, 0x52, 0x92, 0x5e, 0x46, 0x4a, 0x7e, 0x7c, 0x71,
	0x65, 0x71, 0x72, 0x62, 0x4e, 0x4e, 0xbc, 0x99, 0x09, 0x00, 0x5f, 0x2e,
	0x15, 0x25, 0x4a, 0x4e, 0x78, 0x5e, 0x63, 0x98, 0x3a, 0x6b, 0xfa, 0x9b,
	0xc7, 0xf3, 0x9f, 0x9f, 0x16, 0x6f, 0x38, 0xb1, 0x7e, 0x81, 0x6a, 0x32,
	0x03, 0x33, 0x2b, 0x13, 0x13, 0x1b, 0x0b, 0x0b, 0x03, 0x33, 0x33, 0x33,
	0x03, 0x03, 0x07, 0x0b, 0x0b, 0xff, 0x25, 0x4e, 0x2e, 0x11, 0x39, 0x06,
	0x66, 0x06, 0x46, 0x06, 0x46, 0x10, 0x62, 0x62, 0x64, 0x64, 0x64, 0x61,
	0x64, 0x61, 0x60, 0x62, 0x04, 0x41, 0x66, 0x37, 0x66, 0x46, 0x16, 0x11,
	0x26, 0x26, 0x16, 0x56, 0x4e, 0x00, 0x9d, 0x55, 0x0b, 0x10, 0x4a, 0x4e,
	0x78, 0x5e, 0x63, 0x9c, 0x3a, 0x6b, 0xfa, 0x9b, 0xc7, 0xf3, 0x9f, 0x9f,
	0x16, 0x6f, 0x38, 0xb1, 0x7e, 0x81, 0x6a, 0x32, 0x23, 0x33, 0x2b, 0x13,
	0x13, 0x1b, 0x0b, 0x0b, 0x03, 0x33, 0x33, 0x33, 0x03, 0x03, 0x07, 0x0b,
	0x0b, 0xff, 0x25, 0x4e, 0x2e, 0x11, 0x39, 0x06, 0x66, 0x06, 0x46, 0x06,
	0x46, 0x10, 0x62, 0x62, 0x64, 0x64, 0x64, 0x61, 0x64, 0x61, 0x60, 0x62,
	0x04, 0x41, 0x66, 0x37, 0x66, 0x46, 0x16, 0x11, 0x26, 0x26, 0x16, 0x56,
	0x4e, 0x00, 0x9d, 0xd9, 0x0b, 0x12,
};

/* Windows stored before places were kept still read, whole, without
 * places; merged after a window with places, they add their values and
 * leave the places as they were. */
static void test_old_window(void **state)
{
	struct store_window r, w = { .start_ns = 5, .end_ns = 10 };
	struct store_codec_merge m = { .keep = keep_all, .clear_pid = true };
	struct prof_profile *want = sample_profile(PROF_UNIT_NANOSECONDS);
	struct prof_profile *dst = prof_new(PROF_UNIT_SAMPLES);
	void *blob;
	size_t len;

	(void)state;
	assert_int_equal(store_codec_window_unpack(window_v2, sizeof(window_v2), &r), 0);
	assert_window_header(&r);
	assert_int_equal(prof_meta(r.oncpu)->hz, 99);
	assert_same(want, r.offcpu);
	assert_int_equal(prof_mapping_count(r.oncpu), 1);
	for (uint32_t i = 1; i < prof_frame_count(r.oncpu); i++)
		assert_int_equal(prof_frame_addr(r.oncpu, i, NULL), 0);
	store_window_clear(&r);
	/* after a window with places */
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	place_sample(w.oncpu, APP_START);
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	assert_int_equal(store_codec_window_merge(blob, len, &m, dst, NULL), 0);
	assert_int_equal(store_codec_window_merge(window_v2, sizeof(window_v2), &m, dst, NULL), 0);
	assert_int_equal(prof_total(dst), 200);
	assert_sample_places(dst, APP_START);
	free(blob);
	store_window_clear(&w);
	prof_free(dst);
	prof_free(want);
}

/* Finds @pat in @buf. */
static unsigned char *find(unsigned char *buf, size_t len, const unsigned char *pat, size_t n)
{
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(buf + i, pat, n) == 0)
			return buf + i;
	return NULL;
}

/* Places are validated as the rest is: a mapping that no longer holds
 * the addresses of its frames, a build id that is no string, a frame
 * whose mapping is not there, all make the window undecodable. The
 * blob is a reply (sections stored, not compressed), read as a window
 * (zlib's checksum is not verified then), so the bytes can be altered. */
static void test_places_damage(void **state)
{
	struct prof_profile *p = sample_profile(PROF_UNIT_SAMPLES);
	/* the mapping: start, size 0x4000, offset 0x1000 as varints */
	const unsigned char map[] = { 0x80, 0x80, 0xd4, 0xaa, 0xd5, 0xaa, 0x15, 0x80, 0x80, 0x01,
				      0x80, 0x20 };
	struct store_window r;
	unsigned char *blob, *at;
	void *vb;
	size_t len;

	(void)state;
	place_sample(p, APP_START);
	assert_int_equal(store_codec_profile_pack(p, &vb, &len), 0);
	blob = vb;
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_sample_places(r.oncpu, APP_START);
	store_window_clear(&r);
	at = find(blob, len, map, sizeof(map));
	assert_non_null(at);
	/* size 0x2000 (still 3 bytes): work_a at +0x2345 is outside */
	at[9] = 0x00;
	at[8] = 0xc0;
	assert_int_equal(store_codec_window_unpack(blob, len, &r), -EBADMSG);
	assert_null(r.oncpu);
	/* size 0: no mapping is empty */
	at[7] = 0x80, at[8] = 0x80, at[9] = 0x00;
	assert_int_equal(store_codec_window_unpack(blob, len, &r), -EBADMSG);
	at[7] = 0x80, at[8] = 0x80, at[9] = 0x01;
	/* the build id: a string index past the table */
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	store_window_clear(&r);
	at[13] = 0x7f;
	assert_int_equal(store_codec_window_unpack(blob, len, &r), -EBADMSG);
	free(blob);
	prof_free(p);
}

/* Thread rows (hearthd's windows have them) stay only for a merge that
 * keeps them; else each thread's stacks add up under its process, with
 * totals deferred or not, and the rows' own values on the process. */
static void test_merge_threads(void **state)
{
	struct store_window w = { .start_ns = 10, .end_ns = 20 };
	struct store_codec_merge strip = { .clear_pid = true };
	struct store_codec_merge deferred = { .clear_pid = true, .defer_totals = true };
	struct store_codec_merge keep = { .clear_pid = true, .keep_threads = true };
	struct prof_profile *a = prof_new(PROF_UNIT_SAMPLES), *b = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *k = prof_new(PROF_UNIT_SAMPLES);
	uint32_t proc, t1, t2, mainf, fa, other, x;
	char *text;
	void *blob;
	size_t len;

	(void)state;
	w.oncpu = prof_new(PROF_UNIT_SAMPLES);
	proc = frame(w.oncpu, "app", "", "", 1234, PROF_KIND_PROCESS, PROF_CLASS_UNKNOWN);
	t1 = frame(w.oncpu, "app-1234", "", "", 0, PROF_KIND_THREAD, PROF_CLASS_UNKNOWN);
	t2 = frame(w.oncpu, "worker-1235", "", "", 0, PROF_KIND_THREAD, PROF_CLASS_UNKNOWN);
	mainf = frame(w.oncpu, "main", "/usr/bin/app", "main.c", 10, PROF_KIND_USER, PROF_CLASS_YOURS);
	fa = frame(w.oncpu, "work_a", "/usr/bin/app", "a.c", 20, PROF_KIND_USER, PROF_CLASS_YOURS);
	other = frame(w.oncpu, "other", "", "", 77, PROF_KIND_PROCESS, PROF_CLASS_UNKNOWN);
	x = frame(w.oncpu, "x", "/usr/bin/other", "o.c", 1, PROF_KIND_USER, PROF_CLASS_YOURS);
	{
		const struct { uint32_t f[4]; size_t n; uint64_t v; } st[] = {
			{ { proc, t1, mainf, fa }, 4, 5 }, { { proc, t1 }, 2, 2 },
			{ { proc, t2, mainf, fa }, 4, 3 }, { { proc, t2, mainf }, 3, 4 },
			{ { other, x }, 2, 6 },
		};

		for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
			assert_int_not_equal(prof_add_stack(w.oncpu, st[i].f, st[i].n, st[i].v),
					     UINT32_MAX);
	}
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(store_codec_window_merge(blob, len, &strip, a, NULL), 0);
		assert_int_equal(store_codec_window_merge(blob, len, &deferred, b, NULL), 0);
		assert_int_equal(store_codec_window_merge(blob, len, &keep, k, NULL), 0);
	}
	store_codec_merge_totals(b);
	text = folded(a);
	assert_string_equal(text, "app 4\napp;main 8\napp;main;work_a 16\nother;x 12\n");
	free(text);
	same_tree(a, b);
	text = folded(k);
	assert_string_equal(text, "app;app-1234 4\napp;app-1234;main;work_a 10\n"
			    "app;worker-1235;main 8\napp;worker-1235;main;work_a 6\nother;x 12\n");
	free(text);
	free(blob);
	prof_free(a);
	prof_free(b);
	prof_free(k);
	store_window_clear(&w);
}

static void test_compact(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct store_window w = { .start_ns = 1, .end_ns = 2 };
	uint32_t path[40];
	void *blob;
	size_t len;
	char name[32];

	(void)state;
	/* 1000 deep stacks sharing most of their prefix. */
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "frame_%d", i);
		path[i] = frame(p, name, "/lib/x.so", "x.c", (uint32_t)i, PROF_KIND_USER, PROF_CLASS_LIBRARY);
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "leaf_%d", i);
		path[39] = frame(p, name, "/lib/x.so", "x.c", 1, PROF_KIND_USER, PROF_CLASS_LIBRARY);
		assert_int_not_equal(prof_add_stack(p, path, 40, (uint64_t)i + 1), UINT32_MAX);
	}
	/* As the store keeps it (a reply is not compressed). */
	w.oncpu = p;
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	/* Far below 40 frames x 1000 stacks x 4 bytes. */
	assert_true(len < 16000);
	free(blob);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_round_trip),
		cmocka_unit_test(test_window_round_trip),
		cmocka_unit_test(test_growth_sections),
		cmocka_unit_test(test_unkept_meta_is_zero),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_rejects_damage),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_deferred),
		cmocka_unit_test(test_merge_threads),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_places_round_trip),
		cmocka_unit_test(test_old_window),
		cmocka_unit_test(test_places_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
