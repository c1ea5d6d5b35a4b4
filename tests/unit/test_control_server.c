/* SPDX-License-Identifier: MIT */
/* The control socket server driven by hand: a good request reaches the
 * callback and its reply the client, a reply can come later, malformed,
 * oversized and half-sent requests get an error (or are dropped) and are
 * reported as events, extra clients are told to retry, the file is 0660,
 * and a second server will not steal a live socket. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/control_server.h"

struct fixture {
	char dir[64];
	char path[96];
	struct ctl_server *srv;
	int requests;
	uint16_t last_type;
	uint64_t last_client;
	int defer;
	int events[CTL_EV_COUNT];
};

static void on_request(void *arg, uint64_t client, const struct ctl_request *req)
{
	struct fixture *f = arg;
	struct ctl_status st = { .pid = 42 };
	size_t len = 0;
	uint8_t *b;

	f->requests++;
	f->last_type = req->type;
	f->last_client = client;
	if (f->defer)
		return;
	b = ctl_reply_status(&st, &len);
	assert_int_equal(ctl_server_reply(f->srv, client, b, len), 0);
}

static void on_event(void *arg, enum ctl_event ev, const char *detail)
{
	struct fixture *f = arg;

	assert_non_null(detail);
	assert_true(detail[0] != 0);
	f->events[ev]++;
}

static struct ctl_server *open_at(struct fixture *f, unsigned max, int *err)
{
	struct ctl_server_opts o = {
		.path = f->path, .gid = (gid_t)-1, .max_clients = max,
		.on_request = on_request, .on_event = on_event, .arg = f,
	};

	return ctl_server_open(&o, err);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int err = 0;

	strcpy(f->dir, "/tmp/hearth-test-ctl.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/sub/ctl.sock", f->dir);
	f->srv = open_at(f, 2, &err);
	assert_non_null(f->srv);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	ctl_server_close(f->srv);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Runs the server's side for a few rounds. */
static void pump(struct fixture *f)
{
	struct pollfd fds[16];

	for (int i = 0; i < 5; i++) {
		size_t n = ctl_server_pollfds(f->srv, fds, 16);

		poll(fds, n, 20);
		ctl_server_dispatch(f->srv, fds, n, 0);
	}
}

static int client(const struct fixture *f, const void *bytes, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (len)
		assert_int_equal(send(fd, bytes, len, 0), (ssize_t)len);
	return fd;
}

/* Reads a whole reply (the server closes after it). Returns its type. */
static uint16_t reply_type(int fd, char *msg, size_t msglen)
{
	uint8_t buf[4096];
	size_t got = 0;
	ssize_t r;
	struct ctl_hdr h;
	int err;

	while ((r = recv(fd, buf + got, sizeof(buf) - got, MSG_DONTWAIT)) > 0)
		got += (size_t)r;
	close(fd);
	if (got < CTL_HDR_SIZE)
		return 0;
	assert_int_equal(ctl_hdr_get(buf, CTL_REPLY_MAX, &h), 0);
	assert_int_equal(got, CTL_HDR_SIZE + h.len);
	if (h.type == CTL_ERROR && msg)
		assert_int_equal(ctl_decode_error(buf + CTL_HDR_SIZE, h.len, &err, msg, msglen), 0);
	return h.type;
}

static void test_request_and_reply(void **state)
{
	struct fixture *f = *state;
	uint8_t req[CTL_HDR_SIZE];
	struct stat st;
	int fd;

	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0660);
	assert_true(S_ISSOCK(st.st_mode));
	ctl_hdr_put(req, CTL_STATUS, 0);
	fd = client(f, req, sizeof(req));
	pump(f);
	assert_int_equal(f->requests, 1);
	assert_int_equal(f->last_type, CTL_STATUS);
	assert_int_equal(reply_type(fd, NULL, 0), CTL_STATUS | CTL_REPLY);
	pump(f);
	assert_int_equal(ctl_server_clients(f->srv), 0);
}

static void test_deferred_reply(void **state)
{
	struct fixture *f = *state;
	struct ctl_status st = { 0 };
	uint8_t req[CTL_HDR_SIZE], *b;
	size_t len = 0;
	int fd;

	f->defer = 1;
	ctl_hdr_put(req, CTL_MARKS, 0);
	fd = client(f, req, sizeof(req));
	pump(f);
	assert_int_equal(f->requests, 1);
	assert_int_equal(ctl_server_clients(f->srv), 1);
	b = ctl_reply_status(&st, &len);
	assert_int_equal(ctl_server_reply(f->srv, f->last_client, b, len), 0);
	pump(f);
	assert_int_equal(reply_type(fd, NULL, 0), CTL_STATUS | CTL_REPLY);
	/* A reply for a client that is gone is dropped, not an error. */
	b = ctl_reply_status(&st, &len);
	assert_int_equal(ctl_server_reply(f->srv, 999, b, len), -ENOENT);
}

