/* SPDX-License-Identifier: MIT */
/*
 * The protobuf wire format, just what pprof needs: varints, tags,
 * length-delimited fields, packed repeated varints. Encoding appends to a
 * growable buffer whose out-of-memory state is sticky (check pb_buf.oom
 * once at the end); decoding walks a byte range and never reads past it.
 */
#ifndef HEARTH_PROTOBUF_H
#define HEARTH_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire {
	PB_VARINT = 0,
	PB_I64 = 1,
	PB_LEN = 2,
	PB_I32 = 5,
};

struct pb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int oom; /* set when an append could not grow the buffer */
};

/* Appends @n raw bytes. On ENOMEM sets b->oom and drops the bytes. */
void pb_put_raw(struct pb_buf *b, const void *p, size_t n);

/* Appends a varint. */
void pb_put_varint(struct pb_buf *b, uint64_t v);

/* Appends field @field as a varint; nothing when @v is 0 (proto3). */
void pb_put_uint(struct pb_buf *b, uint32_t field, uint64_t v);

/* Appends field @field as length-delimited bytes @p[0..n), even empty. */
void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n);

/* Appends @n values as one packed repeated varint field (none when n == 0). */
void pb_put_packed(struct pb_buf *b, uint32_t field, const uint64_t *v,
		   size_t n, struct pb_buf *scratch);

/* Empties @b, keeping its memory. */
void pb_reset(struct pb_buf *b);

/* Frees @b's memory and zeroes it. */
void pb_free(struct pb_buf *b);

/* A decoded field. For PB_LEN, @data/@len is the payload; otherwise @u64
 * the value. */
struct pb_field {
	uint32_t num;
	enum pb_wire wire;
	uint64_t u64;
	const uint8_t *data;
	size_t len;
};

struct pb_reader {
	const uint8_t *p;
	const uint8_t *end;
};

/* Reads one varint at *@p (< @end) and advances *@p. Returns 0, or -EINVAL
 * when the varint is truncated or longer than 10 bytes. */
int pb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* Reads the next field of @r into @f. Returns 1 for a field, 0 at the end,
 * -EINVAL for malformed data (truncated, bad wire type, field 0). */
int pb_next(struct pb_reader *r, struct pb_field *f);

#endif /* HEARTH_PROTOBUF_H */
