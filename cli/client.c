/* SPDX-License-Identifier: MIT */
/* Talking to hearthd: one request, one reply, bounded in size and time. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/config.h"
#include "cli/cli.h"
#include "agent/store_codec.h"
#include "cli/client.h"

uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!(strlen(path) < sizeof(sa.sun_path))) {
		cli_error("the socket path '%s' is too long.", path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		if (e == EACCES || e == EPERM)
			cli_error("permission denied on %s: the control socket is for root and the hearth group.", path);
		else if (e == ENOENT || e == ECONNREFUSED)
			cli_error("hearthd is not running (nothing listens on %s); start it with 'systemctl start hearthd'.", path);
		else
			cli_error("cannot connect to hearthd at %s (%s).", path, strerror(e));
		return -1;
	}
	return fd;
}

/* Reads exactly @len bytes before @deadline. 0, or -1 (reported). */
static int read_full(int fd, uint8_t *b, size_t len, uint64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		uint64_t now = mono_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (now >= deadline) {
			cli_error("hearthd did not answer in time.");
			return -1;
		}
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		r = recv(fd, b + got, len - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			cli_error("hearthd closed the connection before answering completely.");
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

static int check_reply(const struct ctl_request *req, struct cli_reply *r)
{
	char msg[CTL_ERRMSG_MAX + 1];
	int err;

	if (r->type == CTL_ERROR) {
		if (ctl_decode_error(r->payload, r->len, &err, msg, sizeof(msg)) < 0) {
			cli_error("hearthd sent a malformed error reply.");
			return -1;
		}
		cli_error("hearthd refused the request: %s.", msg);
		return -1;
	}
	if (r->type != (req->type | CTL_REPLY)) {
		cli_error("hearthd answered a different request (type %u).", r->type);
		return -1;
	}
	return 0;
}

int cli_call(const char *socket, const struct ctl_request *req, int timeout_ms,
	     struct cli_reply *r)
{
	uint8_t out[CTL_HDR_SIZE + CTL_REQ_MAX], hb[CTL_HDR_SIZE];
	uint64_t deadline = mono_ms() + (uint64_t)timeout_ms;
	struct ctl_hdr h;
	int fd, n;

	memset(r, 0, sizeof(*r));
	n = ctl_request_encode(req, out, sizeof(out));
	if (n < 0) {
		cli_error("the request has a field out of range.");
		return -1;
	}
	fd = connect_to(socket);
	if (fd < 0)
		return -1;
	/* A refused client finds hearthd's reason waiting, even when the
	 * send itself failed because hearthd closed first. */
	if (send(fd, out, (size_t)n, MSG_NOSIGNAL) != n && errno != EPIPE &&
	    errno != ECONNRESET) {
		cli_error("cannot send the request to hearthd (%s).", strerror(errno));
		goto fail;
	}
	if (read_full(fd, hb, sizeof(hb), deadline) < 0)
		goto fail;
	if (ctl_hdr_get(hb, CTL_REPLY_MAX, &h) < 0) {
		cli_error("hearthd's reply is not in a protocol version this hearth reads.");
		goto fail;
	}
	r->buf = malloc(CTL_HDR_SIZE + (size_t)h.len);
	if (!r->buf) {
		cli_error("out of memory for hearthd's reply (%u bytes).", h.len);
		goto fail;
	}
	memcpy(r->buf, hb, sizeof(hb));
	if (read_full(fd, r->buf + CTL_HDR_SIZE, h.len, deadline) < 0)
		goto fail;
	close(fd);
	r->type = h.type;
	r->payload = r->buf + CTL_HDR_SIZE;
	r->len = h.len;
	if (check_reply(req, r) < 0) {
		free(r->buf);
		r->buf = NULL;
		return -1;
	}
	return 0;
fail:
	close(fd);
	free(r->buf);
	r->buf = NULL;
	return -1;
}

static int parse_clock(const char *s, int *h, int *m, int *sec)
{
	int n = 0;

	*sec = 0;
	if (sscanf(s, "%2d:%2d:%2d%n", h, m, sec, &n) == 3 && s[n] == 0)
		return 0;
	n = 0;
	*sec = 0;
	if (sscanf(s, "%2d:%2d%n", h, m, &n) == 2 && s[n] == 0)
		return 0;
	return -1;
}

static int from_local(struct tm *tm, int h, int m, int s, uint64_t *ns)
{
	time_t t;

	if (h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 60)
		return -1;
	tm->tm_hour = h;
	tm->tm_min = m;
	tm->tm_sec = s;
	tm->tm_isdst = -1;
	t = mktime(tm);
	if (t == (time_t)-1 || t < 0)
		return -1;
	*ns = (uint64_t)t * 1000000000ull;
	return 0;
}

int cli_parse_time(const char *s, uint64_t now_ns, uint64_t *ns)
{
	uint64_t d;
	struct tm tm;
	time_t now = (time_t)(now_ns / 1000000000ull);
	int h, m, sec, y, mo, day, n = 0;
	char *end;
	double v;

	if (!strcmp(s, "now"))
		return *ns = now_ns, 0;
	if (s[0] == '-')
		return config_parse_duration(s + 1, &d) == 0 && d < now_ns ? (*ns = now_ns - d, 0) : -1;
	if (s[0] == '@') {
		v = strtod(s + 1, &end);
		if (end == s + 1 || *end || !(v > 0) || v > 1e11)
			return -1;
		*ns = (uint64_t)(v * 1e9);
		return 0;
	}
	localtime_r(&now, &tm);
	if (parse_clock(s, &h, &m, &sec) == 0)
		return from_local(&tm, h, m, sec, ns);
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &day, &n) == 3 && (s[n] == ' ' || s[n] == 'T') &&
	    parse_clock(s + n + 1, &h, &m, &sec) == 0 && mo >= 1 && mo <= 12 &&
	    day >= 1 && day <= 31 && y >= 1970) {
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = day;
		return from_local(&tm, h, m, sec, ns);
	}
	return -1;
}

