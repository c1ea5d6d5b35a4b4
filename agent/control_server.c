/* SPDX-License-Identifier: MIT */
/* control_server: accept, authorize, read, dispatch, reply; never block. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/control_server.h"
#include "agent/store_endian.h"

#define PEER_GROUPS_MAX 256
/* Connections accepted per dispatch: the loop has other work too. */
#define ACCEPT_BATCH 16

enum client_state { CL_READ, CL_WAIT, CL_WRITE };

struct client {
	int fd;
	uint64_t id;
	uid_t uid;            /* the peer's, from SO_PEERCRED */
	bool reserve;         /* in a status slot: status only, short deadline */
	enum client_state st;
	uint64_t deadline_ms;
	uint8_t in[CTL_HDR_SIZE + CTL_REQ_MAX];
	size_t inlen;
	size_t want;          /* bytes of the request expected so far */
	uint8_t *out;
	size_t outlen;
	size_t outoff;
	bool dead;
};

struct ctl_server {
	struct ctl_server_opts o;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd;
	struct client *cl;
	size_t ncl;
	uint64_t next_id;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void event(struct ctl_server *s, enum ctl_event ev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void event(struct ctl_server *s, enum ctl_event ev, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!s->o.on_event)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->o.on_event(s->o.arg, ev, msg);
}

/* Another live server on @path? */
static bool socket_answers(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return live;
}

static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int listen_on(struct ctl_server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
	rc = make_parent(s->path);
	if (rc)
		return rc;
	if (socket_answers(&sa))
		return -EADDRINUSE;
	unlink(s->path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		return -errno;
	old = umask(0117); /* the file is born 0660, never wider */
	rc = bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0)
		return -errno;
	if (chmod(s->path, 0660) < 0 || stat(s->path, &st) < 0)
		return -errno;
	/* Under systemd the process's group already is the access group. */
	if (s->o.gid != (gid_t)-1 && st.st_gid != s->o.gid &&
	    chown(s->path, (uid_t)-1, s->o.gid) < 0)
		return -errno;
	if (listen(s->lfd, 64) < 0)
		return -errno;
	return 0;
}

struct ctl_server *ctl_server_open(const struct ctl_server_opts *o, int *err)
{
	struct ctl_server *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->o = *o;
	s->lfd = -1;
	s->next_id = 1;
	if (!(strlen(o->path) < sizeof(s->path)) || o->path[0] != '/') {
		free(s);
		*err = -ENAMETOOLONG;
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s", o->path);
	s->cl = calloc((size_t)o->max_clients + CTL_STATUS_SLOTS, sizeof(*s->cl));
	rc = s->cl ? listen_on(s) : -ENOMEM;
	if (rc) {
		if (s->lfd >= 0) {
			close(s->lfd);
			if (rc != -EADDRINUSE)
				unlink(s->path);
		}
		free(s->cl);
		free(s);
		*err = rc;
		return NULL;
	}
	return s;
}

/* Root, or the access group as primary or supplementary group. */
static bool peer_allowed(const struct ctl_server *s, int fd, struct ucred *uc)
{
	gid_t groups[PEER_GROUPS_MAX];
	socklen_t len = sizeof(*uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len) < 0)
		return false;
	if (uc->uid == 0)
		return true;
	if (s->o.gid == (gid_t)-1)
		return false;
	if (uc->gid == s->o.gid)
		return true;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == s->o.gid)
			return true;
	return false;
}

