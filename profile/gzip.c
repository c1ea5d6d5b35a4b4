/* SPDX-License-Identifier: MIT */
/* gzip in memory with zlib. */
#include "gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

int gz_deflate(const void *in, size_t n, void **out, size_t *outlen)
{
	z_stream z = { 0 };
	uLong bound;
	uint8_t *o;
	int ret;

	if ((uLong)UINT32_MAX < n)
		return -EIO;
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)n) + 64;
	o = malloc(bound);
	if (!o) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = o;
	z.avail_out = (uInt)bound;
	ret = deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(o);
		return -EIO;
	}
	*out = o;
	return 0;
}

/* Grows the output buffer *@o (capacity *@cap) for inflating, never past
 * @max + 1 bytes. Returns 0 or -ENOMEM. */
static int grow_out(uint8_t **o, size_t *cap, size_t max)
{
	size_t c = *o ? *cap * 2 : *cap;
	uint8_t *t;

	if (c < *cap || max < c)
		c = max + 1;
	t = realloc(*o, c);
	if (!t)
		return -ENOMEM;
	*o = t;
	*cap = c;
	return 0;
}

int gz_inflate(const void *in, size_t n, size_t max, uint8_t **out,
	       size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = n < 1024 ? 4096 : n * 4, got = 0;
	uint8_t *o = NULL;
	int zr = Z_OK, ret = 0;

	if ((uLong)UINT32_MAX < n)
		return -EFBIG;
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	for (;;) {
		if (zr == Z_STREAM_END) {
			/* Another member follows: read it too, as gzip does. */
			if (z.avail_in == 0)
				break;
			if (inflateReset(&z) != Z_OK) {
				ret = -EINVAL;
				break;
			}
		}
		if (!o || got == cap) {
			/* The size is checked as it grows: a bomb stops at
			 * the limit, never past it. */
			if (max < got) {
				ret = -EFBIG;
				break;
			}
			if (grow_out(&o, &cap, max) < 0) {
				ret = -ENOMEM;
				break;
			}
		}
		z.next_out = o + got;
		z.avail_out = (uInt)(cap - got < UINT32_MAX ? cap - got : UINT32_MAX);
		zr = inflate(&z, Z_NO_FLUSH);
		got = (size_t)(z.next_out - o);
		if (zr == Z_MEM_ERROR) {
			ret = -ENOMEM;
			break;
		}
		if (zr == Z_BUF_ERROR && z.avail_out == 0)
			continue; /* only out of room */
		if (zr != Z_OK && zr != Z_STREAM_END) {
			ret = -EINVAL;
			break;
		}
		if (zr == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
			ret = -EINVAL; /* truncated: input gone, stream open */
			break;
		}
	}
	inflateEnd(&z);
	if (!ret && max < got)
		ret = -EFBIG;
	if (ret) {
		free(o);
		return ret;
	}
	*out = o;
	*outlen = got;
	return 0;
}
