/* SPDX-License-Identifier: MIT */
/* The control protocol: round trips of every request and reply, and the
 * parser's refusals (wrong magic, version, sizes, lengths, fields). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/control_proto.h"

static uint8_t buf[CTL_HDR_SIZE + CTL_REQ_MAX];

/* Encodes @req, checks the header, decodes the payload. */
static int round_trip(const struct ctl_request *req, struct ctl_request *out,
		      const char **why)
{
	struct ctl_hdr h;
	int n = ctl_request_encode(req, buf, sizeof(buf));

	assert_true(n >= (int)CTL_HDR_SIZE);
	assert_int_equal(ctl_hdr_get(buf, CTL_REQ_MAX, &h), 0);
	assert_int_equal(h.type, req->type);
	assert_int_equal(h.len, (uint32_t)n - CTL_HDR_SIZE);
	return ctl_request_decode(h.type, buf + CTL_HDR_SIZE, h.len, out, why);
}

static void test_requests_round_trip(void **state)
{
	struct ctl_request req = { .type = CTL_SNAPSHOT }, out;
	const char *why;

	(void)state;
	req.u.snap.last_ns = 300000000000ull;
	req.u.snap.flags = CTL_SNAP_OFFCPU;
	req.u.snap.npids = 2;
	req.u.snap.pids[0] = 1234;
	req.u.snap.pids[1] = 4194304;
	strcpy(req.u.snap.comm, "nginx");
	assert_int_equal(round_trip(&req, &out, &why), 0);
	assert_null(why);
	assert_memory_equal(&req, &out, sizeof(req));

	memset(&req, 0, sizeof(req));
	req.type = CTL_SNAPSHOT;
	req.u.snap.since_ns = 10;
	req.u.snap.until_ns = 20;
	assert_int_equal(round_trip(&req, &out, &why), 0);
	assert_int_equal(out.u.snap.since_ns, 10);
	assert_int_equal(out.u.snap.until_ns, 20);

	memset(&req, 0, sizeof(req));
	req.type = CTL_MARK;
	req.u.mark.at_ns = 42;
	strcpy(req.u.mark.name, "deploy-42");
	assert_int_equal(round_trip(&req, &out, &why), 0);
	assert_int_equal(out.u.mark.at_ns, 42);
	assert_string_equal(out.u.mark.name, "deploy-42");

	/* An allocation snapshot: the next seconds of chosen pids, with its
	 * sampling; not of the past, not by name. */
	memset(&req, 0, sizeof(req));
	req.type = CTL_SNAPSHOT;
	req.u.snap.next_ns = 3000000000ull;
	req.u.snap.flags = CTL_SNAP_HELD;
	req.u.snap.npids = 1;
	req.u.snap.pids[0] = 99;
	req.u.snap.sample_bytes = 65536;
	assert_int_equal(round_trip(&req, &out, &why), 0);
	assert_memory_equal(&req, &out, sizeof(req));
	req.u.snap.sample_bytes = CTL_SAMPLE_BYTES_MAX + 1;
	assert_int_equal(round_trip(&req, &out, &why), -EINVAL);
	req.u.snap.sample_bytes = 0;
	strcpy(req.u.snap.comm, "nginx");
	assert_int_equal(round_trip(&req, &out, &why), -EINVAL);
	req.u.snap.comm[0] = 0;
	req.u.snap.npids = 0;
	assert_int_equal(round_trip(&req, &out, &why), -EINVAL);
	req.u.snap.npids = 1;
	req.u.snap.next_ns = 0;
	req.u.snap.last_ns = 3000000000ull;
	assert_int_equal(round_trip(&req, &out, &why), -EINVAL);
	assert_string_equal(why, "an allocation snapshot is of the next seconds of chosen pids");

	memset(&req, 0, sizeof(req));
	req.type = CTL_STATUS;
	assert_int_equal(round_trip(&req, &out, &why), 0);
	req.type = CTL_MARKS;
	assert_int_equal(round_trip(&req, &out, &why), 0);
}

