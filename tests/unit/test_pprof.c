/* SPDX-License-Identifier: MIT */
/*
 * pprof: round trips keep every frame attribute, units map to sample
 * types, malformed data is refused with one sentence.
 *
 * Run with arguments it is also the converter the end-to-end test uses:
 *   test_pprof convert IN OUT [HZ | offcpu]
 * where a name ending in .folded is folded text and anything else pprof;
 * HZ sets the sampling rate, "offcpu" reads folded counts as off-CPU
 * nanoseconds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/gzip.h"
#include "profile/pprof.h"
#include "profile/pprof_fields.h"
#include "profile/profile.h"
#include "profile/protobuf.h"

/* ---- helpers --------------------------------------------------------------- */

struct dump {
	char *buf;
	size_t len;
	FILE *f;
};

static int dump_stack(const struct prof_profile *p, const uint32_t *frames,
		      size_t n, uint64_t value, void *arg)
{
	struct dump *d = arg;

	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = prof_frame_get(p, frames[i]);

		fprintf(d->f, "%s%s|%s|%s|%u|%u|%u|%u", i ? ";" : "",
			prof_str(p, f->name), prof_str(p, f->module),
			prof_str(p, f->file), f->line, f->kind, f->cls,
			f->lang);
	}
	fprintf(d->f, " %llu\n", (unsigned long long)value);
	return 0;
}

/* Every stack with every frame field, sorted: equal dumps mean equal
 * profiles. The caller frees the string. */
static char *dump(struct prof_profile *p)
{
	struct dump d = { 0 };

	d.f = open_memstream(&d.buf, &d.len);
	assert_non_null(d.f);
	assert_int_equal(prof_sort(p), 0);
	assert_int_equal(prof_walk_stacks(p, dump_stack, &d), 0);
	fclose(d.f);
	return d.buf;
}

static uint32_t frame(struct prof_profile *p, const char *name,
		      const char *module, const char *file, uint32_t line,
		      int kind, int cls, int lang)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, name),
		.module = prof_intern_cstr(p, module),
		.file = prof_intern_cstr(p, file),
		.line = line,
		.kind = (uint8_t)kind,
		.cls = (uint8_t)cls,
		.lang = (uint8_t)lang,
	};

	return prof_frame_intern(p, &f);
}

static struct prof_profile *round_trip(struct prof_profile *p)
{
	struct prof_profile *q = NULL;
	void *buf = NULL;
	size_t len = 0;
	char err[256];

