/* SPDX-License-Identifier: MIT */
/* What hearth record's loops share: the stop flag its signals set, the
 * clock, and how long a loop may sleep. */
#ifndef HEARTH_CLI_RECORD_LOOP_H
#define HEARTH_CLI_RECORD_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Set by SIGINT and SIGTERM once record_loop_signals() ran. */
extern volatile sig_atomic_t record_loop_exiting;

/* Makes SIGINT and SIGTERM set record_loop_exiting. */
void record_loop_signals(void);

/* Clock @clk in nanoseconds. */
uint64_t record_loop_now(clockid_t clk);

/* How long a loop that started at @start (ns) may sleep at @now: until
 * its next drain (@interval after @last_drain) or the end of
 * @duration_ns (0: none), whichever is first; at most 100 ms with a
 * progress line on a terminal (@tty). In milliseconds. */
int record_loop_sleep_ms(uint64_t duration_ns, uint64_t interval, bool tty, uint64_t now,
			 uint64_t start, uint64_t last_drain);

#endif
