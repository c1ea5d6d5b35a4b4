/* SPDX-License-Identifier: MIT */
/*
 * control_server: hearthd's control socket. Non-blocking and driven by the
 * daemon's poll loop, so clients never hold up sampling.
 *
 * The socket file gets mode 0660 and the access group; every connection's
 * peer is checked with SO_PEERCRED (and SO_PEERGROUPS): root, or a member
 * of the group, else it gets an error reply and is closed. One request per
 * connection: the server reads a header and a payload within
 * CTL_READ_TIMEOUT_MS, validates them with control_proto, hands good
 * requests to the daemon's callback, and writes the reply the daemon gives
 * (now or later, e.g. for a snapshot of the next seconds). Problems are
 * reported through an event callback; nothing here prints.
 *
 * No client can lock the others out: one uid (root included) holds at
 * most half of the max_clients slots, and beyond them CTL_STATUS_SLOTS
 * more serve status requests only, one per uid at a time, with a shorter
 * read deadline (a newer connection of the same uid takes the slot over
 * from one still sending). A request already there when its connection is
 * accepted is answered on the accept path.
 */
#ifndef HEARTH_CONTROL_SERVER_H
#define HEARTH_CONTROL_SERVER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/control_proto.h"

/* A request is at most CTL_HDR_SIZE + CTL_REQ_MAX bytes, written at once:
 * a client still sending after this is dropped. */
#define CTL_READ_TIMEOUT_MS 2000
#define CTL_WRITE_TIMEOUT_MS 60000
/* Slots for status requests beyond max_clients, and their read deadline. */
#define CTL_STATUS_SLOTS 4
#define CTL_STATUS_READ_MS 1000
/* A request the daemon has not answered by then is given up: the longest
 * --next (CTL_NEXT_MAX_NS) plus the longest window (1 h) and 5 minutes. */
#define CTL_WAIT_TIMEOUT_MS (75u * 60 * 1000)

enum ctl_event {
	CTL_EV_REFUSED = 0,  /* peer is neither root nor in the group */
	CTL_EV_MALFORMED,    /* bad header or payload */
	CTL_EV_OVERSIZED,    /* longer than CTL_REQ_MAX */
	CTL_EV_TIMEOUT,      /* incomplete request or stuck reader */
	CTL_EV_BUSY,         /* too many clients, or of one uid */
	CTL_EV_COUNT
};

/* A request from client @client (an id, never reused). The daemon answers
 * with ctl_server_reply(), now or later. */
typedef void (*ctl_request_fn)(void *arg, uint64_t client,
			       const struct ctl_request *req);
/* A problem worth logging: @detail is one sentence, valid during the call. */
typedef void (*ctl_event_fn)(void *arg, enum ctl_event ev, const char *detail);

struct ctl_server_opts {
	const char *path;
	gid_t gid;              /* access group; (gid_t)-1 = root only */
	unsigned max_clients;   /* regular slots; status has CTL_STATUS_SLOTS more */
	ctl_request_fn on_request;
	ctl_event_fn on_event;
	void *arg;
};

struct ctl_server;

/* Creates the socket (and its directory, mode 0755, when missing) and
 * listens. Refuses to replace a socket another process still answers on.
 * Returns NULL with a negative errno in *@err. */
struct ctl_server *ctl_server_open(const struct ctl_server_opts *o, int *err);

/* Fills @fds (at most @cap) with what to poll: the listener first, then
 * clients. Returns the count. */
size_t ctl_server_pollfds(const struct ctl_server *s, struct pollfd *fds,
			  size_t cap);

/* Handles what poll() reported in @fds[0..n) (as filled above) and expires
 * clients past their deadlines (@now_ms, CLOCK_MONOTONIC). */
void ctl_server_dispatch(struct ctl_server *s, const struct pollfd *fds,
			 size_t n, uint64_t now_ms);

/* Sends @buf (a reply built by control_proto; ownership passes to the
 * server) to @client. Returns 0, or -ENOENT when the client is gone (the
 * buffer is freed then). */
int ctl_server_reply(struct ctl_server *s, uint64_t client, uint8_t *buf,
		     size_t len);

/* Connected clients, in status slots too. */
size_t ctl_server_clients(const struct ctl_server *s);

/* Whether @client is still connected (a reply to it may still arrive). */
bool ctl_server_has_client(const struct ctl_server *s, uint64_t client);

/* Closes every client and the listener and removes the socket file.
 * Accepts NULL. */
void ctl_server_close(struct ctl_server *s);

#endif /* HEARTH_CONTROL_SERVER_H */