/* Best effort: a short error reply on a socket that is about to close. */
static void send_error_now(int fd, int err, const char *msg)
{
	size_t len;
	uint8_t *b = ctl_reply_error(err, msg, &len);

	if (b && send(fd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		(void)0;
	free(b);
}

/* The most regular slots one uid may hold: half of them, so no single
 * user, root included, can keep every other one out. */
static size_t uid_share(const struct ctl_server *s)
{
	return s->o.max_clients > 1 ? (s->o.max_clients + 1) / 2 : 1;
}

/* Turns a client away at once, with an error reply it may still read. */
static void evict(struct client *c)
{
	send_error_now(c->fd, EBUSY, "hearthd is busy with other clients; try again");
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* A slot for a new client of @uid: a regular one while the uid holds
 * less than its share and one is free; else a status slot (*@reserve),
 * taken back from the uid's own client still reading in one if need be:
 * a uid flooding the socket competes only with itself there. NULL when
 * there is none. */
static struct client *take_slot(struct ctl_server *s, uid_t uid, bool *reserve)
{
	size_t regular = 0, mine = 0, spare = 0;
	struct client *own = NULL;
	bool own_busy = false;

	for (size_t i = 0; i < s->ncl; i++) {
		struct client *c = &s->cl[i];

		if (!c->reserve) {
			regular++;
			mine += c->uid == uid;
		} else {
			spare++;
			if (c->uid == uid && c->st == CL_READ && !c->dead)
				own = c;
			else if (c->uid == uid)
				own_busy = true;
		}
	}
	*reserve = !(regular < s->o.max_clients && mine < uid_share(s));
	if (!*reserve)
		return &s->cl[s->ncl++];
	if (own) {
		evict(own);
		return own;
	}
	if (own_busy || !(spare < CTL_STATUS_SLOTS))
		return NULL;
	return &s->cl[s->ncl++];
}

static void read_more(struct ctl_server *s, struct client *c);

/* Accepts one connection. False when none was waiting. */
static bool accept_one(struct ctl_server *s)
{
	struct ucred uc = { 0 };
	struct client *c;
	bool reserve;
	int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return false;
	if (!peer_allowed(s, fd, &uc)) {
		event(s, CTL_EV_REFUSED, "refused a control connection from uid %u (pid %d): not root and not in the access group",
		      (unsigned)uc.uid, (int)uc.pid);
		send_error_now(fd, EACCES, "permission denied: the control socket is for root and the hearth group");
		close(fd);
		return true;
	}
	c = take_slot(s, uc.uid, &reserve);
	if (!c) {
		event(s, CTL_EV_BUSY, "refused a control connection from uid %u: %zu clients already connected",
		      (unsigned)uc.uid, s->ncl);
		send_error_now(fd, EBUSY, "hearthd is busy with other clients; try again");
		close(fd);
		return true;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->id = s->next_id++;
	c->uid = uc.uid;
	c->reserve = reserve;
	c->st = CL_READ;
	c->want = CTL_HDR_SIZE;
	c->deadline_ms = mono_ms() + (reserve ? CTL_STATUS_READ_MS : CTL_READ_TIMEOUT_MS);
	/* A client writes its request as soon as it connects: most are
	 * answered here, on the accept path, without waiting a poll round. */
	read_more(s, c);
	return true;
}

static void drop_client(struct ctl_server *s, size_t i)
{
	close(s->cl[i].fd);
	free(s->cl[i].out);
	s->cl[i] = s->cl[--s->ncl];
}

static void set_reply(struct client *c, uint8_t *buf, size_t len)
{
	free(c->out);
	c->out = buf;
	c->outlen = buf ? len : 0;
	c->outoff = 0;
	c->st = CL_WRITE;
	c->deadline_ms = mono_ms() + CTL_WRITE_TIMEOUT_MS;
}

static void reply_error(struct client *c, int err, const char *msg)
{
	size_t len = 0;
	uint8_t *b = ctl_reply_error(err, msg, &len);

	set_reply(c, b, len);
}

/* The header arrived: check it and learn how much payload follows. */
static bool got_header(struct ctl_server *s, struct client *c)
{
	struct ctl_hdr h;
	int rc = ctl_hdr_get(c->in, CTL_REQ_MAX, &h);

	if (rc == -EMSGSIZE) {
		event(s, CTL_EV_OVERSIZED, "rejected an oversized control request (%u bytes, limit %u)",
		      (unsigned)le32_get(c->in + 8), CTL_REQ_MAX);
		reply_error(c, EMSGSIZE, "request too large");
		return false;
	}
	if (rc) {
		event(s, CTL_EV_MALFORMED, "rejected a control request: %s",
		      rc == -EPROTO ? "not the hearth protocol" : "unsupported protocol version");
		reply_error(c, -rc, rc == -EPROTO ? "not a hearth control request" :
			    "unsupported protocol version; hearth and hearthd differ");
		return false;
	}
	c->want = CTL_HDR_SIZE + h.len;
	return true;
}

static void got_request(struct ctl_server *s, struct client *c)
{
	struct ctl_request req;
	struct ctl_hdr h;
	const char *why;
	int rc;

	ctl_hdr_get(c->in, CTL_REQ_MAX, &h);
	rc = ctl_request_decode(h.type, c->in + CTL_HDR_SIZE, h.len, &req, &why);
	if (rc) {
		event(s, CTL_EV_MALFORMED, "rejected a control request: %s", why);
		reply_error(c, -rc, why);
		return;
	}
	if (c->reserve && req.type != CTL_STATUS) {
		event(s, CTL_EV_BUSY, "turned away a control request from uid %u: only status is served beyond the clients' slots",
		      (unsigned)c->uid);
		reply_error(c, EBUSY, "hearthd is busy with other clients; try again");
		return;
	}
	c->st = CL_WAIT;
	c->deadline_ms = mono_ms() + CTL_WAIT_TIMEOUT_MS;
	s->o.on_request(s->o.arg, c->id, &req);
}

static void read_more(struct ctl_server *s, struct client *c)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->in + c->inlen, c->want - c->inlen, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			if (c->inlen)
				event(s, CTL_EV_MALFORMED, "a client closed the connection in the middle of a request (%zu bytes)",
				      c->inlen);
			c->dead = true;
			return;
		}
		c->inlen += (size_t)r;
		if (c->inlen < c->want)
			continue;
		if (c->want == CTL_HDR_SIZE && !got_header(s, c))
			return;
		if (c->inlen == c->want) {
			got_request(s, c);
			return;
		}
	}
}

static void write_more(struct client *c)
{
	while (c->outoff < c->outlen) {
		ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			c->dead = true;
			return;
		}
		c->outoff += (size_t)w;
	}
	c->dead = true; /* one request per connection: done */
}

