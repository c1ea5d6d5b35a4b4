/* SPDX-License-Identifier: MIT */
/* Ring buffer polls with a deadline (ring_poll.h). */
#include "agent/ring_poll.h"
#include "agent/ring_reader.h"

#include <errno.h>
#include <time.h>

/* How long past its timeout a poll may go on taking records. */
#define SLACK_NS 100000000ULL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int ring_poll(struct ring_reader *rb, int timeout_ms, uint64_t *until)
{
	int rc;

	*until = now_ns() + (timeout_ms > 0 ? (uint64_t)timeout_ms * 1000000ULL : 0) + SLACK_NS;
	rc = ring_reader_poll(rb, timeout_ms);
	return rc == -EAGAIN ? 0 : rc;
}

int ring_poll_past(uint64_t until)
{
	return now_ns() > until ? -EAGAIN : 0;
}

uint32_t ring_poll_bytes(int ncpus, uint32_t per_cpu, uint32_t min, uint32_t max)
{
	uint64_t want = (uint64_t)(ncpus > 0 ? ncpus : 1) * per_cpu;
	uint32_t bytes = min;

	while (bytes < want && bytes < max)
		bytes <<= 1;
	return bytes;
}
