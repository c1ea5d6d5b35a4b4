/* SPDX-License-Identifier: MIT */
/* Fuzz target: the control protocol parsers. The first byte picks what the
 * rest is: a whole request as hearthd reads it (header, then payload), or
 * one of the replies the hearth command decodes. Nothing may crash, read
 * out of bounds or leak; a decoded request must re-encode to the same
 * bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/control_proto.h"

static void request(const uint8_t *d, size_t n)
{
	uint8_t again[CTL_HDR_SIZE + CTL_REQ_MAX];
	struct ctl_request req;
	struct ctl_hdr h;
	const char *why;
	int len;

	if (n < CTL_HDR_SIZE || ctl_hdr_get(d, CTL_REQ_MAX, &h) < 0)
		return;
	if (n - CTL_HDR_SIZE < h.len)
		return;
	if (ctl_request_decode(h.type, d + CTL_HDR_SIZE, h.len, &req, &why) < 0) {
		if (!why)
			abort();
		return;
	}
	len = ctl_request_encode(&req, again, sizeof(again));
	if (len != (int)(CTL_HDR_SIZE + h.len) ||
	    memcmp(again + CTL_HDR_SIZE, d + CTL_HDR_SIZE, h.len) != 0)
		abort();
}

static void replies(uint8_t which, const uint8_t *d, size_t n)
{
	struct ctl_snapshot_reply sr;
	struct ctl_status st;
	struct ctl_mark *m;
	uint64_t at;
	size_t cnt;
	uint32_t damaged;
	char msg[64];
	int err;

	switch (which % 5) {
	case 0:
		ctl_decode_status(d, n, &st);
		break;
	case 1:
		if (ctl_decode_snapshot(d, n, &sr) == 0 && sr.blob + sr.blob_len > d + n)
			abort();
		break;
	case 2:
		if (ctl_decode_marks(d, n, &m, &cnt, &damaged) == 0)
			free(m);
		break;
	case 3:
		ctl_decode_mark(d, n, &at);
		break;
	default:
		ctl_decode_error(d, n, &err, msg, sizeof(msg));
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] < 128)
		request(data + 1, size - 1);
	else
		replies(data[0], data + 1, size - 1);
	return 0;
}
