/* SPDX-License-Identifier: MIT */
/*
 * ring_poll: polling a BPF ring buffer that a flood cannot hold. A read
 * takes records until the ring is empty, which a producer faster than
 * the callbacks never lets happen; these callbacks stop at a deadline
 * instead, and the rest waits for the next poll.
 */
#ifndef HEARTH_RING_POLL_H
#define HEARTH_RING_POLL_H

#include <stdbool.h>
#include <stdint.h>

struct ring_reader;

/* ring_reader_poll() of @rb that ends about 100 ms after @timeout_ms
 * even while records keep coming: it sets *@until, which the callbacks
 * pass to ring_poll_past(). Returns what ring_reader_poll() does (the
 * records taken, or a negative errno), never the callbacks' -EAGAIN. */
int ring_poll(struct ring_reader *rb, int timeout_ms, uint64_t *until);

/* For a callback, after it took its record: -EAGAIN (stop taking) once
 * the deadline @until is past, else 0. */
int ring_poll_past(uint64_t until);

/* A ring's size for @ncpus CPUs: @per_cpu bytes each, rounded up to a
 * power of two and kept between @min and @max (both powers of two). The
 * kernel's ring pages are allocated whole at load, and mapped into the
 * reader whole (RSS counts them), so the size is memory paid from start. */
uint32_t ring_poll_bytes(int ncpus, uint32_t per_cpu, uint32_t min, uint32_t max);

#endif
