/* SPDX-License-Identifier: MIT */
/*
 * Joining a short DWARF unwind to the frame-pointer walk of the same
 * sample, and a copy of this test's own stack unwound with the rules
 * shared by module.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"

static void assert_stack(const uint64_t *got, size_t n, const uint64_t *want, size_t m)
{
	assert_int_equal(n, m);
	for (size_t i = 0; i < m; i++)
		assert_int_equal(got[i], want[i]);
}

/* The copy ended after the FP-less frames; the FP walk knows the rest. */
static void test_splice_joins_at_shared_frame(void **state)
{
	const uint64_t dwarf[] = { 0x10, 0x21, 0x32, 0x43 };
	const uint64_t fp[] = { 0x10, 0x43, 0x54, 0x65 }; /* lost 0x21, 0x32 */
	const uint64_t want[] = { 0x10, 0x21, 0x32, 0x43, 0x54, 0x65 };
	uint64_t out[16];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 4, fp, 4, out, 16), want, 6);
}

/* Recursion repeats a return address: the join keeps the depth. */
static void test_splice_recursion_keeps_depth(void **state)
{
	const uint64_t dwarf[] = { 0x1, 0x7, 0x7 };
	const uint64_t fp[] = { 0x1, 0x7, 0x7, 0x7, 0x7, 0x9 };
	const uint64_t want[] = { 0x1, 0x7, 0x7, 0x7, 0x7, 0x9 };
	uint64_t out[16];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 3, fp, 6, out, 16), want, 6);
}

/* Nothing shared: the longer walk is kept. */
static void test_splice_nothing_shared(void **state)
{
	const uint64_t dwarf[] = { 0x1, 0x2, 0x3 };
	const uint64_t fp[] = { 0x1, 0x99 };
	uint64_t out[16];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 3, fp, 2, out, 16), dwarf, 3);
	assert_stack(out, sym_unwind_splice(fp, 2, dwarf, 3, out, 16), dwarf, 3);
}

/* The output never exceeds its room. */
static void test_splice_bounded(void **state)
{
	const uint64_t dwarf[] = { 0x10, 0x21, 0x32 };
	const uint64_t fp[] = { 0x10, 0x32, 0x54, 0x65, 0x76 };
	const uint64_t want[] = { 0x10, 0x21, 0x32, 0x54 };
	uint64_t out[4];

	(void)state;
	assert_stack(out, sym_unwind_splice(dwarf, 3, fp, 5, out, 4), want, 4);
}

#define COPY_BYTES 16384

static uint8_t copy_buf[COPY_BYTES];
static struct sym_stack_copy copy;

/* The sampler copies stacks from outside: ASan's redzones between frames
 * are no concern of this copy. */
__attribute__((no_sanitize("address"))) static void copy_raw(uint8_t *dst, const uint8_t *src,
							       size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = ((const volatile uint8_t *)src)[i];
}

/* Copies the stack from here up, and the registers at the return from
 * getcontext(), as the sampler would at that instruction. */
__attribute__((noinline)) static void capture(void)
{
	ucontext_t uc;
	pthread_attr_t attr;
	void *base;
	size_t size, n;

	assert_int_equal(getcontext(&uc), 0);
	copy.regs.ip = (uint64_t)uc.uc_mcontext.gregs[REG_RIP];
	copy.regs.sp = (uint64_t)uc.uc_mcontext.gregs[REG_RSP];
	copy.regs.bp = (uint64_t)uc.uc_mcontext.gregs[REG_RBP];
	/* Not past the stack's top. */
	assert_int_equal(pthread_getattr_np(pthread_self(), &attr), 0);
	assert_int_equal(pthread_attr_getstack(&attr, &base, &size), 0);
	pthread_attr_destroy(&attr);
	n = (uint64_t)base + size - copy.regs.sp;
	copy.size = n < COPY_BYTES ? n : COPY_BYTES;
	copy_raw(copy_buf, (const uint8_t *)copy.regs.sp, copy.size);
	copy.data = copy_buf;
}

__attribute__((noinline)) static int chain_c(int x) { capture(); return x + 1; }
__attribute__((noinline)) static int chain_b(int x) { return chain_c(x + 1) * 3; }
__attribute__((noinline)) static int chain_a(int x) { return chain_b(x + 2) * 5; }

/* The names of @pcs (return addresses looked up one byte back). */
static void names_of(struct sym_ctx *ctx, const uint64_t *pcs, size_t n, char *out, size_t len)
{
	size_t k = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && k + 1 < len; i++) {
		struct sym_frame f[8];
		int m = sym_user(ctx, getpid(), pcs[i] - (i ? 1 : 0), f, 8);

		/* the function holding the inlined frames comes last */
		k += (size_t)snprintf(out + k, len - k, "%s;", m > 0 ? f[m - 1].name : "?");
	}
}

static void test_shared_unwinds_own_stack(void **state)
{
	struct sym_ctx *ctx = sym_new(NULL);
	uint64_t pcs[128];
	char names[4096];
	int complete = 0, n;
	volatile int r;

	(void)state;
	assert_non_null(ctx);
	r = chain_a(1);
	(void)r;
	n = sym_unwind_shared(ctx, getpid(), &copy, pcs, 128, &complete);
	assert_true(n > 5);
	names_of(ctx, pcs, (size_t)n, names, sizeof(names));
	assert_non_null(strstr(names, "capture;chain_c;chain_b;chain_a;test_shared_unwinds_own_stack;"));
	/* Through cmocka and libc to main and _start. */
	assert_non_null(strstr(names, ";main;"));
	assert_int_equal(complete, 1);
	/* A second walk reads no rule again and gives the same. */
	assert_int_equal(sym_unwind_shared(ctx, getpid(), &copy, pcs, 128, &complete), n);
	/* Gone (no such process): its mappings are unknown. */
	assert_int_equal(sym_unwind_shared(ctx, 0x7ffffff0, &copy, pcs, 128, &complete), -ESRCH);
	sym_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splice_joins_at_shared_frame),
		cmocka_unit_test(test_splice_recursion_keeps_depth),
		cmocka_unit_test(test_splice_nothing_shared),
		cmocka_unit_test(test_splice_bounded),
		cmocka_unit_test(test_shared_unwinds_own_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
