/* SPDX-License-Identifier: MIT */
/* Folded stacks: parsing, writing, byte-exact round trips, error text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"

/* Writes @p as folded text into a malloc'd string the caller frees. */
static char *write_str(struct prof_profile *p, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(prof_folded_write(p, f, flags), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static struct prof_profile *parse_ok(const char *text, int first_is_process)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_non_null(p);
	assert_int_equal(prof_folded_parse(p, text, strlen(text),
					   first_is_process, err, sizeof(err)),
			 0);
	assert_string_equal(err, "");
	return p;
}

static void test_parse_tree(void **state)
{
	struct prof_profile *p = parse_ok("nginx;main;work 10\n"
					  "nginx;main;work;memcpy 5\n"
					  "nginx;main;sys_read_[k] 3\n"
					  "\n"
					  "nginx;main;work 1\n"
					  "redis;main 4",
					  1);
	uint32_t root_nginx, m, w, k;
	const struct prof_frame *f;

	(void)state;
	assert_int_equal(prof_total(p), 23);
	root_nginx = prof_node_get(p, 0)->child;
	f = prof_frame_get(p, prof_node_get(p, root_nginx)->frame);
	assert_string_equal(prof_str(p, f->name), "nginx");
	assert_int_equal(f->kind, PROF_KIND_PROCESS);
	assert_int_equal(prof_node_get(p, root_nginx)->total, 19);
	m = prof_node_get(p, root_nginx)->child;
	w = prof_node_get(p, m)->child;
	assert_int_equal(prof_node_get(p, w)->total, 16);
	assert_int_equal(prof_node_get(p, w)->self, 11);
	k = prof_node_get(p, w)->sibling;
	f = prof_frame_get(p, prof_node_get(p, k)->frame);
	assert_string_equal(prof_str(p, f->name), "sys_read");
	assert_int_equal(f->kind, PROF_KIND_KERNEL);
	assert_int_equal(prof_node_get(p, k)->self, 3);
	prof_free(p);

	/* A byte order mark is skipped. */
	p = parse_ok("\xef\xbb\xbfmain;f 2\n", 0);
	assert_string_equal(prof_str(p, prof_frame_get(p, prof_node_get(p, prof_node_get(p, 0)->child)->frame)->name),
			    "main");
	prof_free(p);

	/* A tab may separate the count, as flamegraph.pl allows. */
	p = parse_ok("a;b\t4\na;b 1\n", 0);
	assert_int_equal(prof_total(p), 5);
	assert_int_equal(prof_node_count(p), 3);
	prof_free(p);

	/* The same text at the same position is the same frame; at index 0
	 * with a process row it is a process, elsewhere a function. */
	p = parse_ok("x;x;y 1\nx;x;y 2\nx;y;x 3\n", 1);
	assert_int_equal(prof_total(p), 6);
	assert_int_equal(prof_frame_count(p), 4);
	prof_free(p);

	/* Without a process row the first frame is an ordinary function. */
	p = parse_ok("main;f 2\r\n", 0);
	f = prof_frame_get(p, prof_node_get(p, prof_node_get(p, 0)->child)->frame);
	assert_string_equal(prof_str(p, f->name), "main");
	assert_int_equal(f->kind, PROF_KIND_USER);
	assert_int_equal(prof_total(p), 2);
	prof_free(p);
}

/* Names with spaces (C++), the count after the last space. */
static void test_spaces_in_names(void **state)
{
	struct prof_profile *p = parse_ok(
		"app;operator new(unsigned long);malloc 7\n", 1);
	uint32_t n;

	(void)state;
	n = prof_node_get(p, prof_node_get(p, 0)->child)->child;
	assert_string_equal(prof_str(p, prof_frame_get(p, prof_node_get(p, n)->frame)->name),
			    "operator new(unsigned long)");
	prof_free(p);
}

static void test_round_trip_bytes(void **state)
{
	/* Unsorted, with duplicates, kernel and inline frames. */
	const char *in = "b;y;z 3\n"
			 "a;x_[k] 1\n"
			 "b;y 2\n"
			 "a;x_[k] 4\n"
			 "a;m_[i];n 9\n"
			 "b;y;w 18446744073709551615\n";
	struct prof_profile *p = parse_ok(in, 1), *q;
	char *out1, *out2, *ann;

	(void)state;
	out1 = write_str(p, 0);
	assert_string_equal(out1, "a;m;n 9\n"
				  "a;x_[k] 5\n"
				  "b;y 2\n"
				  "b;y;w 18446744073709551615\n"
				  "b;y;z 3\n");
	ann = write_str(p, PROF_FOLDED_ANNOTATE);
	assert_string_equal(ann, "a;m_[i];n 9\n"
				 "a;x_[k] 5\n"
				 "b;y 2\n"
				 "b;y;w 18446744073709551615\n"
				 "b;y;z 3\n");
	/* write -> parse -> write gives the same bytes. */
	q = parse_ok(ann, 1);
	out2 = write_str(q, PROF_FOLDED_ANNOTATE);
	assert_string_equal(out2, ann);
	free(out2);
	prof_free(q);
	q = parse_ok(out1, 1);
	out2 = write_str(q, 0);
	assert_string_equal(out2, out1);
	free(out1);
	free(out2);
	free(ann);
	prof_free(q);
	prof_free(p);
}

/* A file already in LC_ALL=C sort order with unique stacks reproduces
 * itself byte for byte. */
static void test_sorted_file_reproduces(void **state)
{
	const char *in = "java;Thread.run;Worker.loop 40\n"
			 "java;Thread.run;Worker.loop;HashMap.get 12\n"
			 "java;Thread.run;Worker.loop;do_syscall_64_[k];ksys_read_[k] 3\n"
			 "java;Thread.run;Worker1.loop 7\n"
			 "java;Thread.run;Worker_2.loop 6\n"
			 "java;start_thread;clone3 1\n"
			 "swapper;cpu_idle_[k] 1000\n"
			 "swapper;cpu_idle_[k];intel_idle_[k] 20\n"
			 "x-y;a b;c 2\n";
	struct prof_profile *p = parse_ok(in, 1);
	char *out = write_str(p, 0);

	(void)state;
	assert_string_equal(out, in);
	free(out);
	prof_free(p);
}

static void test_writer_escapes(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct prof_frame f = { 0 };
	uint32_t a, b;
	char *out;

	(void)state;
	f.name = prof_intern_cstr(p, "weird;name\nhere");
	a = prof_frame_intern(p, &f);
	f.name = 0;
	b = prof_frame_intern(p, &f);
	prof_add_stack(p, (uint32_t[]){ a, b }, 2, 3);
	out = write_str(p, 0);
	assert_string_equal(out, "weird:name here;[unknown] 3\n");
	free(out);
	prof_free(p);
}

/* Frames that differ only where folded text cannot show it (line, module,
 * class) come out as one line, so write -> parse -> write stays exact. */
static void test_merges_same_spelling(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES), *q;
	struct prof_frame f = { 0 };
	uint32_t m, a1, a2, a3;
	char *out, *out2;

	(void)state;
	f.name = prof_intern_cstr(p, "main");
	m = prof_frame_intern(p, &f);
	f.name = prof_intern_cstr(p, "loop");
	f.line = 10;
	a1 = prof_frame_intern(p, &f);
	f.line = 11;
	a2 = prof_frame_intern(p, &f);
	f.module = prof_intern_cstr(p, "/bin/x");
	f.cls = PROF_CLASS_YOURS;
	a3 = prof_frame_intern(p, &f);
	/* A function whose name already reads as a kernel frame. */
	struct prof_frame k = { .name = prof_intern_cstr(p, "sys_x"),
				.kind = PROF_KIND_KERNEL };
	struct prof_frame u = { .name = prof_intern_cstr(p, "sys_x_[k]") };
	prof_add_stack(p, (uint32_t[]){ m, prof_frame_intern(p, &k) }, 2, 4);
	prof_add_stack(p, (uint32_t[]){ m, prof_frame_intern(p, &u) }, 2, 6);
	prof_add_stack(p, (uint32_t[]){ m, a1 }, 2, 39);
	prof_add_stack(p, (uint32_t[]){ m, a2 }, 2, 22);
	prof_add_stack(p, (uint32_t[]){ m, a3, a1 }, 3, 1);
	out = write_str(p, 0);
	assert_string_equal(out, "main;loop 61\nmain;loop;loop 1\nmain;sys_x_[k] 10\n");
	q = parse_ok(out, 0);
	out2 = write_str(q, 0);
	assert_string_equal(out2, out);
	free(out);
	free(out2);
	prof_free(q);
	prof_free(p);
}