	assert_int_equal(prof_pprof_encode(p, &buf, &len), 0);
	assert_true(prof_pprof_sniff(buf, len));
	assert_int_equal(prof_pprof_read(buf, len, &q, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	free(buf);
	return q;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_round_trip_attributes(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q;
	uint32_t proc, thr, m, work, inl, inl2, lib, k, proc2, odd;
	char *a, *b;

	(void)state;
	proc = frame(p, "server", NULL, NULL, 0, PROF_KIND_PROCESS, 0, 0);
	thr = frame(p, "worker-3 (1234)", NULL, NULL, 0, PROF_KIND_THREAD, 0, 0);
	m = frame(p, "main", "/usr/bin/server", "main.c", 10,
		  PROF_KIND_USER, PROF_CLASS_YOURS, PROF_LANG_C);
	work = frame(p, "work", "/usr/bin/server", "work.c", 20,
		     PROF_KIND_USER, PROF_CLASS_YOURS, PROF_LANG_C);
	inl = frame(p, "inlined_a", "/usr/bin/server", "a.h", 3,
		    PROF_KIND_INLINE, PROF_CLASS_YOURS, PROF_LANG_CPP);
	inl2 = frame(p, "inlined_b", "/usr/bin/server", "b.h", 4,
		     PROF_KIND_INLINE, PROF_CLASS_YOURS, PROF_LANG_CPP);
	lib = frame(p, "memcpy", "/lib/x86_64-linux-gnu/libc.so.6", NULL, 0,
		    PROF_KIND_USER, PROF_CLASS_SYSTEM, PROF_LANG_ASM);
	k = frame(p, "do_syscall_64", "[kernel.kallsyms]", NULL, 0,
		  PROF_KIND_KERNEL, PROF_CLASS_SYSTEM, 0);
	/* A process row with a class is not a plain label. */
	proc2 = frame(p, "batch", NULL, NULL, 0, PROF_KIND_PROCESS,
		      PROF_CLASS_WAITING, 0);
	/* A thread row in the middle of a stack stays a frame. */
	odd = frame(p, "odd", NULL, NULL, 0, PROF_KIND_THREAD, 0, 0);
	prof_add_stack(p, (uint32_t[]){ proc, thr, m, work }, 4, 7);
	prof_add_stack(p, (uint32_t[]){ proc, thr, m, work, inl, inl2 }, 6, 11);
	prof_add_stack(p, (uint32_t[]){ proc, thr, m, work, inl, lib, k }, 7, 3);
	prof_add_stack(p, (uint32_t[]){ proc, m }, 2, 2);
	prof_add_stack(p, (uint32_t[]){ thr, m }, 2, 1);
	prof_add_stack(p, (uint32_t[]){ proc2, m, odd }, 3, 5);
	prof_add_stack(p, (uint32_t[]){ inl, m }, 2, 4);
	/* Only the rows: no frame follows them. */
	prof_add_stack(p, (uint32_t[]){ proc }, 1, 6);
	prof_add_stack(p, (uint32_t[]){ proc, thr }, 2, 8);
	prof_add_stack(p, (uint32_t[]){ thr }, 1, 9);
	prof_meta(p)->hz = 99;
	prof_meta(p)->start_ns = 1700000000123456789ull;
	prof_meta(p)->duration_ns = 30000000000ull;
	prof_meta(p)->drops = 17;
	q = round_trip(p);
	a = dump(p);
	b = dump(q);
	assert_string_equal(b, a);
	assert_int_equal(prof_total(q), 56);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_SAMPLES);
	assert_int_equal(prof_meta_const(q)->hz, 99);
	assert_true(prof_meta_const(q)->start_ns == 1700000000123456789ull);
	assert_true(prof_meta_const(q)->duration_ns == 30000000000ull);
	assert_int_equal(prof_meta_const(q)->drops, 17);
	free(a);
	free(b);
	prof_free(q);
	prof_free(p);
}

/* Frame @f's place in @p as "file build-id start limit offset addr". */
static void place_is(const struct prof_profile *p, uint32_t f, const char *want)
{
	uint32_t mid;
	uint64_t addr = prof_frame_addr(p, f, &mid);
	const struct prof_mapping *m = prof_mapping_get(p, mid);
	char got[512];

	assert_non_null(m);
	snprintf(got, sizeof(got), "%s %s %llx %llx %llx %llx", prof_str(p, m->file),
		 prof_str(p, m->build_id), (unsigned long long)m->start,
		 (unsigned long long)m->limit, (unsigned long long)m->offset,
		 (unsigned long long)addr);
	assert_string_equal(got, want);
}

/* The id of the frame named @name in @p (there is one). */
static uint32_t frame_named(const struct prof_profile *p, const char *name)
{
	for (uint32_t f = 1; f < prof_frame_count(p); f++)
		if (!strcmp(prof_str(p, prof_frame_get(p, f)->name), name))
			return f;
	fail_msg("no frame %s", name);
	return 0;
}

/* Places (mappings with build-ids, addresses) go through pprof and
 * merges; the first place given stays; a location whose inline chain
 * was seen elsewhere is written at its outer frame's address. */
static void test_places(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q, *r;
	struct prof_mapping exe = { 0x5500001000, 0x5500002000, 0x1000,
				    prof_intern_cstr(p, "/srv/bin/app"),
				    prof_intern_cstr(p, "b83d9c3b2b5f79c4") };
	struct prof_mapping libc = { 0x7f0000026000, 0x7f000017c000, 0x26000,
				     prof_intern_cstr(p, "/usr/lib/libc.so.6"), 0 };
	uint32_t me = prof_mapping_intern(p, &exe), ml = prof_mapping_intern(p, &libc);
	uint32_t m = frame(p, "main", "app", "main.c", 10, PROF_KIND_USER, 1, 1);
	uint32_t w = frame(p, "work", "app", "work.c", 20, PROF_KIND_USER, 1, 1);
	uint32_t w2 = frame(p, "work2", "app", "work.c", 30, PROF_KIND_USER, 1, 1);
	uint32_t in = frame(p, "helper", "app", "h.h", 3, PROF_KIND_INLINE, 1, 1);
	uint32_t c = frame(p, "memcpy", "libc.so.6", NULL, 0, PROF_KIND_USER, 4, 5);
	uint32_t k = frame(p, "schedule", "[kernel]", NULL, 0, PROF_KIND_KERNEL, 4, 0);

	(void)state;
	assert_int_equal(me, 1);
	assert_int_equal(ml, 2);
	assert_int_equal(prof_mapping_intern(p, &exe), me);
	assert_int_equal(prof_frame_place(p, m, me, 0x5500001100), 0);
	assert_int_equal(prof_frame_place(p, m, me, 0x5500001999), 0); /* kept: the first */
	assert_int_equal(prof_frame_place(p, w, me, 0x5500001200), 0);
	assert_int_equal(prof_frame_place(p, in, me, 0x5500001200), 0);
	assert_int_equal(prof_frame_place(p, w2, me, 0x5500001300), 0);
	assert_int_equal(prof_frame_place(p, c, ml, 0x7f0000030000), 0);
	assert_int_equal(prof_frame_place(p, c, 9, 1), -EINVAL);
	prof_add_stack(p, (uint32_t[]){ m, w, in, c, k }, 5, 3);
	prof_add_stack(p, (uint32_t[]){ m, w2, in }, 3, 2);
	q = round_trip(p);
	place_is(q, frame_named(q, "main"), "/srv/bin/app b83d9c3b2b5f79c4 5500001000 5500002000 1000 5500001100");
	place_is(q, frame_named(q, "work"), "/srv/bin/app b83d9c3b2b5f79c4 5500001000 5500002000 1000 5500001200");
	/* helper was seen under work: under work2 its location is written
	 * at work2's address, which the reader gives work2 */
	place_is(q, frame_named(q, "work2"), "/srv/bin/app b83d9c3b2b5f79c4 5500001000 5500002000 1000 5500001300");
	place_is(q, frame_named(q, "memcpy"), "/usr/lib/libc.so.6  7f0000026000 7f000017c000 26000 7f0000030000");
	assert_int_equal(prof_frame_addr(q, frame_named(q, "schedule"), NULL), 0);
	/* the module of a process's mapping is its file's name */
	assert_string_equal(prof_str(q, prof_frame_get(q, frame_named(q, "memcpy"))->module), "libc.so.6");
	r = prof_new(PROF_UNIT_SAMPLES);
	assert_int_equal(prof_merge(r, q), 0);
	place_is(r, frame_named(r, "work"), "/srv/bin/app b83d9c3b2b5f79c4 5500001000 5500002000 1000 5500001200");
	assert_int_equal(prof_mapping_count(r), 3);
	prof_free(r);
	prof_free(q);
	prof_free(p);
}

static void test_units(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS), *q;
	uint32_t f;

	(void)state;
	prof_meta(p)->off_cpu = 1;
	f = frame(p, "futex_wait", NULL, NULL, 0, PROF_KIND_KERNEL,
		  PROF_CLASS_WAITING, 0);
	prof_add_stack(p, &f, 1, 5000000000ull);
	q = round_trip(p);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_NANOSECONDS);
	assert_int_equal(prof_meta_const(q)->off_cpu, 1);
	assert_true(prof_total(q) == 5000000000ull);
	prof_free(q);
	prof_meta(p)->off_cpu = 0;
	q = round_trip(p);
	assert_int_equal(prof_meta_const(q)->off_cpu, 0);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_NANOSECONDS);
	prof_free(q);
	prof_free(p);

	p = prof_new(PROF_UNIT_BYTES);
	f = frame(p, "malloc", NULL, NULL, 0, 0, 0, 0);
	prof_add_stack(p, &f, 1, 1u << 20);
	q = round_trip(p);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_BYTES);
	assert_int_equal(prof_total(q), 1u << 20);
	prof_free(q);
	prof_free(p);

	/* Samples without a rate: one value per sample, hz stays 0. */
	p = prof_new(PROF_UNIT_SAMPLES);
	f = frame(p, "f", NULL, NULL, 0, 0, 0, 0);
	prof_add_stack(p, &f, 1, 3);
	q = round_trip(p);
	assert_int_equal(prof_meta_const(q)->hz, 0);
	assert_int_equal(prof_total(q), 3);
	prof_free(q);
	prof_free(p);
}