static void test_header_refusals(void **state)
{
	struct ctl_hdr h;
	uint8_t b[CTL_HDR_SIZE];

	(void)state;
	ctl_hdr_put(b, CTL_STATUS, 0);
	assert_int_equal(ctl_hdr_get(b, CTL_REQ_MAX, &h), 0);
	ctl_hdr_put(b, CTL_STATUS, CTL_REQ_MAX + 1);
	assert_int_equal(ctl_hdr_get(b, CTL_REQ_MAX, &h), -EMSGSIZE);
	ctl_hdr_put(b, CTL_STATUS, 0xffffffffu);
	assert_int_equal(ctl_hdr_get(b, CTL_REQ_MAX, &h), -EMSGSIZE);
	ctl_hdr_put(b, CTL_STATUS, 0);
	b[0] = 'G'; /* "GET / HTTP" is not us */
	assert_int_equal(ctl_hdr_get(b, CTL_REQ_MAX, &h), -EPROTO);
	ctl_hdr_put(b, CTL_STATUS, 0);
	b[4] = 2;
	assert_int_equal(ctl_hdr_get(b, CTL_REQ_MAX, &h), -EPROTONOSUPPORT);
}

/* A valid snapshot payload to alter: last = 1 s, one pid, comm "ab". */
static size_t snap_payload(uint8_t *p)
{
	memset(p, 0, 64);
	p[16] = 0x00; p[17] = 0xca; p[18] = 0x9a; p[19] = 0x3b; /* 1e9 */
	p[36] = 1;           /* npids */
	p[40] = 7;           /* pid 7 */
	p[44] = 2;           /* comm length */
	p[45] = 'a';
	p[46] = 'b';
	return 47;
}

static void expect_refused(uint16_t type, const uint8_t *p, size_t len)
{
	struct ctl_request out;
	const char *why = NULL;

	assert_true(ctl_request_decode(type, p, len, &out, &why) < 0);
	assert_non_null(why);
}

