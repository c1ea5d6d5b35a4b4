/* SPDX-License-Identifier: MIT */
/* push: the push thread, reading windows after its cursor from the store. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agent/push.h"
#include "agent/push_auth.h"
#include "agent/push_cursor.h"
#include "agent/push_http.h"
#include "agent/push_pins.h"
#include "agent/push_request.h"
#include "agent/push_split.h"
#include "agent/store.h"
#include "agent/store_codec.h"
#include "agent/trusted_dir.h"
#include "profile/pprof.h"

#define NS_PER_S 1000000000ull
#define BACKOFF_FIRST_NS NS_PER_S
#define BACKOFF_MAX_NS (60 * NS_PER_S)
/* The push thread yields to sampling when the CPU is contended. */
#define PUSH_NICE 10
/* Processes whose service is remembered (pid and comm). */
#define SERVICES_MAX 8192
#define HOST_LABELS 2 /* hostname, hearth_version */

struct push {
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	volatile int stop;
	uint64_t newest_end_ns;    /* under mu */
	uint64_t mark_ns;          /* under mu: where the cursor stands */
	struct push_stats st;      /* under mu */

	push_log_fn log;
	void *log_arg;
	char state_dir[CONFIG_PATH_MAX];
	int dirfd;
	char url[CONFIG_PUSH_URL_MAX];
	uint32_t hz;
	uint64_t window_ns;
	char hostname[CONFIG_PUSH_LABEL_LEN];
	struct push_label labels[CONFIG_PUSH_LABELS_MAX + HOST_LABELS + 1];
	size_t nlabels;
	struct config_push_label statics[CONFIG_PUSH_LABELS_MAX];

	/* The thread's own. */
	struct push_cursor cur;
	struct push_http *http;
	struct push_services *services;
	struct push_pins pins;     /* the services the window under way was cut by */
	bool pinned;               /* resuming: pins holds them, read back */
	bool pins_failed;          /* writing them failed (logged once) */
	uint64_t rng;
	bool failing;              /* in an outage (logged once) */
	bool rejected_seen[100];   /* 4xx statuses logged, by status - 400 */
	char body_url[PUSH_URL_MAX];
};

static void logf_(struct push *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct push *p, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p->log(p->log_arg, line);
}

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: jitter needs no more. */
static uint64_t rnd(struct push *p)
{
	p->rng ^= p->rng >> 12;
	p->rng ^= p->rng << 25;
	p->rng ^= p->rng >> 27;
	return p->rng * 0x2545f4914f6cdd1dull;
}

/* Sleeps up to @ns, or until stop. Returns false when stopping. */
static bool nap(struct push *p, uint64_t ns)
{
	uint64_t until = now_ns(CLOCK_MONOTONIC) + ns;
	struct timespec ts = { .tv_sec = (time_t)(until / NS_PER_S),
			       .tv_nsec = (long)(until % NS_PER_S) };

	pthread_mutex_lock(&p->mu);
	while (!p->stop && now_ns(CLOCK_MONOTONIC) < until)
		if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&p->mu);
	return !p->stop;
}

/* Waits for a window newer than the cursor (or @max_ns). */
static void wait_window(struct push *p, uint64_t max_ns)
{
	uint64_t until = now_ns(CLOCK_MONOTONIC) + max_ns;
	struct timespec ts = { .tv_sec = (time_t)(until / NS_PER_S),
			       .tv_nsec = (long)(until % NS_PER_S) };

	pthread_mutex_lock(&p->mu);
	while (!p->stop && p->newest_end_ns <= p->cur.end_ns)
		if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&p->mu);
}

/* Under mu. */
static void update_lag(struct push *p)
{
	uint64_t newest = p->newest_end_ns, end = p->mark_ns;

	p->st.lag_ns = newest > end ? newest - end : 0;
	p->st.pending = p->window_ns ? (p->st.lag_ns + p->window_ns / 2) / p->window_ns : 0;
	if (p->st.lag_ns && !p->st.pending)
		p->st.pending = 1;
}

/* A finished window is synced to disk; a part of one is only renamed
 * into place (one sync per window, not one per request). */