static void test_malformed(void **state)
{
	struct fixture *f = *state;
	uint8_t req[CTL_HDR_SIZE + 8];
	char msg[128];
	int fd;

	fd = client(f, "GET / HTTP/1.0\r\n\r\n", 18);
	pump(f);
	assert_int_equal(reply_type(fd, msg, sizeof(msg)), CTL_ERROR);
	assert_string_equal(msg, "not a hearth control request");
	assert_int_equal(f->events[CTL_EV_MALFORMED], 1);

	ctl_hdr_put(req, CTL_SNAPSHOT, CTL_REQ_MAX + 1);
	fd = client(f, req, CTL_HDR_SIZE);
	pump(f);
	assert_int_equal(reply_type(fd, msg, sizeof(msg)), CTL_ERROR);
	assert_string_equal(msg, "request too large");
	assert_int_equal(f->events[CTL_EV_OVERSIZED], 1);

	ctl_hdr_put(req, CTL_STATUS, 8);
	memset(req + CTL_HDR_SIZE, 0, 8);
	fd = client(f, req, sizeof(req));
	pump(f);
	assert_int_equal(reply_type(fd, msg, sizeof(msg)), CTL_ERROR);
	assert_string_equal(msg, "this request takes no payload");
	assert_int_equal(f->requests, 0);

	/* Half a request, then the client goes away. */
	ctl_hdr_put(req, CTL_SNAPSHOT, 41);
	fd = client(f, req, CTL_HDR_SIZE + 4);
	pump(f);
	close(fd);
	pump(f);
	assert_int_equal(ctl_server_clients(f->srv), 0);
	assert_int_equal(f->events[CTL_EV_MALFORMED], 3);
	assert_int_equal(f->requests, 0);
}

static void test_busy(void **state)
{
	struct fixture *f = *state;
	uint8_t req[CTL_HDR_SIZE];
	char msg[128];
	int a, b, c, d;

	/* Two slots: this uid holds one (half), then the status slots. */
	a = client(f, "HR", 2);
	pump(f);
	b = client(f, "HR", 2);
	pump(f);
	assert_int_equal(ctl_server_clients(f->srv), 2);
	/* A status slot serves status only; a newer connection of the same
	 * uid takes it over from the one still sending. */
	ctl_hdr_put(req, CTL_MARKS, 0);
	c = client(f, req, sizeof(req));
	pump(f);
	assert_int_equal(reply_type(b, msg, sizeof(msg)), CTL_ERROR);
	assert_string_equal(msg, "hearthd is busy with other clients; try again");
	assert_int_equal(reply_type(c, msg, sizeof(msg)), CTL_ERROR);
	assert_string_equal(msg, "hearthd is busy with other clients; try again");
	assert_int_equal(f->requests, 0);
	assert_true(f->events[CTL_EV_BUSY] >= 1);
	/* Status still gets through. */
	ctl_hdr_put(req, CTL_STATUS, 0);
	d = client(f, req, sizeof(req));
	pump(f);
	assert_int_equal(f->requests, 1);
	assert_int_equal(reply_type(d, NULL, 0), CTL_STATUS | CTL_REPLY);
	close(a);
	pump(f);
	assert_int_equal(ctl_server_clients(f->srv), 0);
}

/* A half-written request is dropped at its deadline, and so is a request
 * the daemon never answers. */
static void test_deadlines(void **state)
{
	struct fixture *f = *state;
	uint8_t req[CTL_HDR_SIZE];
	struct pollfd fds[16];
	size_t n;
	int a, b, err = 0;

	ctl_server_close(f->srv);
	f->srv = open_at(f, 4, &err); /* room for two of this uid */
	assert_non_null(f->srv);
	a = client(f, "HRTH", 4);
	f->defer = 1;
	ctl_hdr_put(req, CTL_MARKS, 0);
	b = client(f, req, sizeof(req));
	pump(f);
	assert_int_equal(ctl_server_clients(f->srv), 2);
	assert_int_equal(f->requests, 1);
	n = ctl_server_pollfds(f->srv, fds, 16);
	ctl_server_dispatch(f->srv, fds, n, (uint64_t)1 << 62);
	assert_int_equal(ctl_server_clients(f->srv), 0);
	assert_int_equal(f->events[CTL_EV_TIMEOUT], 2);
	assert_int_equal(reply_type(a, NULL, 0), 0);
	assert_int_equal(reply_type(b, NULL, 0), 0);
}

static void test_live_socket_kept(void **state)
{
	struct fixture *f = *state;
	struct fixture g = { 0 };
	int err = 0;

	memcpy(g.path, f->path, sizeof(g.path));
	assert_null(open_at(&g, 2, &err));
	assert_int_equal(err, -EADDRINUSE);
	/* The first server still answers. */
	test_request_and_reply(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_request_and_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadlines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_socket_kept, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