static void test_snapshot_refusals(void **state)
{
	struct ctl_request out;
	const char *why;
	uint8_t p[128];
	size_t n = snap_payload(p);

	(void)state;
	assert_int_equal(ctl_request_decode(CTL_SNAPSHOT, p, n, &out, &why), 0);
	assert_int_equal(out.u.snap.last_ns, 1000000000ull);
	assert_int_equal(out.u.snap.pids[0], 7);
	assert_string_equal(out.u.snap.comm, "ab");
	for (size_t k = 0; k < n; k++)       /* every truncation */
		expect_refused(CTL_SNAPSHOT, p, k);
	expect_refused(CTL_SNAPSHOT, p, n + 1); /* a trailing byte */
	n = snap_payload(p); p[40] = 0;  expect_refused(CTL_SNAPSHOT, p, n); /* pid 0 */
	n = snap_payload(p); p[43] = 1;  expect_refused(CTL_SNAPSHOT, p, n); /* pid > limit */
	n = snap_payload(p); p[36] = 65; expect_refused(CTL_SNAPSHOT, p, n); /* too many pids */
	n = snap_payload(p); p[45] = 0;  expect_refused(CTL_SNAPSHOT, p, n); /* NUL in comm */
	n = snap_payload(p); p[46] = '\n'; expect_refused(CTL_SNAPSHOT, p, n);
	n = snap_payload(p); p[33] = 1; expect_refused(CTL_SNAPSHOT, p, n); /* unknown flag (bit 8) */
	/* Wakers: beside off-CPU, wall or locks, of the next seconds only. */
	n = snap_payload(p); p[32] = CTL_SNAP_WAKER; expect_refused(CTL_SNAPSHOT, p, n);
	n = snap_payload(p); p[32] = CTL_SNAP_WAKER | CTL_SNAP_LOCKS;
	expect_refused(CTL_SNAPSHOT, p, n); /* last */
	n = snap_payload(p); memset(p + 16, 0, 8); p[27] = 1; /* next */
	p[32] = CTL_SNAP_WAKER | CTL_SNAP_THREADS; expect_refused(CTL_SNAPSHOT, p, n);
	p[32] = CTL_SNAP_WAKER | CTL_SNAP_WALL | CTL_SNAP_LOCKS; expect_refused(CTL_SNAPSHOT, p, n);
	p[32] = CTL_SNAP_WAKER | CTL_SNAP_LOCKS;
	assert_int_equal(ctl_request_decode(CTL_SNAPSHOT, p, n, &out, &why), 0);
	assert_int_equal(out.u.snap.flags, CTL_SNAP_WAKER | CTL_SNAP_LOCKS);
	n = snap_payload(p); p[32] = CTL_SNAP_OFFCPU | CTL_SNAP_WALL;
	expect_refused(CTL_SNAPSHOT, p, n); /* two kinds */
	for (uint8_t f = 1; f <= CTL_SNAP_GROWTH; f <<= 1) { /* each kind alone */
		n = snap_payload(p);
		p[32] = f;
		assert_int_equal(ctl_request_decode(CTL_SNAPSHOT, p, n, &out, &why), 0);
		assert_int_equal(out.u.snap.flags, f);
	}
	n = snap_payload(p); p[24] = 1;  expect_refused(CTL_SNAPSHOT, p, n); /* last and next */
	n = snap_payload(p); p[0] = 1;   expect_refused(CTL_SNAPSHOT, p, n); /* last and since */
	n = snap_payload(p); memset(p + 16, 0, 8); expect_refused(CTL_SNAPSHOT, p, n); /* no mode */
	n = snap_payload(p); memset(p + 16, 0, 8); p[0] = 9; p[8] = 9;
	expect_refused(CTL_SNAPSHOT, p, n); /* since == until */
	n = snap_payload(p); memset(p + 16, 0, 8); p[31] = 0x7f; /* next: years */
	expect_refused(CTL_SNAPSHOT, p, n);
	/* next: 10 minutes at most (it holds a client slot that long). */
	n = snap_payload(p); memset(p + 16, 0, 8);
	for (int i = 0; i < 8; i++)
		p[24 + i] = (uint8_t)(CTL_NEXT_MAX_NS >> (8 * i));
	assert_int_equal(ctl_request_decode(CTL_SNAPSHOT, p, n, &out, &why), 0);
	assert_true(out.u.snap.next_ns == CTL_NEXT_MAX_NS);
	p[24]++;
	assert_int_equal(ctl_request_decode(CTL_SNAPSHOT, p, n, &out, &why), -EINVAL);
	assert_string_equal(why, "a snapshot waits for the next 10 minutes at most");
	n = snap_payload(p); p[44] = 16; memset(p + 45, 'x', 16);
	expect_refused(CTL_SNAPSHOT, p, 45 + 16); /* comm of 16 */
}

static void test_other_refusals(void **state)
{
	uint8_t p[80] = { 0 };

	(void)state;
	expect_refused(CTL_STATUS, p, 1);     /* status takes nothing */
	expect_refused(CTL_MARKS, p, 3);
	expect_refused(99, p, 0);             /* unknown type */
	expect_refused(CTL_REPLY | CTL_STATUS, p, 0);
	expect_refused(CTL_MARK, p, 8);       /* no length byte */
	p[8] = 0;
	expect_refused(CTL_MARK, p, 9);       /* empty name */
	p[8] = 3; memcpy(p + 9, "a b", 3);
	expect_refused(CTL_MARK, p, 12);      /* space */
	p[8] = 3; memcpy(p + 9, "abc", 3);
	expect_refused(CTL_MARK, p, 11);      /* length says more */
	expect_refused(CTL_MARK, p, 13);      /* length says less */
	p[8] = 64; memset(p + 9, 'a', 64);
	expect_refused(CTL_MARK, p, 73);      /* name of 64 */
	expect_refused(CTL_STATUS, p, CTL_REQ_MAX + 1);
}