static int save_cursor(struct push *p)
{
	const char *name = p->cur.done ? PUSH_CURSOR_FILE : PUSH_CURSOR_PART_FILE;
	int rc = push_cursor_write(p->dirfd, name, &p->cur, p->cur.done);

	if (rc)
		logf_(p, "push: cannot write %s/%s (%s); a restart may send some windows again",
		      p->state_dir, name, strerror(-rc));
	pthread_mutex_lock(&p->mu);
	p->mark_ns = p->cur.done ? p->cur.end_ns : p->cur.start_ns;
	update_lag(p);
	pthread_mutex_unlock(&p->mu);
	return rc;
}

/* ---- finding the next window ------------------------------------------ */

struct next_ctx {
	const struct push_cursor *cur;
	uint64_t start_ns, end_ns;
	void *payload;
	size_t len;
	int err;
};

static int pick_next(uint64_t start, uint64_t end, const void *payload, size_t len, void *arg)
{
	struct next_ctx *n = arg;
	bool same = start == n->cur->start_ns && end == n->cur->end_ns;

	/* Windows follow each other: the next one ends later. (A wall clock
	 * stepped back makes windows that end earlier; those are passed.) */
	if (end <= n->cur->end_ns && !(same && !n->cur->done))
		return 0;
	if (end == start)
		return 0;
	n->payload = malloc(len ? len : 1);
	if (!n->payload) {
		n->err = -ENOMEM;
		return 1;
	}
	memcpy(n->payload, payload, len);
	n->len = len;
	n->start_ns = start;
	n->end_ns = end;
	return 1;
}

/* ---- one window --------------------------------------------------------- */

/* The service of a process of the window being cut: as pinned when the
 * window was cut before, else from /proc, and pinned. */
static const struct push_service *service_of(void *arg, uint32_t pid, const char *comm,
					     size_t len)
{
	struct push *p = arg;
	const struct push_service *svc = p->pinned ? push_pins_find(&p->pins, pid, comm, len) : NULL;

	if (svc)
		return svc;
	svc = push_services_get(p->services, "/proc", pid, comm, len);
	/* Out of memory, the pin is missing: only a resume could differ. */
	(void)push_pins_add(&p->pins, pid, comm, len, svc);
	return svc;
}

/* A window cut before (by this run, or by the one before a restart,
 * read at start) is cut by the same services again; another starts
 * afresh. */
static void pin_services(struct push *p, uint64_t start, uint64_t end)
{
	p->pinned = p->pins.n && p->pins.start_ns == start && p->pins.end_ns == end;
	if (!p->pinned)
		push_pins_clear(&p->pins);
}

static void save_pins(struct push *p, uint64_t start, uint64_t end)
{
	int rc;

	p->pins.start_ns = start;
	p->pins.end_ns = end;
	rc = push_pins_write(p->dirfd, &p->pins);
	if (rc && !p->pins_failed)
		logf_(p, "push: cannot write %s/%s (%s); a window resumed after a restart may be cut differently",
		      p->state_dir, PUSH_PINS_FILE, strerror(-rc));
	p->pins_failed = rc != 0;
}

static bool permanent(long status)
{
	return status >= 400 && status < 500 && status != 408 && status != 429;
}

/* Logs the first rejection of each 4xx status; the rest are counted. */
static void log_rejected(struct push *p, const struct push_part *part,
			 const struct push_http_result *r)
{
	long k = r->status - 400;

	if (k < 0 || k >= 100 || p->rejected_seen[k])
		return;
	p->rejected_seen[k] = true;
	logf_(p, "push: the backend refused %s's %s profile with HTTP %ld%s%s; it is skipped and counted, not retried (this status is logged once)",
	      part->svc.name, part->kind == PUSH_GROWTH ? "growth" :
	      part->kind == PUSH_OFFCPU ? "off-CPU" : "on-CPU", r->status,
	      r->detail[0] ? ": " : "", r->detail);
}

static void note_failure(struct push *p, const struct push_http_result *r)
{
	pthread_mutex_lock(&p->mu);
	p->st.retries++;
	p->st.last_err = r->err;
	p->st.last_status = (uint32_t)r->status;
	p->st.last_err_ns = now_ns(CLOCK_REALTIME);
	pthread_mutex_unlock(&p->mu);
	if (p->failing)
		return;
	p->failing = true;
	if (r->err == PUSH_ERR_HTTP)
		logf_(p, "push to %s failing: HTTP %ld%s%s; retrying with back-off, windows wait in the store",
		      p->url, r->status, r->detail[0] ? ": " : "", r->detail);
	else if (r->err == PUSH_ERR_BLOCKED)
		logf_(p, "push to %s failing: the connection was refused on this host (%s): with systemd, install the hearthd-push.conf drop-in and list the backend in IPAddressAllow=; retrying",
		      p->url, r->detail);
	else
		logf_(p, "push to %s failing: %s; retrying with back-off, windows wait in the store",
		      p->url, r->detail);
}

