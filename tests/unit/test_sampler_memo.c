/* SPDX-License-Identifier: MIT */
/* Remembered stacks: adding a copied sample through the memo gives exactly
 * the profile that symbolizing it every time gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/stack_build.h"
#include "profile/folded.h"

__attribute__((noinline)) int memo_outer(int x) { return x + 1; }
__attribute__((noinline)) int memo_inner(int x) { return x * 3; }

struct fixture {
	struct sym_ctx *sym;
	struct stack_builder *plain, *memo;
	struct prof_profile *want, *got;
	uint64_t a[2], b[2];
};

static int setup(void **state)
{
	struct sym_options so = { 0 };
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sym = sym_new(&so);
	f->plain = stack_builder_new();
	f->memo = stack_builder_new();
	f->want = prof_new(PROF_UNIT_SAMPLES);
	f->got = prof_new(PROF_UNIT_SAMPLES);
	assert_true(f->sym && f->plain && f->memo && f->want && f->got);
	assert_int_equal(sym_proc_load(f->sym, getpid()), 0);
	/* Leaf first; a return address points past its call, so +1. */
	f->a[0] = (uint64_t)(uintptr_t)memo_inner;
	f->a[1] = (uint64_t)(uintptr_t)memo_outer + 1;
	f->b[0] = (uint64_t)(uintptr_t)memo_outer;
	f->b[1] = (uint64_t)(uintptr_t)memo_inner + 1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	stack_builder_free(f->plain);
	stack_builder_free(f->memo);
	prof_free(f->want);
	prof_free(f->got);
	sym_free(f->sym);
	free(f);
	return 0;
}

static char *folded(struct prof_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(prof_folded_write(p, out, 0), 0);
	fclose(out);
	return buf;
}

/* Adds @in with @value both ways. */
static void add_both(struct fixture *f, const struct stack_input *in, uint64_t value)
{
	assert_int_equal(stack_builder_add(f->plain, f->sym, f->want, in, value), 0);
	assert_int_equal(stack_builder_add_memo(f->memo, f->sym, f->got, in, value), 0);
}

static void assert_same(struct fixture *f, const char *must_have)
{
	char *want = folded(f->want), *got = folded(f->got);

	assert_string_equal(got, want);
	if (!strstr(got, must_have))
		fprintf(stderr, "%s", got);
	assert_non_null(strstr(got, must_have));
	free(want);
	free(got);
}

/* Repeats, other stacks, other processes and names, threads: each key
 * field keeps stacks apart exactly as symbolizing every time does. */
static void test_memo_matches_plain(void **state)
{
	struct fixture *f = *state;
	struct stack_input in = { .tgid = (uint32_t)getpid(), .tid = 7, .comm = "proc", .tcomm = "proc",
				  .uips = f->a, .nu = 2 };

	for (int i = 0; i < 5; i++)
		add_both(f, &in, 1);
	in.uips = f->b;
	add_both(f, &in, 2);
	in.comm = "renamed";
	add_both(f, &in, 3);
	in.per_thread = true;
	in.tid = 8;
	in.tcomm = "worker";
	add_both(f, &in, 4);
	in.tid = 9;
	add_both(f, &in, 5);
	in.per_thread = false;
	in.nu = 1; /* a shorter stack with the same leaf */
	add_both(f, &in, 6);
	assert_same(f, "proc;memo_outer;memo_inner 5\n");
	assert_same(f, "renamed;worker-9;memo_inner;memo_outer 5\n");
}

/* Off-CPU flags are part of the key: the same addresses preempted get
 * their "[waiting for a CPU]" frame, voluntary waits do not. */
static void test_memo_keeps_wait_kinds_apart(void **state)
{
	struct fixture *f = *state;
	struct stack_input in = { .tgid = (uint32_t)getpid(), .tid = 7, .comm = "proc", .tcomm = "proc",
				  .uips = f->a, .nu = 2, .off_cpu = true };

	add_both(f, &in, 10);
	in.involuntary = true;
	add_both(f, &in, 20);
	in.involuntary = false;
	add_both(f, &in, 30);
	assert_same(f, "proc;memo_outer;memo_inner;[waiting for a CPU]_[k] 20\n");
	assert_same(f, "proc;memo_outer;memo_inner 40\n");
}

/* After forgetting, a fresh profile gets fresh frame ids: the memo must
 * not hand out ids of the profile it was given before. */