static void test_replies(void **state)
{
	struct ctl_status st, got;
	struct ctl_snapshot_reply sr = { .from_ns = 1, .to_ns = 2, .windows = 3, .corrupt = 4,
					 .torn = 5, .flags = 1, .blob = (const uint8_t *)"xyz",
					 .blob_len = 3 }, sgot;
	struct ctl_mark marks[2] = { { 7, "a" }, { 8, "deploy-42" } }, *mg;
	struct ctl_hdr h;
	size_t len, n;
	uint64_t at;
	uint32_t damaged;
	char msg[64];
	int err;
	uint8_t *b;

	(void)state;
	for (size_t i = 0; i < CTL_STATUS_FIELDS; i++)
		((uint64_t *)&st)[i] = i * 1000 + 1;
	b = ctl_reply_status(&st, &len);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(h.type, CTL_STATUS | CTL_REPLY);
	assert_int_equal(ctl_decode_status(b + CTL_HDR_SIZE, h.len, &got), 0);
	assert_memory_equal(&st, &got, sizeof(st));
	assert_int_equal(ctl_decode_status(b + CTL_HDR_SIZE, h.len - 1, &got), -EBADMSG);
	free(b);

	b = ctl_reply_snapshot(&sr, &len);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(ctl_decode_snapshot(b + CTL_HDR_SIZE, h.len, &sgot), 0);
	assert_int_equal(sgot.windows, 3);
	assert_int_equal(sgot.torn, 5);
	assert_int_equal(sgot.blob_len, 3);
	assert_memory_equal(sgot.blob, "xyz", 3);
	assert_int_equal(ctl_decode_snapshot(b + CTL_HDR_SIZE, h.len + 1, &sgot), -EBADMSG);
	free(b);

	b = ctl_reply_marks(marks, 2, 0, &len);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(ctl_decode_marks(b + CTL_HDR_SIZE, h.len, &mg, &n, &damaged), 0);
	assert_int_equal(n, 2);
	assert_int_equal(damaged, 0);
	assert_string_equal(mg[1].name, "deploy-42");
	assert_int_equal(mg[1].at_ns, 8);
	free(mg);
	for (size_t k = 0; k < h.len; k++)
		assert_int_equal(ctl_decode_marks(b + CTL_HDR_SIZE, k, &mg, &n, &damaged), -EBADMSG);
	free(b);
	/* Marks that could not be read are counted after the good ones. */
	b = ctl_reply_marks(marks, 2, 3, &len);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(ctl_decode_marks(b + CTL_HDR_SIZE, h.len, &mg, &n, &damaged), 0);
	assert_int_equal(n, 2);
	assert_int_equal(damaged, 3);
	free(mg);
	for (size_t k = h.len - 3; k < h.len; k++)
		assert_int_equal(ctl_decode_marks(b + CTL_HDR_SIZE, k, &mg, &n, &damaged), -EBADMSG);
	free(b);
	b = ctl_reply_marks(NULL, 0, 1, &len);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(ctl_decode_marks(b + CTL_HDR_SIZE, h.len, &mg, &n, &damaged), 0);
	assert_int_equal(n, 0);
	assert_null(mg);
	assert_int_equal(damaged, 1);
	free(b);

	b = ctl_reply_mark(99, &len);
	assert_int_equal(ctl_decode_mark(b + CTL_HDR_SIZE, len - CTL_HDR_SIZE, &at), 0);
	assert_int_equal(at, 99);
	free(b);

	b = ctl_reply_error(-EACCES, "permission denied", &len);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(h.type, CTL_ERROR);
	assert_int_equal(ctl_decode_error(b + CTL_HDR_SIZE, h.len, &err, msg, sizeof(msg)), 0);
	assert_int_equal(err, EACCES);
	assert_string_equal(msg, "permission denied");
	/* A short message buffer truncates, never overflows. */
	assert_int_equal(ctl_decode_error(b + CTL_HDR_SIZE, h.len, &err, msg, 5), 0);
	assert_string_equal(msg, "perm");
	free(b);
}

/* A status reply of the first hearthd (21 fields, no module cache)
 * decodes, the fields it lacks as 0; fewer than that is refused. The
 * module cache fields travel like the rest. */