/* Sends one part until it is answered for good. Returns 0 when taken or
 * rejected, -EINTR when stopping. */
static int send_part(struct push *p, const struct push_part *part, uint64_t start, uint64_t end)
{
	struct push_request rq = {
		.base_url = p->url, .service = part->svc.name, .labels = p->labels,
		.nlabels = p->nlabels, .start_ns = start, .end_ns = end,
		.kind = part->kind, .hz = p->hz,
	};
	struct push_label with[CONFIG_PUSH_LABELS_MAX + HOST_LABELS + 2];
	struct push_http_result r;
	uint64_t backoff = BACKOFF_FIRST_NS;
	void *body = NULL;
	size_t len = 0;
	int rc;

	if (part->svc.container[0]) {
		/* container_id first: a static label of that name wins. */
		with[0] = (struct push_label){ "container_id", part->svc.container };
		memcpy(with + 1, p->labels, p->nlabels * sizeof(*with));
		rq.labels = with;
		rq.nlabels = p->nlabels + 1;
	}
	if (!push_request_url(&rq, p->body_url, sizeof(p->body_url)))
		return 0; /* cannot be named: nothing a retry changes */
	if (part->kind == PUSH_GROWTH) {
		/* (the store keeps no question: the part is growth's) */
		prof_meta(part->prof)->question = PROF_Q_GROWTH;
		rc = prof_pprof_encode_pair(part->prof, part->second, &body, &len);
	} else {
		rc = prof_pprof_encode(part->prof, &body, &len);
	}
	if (rc == -EIO) {
		logf_(p, "push: %s's profile could not be compressed; it is skipped", part->svc.name);
		return 0;
	}
	if (rc)
		return rc;
	while (!p->stop) {
		if (push_http_post(p->http, p->body_url, body, len, &r) == 0) {
			if (p->failing)
				logf_(p, "push to %s works again", p->url);
			p->failing = false;
			pthread_mutex_lock(&p->mu);
			p->st.requests++;
			p->st.bytes += len;
			pthread_mutex_unlock(&p->mu);
			break;
		}
		if (r.err == PUSH_ERR_HTTP && permanent(r.status)) {
			log_rejected(p, part, &r);
			pthread_mutex_lock(&p->mu);
			p->st.rejected++;
			p->st.last_err = r.err;
			p->st.last_status = (uint32_t)r.status;
			p->st.last_err_ns = now_ns(CLOCK_REALTIME);
			pthread_mutex_unlock(&p->mu);
			break;
		}
		note_failure(p, &r);
		/* Full jitter over the upper half: hosts that lost the same
		 * backend do not all come back at once. */
		nap(p, backoff / 2 + rnd(p) % (backoff / 2 + 1));
		backoff = backoff < BACKOFF_MAX_NS / 2 ? backoff * 2 : BACKOFF_MAX_NS;
	}
	free(body);
	return p->stop ? -EINTR : 0;
}

