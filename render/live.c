/* SPDX-License-Identifier: MIT */
/* The live data source: a thread that polls hearthd through a callback
 * and hands each new window's profile (with its model) to the window. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "render/live.h"

struct rd_live {
	rd_live_fetch_fn fetch;
	void *ctx;
	uint64_t last_ns;
	rd_live_wake_fn wake;
	void *wake_arg;
	pthread_t thread;
	int running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Under mu. */
	int stop, paused, failing;
	uint64_t window_ns;
	struct prof_profile *p; /* waiting to be taken */
	struct rd_model *m;
	uint64_t from_ns, to_ns, arrived_ns;
	uint64_t shown_from, shown_to; /* of the data last taken */
	struct prof_profile *dead_p;   /* discarded, to be freed here */
	struct rd_model *dead_m;
};

uint64_t rd_live_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct rd_live *rd_live_new(rd_live_fetch_fn fetch, void *ctx,
			    uint64_t last_ns)
{
	struct rd_live *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;

	if (!l)
		return NULL;
	l->fetch = fetch;
	l->ctx = ctx;
	l->last_ns = last_ns;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	return l;
}

/* Waits up to @ns or until woken; called with mu held. */
static void nap(struct rd_live *l, uint64_t ns)
{
	uint64_t t = rd_live_mono_ns() + ns;
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };

	pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

/* Takes the newest window's profile and hands it over with @window_ns (the
 * daemon's window length, from the poll that saw it), so the status line
 * never shows new data without its cadence. Returns 0, 1 when the view
 * was paused while the snapshot came (it is dropped: a paused view does
 * not change, and the window is fetched again on resume), or -errno. */
static int fetch_one(struct rd_live *l, uint64_t window_ns)
{
	struct rd_live_answer a = { 0 };
	struct rd_model *m;
	int rc = l->fetch(l->ctx, 1, &a);

	if (rc < 0)
		return rc;
	if (!a.p)
		return -EIO;
	m = rd_model_new(a.p);
	if (!m) {
		prof_free(a.p);
		return -ENOMEM;
	}
	pthread_mutex_lock(&l->mu);
	if (l->paused) {
		pthread_mutex_unlock(&l->mu);
		rd_model_free(m);
		prof_free(a.p);
		return 1;
	}
	rd_model_free(l->m);
	prof_free(l->p);
	l->p = a.p;
	l->m = m;
	l->from_ns = a.from_ns;
	l->to_ns = a.to_ns;
	l->arrived_ns = rd_live_mono_ns();
	l->window_ns = window_ns;
	pthread_mutex_unlock(&l->mu);
	if (l->wake)
		l->wake(l->wake_arg);
	return 0;
}

/* Frees what the window discarded; called with mu held, returns with it
 * held. */
static void bury(struct rd_live *l)
{
	struct prof_profile *p = l->dead_p;
	struct rd_model *m = l->dead_m;

	if (!p && !m)
		return;
	l->dead_p = NULL;
	l->dead_m = NULL;
	pthread_mutex_unlock(&l->mu);
	rd_model_free(m);
	prof_free(p);
	pthread_mutex_lock(&l->mu);
}

