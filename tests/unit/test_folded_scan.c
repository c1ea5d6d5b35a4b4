/* SPDX-License-Identifier: MIT */
/*
 * The folded reader's splitter and text table (profile/folded_split.c,
 * profile/folded_texts.c): the 64-bytes-at-a-time scan against the byte
 * loop, with every separator at every offset, texts hashed at the
 * buffer's end, and the table's lookups of texts of every length, held
 * whole in a slot or in the arena, across its growth.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/folded.h"
#include "profile/folded_impl.h"
#include "profile/profile.h"

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Scans the line at @s (the buffer ends at @end) again both ways from
 * after each of its ';' (the offsets before it kept, as the reader does
 * for frames shared with the line before): the same ';' and length as
 * the whole scan @whole (@len), and a NUL only when one is past the
 * start. */
static void scan_from_each(const char *s, const char *end,
			   const struct line_scan *whole, size_t len)
{
	struct line_scan a = { 0 }, b = { 0 };

	for (size_t i = 1; i <= whole->n; i++) {
		size_t at = whole->semi[i - 1] + 1, la, lb;
		int nul = memchr(s + at, '\0', len - at) != NULL;
		struct line_scan *x[2] = { &a, &b };

		for (int w = 0; w < 2; w++) {
			x[w]->n = 0;
			for (size_t j = 0; j < i; j++) {
				if (x[w]->cap <= x[w]->n) {
					size_t cap = x[w]->n * 2 + 8;

					x[w]->semi = realloc(x[w]->semi,
							     cap * sizeof(size_t));
					assert_non_null(x[w]->semi);
					x[w]->cap = (uint32_t)cap;
				}
				x[w]->semi[x[w]->n++] = whole->semi[j];
			}
		}
		assert_int_equal(folded_scan_line(s, end, at, &a, &la), 0);
		assert_int_equal(folded_scan_line_portable(s, end, at, &b, &lb), 0);
		assert_int_equal(la, len);
		assert_int_equal(lb, len);
		assert_int_equal(a.n, whole->n);
		assert_int_equal(b.n, whole->n);
		assert_memory_equal(a.semi, whole->semi, a.n * sizeof(*a.semi));
		assert_memory_equal(b.semi, whole->semi, b.n * sizeof(*b.semi));
		assert_int_equal(a.nul, nul);
		assert_int_equal(b.nul, nul);
		assert_true(a.n < a.cap && b.n < b.cap);
	}
	folded_scan_free(&a);
	folded_scan_free(&b);
}

/* Scans @buf[0..n) line by line both ways (the buffer ends at @n: the
 * scans must not read past it, which ASan checks on the heap copy) and
 * asserts equal results, also when a scan starts inside the line. */
static void scan_both(const char *text, size_t n)
{
	char *buf = malloc(n ? n : 1);
	struct line_scan a = { 0 }, b = { 0 };
	size_t pos = 0;

	assert_non_null(buf);
	memcpy(buf, text, n);
	while (pos <= n) {
		size_t la, lb;

		a.n = b.n = 0;
		assert_int_equal(folded_scan_line(buf + pos, buf + n, 0, &a, &la), 0);
		assert_int_equal(folded_scan_line_portable(buf + pos, buf + n, 0, &b,
							   &lb), 0);
		assert_int_equal(la, lb);
		assert_int_equal(a.n, b.n);
		assert_int_equal(a.nul, b.nul);
		assert_true(a.n < a.cap && b.n < b.cap);
		assert_memory_equal(a.semi, b.semi, a.n * sizeof(*a.semi));
		for (size_t i = 0; i < a.n; i++)
			assert_int_equal(buf[pos + a.semi[i]], ';');
		assert_true(pos + la == n || buf[pos + la] == '\n');
		scan_from_each(buf + pos, buf + n, &a, la);
		pos += la + 1;
	}
	folded_scan_free(&a);
	folded_scan_free(&b);
	free(buf);
}

/* Every separator at every offset of lines 0 to 70 bytes long, with and
 * without a line end after them, and lines of many ';'. */
