/* SPDX-License-Identifier: MIT */
/* hearth record's loops: stop flag, clock, sleep (record_loop.h). */
#include "cli/record_loop.h"

volatile sig_atomic_t record_loop_exiting;

static void on_signal(int sig)
{
	(void)sig;
	record_loop_exiting = 1;
}

void record_loop_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

uint64_t record_loop_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int record_loop_sleep_ms(uint64_t duration_ns, uint64_t interval, bool tty, uint64_t now,
			 uint64_t start, uint64_t last_drain)
{
	uint64_t until = last_drain + interval, ms;

	if (duration_ns && start + duration_ns < until)
		until = start + duration_ns;
	ms = until > now ? (until - now + 999999) / 1000000 : 0;
	if (tty && ms > 100)
		ms = 100;
	return (int)ms;
}
