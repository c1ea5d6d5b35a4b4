/* SPDX-License-Identifier: MIT */
/* store_codec_impl: byte buffers and varints shared by the store codec's
 * writer (store_codec.c) and reader (store_codec_read.c). Internal. */
#ifndef HEARTH_STORE_CODEC_IMPL_H
#define HEARTH_STORE_CODEC_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/store_codec.h"

/* Version 3 added the frames' places; version 2 windows (names only)
 * are still read. */
#define CODEC_VERSION 3u
#define CODEC_VERSION_NAMES 2u
#define UNMAPPED UINT32_MAX
#define CODEC_MAGIC "HWW2"

/* Sections after the strings: flag bit (1 << (i - 1)) says section i
 * follows. The growth sections came later: a window without them is
 * read as before. */
enum { SEC_STRINGS = 0, SEC_ON = 1, SEC_OFF = 2, SEC_GROW_REQ = 3, SEC_GROW_BYTES = 4,
       SEC_COUNT = 5 };
#define SEC_PROFILES (SEC_COUNT - 1)

/* A window's profiles, in section order (SEC_ON first). */
static inline void window_profiles(const struct store_window *w,
				   struct prof_profile *out[SEC_PROFILES])
{
	out[0] = w->oncpu;
	out[1] = w->offcpu;
	out[2] = w->growth_req;
	out[3] = w->growth_bytes;
}

/* ---- growable output buffer -------------------------------------------- */

struct obuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int err;
};

static inline void ob_reserve(struct obuf *b, size_t n)
{
	size_t cap;
	uint8_t *np;

	if (b->err)
		return;
	if (n <= b->cap - b->len)
		return;
	if (n > STORE_CODEC_RAW_MAX || b->len > STORE_CODEC_RAW_MAX - n) {
		b->err = -EFBIG;
		return;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->err = -ENOMEM;
		return;
	}
	b->p = np;
	b->cap = cap;
}

static inline void ob_bytes(struct obuf *b, const void *src, size_t n)
{
	ob_reserve(b, n);
	if (b->err || n == 0)
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static inline void ob_varint(struct obuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	ob_bytes(b, tmp, n);
}

/* ---- bounded input reader ---------------------------------------------- */

struct ibuf {
	const uint8_t *p;
	size_t len;
	size_t pos;
	bool bad;
};

static inline uint64_t ib_varint_slow(struct ibuf *b)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (b->bad || b->pos >= b->len) {
			b->bad = true;
			return 0;
		}
		c = b->p[b->pos++];
		if (shift == 63 && c > 1) {
			b->bad = true;
			return 0;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	b->bad = true;
	return 0;
}

/* Reads one varint; on a short or overlong one, sets @b->bad and returns
 * 0. One- and two-byte varints (most ids and counts) take a short path. */
static inline uint64_t ib_varint(struct ibuf *b)
{
	if (!b->bad && b->len - b->pos >= 2) {
		const uint8_t *c = b->p + b->pos;

		if (c[0] < 0x80) {
			b->pos++;
			return c[0];
		}
		if (c[1] < 0x80) {
			b->pos += 2;
			return (uint64_t)(c[0] & 0x7f) | (uint64_t)c[1] << 7;
		}
	}
	return ib_varint_slow(b);
}

/* A varint that must be < @limit. */
static inline uint64_t ib_bounded(struct ibuf *b, uint64_t limit)
{
	uint64_t v = ib_varint(b);

	if (!(v < limit))
		b->bad = true;
	return b->bad ? 0 : v;
}

static inline size_t ib_left(const struct ibuf *b)
{
	return b->len - b->pos;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}


#endif /* HEARTH_STORE_CODEC_IMPL_H */