/* A question of memory writes a second value per sample beside its own,
 * found by the stack's frames in the second profile (built in another
 * order, its ids differ); each reads back by its sample type name. */
static void test_memory_pair(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_BYTES), *o = prof_new(PROF_UNIT_SAMPLES), *q;
	uint32_t a[2], b[2], c[2];
	void *buf = NULL;
	size_t len = 0;
	char err[256];

	(void)state;
	a[0] = frame(p, "app", NULL, NULL, 0, PROF_KIND_PROCESS, 0, 0);
	a[1] = frame(p, "cache_insert", "/usr/bin/app", "cache.c", 7, 0, PROF_CLASS_YOURS, 0);
	b[0] = a[0];
	b[1] = frame(p, "parse", "/usr/bin/app", "parse.c", 9, 0, PROF_CLASS_YOURS, 0);
	prof_add_stack(p, a, 2, 3u << 20);
	prof_add_stack(p, b, 2, 1u << 20);
	/* the objects, parse first: other frame ids */
	c[0] = frame(o, "app", NULL, NULL, 0, PROF_KIND_PROCESS, 0, 0);
	c[1] = frame(o, "parse", "/usr/bin/app", "parse.c", 9, 0, PROF_CLASS_YOURS, 0);
	prof_add_stack(o, c, 2, 40);
	c[1] = frame(o, "cache_insert", "/usr/bin/app", "cache.c", 7, 0, PROF_CLASS_YOURS, 0);
	prof_add_stack(o, c, 2, 12);
	assert_int_equal(prof_pprof_encode_pair(p, o, &buf, &len), -EINVAL); /* no question */
	prof_meta(p)->question = PROF_Q_HELD;
	assert_int_equal(prof_pprof_encode_pair(p, o, &buf, &len), 0);
	assert_int_equal(prof_pprof_read(buf, len, &q, err, sizeof(err)), 0);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_BYTES);
	assert_int_equal(prof_meta_const(q)->question, PROF_Q_HELD);
	assert_string_equal(prof_meta_const(q)->sample_type, "inuse_space");
	assert_int_equal(prof_total(q), 4u << 20);
	prof_free(q);
	assert_int_equal(prof_pprof_decode_type(buf, len, PROF_PPROF_MAX_SIZE, "inuse_objects",
						&q, err, sizeof(err)), 0);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_SAMPLES);
	assert_int_equal(prof_total(q), 52);
	/* under the process row (read back from its label) */
	c[0] = prof_node_get(q, prof_node_get(q, 0)->child)->child;
	for (; c[0]; c[0] = prof_node_get(q, c[0])->sibling)
		if (!strcmp(prof_str(q, prof_frame_get(q, prof_node_get(q, c[0])->frame)->name),
			    "cache_insert"))
			break;
	assert_int_not_equal(c[0], 0);
	assert_int_equal(prof_node_get(q, c[0])->total, 12);
	prof_free(q);
	free(buf);
	prof_free(p);
	prof_free(o);
}