static void test_status_versions(void **state)
{
	struct ctl_status st = { .pid = 42, .bpf_run_cnt = 7, .sym_modules = 12,
				 .sym_module_bytes = 3u << 20, .sym_module_limit = 256u << 20,
				 .sym_evictions = 1 }, got;
	uint8_t old[4 + 8 * CTL_STATUS_FIELDS];
	size_t len;
	uint8_t *b = ctl_reply_status(&st, &len);
	struct ctl_hdr h;

	(void)state;
	assert_int_equal(CTL_STATUS_FIELDS_MIN, offsetof(struct ctl_status, sym_modules) / 8);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(ctl_decode_status(b + CTL_HDR_SIZE, h.len, &got), 0);
	assert_int_equal(got.sym_modules, 12);
	assert_int_equal(got.sym_module_bytes, 3u << 20);
	assert_int_equal(got.sym_module_limit, 256u << 20);
	assert_int_equal(got.sym_evictions, 1);
	/* the same reply cut to the first version's fields */
	memcpy(old, b + CTL_HDR_SIZE, sizeof(old));
	old[0] = CTL_STATUS_FIELDS_MIN;
	old[1] = old[2] = old[3] = 0;
	assert_int_equal(ctl_decode_status(old, 4 + 8 * CTL_STATUS_FIELDS_MIN, &got), 0);
	assert_int_equal(got.pid, 42);
	assert_int_equal(got.bpf_run_cnt, 7);
	assert_int_equal(got.sym_modules, 0);
	assert_int_equal(got.sym_module_limit, 0);
	old[0] = CTL_STATUS_FIELDS_MIN - 1;
	assert_int_equal(ctl_decode_status(old, 4 + 8 * (CTL_STATUS_FIELDS_MIN - 1), &got), -EBADMSG);
	free(b);
}

/* Each drop cause has its own two fields (since start, last window),
 * the growth ring's too, added at the end: a reply of a hearthd before
 * it reads it as 0. */
static void test_status_drops(void **state)
{
	struct ctl_status st = { 0 }, got;
	uint8_t *b;
	size_t len;
	struct ctl_hdr h;

	(void)state;
	for (unsigned c = 0; c < CTL_DROP_CAUSES; c++) {
		ctl_status_set_drop(&st, c, false, 100 + c);
		ctl_status_set_drop(&st, c, true, 200 + c);
	}
	ctl_status_set_drop(&st, CTL_DROP_CAUSES, false, 999); /* none: ignored */
	assert_int_equal(st.drop_collisions, 100);
	assert_int_equal(st.window_drop_unnamed, 205);
	assert_int_equal(st.drop_growth_ring, 106);
	assert_int_equal(st.window_drop_growth_ring, 206);
	assert_int_equal(st.drop_unkept, 0);
	assert_int_equal(st.window_drops, 0);
	b = ctl_reply_status(&st, &len);
	assert_non_null(b);
	assert_int_equal(ctl_hdr_get(b, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(ctl_decode_status(b + CTL_HDR_SIZE, h.len, &got), 0);
	for (unsigned c = 0; c < CTL_DROP_CAUSES; c++) {
		assert_int_equal(ctl_status_drop(&got, c, false), 100 + c);
		assert_int_equal(ctl_status_drop(&got, c, true), 200 + c);
	}
	assert_int_equal(ctl_status_drop(&got, CTL_DROP_CAUSES, false), 0);
	/* cut before the growth ring's fields */
	b[CTL_HDR_SIZE] = (uint8_t)(CTL_STATUS_FIELDS - 2);
	assert_int_equal(ctl_decode_status(b + CTL_HDR_SIZE, 4 + 8 * (CTL_STATUS_FIELDS - 2), &got), 0);
	assert_int_equal(ctl_status_drop(&got, 5, false), 105);
	assert_int_equal(ctl_status_drop(&got, 6, false), 0);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_round_trip),
		cmocka_unit_test(test_header_refusals),
		cmocka_unit_test(test_snapshot_refusals),
		cmocka_unit_test(test_other_refusals),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_status_versions),
		cmocka_unit_test(test_status_drops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