/* Sends every part of window [start, end) after the cursor's. */
static int push_window(struct push *p, const void *blob, size_t len, uint64_t start,
		       uint64_t end)
{
	struct store_window w;
	struct push_parts parts = { 0 };
	bool resume = !p->cur.done && p->cur.start_ns == start && p->cur.end_ns == end;
	int rc = store_codec_window_unpack(blob, len, &w);

	if (rc == -EBADMSG) {
		logf_(p, "push: a stored window (%llu) does not decode; it is skipped",
		      (unsigned long long)start);
		rc = 0;
		goto done;
	}
	if (rc)
		return rc;
	pin_services(p, start, end);
	if (w.oncpu)
		rc = push_split(w.oncpu, PUSH_ONCPU, service_of, p, &parts);
	if (!rc && w.offcpu)
		rc = push_split(w.offcpu, PUSH_OFFCPU, service_of, p, &parts);
	if (!rc && w.growth_req)
		rc = push_split_pair(w.growth_req, w.growth_bytes, PUSH_GROWTH, service_of, p,
				     &parts);
	store_window_clear(&w);
	/* Before the first part goes: a crash from now on resumes this
	 * window, or sends its part in flight again, under the same names. */
	if (!rc && !p->pinned && parts.n)
		save_pins(p, start, end);
	for (size_t i = 0; !rc && i < parts.n; i++) {
		if (resume && strcmp(parts.v[i].key, p->cur.after) <= 0)
			continue;
		rc = send_part(p, &parts.v[i], start, end);
		if (rc)
			break;
		p->cur = (struct push_cursor){ .start_ns = start, .end_ns = end,
					       .done = i + 1 == parts.n };
		snprintf(p->cur.after, sizeof(p->cur.after), "%s",
			 p->cur.done ? "" : parts.v[i].key);
		save_cursor(p);
	}
	push_parts_free(&parts);
	if (rc)
		return rc;
done:
	if (!(p->cur.done && p->cur.start_ns == start && p->cur.end_ns == end)) {
		p->cur = (struct push_cursor){ .start_ns = start, .end_ns = end, .done = true };
		save_cursor(p);
	}
	pthread_mutex_lock(&p->mu);
	p->st.windows++;
	update_lag(p);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

static void *run(void *arg)
{
	struct push *p = arg;

	setpriority(PRIO_PROCESS, (id_t)gettid(), PUSH_NICE);
	while (!p->stop) {
		struct next_ctx n = { .cur = &p->cur };
		int rc = store_scan(p->state_dir, p->cur.done ? p->cur.end_ns : p->cur.start_ns,
				    0, pick_next, &n, NULL);

		if (rc < 0 || n.err) {
			logf_(p, "push: cannot read the store in %s (%s); trying again",
			      p->state_dir, strerror(rc < 0 ? -rc : -n.err));
			nap(p, 10 * NS_PER_S);
			continue;
		}
		if (!n.payload) {
			wait_window(p, p->window_ns + NS_PER_S);
			continue;
		}
		rc = push_window(p, n.payload, n.len, n.start_ns, n.end_ns);
		free(n.payload);
		if (rc == -ENOMEM) {
			logf_(p, "push: out of memory sending a window; trying again");
			nap(p, 10 * NS_PER_S);
		}
	}
	return NULL;
}

/* ---- start and stop ----------------------------------------------------- */

static int first_cursor(struct push *p, char *err, size_t errlen)
{
	int rc = push_cursor_load(p->dirfd, &p->cur);

	if (rc == 0) {
		p->mark_ns = p->cur.done ? p->cur.end_ns : p->cur.start_ns;
		/* The window under way at a crash is cut as it was then. */
		if (push_pins_read(p->dirfd, &p->pins) != 0)
			push_pins_clear(&p->pins);
		return 0;
	}
	if (rc == -EPERM) {
		snprintf(err, errlen, "refusing %s/%s: %s", p->state_dir, PUSH_CURSOR_FILE,
			 TRUSTED_DIR_RULE);
		return rc;
	}
	if (rc != -ENOENT && rc != -EBADMSG) {
		snprintf(err, errlen, "cannot read %s/%s (%s)", p->state_dir, PUSH_CURSOR_FILE,
			 strerror(-rc));
		return rc;
	}
	if (rc == -EBADMSG)
		logf_(p, "push: %s/%s is damaged; pushing from the windows stored from now on",
		      p->state_dir, PUSH_CURSOR_FILE);
	/* No cursor yet: the history already stored is not sent. */
	p->cur = (struct push_cursor){ .start_ns = now_ns(CLOCK_REALTIME), .done = true };
	p->cur.end_ns = p->cur.start_ns;
	rc = push_cursor_write(p->dirfd, PUSH_CURSOR_FILE, &p->cur, true);
	p->mark_ns = p->cur.end_ns;
	if (rc)
		snprintf(err, errlen, "cannot write %s/%s (%s)", p->state_dir, PUSH_CURSOR_FILE,
			 strerror(-rc));
	return rc;
}

static void set_labels(struct push *p, const struct hearthd_config *c)
{
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	push_request_clean_value(host[0] ? host : "unknown", p->hostname, sizeof(p->hostname));
	p->labels[p->nlabels++] = (struct push_label){ "hostname", p->hostname };
	p->labels[p->nlabels++] = (struct push_label){ "hearth_version", HEARTH_VERSION };
	memcpy(p->statics, c->push_labels, sizeof(p->statics));
	for (size_t i = 0; i < c->npush_labels; i++)
		p->labels[p->nlabels++] = (struct push_label){ p->statics[i].key,
							       p->statics[i].value };
}

static int open_parts(struct push *p, const struct hearthd_config *c, char *err, size_t errlen)
{
	char auth[PUSH_AUTH_MAX] = "";
	struct push_http_opts ho = { .tenant = c->push_tenant, .timeout_ns = c->push_timeout_ns,
				     .stop = &p->stop };
	int rc;

	if (c->push_auth_file[0]) {
		rc = push_auth_read(c->push_auth_file, auth);
		if (rc == -EPERM)
			snprintf(err, errlen, "refusing the push auth file %s: %s",
				 c->push_auth_file, PUSH_AUTH_RULE);
		else if (rc == -EINVAL)
			snprintf(err, errlen, "the push auth file %s holds no credentials on its first line",
				 c->push_auth_file);
		else if (rc)
			snprintf(err, errlen, "cannot read the push auth file %s (%s)",
				 c->push_auth_file, strerror(-rc));
		if (rc)
			return rc;
		ho.auth = auth;
	}
	p->http = push_http_new(&ho);
	explicit_bzero(auth, sizeof(auth));
	p->services = push_services_new(SERVICES_MAX);
	if (!p->http || !p->services) {
		snprintf(err, errlen, "cannot set up the push (out of memory)");
		return -ENOMEM;
	}
	p->dirfd = trusted_dir_open(p->state_dir, true);
	if (p->dirfd < 0) {
		rc = p->dirfd;
		snprintf(err, errlen, rc == -EPERM ? "refusing the state directory %s: %s"
						   : "cannot open the state directory %s (%s)",
			 p->state_dir, rc == -EPERM ? TRUSTED_DIR_RULE : strerror(-rc));
		return rc;
	}
	return first_cursor(p, err, errlen);
}

struct push *push_start(const struct hearthd_config *c, push_log_fn log, void *log_arg,
			char *err, size_t errlen)
{
	struct push *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	sigset_t all, old;

	if (!p) {
		snprintf(err, errlen, "cannot set up the push (out of memory)");
		return NULL;
	}
	p->dirfd = -1;
	p->log = log;
	p->log_arg = log_arg;
	memcpy(p->state_dir, c->state_dir, sizeof(p->state_dir));
	memcpy(p->url, c->push_url, sizeof(p->url));
	p->hz = c->frequency;
	p->window_ns = c->window_ns;
	pthread_mutex_init(&p->mu, NULL);
	/* nap() and wait_window() count in CLOCK_MONOTONIC: a wall clock
	 * stepped does not stretch or skip a back-off. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (getrandom(&p->rng, sizeof(p->rng), 0) != sizeof(p->rng) || !p->rng)
		p->rng = now_ns(CLOCK_MONOTONIC) | 1;
	set_labels(p, c);
	if (push_http_global_init() < 0) {
		snprintf(err, errlen, "cannot initialise libcurl");
		free(p);
		return NULL;
	}
	if (open_parts(p, c, err, errlen) < 0)
		goto fail;
	/* Every signal stays with the main loop's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	p->started = pthread_create(&p->thread, NULL, run, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Named, so that top -H and /proc/PID/task show what push costs. */
	if (p->started)
		pthread_setname_np(p->thread, "hearthd-push");
	if (!p->started) {
		snprintf(err, errlen, "cannot start the push thread");
		goto fail;
	}
	return p;
fail:
	push_stop(p);
	return NULL;
}

void push_notify(struct push *p, uint64_t end_ns)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	if (end_ns > p->newest_end_ns)
		p->newest_end_ns = end_ns;
	update_lag(p);
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void push_get_stats(struct push *p, struct push_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	pthread_mutex_unlock(&p->mu);
}

void push_stop(struct push *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->thread, NULL);
	push_http_free(p->http);
	push_services_free(p->services);
	push_pins_free(&p->pins);
	if (p->dirfd >= 0)
		close(p->dirfd);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	push_http_global_cleanup();
	free(p);
}