/* Every sample type read back and written again: names, units, totals
 * and the default stay, a stack only one type has is kept; a CPU
 * profile (samples and their time) reads as one. */
static void test_all_types(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_BYTES), *o = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *ps[PROF_PPROF_MAX_TYPES], *qs[PROF_PPROF_MAX_TYPES];
	uint32_t a[2], b[2];
	void *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0, n = 0, n2 = 0, shown = 9, shown2 = 9;
	char err[256];

	(void)state;
	a[0] = frame(p, "app", NULL, NULL, 0, PROF_KIND_PROCESS, 0, 0);
	a[1] = frame(p, "cache_insert", "app", "cache.c", 7, 0, PROF_CLASS_YOURS, 0);
	prof_add_stack(p, a, 2, 3u << 20);
	b[0] = frame(o, "app", NULL, NULL, 0, PROF_KIND_PROCESS, 0, 0);
	b[1] = frame(o, "cache_insert", "app", "cache.c", 7, 0, PROF_CLASS_YOURS, 0);
	prof_add_stack(o, b, 2, 12);
	prof_meta(p)->question = PROF_Q_ALLOC;
	assert_int_equal(prof_pprof_encode_pair(p, o, &buf, &len), 0);
	assert_int_equal(prof_pprof_decode_all(buf, len, PROF_PPROF_MAX_SIZE, ps, &n, &shown,
					       err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(shown, 1);
	assert_string_equal(prof_meta_const(ps[0])->sample_type, "alloc_objects");
	assert_string_equal(prof_meta_const(ps[1])->sample_type, "alloc_space");
	/* a stack the objects have and the bytes do not */
	b[0] = prof_frame_copy(ps[0], o, b[0]);
	a[1] = frame(ps[0], "parse", "app", "parse.c", 9, 0, PROF_CLASS_YOURS, 0);
	prof_add_stack(ps[0], (uint32_t[]){ b[0], a[1] }, 2, 5);
	assert_int_equal(prof_pprof_encode_types(ps, n, shown, &buf2, &len2), 0);
	assert_int_equal(prof_pprof_decode_all(buf2, len2, PROF_PPROF_MAX_SIZE, qs, &n2, &shown2,
					       err, sizeof(err)), 0);
	assert_int_equal(n2, 2);
	assert_int_equal(shown2, 1);
	assert_string_equal(prof_meta_const(qs[0])->sample_type, "alloc_objects");
	assert_int_equal(prof_meta_const(qs[0])->unit, PROF_UNIT_SAMPLES);
	assert_int_equal(prof_total(qs[0]), 17);
	assert_string_equal(prof_meta_const(qs[1])->sample_type, "alloc_space");
	assert_int_equal(prof_meta_const(qs[1])->unit, PROF_UNIT_BYTES);
	assert_int_equal(prof_total(qs[1]), 3u << 20);
	for (size_t i = 0; i < n; i++) {
		prof_free(ps[i]);
		prof_free(qs[i]);
	}
	free(buf);
	free(buf2);
	/* samples with their time: one profile gives both back */
	prof_meta(o)->hz = 99;
	assert_int_equal(prof_pprof_encode(o, &buf, &len), 0);
	assert_int_equal(prof_pprof_decode_all(buf, len, PROF_PPROF_MAX_SIZE, ps, &n, &shown,
					       err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(prof_meta_const(ps[0])->hz, 99);
	prof_free(ps[0]);
	free(buf);
	prof_free(p);
	prof_free(o);
}

/* How many samples of gzip'd pprof @buf carry no location id. */
static size_t samples_without_location(const void *buf, size_t len)
{
	struct pb_reader r;
	struct pb_field f, g;
	uint8_t *raw = NULL;
	size_t rawlen = 0, none = 0;

	assert_int_equal(gz_inflate(buf, len, PROF_PPROF_MAX_SIZE, &raw, &rawlen), 0);
	r = (struct pb_reader){ raw, raw + rawlen };
	while (pb_next(&r, &f) > 0) {
		struct pb_reader sr = { f.data, f.data + f.len };
		size_t ids = 0;

		if (f.num != PROFILE_SAMPLE || f.wire != PB_LEN)
			continue;
		while (pb_next(&sr, &g) > 0)
			ids += g.num == SAMPLE_LOCATION_ID && (g.wire == PB_VARINT || g.len > 0);
		none += ids == 0;
	}
	free(raw);
	return none;
}

/* pprof's readers (go tool pprof, profile backends) drop a sample without
 * a location: a stack that is only its process row, as a window holds for
 * a process caught with no stack, keeps the row as a location, and its
 * samples count. */
static void test_row_only_stacks_keep_a_location(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	uint32_t proc, thr, m;
	void *buf = NULL;
	size_t len = 0;

	(void)state;
	proc = frame(p, "cc1", NULL, NULL, 0, PROF_KIND_PROCESS, 0, 0);
	thr = frame(p, "worker", NULL, NULL, 0, PROF_KIND_THREAD, 0, 0);
	m = frame(p, "main", "/usr/bin/cc1", "main.c", 1, PROF_KIND_USER, 0, 0);
	prof_add_stack(p, (uint32_t[]){ proc }, 1, 11);
	prof_add_stack(p, (uint32_t[]){ proc, thr }, 2, 2);
	prof_add_stack(p, (uint32_t[]){ proc, m }, 2, 5);
	assert_int_equal(prof_pprof_encode(p, &buf, &len), 0);
	assert_int_equal(samples_without_location(buf, len), 0);
	free(buf);
	prof_free(p);
}

/* A 100,000-frame stack survives the round trip. */
static void test_deep_round_trip(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q;
	size_t depth = 100000;
	uint32_t *fs = malloc(depth * sizeof(*fs));
	uint32_t a = frame(p, "a", NULL, NULL, 0, 0, 0, 0);
	uint32_t b = frame(p, "b", NULL, NULL, 0, PROF_KIND_INLINE, 0, 0);

	(void)state;
	assert_non_null(fs);
	for (size_t i = 0; i < depth; i++)
		fs[i] = i % 3 ? b : a;
	prof_add_stack(p, fs, depth, 9);
	q = round_trip(p);
	assert_int_equal(prof_node_count(q), depth + 1);
	assert_int_equal(prof_total(q), 9);
	free(fs);
	prof_free(q);
	prof_free(p);
}

static void test_empty_profile(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q;

	(void)state;
	q = round_trip(p);
	assert_int_equal(prof_total(q), 0);
	assert_int_equal(prof_node_count(q), 1);
	prof_free(q);
	prof_free(p);
}

/* ---- hand-built protobuf for the error cases ----------------------------------- */

struct pb {
	uint8_t b[512];
	size_t n;
};

static void varint(struct pb *m, uint64_t v)
{
	while (0x80 <= v) {
		m->b[m->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	m->b[m->n++] = (uint8_t)v;
}

static void field_varint(struct pb *m, unsigned num, uint64_t v)
{
	varint(m, (uint64_t)num << 3);
	varint(m, v);
}

static void field_bytes(struct pb *m, unsigned num, const void *p, size_t n)
{
	varint(m, (uint64_t)num << 3 | 2);
	varint(m, n);
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void field_msg(struct pb *m, unsigned num, const struct pb *sub)
{
	field_bytes(m, num, sub->b, sub->n);
}

/* A valid profile: sample_type samples/count, one function "f", location 1
 * with a line to function @fid, a sample with @nvalues values at @loc. */
static void build(struct pb *m, uint64_t fid, uint64_t loc, int nvalues,
		  int64_t name_idx)
{
	struct pb vt = { 0 }, fn = { 0 }, line = { 0 }, lo = { 0 }, s = { 0 };

	memset(m, 0, sizeof(*m));
	field_varint(&vt, 1, 1);
	field_varint(&vt, 2, 2);
	field_msg(m, 1, &vt);
	field_varint(&fn, 1, 1);
	field_varint(&fn, 2, (uint64_t)name_idx);
	field_msg(m, 5, &fn);
	field_varint(&line, 1, fid);
	field_varint(&line, 2, 42);
	field_varint(&lo, 1, 1);
	field_msg(&lo, 4, &line);
	field_msg(m, 4, &lo);
	field_varint(&s, 1, loc);
	for (int i = 0; i < nvalues; i++)
		field_varint(&s, 2, 5);
	field_msg(m, 2, &s);
	field_bytes(m, 6, "", 0);
	field_bytes(m, 6, "samples", 7);
	field_bytes(m, 6, "count", 5);
	field_bytes(m, 6, "f", 1);
}

static void expect_bad(const void *buf, size_t len, size_t max,
		       const char *msg)
{
	struct prof_profile *q = (struct prof_profile *)&q;
	char err[256];

	assert_int_equal(prof_pprof_decode(buf, len, max, &q, err, sizeof(err)),
			 -EINVAL);
	assert_null(q);
	assert_string_equal(err, msg);
}

static void test_hand_built(void **state)
{
	struct prof_profile *q = NULL;
	struct pb m;
	char err[256];

	(void)state;
	/* Raw (not gzip'd) protobuf is read too. */
	build(&m, 1, 1, 1, 3);
	assert_int_equal(prof_pprof_read(m.b, m.n, &q, err, sizeof(err)), 0);
	assert_int_equal(prof_total(q), 5);
	{
		const struct prof_node *n = prof_node_get(q, prof_node_get(q, 0)->child);
		const struct prof_frame *f = prof_frame_get(q, n->frame);

		assert_string_equal(prof_str(q, f->name), "f");
		assert_int_equal(f->line, 42);
		assert_int_equal(f->kind, PROF_KIND_USER);
	}
	prof_free(q);

	assert_int_equal(prof_pprof_sniff(m.b, m.n), 1);
	assert_int_equal(prof_pprof_sniff("bash;main 12\n", 13), 0);
	assert_int_equal(prof_pprof_sniff("a;b 1\n", 6), 0);
	assert_int_equal(prof_pprof_sniff("", 0), 0);

	build(&m, 9, 1, 1, 3);
	expect_bad(m.b, m.n, 1 << 20,
		   "malformed pprof data: a line refers to function 9, which is not defined");
	build(&m, 1, 4, 1, 3);
	expect_bad(m.b, m.n, 1 << 20,
		   "malformed pprof data: a sample refers to location 4, which is not defined");
	build(&m, 1, 1, 2, 3);
	expect_bad(m.b, m.n, 1 << 20,
		   "malformed pprof data: a sample has 2 values but the profile declares 1 sample types");
	build(&m, 1, 1, 1, 77);
	expect_bad(m.b, m.n, 1 << 20,
		   "malformed pprof data: string index 77 is outside the string table");
	build(&m, 1, 1, 1, 3);
	expect_bad(m.b, m.n - 2, 1 << 20,
		   "malformed pprof data: the profile message is truncated");
	expect_bad("", 0, 1 << 20, "malformed pprof data: the data is empty");
	expect_bad("\x1f\x8b\x08\x00garbage", 11, 1 << 20,
		   "malformed pprof data: the gzip stream is corrupt or truncated");
	expect_bad(m.b, m.n, 16, "malformed pprof data: it is larger than 0 MiB");
	/* Field 1 with the wrong wire type. */
	expect_bad("\x08\x01", 2, 1 << 20,
		   "malformed pprof data: field 1 of the profile has the wrong wire type");
	/* No leading empty string. */
	expect_bad("\x32\x01x", 3, 1 << 20,
		   "malformed pprof data: the string table does not start with the empty string");
}

/* Two sample types, as a Go heap profile has: the last is read unless
 * another is asked for by name. */
static void test_sample_type_choice(void **state)
{
	struct pb m = { 0 }, vt = { 0 }, fn = { 0 }, line = { 0 }, lo = { 0 },
		  s = { 0 };
	struct prof_profile *q = NULL;
	char err[256];
	const char *strs[] = { "", "alloc_objects", "count", "inuse_space",
			       "bytes", "f" };

	(void)state;
	field_varint(&vt, 1, 1);
	field_varint(&vt, 2, 2);
	field_msg(&m, 1, &vt);
	memset(&vt, 0, sizeof(vt));
	field_varint(&vt, 1, 3);
	field_varint(&vt, 2, 4);
	field_msg(&m, 1, &vt);
	field_varint(&fn, 1, 1);
	field_varint(&fn, 2, 5);
	field_msg(&m, 5, &fn);
	field_varint(&line, 1, 1);
	field_varint(&lo, 1, 1);
	field_msg(&lo, 4, &line);
	field_msg(&m, 4, &lo);
	field_varint(&s, 1, 1);
	field_varint(&s, 2, 3);
	field_varint(&s, 2, 4096);
	field_msg(&m, 2, &s);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		field_bytes(&m, 6, strs[i], strlen(strs[i]));

	assert_int_equal(prof_pprof_read(m.b, m.n, &q, err, sizeof(err)), 0);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_BYTES);
	assert_int_equal(prof_total(q), 4096);
	assert_string_equal(prof_meta_const(q)->sample_type, "inuse_space");
	prof_free(q);
	assert_int_equal(prof_pprof_decode_type(m.b, m.n, 1 << 20, "alloc_objects",
						&q, err, sizeof(err)), 0);
	assert_int_equal(prof_meta_const(q)->unit, PROF_UNIT_SAMPLES);
	assert_int_equal(prof_total(q), 3);
	assert_string_equal(prof_meta_const(q)->sample_type, "alloc_objects");
	prof_free(q);
	assert_int_equal(prof_pprof_decode_type(m.b, m.n, 1 << 20, "nope", &q,
						err, sizeof(err)), -EINVAL);
	assert_null(q);
	assert_string_equal(err, "the profile has no sample type named \"nope\"; it has "
			    "alloc_objects, inuse_space");
	/* default_sample_type (field 14) = string 1, alloc_objects: read. */
	field_varint(&m, 14, 1);
	assert_int_equal(prof_pprof_read(m.b, m.n, &q, err, sizeof(err)), 0);
	assert_int_equal(prof_total(q), 3);
	prof_free(q);
}

/* A gzip bomb stops at the limit. */
static void test_size_limit(void **state)
{
	size_t n = 4u << 20, zlen;
	uint8_t *zeros = calloc(1, n), *z;
	z_stream s = { 0 };

	(void)state;
	assert_non_null(zeros);
	assert_int_equal(deflateInit2(&s, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zlen = deflateBound(&s, n);
	z = malloc(zlen);
	s.next_in = zeros;
	s.avail_in = (uInt)n;
	s.next_out = z;
	s.avail_out = (uInt)zlen;
	assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
	zlen = s.total_out;
	deflateEnd(&s);
	expect_bad(z, zlen, 1u << 20,
		   "malformed pprof data: it is larger than 1 MiB when decompressed");
	free(z);
	free(zeros);
}

/* ---- converter mode ------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return b <= a && strcmp(s + a - b, suffix) == 0;
}

static int convert(const char *in, const char *out, const char *opt)
{
	struct prof_profile *p = NULL;
	char err[256], *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(in, "rb");
	int ret;

	if (!f)
		return fprintf(stderr, "cannot open %s\n", in), 1;
	do {
		char *t;

		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			t = realloc(buf, cap);
			if (!t)
				return fclose(f), free(buf), 1;
			buf = t;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	if (has_suffix(in, ".folded")) {
		int off = opt && strcmp(opt, "offcpu") == 0;

		p = prof_new(off ? PROF_UNIT_NANOSECONDS : PROF_UNIT_SAMPLES);
		if (p && off)
			prof_meta(p)->off_cpu = 1;
		ret = p ? prof_folded_parse(p, buf, len, 1, err, sizeof(err)) : -ENOMEM;
	} else {
		ret = prof_pprof_read(buf, len, &p, err, sizeof(err));
	}
	free(buf);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", in, err);
		prof_free(p);
		return 1;
	}
	if (opt && strcmp(opt, "offcpu") != 0)
		prof_meta(p)->hz = (uint32_t)strtoul(opt, NULL, 10);
	f = fopen(out, "wb");
	if (!f)
		return prof_free(p), 1;
	ret = has_suffix(out, ".folded") ? prof_folded_write(p, f, 0)
					 : prof_pprof_write(p, f);
	if (fclose(f) != 0)
		ret = -EIO;
	prof_free(p);
	return ret < 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_attributes),
		cmocka_unit_test(test_places),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_row_only_stacks_keep_a_location),
		cmocka_unit_test(test_deep_round_trip),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_hand_built),
		cmocka_unit_test(test_sample_type_choice),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_memory_pair),
		cmocka_unit_test(test_all_types),
	};

	if (4 <= argc && strcmp(argv[1], "convert") == 0)
		return convert(argv[2], argv[3], 5 <= argc ? argv[4] : NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
