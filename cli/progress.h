/* SPDX-License-Identifier: MIT */
/*
 * A progress line on standard error for work that takes a while (reading
 * and comparing big profiles): what is being done and for how long,
 * redrawn by a thread of its own while the caller works, and only on a
 * terminal and after the first half second, so quick work shows nothing.
 */
#ifndef HEARTH_CLI_PROGRESS_H
#define HEARTH_CLI_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>

struct cli_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	char what[256];     /* the step being done */
	bool running;       /* the thread was started */
	bool stop;
	bool shown;         /* a line is on the terminal */
	bool hidden;        /* wiped until the next step */
	unsigned long long start_ns;
};

/* Starts the line, saying @what (printf-like). Does nothing when standard
 * error is not a terminal or a thread cannot be started. */
void cli_progress_start(struct cli_progress *p, const char *what, ...)
	__attribute__((format(printf, 2, 3)));

/* Says the next step. */
void cli_progress_step(struct cli_progress *p, const char *what, ...)
	__attribute__((format(printf, 2, 3)));

/* Wipes the line and draws nothing until the next step: call it before
 * anything else is written to the terminal. */
void cli_progress_hide(struct cli_progress *p);

/* Ends the line and wipes it. */
void cli_progress_stop(struct cli_progress *p);

#endif
