/* SPDX-License-Identifier: MIT */
/* push_http: POSTs over libcurl, one easy handle kept alive. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/push_http.h"

struct push_http {
	CURL *curl;
	struct curl_slist *headers;
	char *auth;               /* owned copy, wiped on free */
	const volatile int *stop;
	uint64_t timeout_ns;
	char body[160];           /* the start of the reply */
	size_t body_len;
};

int push_http_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

void push_http_global_cleanup(void)
{
	curl_global_cleanup();
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct push_http *h = arg;
	size_t len = size * n, room = sizeof(h->body) - 1 - h->body_len;

	memcpy(h->body + h->body_len, p, len < room ? len : room);
	h->body_len += len < room ? len : room;
	return len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct push_http *h = arg;

	(void)a, (void)b, (void)c, (void)d;
	return h->stop && *h->stop ? 1 : 0;
}

static int set_auth(struct push_http *h)
{
	const char *colon;

	if (!h->auth || !h->auth[0])
		return 0;
	colon = strchr(h->auth, ':');
	if (colon)
		return curl_easy_setopt(h->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) ||
		       curl_easy_setopt(h->curl, CURLOPT_USERPWD, h->auth);
	return curl_easy_setopt(h->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER) ||
	       curl_easy_setopt(h->curl, CURLOPT_XOAUTH2_BEARER, h->auth);
}

static int setup(struct push_http *h, const struct push_http_opts *o)
{
	char line[256];
	long ms = (long)(o->timeout_ns / 1000000);
	struct curl_slist *l;

	l = curl_slist_append(NULL, "Content-Type: application/octet-stream");
	if (l)
		h->headers = l;
	if (l && o->tenant && o->tenant[0]) {
		snprintf(line, sizeof(line), "X-Scope-OrgID: %s", o->tenant);
		l = curl_slist_append(h->headers, line);
	}
	/* No "Expect: 100-continue": one round trip less per request. */
	if (l)
		l = curl_slist_append(h->headers, "Expect:");
	if (!l)
		return -ENOMEM;
	h->headers = l;
	if (curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers) ||
	    curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "hearth/" HEARTH_VERSION) ||
	    curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https") ||
	    curl_easy_setopt(h->curl, CURLOPT_FOLLOWLOCATION, 0L) ||
	    curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L) ||
	    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, ms) ||
	    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, ms < 10000 ? ms : 10000L) ||
	    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body) ||
	    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h) ||
	    curl_easy_setopt(h->curl, CURLOPT_XFERINFOFUNCTION, on_progress) ||
	    curl_easy_setopt(h->curl, CURLOPT_XFERINFODATA, h) ||
	    curl_easy_setopt(h->curl, CURLOPT_NOPROGRESS, 0L) ||
	    curl_easy_setopt(h->curl, CURLOPT_POST, 1L) || set_auth(h))
		return -EINVAL;
	return 0;
}

struct push_http *push_http_new(const struct push_http_opts *o)
{
	struct push_http *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->stop = o->stop;
	h->timeout_ns = o->timeout_ns;
	h->curl = curl_easy_init();
	if (o->auth && !(h->auth = strdup(o->auth)))
		goto err;
	if (!h->curl || setup(h, o) < 0)
		goto err;
	return h;
err:
	push_http_free(h);
	return NULL;
}

void push_http_free(struct push_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	if (h->auth) {
		explicit_bzero(h->auth, strlen(h->auth));
		free(h->auth);
	}
	free(h);
}

static enum push_err classify(CURLcode rc, long os_errno)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return PUSH_ERR_TIMEOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return PUSH_ERR_DNS;
	case CURLE_COULDNT_CONNECT:
		return os_errno == EPERM || os_errno == EACCES ? PUSH_ERR_BLOCKED
							      : PUSH_ERR_CONNECT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		return PUSH_ERR_TLS;
	default:
		return PUSH_ERR_OTHER;
	}
}

/* The reply's start as one printable clause. */
static void body_detail(struct push_http *h, char *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < h->body_len && n + 1 < cap; i++) {
		char ch = h->body[i];

		out[n++] = (ch < ' ' || ch > '~') ? ' ' : ch;
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = 0;
}

/* A reply that echoes the credentials (or the password of a pair) must
 * not carry them into a log line. */
static void redact(const struct push_http *h, char *s)
{
	const char *secrets[2] = { h->auth, h->auth ? strchr(h->auth, ':') : NULL };

	if (secrets[1])
		secrets[1]++;
	for (int i = 0; i < 2; i++) {
		if (secrets[i] && strlen(secrets[i]) >= 4 && strstr(s, secrets[i])) {
			snprintf(s, sizeof(((struct push_http_result *)0)->detail),
				 "(the reply repeats the credentials; not shown)");
			return;
		}
	}
}

int push_http_post(struct push_http *h, const char *url, const void *body,
		   size_t len, struct push_http_result *r)
{
	CURLcode rc;
	long os_errno = 0;

	memset(r, 0, sizeof(*r));
	h->body_len = 0;
	if (curl_easy_setopt(h->curl, CURLOPT_URL, url) ||
	    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body) ||
	    curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len)) {
		r->err = PUSH_ERR_OTHER;
		snprintf(r->detail, sizeof(r->detail), "the request could not be set up");
		return -1;
	}
	rc = curl_easy_perform(h->curl);
	if (rc != CURLE_OK) {
		curl_easy_getinfo(h->curl, CURLINFO_OS_ERRNO, &os_errno);
		r->err = classify(rc, os_errno);
		snprintf(r->detail, sizeof(r->detail), "%s", curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status >= 200 && r->status < 300)
		return 0;
	r->err = PUSH_ERR_HTTP;
	body_detail(h, r->detail, sizeof(r->detail));
	redact(h, r->detail);
	return -1;
}
