/* SPDX-License-Identifier: MIT */
/*
 * ring_reader: the reading side of BPF ring buffers, each ring's pages
 * mapped once. libbpf maps a ring's data twice in a row, so that a record
 * wrapping past the end reads as one piece; the kernel's pages are the
 * same, but RSS counts each twice (the 8 MiB growth ring showed as 16 MiB,
 * and a 64-CPU host's rings as hundreds). Here a record that wraps is
 * copied into a buffer of the reader's before its callback sees it: a
 * stack copy now and then, against every page counted twice.
 *
 * The interface follows libbpf's ring_buffer: rings added to one reader
 * share an epoll descriptor; a callback that returns a negative value
 * stops the reading (its record is consumed) and that value is returned.
 */
#ifndef HEARTH_RING_READER_H
#define HEARTH_RING_READER_H

#include <stddef.h>

struct ring_reader;

/* Called with each record, @size bytes at @data (valid until it returns). */
typedef int (*ring_reader_fn)(void *ctx, void *data, size_t size);

/* A reader of the ring buffer map @map_fd, calling @fn(@ctx, ...). NULL
 * with errno set when the map cannot be mapped. */
struct ring_reader *ring_reader_new(int map_fd, ring_reader_fn fn, void *ctx);

/* Adds the ring @map_fd to @r, read after those added before. 0 or a
 * negative errno. */
int ring_reader_add(struct ring_reader *r, int map_fd, ring_reader_fn fn, void *ctx);

/* Waits up to @timeout_ms (-1: no limit) for a ring to have records, then
 * reads those that have. Returns the records read, or a negative errno
 * (a callback's value, or -EINTR). */
int ring_reader_poll(struct ring_reader *r, int timeout_ms);

/* Reads every ring's records now, in the order added, without waiting.
 * Returns the records read or a negative errno (a callback's value). */
int ring_reader_consume(struct ring_reader *r);

/* The epoll descriptor that is readable when a ring has records. */
int ring_reader_epoll_fd(const struct ring_reader *r);

/* Unmaps the rings and frees @r. Accepts NULL. */
void ring_reader_free(struct ring_reader *r);

#endif
