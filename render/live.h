/* SPDX-License-Identifier: MIT */
/*
 * render/live: the viewer's live data source. A thread asks hearthd (through
 * a fetch callback the command supplies, so render/ stays free of the
 * agent's code) whether a new window was stored; when one was, it fetches
 * the profile of the last N minutes, builds its model off the drawing
 * thread, and wakes the window, which takes the new data and redraws in
 * place. Pausing stops the fetching; the view stays as it is.
 */
#ifndef HEARTH_RENDER_LIVE_H
#define HEARTH_RENDER_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "render/model.h"

/* What a fetch returns. */
struct rd_live_answer {
	uint64_t window_ns; /* status: the daemon's window length */
	uint64_t end_ns;    /* status: end of the last window stored */
	uint64_t from_ns;   /* snapshot: the range it covers (CLOCK_REALTIME) */
	uint64_t to_ns;
	struct prof_profile *p; /* snapshot: the profile, now the caller's */
};

/* Asks hearthd for its status (@snapshot = 0: window_ns, end_ns) or for
 * the profile to show (@snapshot = 1: from_ns, to_ns, p). Returns 0, or a
 * negative errno when hearthd could not answer. Called from the live
 * thread. */
typedef int (*rd_live_fetch_fn)(void *ctx, int snapshot,
				struct rd_live_answer *a);

/* Called from the live thread when new data waits (the window pushes an
 * event to its own loop). */
typedef void (*rd_live_wake_fn)(void *arg);

struct rd_live;

/* A live source over @fetch. @last_ns is the span shown (for the time
 * range text). Returns NULL when out of memory. Nothing runs until
 * rd_live_start(). Free with rd_live_free(). */
struct rd_live *rd_live_new(rd_live_fetch_fn fetch, void *ctx,
			    uint64_t last_ns);

/* Records the daemon's window length as known before the thread's first
 * poll, so the status line gives the cadence from the first frame. */
void rd_live_set_window(struct rd_live *l, uint64_t window_ns);

/* Starts the thread; @wake is called each time data arrives. The first
 * fetch happens at once. Returns 0 or a negative errno. */
int rd_live_start(struct rd_live *l, rd_live_wake_fn wake, void *arg);

/* Stops the thread (waits for it). Safe to call twice. */
void rd_live_stop(struct rd_live *l);

/* Stops and frees @l and data not taken. Accepts NULL. */
void rd_live_free(struct rd_live *l);

/* Takes the newest data, if any arrived since the last call: returns 1
 * with *@p and *@m (both now the caller's; @m borrows @p) and the range
 * in *@from_ns / *@to_ns and the CLOCK_MONOTONIC ns of its arrival in
 * *@arrived_ns; 0 when nothing new. */
int rd_live_take(struct rd_live *l, struct prof_profile **p,
		 struct rd_model **m, uint64_t *from_ns, uint64_t *to_ns,
		 uint64_t *arrived_ns);

/* Hands data the window no longer shows to the live thread, which frees
 * it (freeing a big profile takes longer than drawing a frame). Takes
 * both; either may be NULL. */
void rd_live_discard(struct rd_live *l, struct prof_profile *p,
		     struct rd_model *m);

/* Records the range of the data the window shows first (fetched before
 * the thread started), for the status line. */
void rd_live_shown(struct rd_live *l, uint64_t from_ns, uint64_t to_ns);

/* Pauses (@on = 1) or resumes fetching. */
void rd_live_pause(struct rd_live *l, int on);
int rd_live_paused(struct rd_live *l);

/* The status line: "live · 10:01:02–10:06:02 (last 5 min) · every 10 s"
 * plus "paused" or the last error ("hearthd stopped answering") into
 * @buf. Returns @buf. */
char *rd_live_status(struct rd_live *l, char *buf, size_t n);

/* Checks that something listens on the control socket @path. Returns 0,
 * or -ENOENT / -ECONNREFUSED with "hearthd is not running: start it with
 * sudo systemctl start hearthd" in @err, -EACCES with a sentence about
 * permissions. */
int rd_live_check(const char *path, char *err, size_t errlen);

/* CLOCK_MONOTONIC now, in ns. */
uint64_t rd_live_mono_ns(void);

#endif /* HEARTH_RENDER_LIVE_H */