static void test_memo_forget_new_profile(void **state)
{
	struct fixture *f = *state;
	struct stack_input in = { .tgid = (uint32_t)getpid(), .tid = 7, .comm = "proc", .tcomm = "proc",
				  .uips = f->b, .nu = 2 };
	struct prof_profile *fresh = prof_new(PROF_UNIT_SAMPLES);

	assert_non_null(fresh);
	add_both(f, &in, 1);
	stack_builder_forget(f->memo);
	/* Fresh profile: interning order differs (another name first). */
	in.comm = "other";
	assert_int_equal(stack_builder_add_memo(f->memo, f->sym, fresh, &in, 1), 0);
	in.comm = "proc";
	assert_int_equal(stack_builder_add_memo(f->memo, f->sym, fresh, &in, 1), 0);
	stack_builder_forget_tgid(f->memo, (uint32_t)getpid());
	assert_int_equal(stack_builder_add_memo(f->memo, f->sym, fresh, &in, 1), 0);
	prof_free(f->got);
	f->got = fresh;
	in.comm = "other";
	assert_int_equal(stack_builder_add(f->plain, f->sym, f->want, &in, 1), 0);
	in.comm = "proc";
	assert_int_equal(stack_builder_add(f->plain, f->sym, f->want, &in, 1), 0);
	assert_same(f, "proc;memo_inner;memo_outer 2\n");
}

static uint64_t lookups(const struct fixture *f)
{
	struct sym_stats st;

	sym_stats(f->sym, &st);
	return st.lookups;
}

/* Remembered stacks outlive the profile they were first built into: the
 * next epoch's fresh profile gets the same stacks (its own frame ids, in
 * its own interning order), with no symbol lookup, until they age out
 * (then the first sight builds it straight, the second remembers it). */
static void test_memo_across_epochs(void **state)
{
	struct fixture *f = *state;
	struct stack_input in = { .tgid = (uint32_t)getpid(), .tid = 7, .comm = "proc", .tcomm = "proc",
				  .uips = f->a, .nu = 2 };
	struct prof_profile *fresh = prof_new(PROF_UNIT_SAMPLES);
	uint64_t before;

	assert_non_null(fresh);
	/* A stack is remembered the second time it comes. */
	for (int i = 0; i < 2; i++) {
		in.uips = f->a;
		assert_int_equal(stack_builder_add_memo(f->memo, f->sym, f->got, &in, 1), 0);
		in.uips = f->b;
		assert_int_equal(stack_builder_add_memo(f->memo, f->sym, f->got, &in, 1), 0);
	}
	stack_builder_next_epoch(f->memo);
	prof_free(f->got);
	f->got = fresh;
	before = lookups(f);
	/* Another order than the first epoch's: b's frames come first. */
	add_both(f, &in, 3);
	in.uips = f->a;
	assert_int_equal(stack_builder_add_memo(f->memo, f->sym, f->got, &in, 4), 0);
	assert_int_equal(lookups(f) - before, 2); /* the plain builder's b only */
	assert_int_equal(stack_builder_add(f->plain, f->sym, f->want, &in, 4), 0);
	assert_same(f, "proc;memo_outer;memo_inner 4\n");
	assert_same(f, "proc;memo_inner;memo_outer 3\n");
	/* Old enough, a stack is symbolized again (a JIT or a late mapping
	 * may name its addresses otherwise by then). */
	for (int i = 0; i < STACK_MEMO_MAX_AGE; i++)
		stack_builder_next_epoch(f->memo);
	fresh = prof_new(PROF_UNIT_SAMPLES);
	assert_non_null(fresh);
	prof_free(f->got);
	f->got = fresh;
	before = lookups(f);
	assert_int_equal(stack_builder_add_memo(f->memo, f->sym, f->got, &in, 1), 0);
	assert_int_equal(lookups(f) - before, 2);
}

/* The frame of @p whose kind is @kind and name @name; NULL when none. */
static const struct prof_frame *find_frame(const struct prof_profile *p, uint8_t kind,
					   const char *name)
{
	for (uint32_t i = 1; i < prof_frame_count(p); i++) {
		const struct prof_frame *fr = prof_frame_get(p, i);

		if (fr->kind == kind && strcmp(prof_str(p, fr->name), name) == 0)
			return fr;
	}
	return NULL;
}

/* hearthd's shape: the process row carries the process id and a thread
 * row follows it when per-thread rows are asked for (the store's merges
 * leave them out but for a snapshot of threads). Memo and plain agree. */
static void test_pid_row(void **state)
{
	struct fixture *f = *state;
	struct stack_input in = { .tgid = 4242, .tid = 4243, .comm = "proc", .tcomm = "worker",
				  .uips = f->a, .nu = 2, .pid_row = true, .per_thread = true,
				  .off_cpu = true };
	const struct prof_frame *top;

	assert_int_equal(sym_proc_fork(f->sym, getpid(), 4242), 0);
	add_both(f, &in, 5);
	in.tid = 4244;
	add_both(f, &in, 6);
	assert_same(f, "proc;worker-4243;memo_outer;memo_inner 5\n"
		       "proc;worker-4244;memo_outer;memo_inner 6\n");
	top = find_frame(f->got, PROF_KIND_PROCESS, "proc");
	assert_non_null(top);
	assert_int_equal(top->line, 4242);
	assert_non_null(find_frame(f->got, PROF_KIND_THREAD, "worker-4243"));
	in.pid_row = false;
	add_both(f, &in, 1);
	assert_same(f, "proc;worker-4244;memo_outer;memo_inner 7\n"); /* same text, row without pid */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_memo_matches_plain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_keeps_wait_kinds_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_forget_new_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_across_epochs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_row, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
