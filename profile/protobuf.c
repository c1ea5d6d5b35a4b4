/* SPDX-License-Identifier: MIT */
/* The protobuf wire format: encoding into a growable buffer, decoding a
 * bounded byte range. */
#include "protobuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct pb_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *d;

	if (b->oom)
		return -ENOMEM;
	if (n <= b->cap - b->len)
		return 0;
	if (SIZE_MAX - b->len < n)
		goto oom;
	while (cap - b->len < n) {
		if (SIZE_MAX / 2 < cap)
			goto oom;
		cap *= 2;
	}
	d = realloc(b->data, cap);
	if (!d)
		goto oom;
	b->data = d;
	b->cap = cap;
	return 0;
oom:
	b->oom = 1;
	return -ENOMEM;
}

void pb_put_raw(struct pb_buf *b, const void *p, size_t n)
{
	if (n == 0 || reserve(b, n) < 0)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pb_put_varint(struct pb_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (0x80 <= v) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	pb_put_raw(b, tmp, n);
}

static void put_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
	pb_put_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

void pb_put_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (v == 0)
		return;
	put_tag(b, field, PB_VARINT);
	pb_put_varint(b, v);
}

void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n)
{
	put_tag(b, field, PB_LEN);
	pb_put_varint(b, n);
	pb_put_raw(b, p, n);
}

void pb_put_packed(struct pb_buf *b, uint32_t field, const uint64_t *v,
		   size_t n, struct pb_buf *scratch)
{
	if (n == 0)
		return;
	pb_reset(scratch);
	for (size_t i = 0; i < n; i++)
		pb_put_varint(scratch, v[i]);
	if (scratch->oom) {
		b->oom = 1;
		return;
	}
	pb_put_bytes(b, field, scratch->data, scratch->len);
}

void pb_reset(struct pb_buf *b)
{
	b->len = 0;
}

void pb_free(struct pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int pb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q == end)
			return -EINVAL;
		x |= (uint64_t)(*q & 0x7f) << shift;
		if (!(*q++ & 0x80)) {
			*v = x;
			*p = q;
			return 0;
		}
	}
	return -EINVAL;
}

int pb_next(struct pb_reader *r, struct pb_field *f)
{
	uint64_t key, n;

	if (r->p == r->end)
		return 0;
	if (pb_get_varint(&r->p, r->end, &key) < 0)
		return -EINVAL;
	if (key >> 3 == 0 || UINT32_MAX < key >> 3)
		return -EINVAL;
	f->num = (uint32_t)(key >> 3);
	f->wire = (enum pb_wire)(key & 7);
	f->u64 = 0;
	f->data = NULL;
	f->len = 0;
	switch (f->wire) {
	case PB_VARINT:
		return pb_get_varint(&r->p, r->end, &f->u64) < 0 ? -EINVAL : 1;
	case PB_I64:
	case PB_I32:
		n = f->wire == PB_I64 ? 8 : 4;
		if ((uint64_t)(r->end - r->p) < n)
			return -EINVAL;
		for (unsigned i = 0; i < n; i++)
			f->u64 |= (uint64_t)r->p[i] << (8 * i);
		r->p += n;
		return 1;
	case PB_LEN:
		if (pb_get_varint(&r->p, r->end, &n) < 0 ||
		    (uint64_t)(r->end - r->p) < n)
			return -EINVAL;
		f->data = r->p;
		f->len = (size_t)n;
		r->p += n;
		return 1;
	}
	return -EINVAL;
}
