/* SPDX-License-Identifier: MIT */
/* Fuzz target: decoding stored windows and snapshot profiles, the bytes a
 * damaged store or a hostile reply would hand to the decoders. The raw
 * (uncompressed) encoding is fuzzed too, by sealing the input into a blob
 * first, so the structural checks are reached, not only zlib's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "agent/store_codec.h"
#include "profile/profile.h"

static void seal_and_decode(const uint8_t *d, size_t n, int window)
{
	uint8_t *blob;
	uLongf zlen = compressBound((uLong)n);
	size_t head = 0;
	struct store_window w;
	struct prof_profile *p;
	int err;

	if (n == 0 || n > (1u << 20))
		return;
	blob = malloc(16 + zlen);
	if (!blob)
		return;
	memcpy(blob, window ? "HWW1" : "HWP1", 4);
	head = 4;
	for (size_t v = n; ; v >>= 7) {
		blob[head++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		if (!(v >> 7))
			break;
	}
	if (compress2(blob + head, &zlen, d, (uLong)n, 1) == Z_OK) {
		if (window) {
			if (store_codec_window_unpack(blob, head + zlen, &w) == 0)
				store_window_clear(&w);
		} else {
			p = store_codec_profile_unpack(blob, head + zlen, &err);
			prof_free(p);
		}
	}
	free(blob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_window w;
	struct prof_profile *p;
	int err;

	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		if (store_codec_window_unpack(data + 1, size - 1, &w) == 0)
			store_window_clear(&w);
		break;
	case 1:
		p = store_codec_profile_unpack(data + 1, size - 1, &err);
		prof_free(p);
		break;
	default:
		seal_and_decode(data + 1, size - 1, data[0] & 1);
		break;
	}
	return 0;
}
