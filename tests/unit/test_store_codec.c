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

static void test_window_round_trip(void **state)
{
	struct store_window w = { .start_ns = 5, .end_ns = 10000000005ull, .samples = 100,
				  .idle_samples = 7, .offcpu_ns = 123456, .drops = 2 };
	struct store_window r;
	char *a, *b;
	void *blob;
	size_t len;

	(void)state;
	w.oncpu = sample_profile(PROF_UNIT_SAMPLES);
	w.offcpu = sample_profile(PROF_UNIT_NANOSECONDS);
	prof_meta(w.offcpu)->off_cpu = 1;
	assert_int_equal(store_codec_window_pack(&w, &blob, &len), 0);
	assert_int_equal(store_codec_window_unpack(blob, len, &r), 0);
	assert_int_equal(r.start_ns, 5);
	assert_int_equal(r.end_ns, 10000000005ull);
	assert_int_equal(r.samples, 100);
	assert_int_equal(r.idle_samples, 7);
	assert_int_equal(r.offcpu_ns, 123456);
	assert_int_equal(r.drops, 2);
	assert_non_null(r.oncpu);
	assert_non_null(r.offcpu);
	assert_int_equal(prof_meta(r.offcpu)->unit, PROF_UNIT_NANOSECONDS);
	assert_int_equal(prof_meta(r.offcpu)->off_cpu, 1);
	a = full_text(w.offcpu);
	b = full_text(r.offcpu);
	assert_string_equal(a, b);
	free(a);
	free(b);
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
	assert_int_equal(prof_node_count(a), prof_node_count(b));
	for (uint32_t i = 0; i < prof_node_count(a); i++) {
		assert_int_equal(prof_node_get(a, i)->total, prof_node_get(b, i)->total);
		assert_int_equal(prof_node_get(a, i)->self, prof_node_get(b, i)->self);
	}
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
		cmocka_unit_test(test_compact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
