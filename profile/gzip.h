/* SPDX-License-Identifier: MIT */
/* gzip in memory, with a bound on what inflating may produce. */
#ifndef HEARTH_GZIP_H
#define HEARTH_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* Compresses @in[0..n) into a gzip member in a malloc'd *@out / *@outlen,
 * owned by the caller. Returns 0, -ENOMEM, or -EIO when zlib failed (or
 * @n is beyond what one call can take). */
int gz_deflate(const void *in, size_t n, void **out, size_t *outlen);

/* Inflates gzip (or zlib) data @in[0..n), every member of it one after
 * the other as gzip does, into a malloc'd *@out / *@outlen. Returns 0,
 * -EFBIG as soon as the result would exceed @max bytes (it never holds
 * more than @max + 1), -EINVAL for a corrupt or truncated stream, or
 * -ENOMEM. */
int gz_inflate(const void *in, size_t n, size_t max, uint8_t **out,
	       size_t *outlen);

#endif /* HEARTH_GZIP_H */
