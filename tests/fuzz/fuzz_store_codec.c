/* SPDX-License-Identifier: MIT */
/* Fuzz target: decoding stored windows and snapshot profiles, the bytes a
 * damaged store or a hostile reply would hand to the decoders. Besides raw
 * blobs, the input is also taken as the uncompressed contents of a string
 * section and a profile section, sealed into a well-formed blob of
 * either version (3 keeps the frames' places, 2 did not), so the
 * structural checks are reached and not only zlib's. Decoded windows are
 * also merged with a filter. Seeds (corpus/store_codec): windows of both
 * versions, raw and as the contents of their sections. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "agent/store_codec.h"
#include "profile/profile.h"

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		n++;
		v >>= 7;
	} while (v);
	return n;
}

static size_t put_section(uint8_t *out, const uint8_t *raw, size_t n)
{
	uLongf zlen = compressBound((uLong)n);
	size_t h = put_varint(out, n);
	uint8_t *tmp = malloc(zlen);

	if (!tmp || compress2(tmp, &zlen, n ? raw : (const uint8_t *)"", (uLong)n, 1) != Z_OK) {
		free(tmp);
		return 0;
	}
	h += put_varint(out + h, zlen);
	memcpy(out + h, tmp, zlen);
	free(tmp);
	return h + zlen;
}

static bool keep_odd(void *arg, const char *comm, size_t len, uint32_t pid)
{
	(void)arg;
	(void)comm;
	return (len + pid) & 1;
}

static void decode_all(const uint8_t *blob, size_t len)
{
	struct store_codec_merge m = { .keep = keep_odd, .clear_pid = true };
	struct prof_profile *p;
	struct store_window w;
	int err;

	if (store_codec_window_unpack(blob, len, &w) == 0)
		store_window_clear(&w);
	p = store_codec_profile_unpack(blob, len, &err);
	prof_free(p);
	p = prof_new(PROF_UNIT_SAMPLES);
	if (p)
		store_codec_window_merge(blob, len, &m, p, NULL);
	prof_free(p);
	/* Both profiles at once, values to leaves, as roll-ups are built. */
	p = prof_new(PROF_UNIT_SAMPLES);
	{
		struct store_codec_merge d = { .defer_totals = true };
		struct prof_profile *q = prof_new(PROF_UNIT_NANOSECONDS);

		if (p && q && store_codec_window_merge_both(blob, len, &d, p, q, NULL) == 0) {
			store_codec_merge_totals(p);
			store_codec_merge_totals(q);
		}
		prof_free(q);
	}
	prof_free(p);
}

/* data: u8 split, then strings raw [0, split), profile raw [split, n),
 * sealed as a window of @version. */
static void sealed(const uint8_t *d, size_t n, uint8_t version)
{
	size_t split, cap, len = 0;
	uint8_t *blob;

	if (n < 1 || n > (1u << 16))
		return;
	split = d[0] < n - 1 ? d[0] : n - 1;
	d++;
	n--;
	cap = 64 + 2 * (compressBound((uLong)n) + 20);
	blob = malloc(cap);
	if (!blob)
		return;
	/* magic, version, start, end, four counters, flags: on-CPU only */
	memcpy(blob, "HWW2\002\000\000\000\000\000\000\001", 12);
	blob[4] = version;
	len = 12;
	len += put_section(blob + len, d, split);
	len += put_section(blob + len, d + split, n - split);
	decode_all(blob, len);
	free(blob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* bit 0: a raw blob, else sealed; bit 1: sealed as version 2 */
	if (data[0] & 1)
		decode_all(data + 1, size - 1);
	else
		sealed(data + 1, size - 1, data[0] & 2 ? 2 : 3);
	return 0;
}
