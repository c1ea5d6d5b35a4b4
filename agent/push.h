/* SPDX-License-Identifier: MIT */
/*
 * push: hearthd sends every window it stores to a profile backend over
 * Pyroscope's HTTP ingest API (push_request.h), from a thread of its own,
 * so that a slow or absent backend never delays sampling, windows or
 * snapshots.
 *
 * The store is the queue: the thread reads the windows after its cursor
 * (push_cursor.h) from the store, oldest first, cuts each into one
 * profile per service and profile type (push_split.h), and sends them in
 * order of their keys, moving the cursor after every answer; the services
 * a window was cut by are kept (push_pins.h), so that a window resumed
 * after a restart is cut the same way. A 2xx answer is taken; a 4xx
 * other than 408 and 429 rejects that part for good: it is counted,
 * logged (once per status) and skipped; anything else (5xx, 408, 429, no connection, a time-out) is
 * retried after an exponential back-off with jitter (1 s doubling to
 * 60 s), and nothing after it is sent before it is taken. With no cursor
 * yet, pushing starts at the windows stored from then on. Windows that
 * retention deletes before they are taken are not sent.
 *
 * The thread logs through the caller's callback (one sentence a line,
 * never the credentials); everything else here is silent.
 */
#ifndef HEARTH_PUSH_H
#define HEARTH_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"

/* What `hearth status` shows of the push. */
struct push_stats {
	uint64_t windows;        /* windows finished (every part answered) */
	uint64_t requests;       /* requests the backend took */
	uint64_t bytes;          /* their bodies' bytes */
	uint64_t rejected;       /* parts skipped on a 4xx answer */
	uint64_t retries;        /* failed attempts, retried */
	uint64_t lag_ns;         /* newest stored window's end - cursor's */
	uint64_t pending;        /* windows stored and not finished (about) */
	uint32_t last_err;       /* enum push_err of the last failure */
	uint32_t last_status;    /* its HTTP status, 0 = none */
	uint64_t last_err_ns;    /* when (CLOCK_REALTIME), 0 = never */
};

typedef void (*push_log_fn)(void *arg, const char *line);

struct push;

/* Starts pushing for config @c (its push_url must be set): reads the
 * auth file (refused unless it is a regular file only its owner, root or
 * hearthd's user, may read or write: mode 0600 or 0400), opens the state
 * directory and the cursor, and starts the thread. Call after the
 * signals hearthd takes are blocked (the thread inherits the mask).
 * Returns NULL with one sentence in @err on failure. */
struct push *push_start(const struct hearthd_config *c, push_log_fn log,
			void *log_arg, char *err, size_t errlen);

/* Tells the thread a window ending at @end_ns was stored. Never blocks
 * for long (a mutex held only to copy counters). Accepts NULL. */
void push_notify(struct push *p, uint64_t end_ns);

/* Copies the counters into @st (zeroes when @p is NULL). */
void push_get_stats(struct push *p, struct push_stats *st);

/* Stops the thread (a request in flight is abandoned, and sent again by
 * the next start), waits for it and frees everything. Accepts NULL. */
void push_stop(struct push *p);

#endif /* HEARTH_PUSH_H */
