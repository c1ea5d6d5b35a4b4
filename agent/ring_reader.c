/* SPDX-License-Identifier: MIT */
/* BPF ring buffers read with their pages mapped once (ring_reader.h). */
#include "agent/ring_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

struct ring {
	ring_reader_fn fn;
	void *ctx;
	int map_fd;
	unsigned long *consumer_pos; /* a page of its own, ours to write */
	unsigned long *producer_pos; /* the page before the data */
	uint8_t *data;
	size_t size;                 /* a power of two */
};

struct ring_reader {
	struct ring *rings;
	size_t n;
	int epfd;
	struct epoll_event *events;
	uint8_t *bounce; /* a wrapping record, made whole */
	size_t bounce_cap;
};

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

static void ring_unmap(struct ring *g)
{
	size_t page = page_size();

	if (g->consumer_pos)
		munmap(g->consumer_pos, page);
	if (g->producer_pos)
		munmap(g->producer_pos, page + g->size);
}

int ring_reader_add(struct ring_reader *r, int map_fd, ring_reader_fn fn, void *ctx)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	size_t page = page_size();
	struct epoll_event ev = { .events = EPOLLIN };
	struct ring g = { .fn = fn, .ctx = ctx, .map_fd = map_fd };
	struct ring *rings;
	struct epoll_event *events;
	void *p;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) < 0)
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	g.size = info.max_entries;
	rings = realloc(r->rings, (r->n + 1) * sizeof(*rings));
	if (!rings)
		return -ENOMEM;
	r->rings = rings;
	events = realloc(r->events, (r->n + 1) * sizeof(*events));
	if (!events)
		return -ENOMEM;
	r->events = events;
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	g.consumer_pos = p;
	/* The producer's page and the data once: the kernel offers the data
	 * twice, and takes a shorter mapping. */
	p = mmap(NULL, page + g.size, PROT_READ, MAP_SHARED, map_fd, (off_t)page);
	if (p == MAP_FAILED) {
		int err = -errno;

		ring_unmap(&g);
		return err;
	}
	g.producer_pos = p;
	g.data = (uint8_t *)p + page;
	ev.data.u64 = r->n;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, map_fd, &ev) < 0) {
		int err = -errno;

		ring_unmap(&g);
		return err;
	}
	r->rings[r->n++] = g;
	return 0;
}

struct ring_reader *ring_reader_new(int map_fd, ring_reader_fn fn, void *ctx)
{
	struct ring_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0) {
		err = -errno;
		goto fail;
	}
	err = ring_reader_add(r, map_fd, fn, ctx);
	if (!err)
		return r;
fail:
	ring_reader_free(r);
	errno = -err;
	return NULL;
}

/* The record of @len bytes at @off of @g's data, whole: in place, or
 * copied into the bounce buffer when it wraps past the end. */
static void *record_at(struct ring_reader *r, const struct ring *g, size_t off, size_t len)
{
	size_t first = g->size - off;

	if (len <= first)
		return g->data + off;
	if (len > r->bounce_cap) {
		uint8_t *b = realloc(r->bounce, len);

		if (!b)
			return NULL;
		r->bounce = b;
		r->bounce_cap = len;
	}
	memcpy(r->bounce, g->data + off, first);
	memcpy(r->bounce + first, g->data, len - first);
	return r->bounce;
}

/* Reads @g's committed records until it is empty or a callback says stop.
 * Returns the records read or the callback's negative value. */
static int64_t ring_read(struct ring_reader *r, struct ring *g)
{
	unsigned long cons = __atomic_load_n(g->consumer_pos, __ATOMIC_ACQUIRE);
	size_t mask = g->size - 1;
	int64_t cnt = 0;
	bool more;

	do {
		unsigned long prod = __atomic_load_n(g->producer_pos, __ATOMIC_ACQUIRE);

		more = false;
		while (cons < prod) {
			/* Headers are 8-byte aligned: never split by the end. */
			uint32_t *hdr = (uint32_t *)(g->data + (cons & mask));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			size_t size = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			unsigned long at = cons;

			if (len & BPF_RINGBUF_BUSY_BIT)
				return cnt; /* not committed yet */
			more = true;
			cons += (BPF_RINGBUF_HDR_SZ + size + 7) & ~7UL;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				void *rec = record_at(r, g, (at + BPF_RINGBUF_HDR_SZ) & mask, size);
				int err = rec ? g->fn(g->ctx, rec, size) : -ENOMEM;

				if (err < 0) {
					__atomic_store_n(g->consumer_pos, cons, __ATOMIC_RELEASE);
					return err;
				}
				cnt++;
			}
			__atomic_store_n(g->consumer_pos, cons, __ATOMIC_RELEASE);
		}
	} while (more);
	return cnt;
}

static int add_count(int64_t *total, int64_t n)
{
	if (n < 0)
		return (int)n;
	*total += n;
	return 0;
}

static int clamp_count(int64_t total)
{
	return total > INT32_MAX ? INT32_MAX : (int)total;
}

int ring_reader_consume(struct ring_reader *r)
{
	int64_t total = 0;

	for (size_t i = 0; i < r->n; i++) {
		int err = add_count(&total, ring_read(r, &r->rings[i]));

		if (err)
			return err;
	}
	return clamp_count(total);
}

int ring_reader_poll(struct ring_reader *r, int timeout_ms)
{
	int64_t total = 0;
	int n = epoll_wait(r->epfd, r->events, (int)r->n, timeout_ms);

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		size_t k = (size_t)r->events[i].data.u64;
		int err = k < r->n ? add_count(&total, ring_read(r, &r->rings[k])) : 0;

		if (err)
			return err;
	}
	return clamp_count(total);
}

int ring_reader_epoll_fd(const struct ring_reader *r)
{
	return r->epfd;
}

void ring_reader_free(struct ring_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		ring_unmap(&r->rings[i]);
	if (r->epfd >= 0)
		close(r->epfd);
	free(r->rings);
	free(r->events);
	free(r->bounce);
	free(r);
}
