/* SPDX-License-Identifier: MIT */
/*
 * push_http: one HTTP(S) client for the push thread, on libcurl: POSTs a
 * body and tells how it went. The connection is kept between requests;
 * TLS checks the server against the system's CA certificates; redirects
 * are not followed; the credentials (a bearer token, or user:password for
 * Basic) go only in the Authorization header and are never in an error.
 *
 * curl_global_init() must have run (push_http_global_init(), from the
 * main thread before any other thread starts). Nothing here prints.
 */
#ifndef HEARTH_PUSH_HTTP_H
#define HEARTH_PUSH_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why a request failed, for `hearth status` (u32 on the wire). */
enum push_err {
	PUSH_ERR_NONE = 0,
	PUSH_ERR_HTTP = 1,        /* an HTTP status other than 2xx */
	PUSH_ERR_CONNECT = 2,     /* refused or unreachable */
	PUSH_ERR_TIMEOUT = 3,     /* push_timeout passed */
	PUSH_ERR_DNS = 4,         /* the host name did not resolve */
	PUSH_ERR_TLS = 5,         /* handshake or certificate */
	PUSH_ERR_BLOCKED = 6,     /* the socket was refused locally (EPERM:
				   * systemd's IPAddressDeny= or a firewall) */
	PUSH_ERR_OTHER = 7,
};

struct push_http_opts {
	const char *auth;         /* "token" (Bearer) or "user:password", NULL = none */
	const char *tenant;       /* X-Scope-OrgID, NULL or "" = none */
	uint64_t timeout_ns;      /* the whole request */
	const volatile int *stop; /* non-zero aborts a request in flight */
};

struct push_http_result {
	enum push_err err;
	long status;              /* HTTP status, 0 when none came */
	char detail[200];         /* one clause: curl's reason, or the
				   * start of the reply's body (printable) */
};

struct push_http;

/* Initialises libcurl for the process (call before threads start), and
 * releases it. Return 0 / -EIO. */
int push_http_global_init(void);
void push_http_global_cleanup(void);

/* A client. NULL when out of memory. The options are copied. */
struct push_http *push_http_new(const struct push_http_opts *o);

/* Frees @h. Accepts NULL. */
void push_http_free(struct push_http *h);

/* POSTs @body (@len bytes, Content-Type application/octet-stream) to
 * @url and fills @r. Returns 0 for a 2xx answer, else -1 (see @r). */
int push_http_post(struct push_http *h, const char *url, const void *body,
		   size_t len, struct push_http_result *r);

#endif /* HEARTH_PUSH_HTTP_H */
