/* SPDX-License-Identifier: MIT */
/* The hearth command's side of hearthd's control socket, and the time
 * arguments its requests take. */
#ifndef HEARTH_CLI_CLIENT_H
#define HEARTH_CLI_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "agent/control_proto.h"

#define CLI_DEFAULT_SOCKET "/run/hearth/control.sock"

struct cli_reply {
	uint16_t type;      /* the reply's type (request type | CTL_REPLY) */
	uint8_t *buf;       /* header + payload; free() */
	const uint8_t *payload;
	size_t len;         /* payload length */
};

/* Sends @req to hearthd at @socket and waits up to @timeout_ms for the
 * reply. Returns 0 with the reply in @r; on any failure (cannot connect,
 * refused, an error reply, a malformed reply, timeout) prints one sentence
 * with cli_error() and returns -1. */
int cli_call(const char *socket, const struct ctl_request *req, int timeout_ms,
	     struct cli_reply *r);

/* Parses a point in time: "now", "@EPOCH[.frac]", "HH:MM[:SS]" (today,
 * local time), "YYYY-MM-DD[ T]HH:MM[:SS]" (local time), or "-DURATION"
 * (that long before @now_ns). Returns 0 with CLOCK_REALTIME ns in *@ns, or
 * -1 when @s is none of these. */
int cli_parse_time(const char *s, uint64_t now_ns, uint64_t *ns);

/* Formats @ns (CLOCK_REALTIME) as local "YYYY-MM-DD HH:MM:SS" into @buf. */
void cli_format_time(uint64_t ns, char *buf, size_t len);

/* CLOCK_REALTIME now, in ns. */
uint64_t cli_now_ns(void);

struct prof_profile;

/* Asks hearthd for the snapshot @req describes and decodes it into a new
 * profile (prof_free()). @timeout_ms bounds the wait. Fills *@info (may be
 * NULL) with the reply's range and counts. Returns NULL after reporting. */
struct prof_profile *cli_fetch_snapshot(const char *socket,
					const struct ctl_snapshot_req *req,
					int timeout_ms,
					struct ctl_snapshot_reply *info);

/* cli_fetch_snapshot() of a question of memory: its second values (the
 * bytes beside the requests for more memory, the objects beside the
 * bytes allocated or held) in *@second, NULL when hearthd sent none. */
struct prof_profile *cli_fetch_snapshot_pair(const char *socket,
					     const struct ctl_snapshot_req *req,
					     int timeout_ms,
					     struct ctl_snapshot_reply *info,
					     struct prof_profile **second);

#endif
