/* SPDX-License-Identifier: MIT */
/*
 * mem_stacks: sampled allocations weighed for their chance of being
 * sampled, kept once per stack, fractions carried, held samples told
 * apart from freed ones.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/mem_stacks.h"

/* The intervals the kernel draws from are exponential: their mean is the
 * one asked for, and their median is ln 2 of it. */
static void test_intervals(void **state)
{
	static uint64_t v[HEARTH_MEM_INTERVALS];
	double mean = mem_intervals(v, HEARTH_MEM_INTERVALS, 512 * 1024);

	(void)state;
	assert_true(fabs(mean - 512 * 1024) < 512 * 1024 * 0.01);
	assert_true(fabs((double)v[HEARTH_MEM_INTERVALS / 2] - log(2) * 512 * 1024) < 1024);
	for (size_t i = 1; i < HEARTH_MEM_INTERVALS; i++)
		assert_true(v[i - 1] <= v[i]);
	assert_true(v[0] >= 1);
}

/* A sample of s bytes is taken with p = 1 - exp(-s/N): it stands for
 * s/p bytes and 1/p objects. Tiny blocks weigh about N each, blocks far
 * past N their own size. */
static void test_weights(void **state)
{
	double b, o, n = 65536;

	(void)state;
	mem_weight(64, n, &b, &o);
	assert_true(fabs(b - (n + 32)) < 1);
	assert_true(fabs(o - (n + 32) / 64) < 0.1);
	mem_weight(65536, n, &b, &o);
	assert_true(fabs(b - 65536 / (1 - exp(-1))) < 1);
	mem_weight(100 << 20, n, &b, &o);
	assert_true(fabs(b - (100 << 20)) < 1 && fabs(o - 1) < 1e-9);
	mem_weight(0, n, &b, &o);
	assert_true(b == 0 && o == 0);
}

struct seen {
	uint64_t bytes[4], objects[4];
	uint32_t calls;
};

static int note(void *arg, const struct mem_stack *s, const uint64_t *ips,
		uint64_t bytes, uint64_t objects)
{
	struct seen *x = arg;

	(void)s;
	x->bytes[ips[1] & 3] += bytes;
	x->objects[ips[1] & 3] += objects;
	x->calls++;
	return 0;
}

static struct hearth_mem_event *event(uint64_t seq, uint64_t caller, uint64_t size)
{
	static struct hearth_mem_event e;

	memset(&e, 0, sizeof(e));
	e.tgid = 100;
	e.tid = 101;
	e.seq = seq;
	e.size = size;
	e.nu = 3;
	e.ips[0] = 0x1000;
	e.ips[1] = caller;
	e.ips[2] = 0x3000;
	strcpy(e.comm, "app");
	return &e;
}

/* One stack per caller whatever the count of samples; whole bytes and
 * objects handed out, fractions kept for the next take. */
static void test_take(void **state)
{
	struct mem_stacks m;
	struct seen x = { 0 };

	(void)state;
	mem_stacks_init(&m, 3.0, false, false);
	/* 2 bytes at a mean of 3: p = 1 - e^(-2/3), 1/p = 2.054 objects */
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(mem_stacks_add(&m, event(i + 1, 0x2001, 2)), 0);
	assert_int_equal(mem_stacks_add(&m, event(11, 0x2002, 1u << 20)), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(mem_stacks_take(&m, note, &x), 0);
	assert_int_equal(x.calls, 2);
	assert_int_equal(x.bytes[1], 41);
	assert_int_equal(x.objects[1], 21);
	assert_int_equal(x.bytes[2], 1u << 20);
	assert_int_equal(x.objects[2], 1);
	/* nothing new: nothing handed out (the fractions stay below 1/2) */
	assert_int_equal(mem_stacks_take(&m, note, &x), 0);
	assert_int_equal(x.calls, 2);
	mem_stacks_free(&m);
}

/* Held: only the live samples count; a sample not live in two passes in
 * a row is forgotten, one not live once is kept (its call may not have
 * returned yet). */
static void test_held(void **state)
{
	struct mem_stacks m;
	struct seen x = { 0 };
	uint64_t live[] = { 3, 1 };

	(void)state;
	mem_stacks_init(&m, 1.0, false, true);
	assert_int_equal(mem_stacks_add(&m, event(1, 0x2001, 1u << 20)), 0);
	assert_int_equal(mem_stacks_add(&m, event(2, 0x2001, 1u << 20)), 0);
	assert_int_equal(mem_stacks_add(&m, event(3, 0x2002, 1u << 20)), 0);
	assert_int_equal(mem_stacks_held(&m, live, 2, note, &x), 0);
	assert_int_equal(x.bytes[1], 1u << 20);
	assert_int_equal(x.bytes[2], 1u << 20);
	assert_int_equal(m.nsamples, 3);
	memset(&x, 0, sizeof(x));
	assert_int_equal(mem_stacks_held(&m, live + 1, 1, note, &x), 0);
	assert_int_equal(x.bytes[1], 1u << 20);
	assert_int_equal(x.bytes[2], 0);
	assert_int_equal(m.nsamples, 2); /* 2 forgotten, 3 kept once */
	memset(&x, 0, sizeof(x));
	assert_int_equal(mem_stacks_held(&m, NULL, 0, note, &x), 0);
	assert_int_equal(x.calls, 0);
	assert_int_equal(m.nsamples, 1);
	mem_stacks_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_take),
		cmocka_unit_test(test_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