static void *run(void *arg)
{
	struct rd_live *l = arg;
	uint64_t seen_end = 0;

	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		struct rd_live_answer a = { 0 };
		uint64_t period;
		int rc;

		bury(l);
		if (l->stop)
			break;

		if (l->paused) {
			nap(l, 500000000ull);
			continue;
		}
		pthread_mutex_unlock(&l->mu);
		rc = l->fetch(l->ctx, 0, &a);
		if (rc == 0 && a.end_ns != seen_end && (rc = fetch_one(l, a.window_ns)) == 0)
			seen_end = a.end_ns;
		pthread_mutex_lock(&l->mu);
		l->failing = rc < 0;
		if (rc == 0)
			l->window_ns = a.window_ns;
		/* Poll a few times per window, so a new one shows soon. */
		period = l->window_ns / 5;
		if (period < 100000000ull)
			period = 100000000ull;
		if (period > 2000000000ull)
			period = 2000000000ull;
		if (rc < 0)
			period = 1000000000ull;
		if (!l->stop)
			nap(l, period);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

void rd_live_set_window(struct rd_live *l, uint64_t window_ns)
{
	pthread_mutex_lock(&l->mu);
	l->window_ns = window_ns;
	pthread_mutex_unlock(&l->mu);
}

int rd_live_start(struct rd_live *l, rd_live_wake_fn wake, void *arg)
{
	int rc;

	if (l->running)
		return 0;
	l->wake = wake;
	l->wake_arg = arg;
	l->stop = 0;
	rc = pthread_create(&l->thread, NULL, run, l);
	if (rc)
		return -rc;
	l->running = 1;
	return 0;
}

void rd_live_stop(struct rd_live *l)
{
	if (!l || !l->running)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	l->running = 0;
}

void rd_live_discard(struct rd_live *l, struct prof_profile *p,
		     struct rd_model *m)
{
	struct prof_profile *op;
	struct rd_model *om;

	pthread_mutex_lock(&l->mu);
	op = l->dead_p;
	om = l->dead_m;
	l->dead_p = p;
	l->dead_m = m;
	if (!l->running) {
		l->dead_p = NULL;
		l->dead_m = NULL;
	}
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	/* The slot was still full (or no thread runs): free here. */
	rd_model_free(om);
	prof_free(op);
	if (!l->running) {
		rd_model_free(m);
		prof_free(p);
	}
}

void rd_live_free(struct rd_live *l)
{
	if (!l)
		return;
	rd_live_stop(l);
	rd_model_free(l->dead_m);
	prof_free(l->dead_p);
	rd_model_free(l->m);
	prof_free(l->p);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

int rd_live_take(struct rd_live *l, struct prof_profile **p,
		 struct rd_model **m, uint64_t *from_ns, uint64_t *to_ns,
		 uint64_t *arrived_ns)
{
	int got = 0;

	pthread_mutex_lock(&l->mu);
	if (l->m) {
		*p = l->p;
		*m = l->m;
		*from_ns = l->shown_from = l->from_ns;
		*to_ns = l->shown_to = l->to_ns;
		*arrived_ns = l->arrived_ns;
		l->p = NULL;
		l->m = NULL;
		got = 1;
	}
	pthread_mutex_unlock(&l->mu);
	return got;
}

void rd_live_shown(struct rd_live *l, uint64_t from_ns, uint64_t to_ns)
{
	pthread_mutex_lock(&l->mu);
	l->shown_from = from_ns;
	l->shown_to = to_ns;
	pthread_mutex_unlock(&l->mu);
}

void rd_live_pause(struct rd_live *l, int on)
{
	pthread_mutex_lock(&l->mu);
	l->paused = on;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

int rd_live_paused(struct rd_live *l)
{
	int on;

	pthread_mutex_lock(&l->mu);
	on = l->paused;
	pthread_mutex_unlock(&l->mu);
	return on;
}

static void clock_text(uint64_t ns, char *buf, size_t n)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!ns || !localtime_r(&t, &tm) || !strftime(buf, n, "%H:%M:%S", &tm))
		snprintf(buf, n, "?");
}

static void span_text(uint64_t ns, char *buf, size_t n)
{
	if (ns >= 60000000000ull && ns % 60000000000ull == 0)
		snprintf(buf, n, "%llu min", (unsigned long long)(ns / 60000000000ull));
	else
		snprintf(buf, n, "%.0f s", (double)ns / 1e9);
}

char *rd_live_status(struct rd_live *l, char *buf, size_t n)
{
	char a[16], b[16], span[32], win[32];

	pthread_mutex_lock(&l->mu);
	clock_text(l->shown_from, a, sizeof(a));
	clock_text(l->shown_to, b, sizeof(b));
	span_text(l->last_ns, span, sizeof(span));
	span_text(l->window_ns, win, sizeof(win));
	snprintf(buf, n, "Live \xc2\xb7 %s\xe2\x80\x93%s (last %s)%s%s%s", a, b, span,
		 l->window_ns ? " \xc2\xb7 new data every " : "", l->window_ns ? win : "",
		 l->paused ? " \xc2\xb7 paused" :
		 l->failing ? " \xc2\xb7 hearthd stopped answering; retrying" : "");
	pthread_mutex_unlock(&l->mu);
	return buf;
}

int rd_live_check(const char *path, char *err, size_t errlen)
{
	static const char *down = "hearthd is not running: start it with sudo systemctl start hearthd";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, rc = 0;

	if (stat(path, &st) < 0 && errno == ENOENT) {
		snprintf(err, errlen, "%s", down);
		return -ENOENT;
	}
	if (!(strlen(path) < sizeof(sa.sun_path))) {
		snprintf(err, errlen, "the socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		if (rc == -ENOENT || rc == -ECONNREFUSED)
			snprintf(err, errlen, "%s", down);
		else if (rc == -EACCES || rc == -EPERM)
			snprintf(err, errlen, "permission denied on %s: the control socket "
				 "is for root and the hearth group", path);
		else
			snprintf(err, errlen, "cannot connect to hearthd at %s: %s", path,
				 strerror(-rc));
	}
	if (fd >= 0)
		close(fd);
	return rc;
}