size_t ctl_server_pollfds(const struct ctl_server *s, struct pollfd *fds,
			  size_t cap)
{
	size_t n = 0;

	if (cap == 0)
		return 0;
	fds[n++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
	for (size_t i = 0; i < s->ncl && n < cap; i++) {
		const struct client *c = &s->cl[i];
		short ev = c->st == CL_READ ? POLLIN : c->st == CL_WRITE ? POLLOUT : 0;

		fds[n++] = (struct pollfd){ .fd = c->fd, .events = ev };
	}
	return n;
}

static struct client *by_fd(struct ctl_server *s, int fd)
{
	for (size_t i = 0; i < s->ncl; i++)
		if (s->cl[i].fd == fd)
			return &s->cl[i];
	return NULL;
}

/* Drops the clients that are done, gone or past their deadline. */
static void reap(struct ctl_server *s, uint64_t now_ms)
{
	for (size_t i = s->ncl; i-- > 0;) {
		struct client *c = &s->cl[i];

		if (c->fd < 0) {
			s->cl[i] = s->cl[--s->ncl];
			continue;
		}
		if (!c->dead && c->deadline_ms < now_ms) {
			event(s, CTL_EV_TIMEOUT, "dropped a control client of uid %u that %s", (unsigned)c->uid,
			      c->st == CL_READ ? "sent no complete request in time" :
			      c->st == CL_WAIT ? "was not answered in time" :
			      "did not read its reply in time");
			c->dead = true;
		}
		if (c->dead)
			drop_client(s, i);
	}
}

void ctl_server_dispatch(struct ctl_server *s, const struct pollfd *fds,
			 size_t n, uint64_t now_ms)
{
	for (size_t i = 1; i < n; i++) {
		struct client *c = by_fd(s, fds[i].fd);

		if (!c || !fds[i].revents || c->dead)
			continue;
		if (c->st == CL_READ && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
			read_more(s, c);
		else if (c->st == CL_WRITE)
			write_more(c);
		else if (fds[i].revents & (POLLHUP | POLLERR))
			c->dead = true;
		if (!c->dead && c->st == CL_WRITE)
			write_more(c);
	}
	/* Free what is done first, so the slots count only live clients. */
	reap(s, now_ms);
	if (n && (fds[0].revents & POLLIN))
		for (int k = 0; k < ACCEPT_BATCH && accept_one(s); k++)
			;
	reap(s, now_ms);
}

int ctl_server_reply(struct ctl_server *s, uint64_t client, uint8_t *buf,
		     size_t len)
{
	for (size_t i = 0; i < s->ncl; i++) {
		struct client *c = &s->cl[i];

		if (c->id != client || c->dead)
			continue;
		if (!buf) {
			reply_error(c, ENOMEM, "hearthd ran out of memory");
			buf = c->out;
			len = c->outlen;
			c->out = NULL;
		}
		set_reply(c, buf, len);
		write_more(c);
		return 0;
	}
	free(buf);
	return -ENOENT;
}

size_t ctl_server_clients(const struct ctl_server *s)
{
	return s->ncl;
}

bool ctl_server_has_client(const struct ctl_server *s, uint64_t client)
{
	for (size_t i = 0; i < s->ncl; i++)
		if (s->cl[i].id == client && !s->cl[i].dead)
			return true;
	return false;
}

void ctl_server_close(struct ctl_server *s)
{
	if (!s)
		return;
	while (s->ncl)
		drop_client(s, s->ncl - 1);
	if (s->lfd >= 0) {
		close(s->lfd);
		unlink(s->path);
	}
	free(s->cl);
	free(s);
}
