/* SPDX-License-Identifier: MIT */
/* A progress line on standard error (see progress.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"

#define SHOW_AFTER_NS 500000000ull
#define REDRAW_NS 250000000ull

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void *redraw(void *arg)
{
	struct cli_progress *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		unsigned long long now = mono_ns(), next = now + REDRAW_NS;
		struct timespec until;

		if (!p->hidden && now - p->start_ns >= SHOW_AFTER_NS) {
			fprintf(stderr, "\r\033[Khearth: %s, %.1f s", p->what,
				(double)(now - p->start_ns) / 1e9);
			fflush(stderr);
			p->shown = true;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)(next - now);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->wake, &p->lock, &until);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void set_what(struct cli_progress *p, const char *fmt, va_list ap)
{
	vsnprintf(p->what, sizeof(p->what), fmt, ap);
}

void cli_progress_start(struct cli_progress *p, const char *what, ...)
{
	va_list ap;

	memset(p, 0, sizeof(*p));
	if (!isatty(STDERR_FILENO))
		return;
	va_start(ap, what);
	set_what(p, what, ap);
	va_end(ap);
	p->start_ns = mono_ns();
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->running = pthread_create(&p->thread, NULL, redraw, p) == 0;
	if (!p->running) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
	}
}

void cli_progress_step(struct cli_progress *p, const char *what, ...)
{
	va_list ap;

	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	va_start(ap, what);
	set_what(p, what, ap);
	va_end(ap);
	p->hidden = false;
	pthread_mutex_unlock(&p->lock);
}

/* Wipes the line if one is drawn; called with the lock held. */
static void wipe(struct cli_progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->shown = false;
	}
}

void cli_progress_hide(struct cli_progress *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->hidden = true;
	wipe(p);
	pthread_mutex_unlock(&p->lock);
}

void cli_progress_stop(struct cli_progress *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	wipe(p);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	p->running = false;
}