static void test_scan_every_offset(void **state)
{
	static const char seps[] = { ';', '\n', '\0', ' ', '\t', '\r' };
	char line[96];

	(void)state;
	for (size_t len = 0; len <= 70; len++) {
		for (size_t at = 0; at < len; at++) {
			for (size_t s = 0; s < sizeof(seps); s++) {
				memset(line, 'x', sizeof(line));
				line[at] = seps[s];
				if (at + 3 < len)
					line[at + 3] = ';';
				scan_both(line, len);
				line[len] = '\n';
				scan_both(line, len + 1);
				memcpy(line + len + 1, "a;b 1", 5);
				scan_both(line, len + 6);
			}
		}
	}
	memset(line, ';', sizeof(line));
	for (size_t len = 0; len <= sizeof(line); len++)
		scan_both(line, len);
}

/* Random texts of few bytes (separators often), many lines. */
static void test_scan_random(void **state)
{
	static const char alpha[] = "ab;;\n \t\r\0xyz_[k]";
	uint64_t s = 0x1234567u;
	char buf[600];

	(void)state;
	for (int round = 0; round < 3000; round++) {
		size_t n = (size_t)(rng(&s) % sizeof(buf));

		for (size_t i = 0; i < n; i++)
			buf[i] = alpha[rng(&s) % (sizeof(alpha) - 1)];
		scan_both(buf, n);
	}
}

/* The inline hashes (16 bytes or more left in the buffer; 17 to 32
 * bytes with 32 left) and the one for the buffer's end give the same
 * words and hash, for texts of 1 to 40 bytes at every distance from the
 * end, process rows or not; the words are the text's bytes, zero-padded. */
static void test_token_hash(void **state)
{
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('A' + (i * 7) % 50);
	for (size_t k = 0; k < 2 * 40; k++) {
		size_t len = 1 + k / 2;
		int proc = (int)(k % 2);
		struct token ref = { buf, len, 0, 0, 0 };
		char pad[16] = { 0 };
		uint64_t w0, w1;

		folded_token_hash(&ref, buf + sizeof(buf), proc);
		memcpy(pad, buf, len < 16 ? len : 16);
		memcpy(&w0, pad, 8);
		memcpy(&w1, pad + 8, 8);
		assert_true(ref.w0 == w0 && ref.w1 == w1);
		for (size_t room = len; room <= len + 20; room++) {
			/* The same bytes placed @room bytes before the end. */
			char *copy = malloc(room);
			struct token t;

			assert_non_null(copy);
			memcpy(copy, buf, len);
			memset(copy + len, ';', room - len);
			t = (struct token){ copy, len, 0, 0, 0 };
			folded_token_hash(&t, copy + room, proc);
			assert_true(t.w0 == ref.w0 && t.w1 == ref.w1);
			assert_int_equal(t.hash, ref.hash);
			t = (struct token){ copy, len, 0, 0, 0 };
			folded_token_hash_long(&t, copy + room, proc);
			assert_true(t.w0 == ref.w0 && t.w1 == ref.w1);
			assert_int_equal(t.hash, ref.hash);
			free(copy);
		}
	}
}

/* A table in a profile of its own, and the tokens it is asked for. */
struct table {
	struct prof_profile *p;
	struct parse_ctx c;
};

static uint32_t frame_of(struct table *tb, const char *s, size_t len,
			 int process)
{
	struct token t = { s, len, 0, 0, 0 };

	folded_token_hash(&t, tb->c.end, process);
	return folded_text_lookup(&tb->c, &t, process);
}

/* Texts of 1 to 40 bytes, each also with one byte changed at every
 * position and as a process row: each gets its own frame, spelled as
 * given, and the same frame every time after, across the table's
 * growth. */
