/* SPDX-License-Identifier: MIT */
/*
 * The ring reader over a real BPF ring buffer, filled by a real BPF
 * program (a socket filter run by BPF_PROG_TEST_RUN that copies an array
 * map's value into the ring): records come back byte for byte and in
 * order, those that wrap past the end of the one mapping too; a callback
 * can stop a read; a poll waits for records.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "agent/ring_reader.h"

#define RING_BYTES 4096
#define REC 1000 /* 1,008 with its header: the fifth wraps */

struct fixture {
	int ring, value, prog;
	uint32_t seq;
	uint8_t got[8][REC];
	size_t ngot, sizes[8];
	int stop_after; /* the callback says stop after this many; 0 never */
};

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };

	return i;
}

/* bpf_ringbuf_output(ring, value[0], REC, 0) */
static int load_producer(int ring, int value)
{
	struct bpf_insn p[] = {
		insn(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, value),
		insn(0, 0, 0, 0, 0),
		insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 6, 0),
		insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_0, 0, 0),
		insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, ring),
		insn(0, 0, 0, 0, 0),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, REC),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
		insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "t_ring", "GPL", p,
			     sizeof(p) / sizeof(p[0]), NULL);
}

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	f.ring = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "t_ring", 0, 0, RING_BYTES, NULL);
	f.value = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_value", sizeof(uint32_t), REC, 1, NULL);
	assert_true(f.ring >= 0 && f.value >= 0);
	f.prog = load_producer(f.ring, f.value);
	assert_true(f.prog >= 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->prog);
	close(f->ring);
	close(f->value);
	return 0;
}

/* The record numbered @seq: its number, then bytes that depend on it. */
static void pattern(uint32_t seq, uint8_t *out)
{
	memcpy(out, &seq, sizeof(seq));
	for (size_t i = sizeof(seq); i < REC; i++)
		out[i] = (uint8_t)(seq * 31 + i);
}

/* Sends the next record through the BPF program. */
static void produce(struct fixture *f)
{
	uint8_t v[REC], pkt[64] = { 0 };
	uint32_t key = 0;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));

	pattern(f->seq++, v);
	assert_int_equal(bpf_map_update_elem(f->value, &key, v, BPF_ANY), 0);
	assert_int_equal(bpf_prog_test_run_opts(f->prog, &o), 0);
}

static int take(void *ctx, void *data, size_t size)
{
	struct fixture *f = ctx;

	assert_true(f->ngot < 8);
	f->sizes[f->ngot] = size;
	memcpy(f->got[f->ngot], data, size < REC ? size : REC);
	f->ngot++;
	return f->stop_after && f->ngot >= (size_t)f->stop_after ? -EAGAIN : 0;
}

static void assert_got(const struct fixture *f, size_t i, uint32_t seq)
{
	uint8_t want[REC];

	pattern(seq, want);
	assert_int_equal(f->sizes[i], REC);
	assert_memory_equal(f->got[i], want, REC);
}

/* Twelve records one at a time: the ring's 4,096 bytes wrap three times,
 * and the records that straddle the end come back whole. */
static void test_records_wrap_whole(void **state)
{
	struct fixture *f = *state;
	struct ring_reader *r = ring_reader_new(f->ring, take, f);

	assert_non_null(r);
	for (uint32_t i = 0; i < 12; i++) {
		f->ngot = 0;
		produce(f);
		assert_int_equal(ring_reader_consume(r), 1);
		assert_int_equal(f->ngot, 1);
		assert_got(f, 0, i);
	}
	ring_reader_free(r);
}

/* Three waiting records come in order; a callback that says stop ends
 * the read with its value, its record taken, the rest left for the next. */
static void test_batch_and_stop(void **state)
{
	struct fixture *f = *state;
	struct ring_reader *r = ring_reader_new(f->ring, take, f);
	uint32_t first = f->seq;

	assert_non_null(r);
	for (int i = 0; i < 3; i++)
		produce(f);
	f->ngot = 0;
	f->stop_after = 1;
	assert_int_equal(ring_reader_consume(r), -EAGAIN);
	assert_int_equal(f->ngot, 1);
	assert_got(f, 0, first);
	f->stop_after = 0;
	assert_int_equal(ring_reader_consume(r), 2);
	assert_int_equal(f->ngot, 3);
	assert_got(f, 1, first + 1);
	assert_got(f, 2, first + 2);
	assert_int_equal(ring_reader_consume(r), 0);
	ring_reader_free(r);
}

/* A poll of an empty ring times out with nothing; one record wakes it. */
static void test_poll_waits(void **state)
{
	struct fixture *f = *state;
	struct ring_reader *r = ring_reader_new(f->ring, take, f);

	assert_non_null(r);
	f->ngot = 0;
	assert_int_equal(ring_reader_poll(r, 10), 0);
	produce(f);
	assert_int_equal(ring_reader_poll(r, 1000), 1);
	assert_int_equal(f->ngot, 1);
	assert_got(f, 0, f->seq - 1);
	assert_true(ring_reader_epoll_fd(r) >= 0);
	ring_reader_free(r);
}

/* A map that is not a ring buffer is refused, not mapped. */
static void test_not_a_ring(void **state)
{
	struct fixture *f = *state;

	errno = 0;
	assert_null(ring_reader_new(f->value, take, f));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_wrap_whole),
		cmocka_unit_test(test_batch_and_stop),
		cmocka_unit_test(test_poll_waits),
		cmocka_unit_test(test_not_a_ring),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