static void expect_error(const char *text, const char *msg)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[128];

	assert_int_equal(prof_folded_parse(p, text, strlen(text), 1, err,
					   sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, msg);
	prof_free(p);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("a;b 1\na;b\n", "line 2 has no sample count after the stack");
	expect_error("a;b 1\n\na;b x12\n",
		     "line 3 has a count that is not a decimal integer");
	expect_error("a;b -1\n", "line 1 has a count that is not a decimal integer");
	expect_error("a;b 1.5\n", "line 1 has a count that is not a decimal integer");
	expect_error("a;b 18446744073709551616\n",
		     "line 1 has a count too large for 64 bits");
	expect_error("a;;b 1\n", "line 1 has an empty frame");
	expect_error("ok 1\n;a 1\n", "line 2 has an empty frame");
	expect_error("a;b; 1\n", "line 1 has an empty frame");
	expect_error(" 5\n", "line 1 has an empty frame");
	expect_error("x 1\ny 2\nz 3\n;; 4", "line 4 has an empty frame");
	{
		struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
		char err[128];

		assert_int_equal(prof_folded_parse(p, "a\0b 1\n", 6, 1, err,
						   sizeof(err)), -EINVAL);
		assert_string_equal(err, "line 1 has a NUL byte");
		prof_free(p);
	}
}

/* The lines before a bad one stay in the profile; a tiny error buffer
 * truncates but stays a C string. */
static void test_error_keeps_earlier(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	const char *text = "a 5\nb\n";
	char err[8];

	(void)state;
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 0, err,
					   sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "line 2 ");
	assert_int_equal(prof_total(p), 5);
	assert_int_equal(prof_folded_parse(p, text, strlen(text), 0, NULL, 0),
			 -EINVAL);
	prof_free(p);
}

static void test_blank_and_empty(void **state)
{
	struct prof_profile *p = parse_ok("", 1);

	(void)state;
	assert_int_equal(prof_total(p), 0);
	prof_free(p);
	p = parse_ok("\n  \n\t\r\n", 1);
	assert_int_equal(prof_node_count(p), 1);
	prof_free(p);
	/* Not NUL-terminated: the length decides. */
	p = prof_new(PROF_UNIT_SAMPLES);
	assert_int_equal(prof_folded_parse(p, "a 12XYZ", 4, 0, NULL, 0), 0);
	assert_int_equal(prof_total(p), 12);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_tree),
		cmocka_unit_test(test_spaces_in_names),
		cmocka_unit_test(test_round_trip_bytes),
		cmocka_unit_test(test_sorted_file_reproduces),
		cmocka_unit_test(test_writer_escapes),
		cmocka_unit_test(test_merges_same_spelling),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_keeps_earlier),
		cmocka_unit_test(test_blank_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