static void test_table_lengths(void **state)
{
	static char text[1 << 16];
	struct table tb = { 0 };
	uint32_t ids[41][41][2];
	size_t at = 0;
	const char *where[41][41];

	(void)state;
	tb.p = prof_new(PROF_UNIT_SAMPLES);
	assert_non_null(tb.p);
	tb.c = (struct parse_ctx){ .p = tb.p, .end = text + sizeof(text) };
	assert_int_equal(folded_texts_init(&tb.c), 0);
	for (size_t len = 1; len <= 40; len++) {
		for (size_t pos = 0; pos <= len; pos++) {
			char *s = text + at;

			for (size_t i = 0; i < len; i++)
				s[i] = (char)('a' + (len + i) % 26);
			if (pos < len)
				s[pos] = '#'; /* pos == len: the plain text */
			where[len][pos] = s;
			at += len + 1;
			text[at - 1] = ';';
		}
	}
	for (int pass = 0; pass < 3; pass++) {
		for (size_t len = 1; len <= 40; len++) {
			for (size_t pos = 0; pos <= len; pos++) {
				for (int pr = 0; pr < 2; pr++) {
					uint32_t id = frame_of(&tb, where[len][pos], len, pr);

					assert_true(id != 0 && id != UINT32_MAX);
					if (pass == 0)
						ids[len][pos][pr] = id;
					else
						assert_int_equal(id, ids[len][pos][pr]);
				}
			}
		}
	}
	/* Distinct texts, distinct frames, each spelled as given. */
	assert_int_equal(prof_frame_count(tb.p), 1 + 2 * (40 * 41 / 2 + 40));
	for (size_t len = 1; len <= 40; len++) {
		for (size_t pos = 0; pos <= len; pos++) {
			for (int pr = 0; pr < 2; pr++) {
				const struct prof_frame *f =
					prof_frame_get(tb.p, ids[len][pos][pr]);

				assert_non_null(f);
				assert_int_equal(prof_str_len(tb.p, f->name), len);
				assert_memory_equal(prof_str(tb.p, f->name),
						    where[len][pos], len);
				assert_int_equal(f->kind, pr ? PROF_KIND_PROCESS : 0);
			}
		}
	}
	folded_ctx_free(&tb.c);
	prof_free(tb.p);
}

/* 60,000 texts (the table grows several times) found again after. */
static void test_table_growth(void **state)
{
	enum { N = 60000 };
	static char text[N * 24];
	static uint32_t ids[N];
	struct table tb = { 0 };

	(void)state;
	tb.p = prof_new(PROF_UNIT_SAMPLES);
	assert_non_null(tb.p);
	tb.c = (struct parse_ctx){ .p = tb.p, .end = text + sizeof(text) };
	assert_int_equal(folded_texts_init(&tb.c), 0);
	for (size_t i = 0; i < N; i++)
		snprintf(text + i * 24, 24, i % 3 ? "f%zu" : "a_longer_name_%zu", i);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < N; i++) {
			const char *s = text + i * 24;
			uint32_t id = frame_of(&tb, s, strlen(s), 0);

			if (pass == 0)
				ids[i] = id;
			else
				assert_int_equal(id, ids[i]);
			assert_int_equal(id, i + 1);
		}
	}
	assert_true(N < tb.c.texts_cap);
	folded_ctx_free(&tb.c);
	prof_free(tb.p);
}

/* Folded text with CRLF, a byte order mark, tabs before counts, blank
 * lines and no line end at the end reads as the same lines written
 * plainly. */
static void test_parse_line_forms(void **state)
{
	static const char odd[] =
		"\xef\xbb\xbfp;a;bb;c 1\r\n"
		"\r\n"
		"p;a;bb;c\t2\n"
		"  \t\n"
		"q;x y z;a_longer_frame_name_than_16;w 3 \r\n"
		"q;x y z;k_[k] 4";
	static const char plain[] =
		"p;a;bb;c 3\n"
		"q;x y z;a_longer_frame_name_than_16;w 3\n"
		"q;x y z;k_[k] 4\n";
	struct prof_profile *a = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *b = prof_new(PROF_UNIT_SAMPLES);
	char *oa = NULL, *ob = NULL, err[128];
	size_t la = 0, lb = 0;
	FILE *f;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(prof_folded_parse(a, odd, sizeof(odd) - 1, 1, err,
					   sizeof(err)), 0);
	assert_int_equal(prof_folded_parse(b, plain, sizeof(plain) - 1, 1, err,
					   sizeof(err)), 0);
	f = open_memstream(&oa, &la);
	assert_int_equal(prof_folded_write(a, f, 0), 0);
	fclose(f);
	f = open_memstream(&ob, &lb);
	assert_int_equal(prof_folded_write(b, f, 0), 0);
	fclose(f);
	assert_int_equal(la, lb);
	assert_memory_equal(oa, ob, la);
	assert_int_equal(prof_node_count(a), prof_node_count(b));
	assert_int_equal(prof_frame_count(a), prof_frame_count(b));
	free(oa);
	free(ob);
	prof_free(a);
	prof_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_every_offset),
		cmocka_unit_test(test_scan_random),
		cmocka_unit_test(test_token_hash),
		cmocka_unit_test(test_table_lengths),
		cmocka_unit_test(test_table_growth),
		cmocka_unit_test(test_parse_line_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