void cli_format_time(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "@%llu", (unsigned long long)(ns / 1000000000ull));
}

/* The question a snapshot's flags ask, which the store's format does
 * not keep. */
static unsigned snap_question(uint32_t flags)
{
	if (flags & CTL_SNAP_WALL)
		return PROF_Q_WALL;
	if (flags & CTL_SNAP_THREADS)
		return PROF_Q_THREADS;
	if (flags & CTL_SNAP_LOCKS)
		return PROF_Q_LOCKS;
	if (flags & CTL_SNAP_GROWTH)
		return PROF_Q_GROWTH;
	if (flags & CTL_SNAP_ALLOC)
		return PROF_Q_ALLOC;
	if (flags & CTL_SNAP_HELD)
		return PROF_Q_HELD;
	return PROF_Q_USUAL;
}

struct prof_profile *cli_fetch_snapshot(const char *socket,
					const struct ctl_snapshot_req *sreq,
					int timeout_ms,
					struct ctl_snapshot_reply *info)
{
	return cli_fetch_snapshot_pair(socket, sreq, timeout_ms, info, NULL);
}

struct prof_profile *cli_fetch_snapshot_pair(const char *socket,
					     const struct ctl_snapshot_req *sreq,
					     int timeout_ms,
					     struct ctl_snapshot_reply *info,
					     struct prof_profile **second)
{
	struct ctl_request req = { .type = CTL_SNAPSHOT };
	struct ctl_snapshot_reply rep;
	struct prof_profile *p;
	struct cli_reply r;
	int err = 0;

	req.u.snap = *sreq;
	if (cli_call(socket, &req, timeout_ms, &r) < 0)
		return NULL;
	if (ctl_decode_snapshot(r.payload, r.len, &rep) < 0) {
		free(r.buf);
		cli_error("hearthd sent a malformed snapshot reply.");
		return NULL;
	}
	p = store_codec_pair_unpack(rep.blob, rep.blob_len, second, &err);
	if (!p)
		cli_error("hearthd's snapshot could not be decoded (%s).", strerror(-err));
	/* The store's format keeps no question: the request says it. */
	else
		prof_meta(p)->question = snap_question(sreq->flags);
	if (p && second && *second)
		prof_meta(*second)->question = prof_meta(p)->question;
	if (info) {
		*info = rep;
		info->blob = NULL;
	}
	free(r.buf);
	return p;
}
