/* SPDX-License-Identifier: MIT */
/*
 * store_format: the byte layouts of the store's files, shared by the
 * writer (store.c), the reader (store_scan.c) and the marks (store_marks.c).
 * Internal to the store; everything little-endian.
 *
 * File header (32 bytes): magic[8], u32 version, u32 header size,
 *   u64 created ns, u32 reserved, u32 CRC32 of bytes 0..27.
 * Record header (40 bytes): u32 magic "HRC1", u32 payload length,
 *   u64 start ns, u64 end ns, u32 payload CRC32, u32 reserved (2x),
 *   u32 CRC32 of bytes 0..35.
 * Index entry (32 bytes): u64 start ns, u64 end ns, u64 record offset,
 *   u32 record length (header + payload), u32 CRC32 of bytes 0..27.
 */
#ifndef HEARTH_STORE_FORMAT_H
#define HEARTH_STORE_FORMAT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "agent/store.h"
#include "agent/store_endian.h"

#define STORE_VERSION 1u
#define STORE_SEG_MAGIC "HEARTHSG"
#define STORE_IDX_MAGIC "HEARTHIX"
#define STORE_MARK_MAGIC "HEARTHMK"
#define STORE_REC_MAGIC 0x31435248u /* "HRC1" */
#define STORE_MARK_REC_SIZE 80u

struct store_rec {
	uint32_t len;   /* payload bytes */
	uint32_t pcrc;  /* payload CRC32 */
	uint64_t start_ns;
	uint64_t end_ns;
};

struct store_idx {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t off;
	uint32_t len;   /* header + payload */
};

static inline uint32_t store_crc(const void *p, size_t n)
{
	return (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p, n);
}

static inline void store_fhdr_put(uint8_t b[32], const char *magic,
				  uint64_t created_ns)
{
	memset(b, 0, 32);
	memcpy(b, magic, 8);
	le32_put(b + 8, STORE_VERSION);
	le32_put(b + 12, 32);
	le64_put(b + 16, created_ns);
	le32_put(b + 28, store_crc(b, 28));
}

/* 0, -EBADMSG (not this kind of file, or damaged), -EPROTONOSUPPORT (a
 * newer version than this build reads). */
static inline int store_fhdr_check(const uint8_t b[32], const char *magic)
{
	if (memcmp(b, magic, 8) != 0 || le32_get(b + 28) != store_crc(b, 28))
		return -EBADMSG;
	if (le32_get(b + 8) != STORE_VERSION)
		return -EPROTONOSUPPORT;
	if (le32_get(b + 12) != 32)
		return -EBADMSG;
	return 0;
}

static inline void store_rec_put(uint8_t b[40], const struct store_rec *r)
{
	memset(b, 0, 40);
	le32_put(b, STORE_REC_MAGIC);
	le32_put(b + 4, r->len);
	le64_put(b + 8, r->start_ns);
	le64_put(b + 16, r->end_ns);
	le32_put(b + 24, r->pcrc);
	le32_put(b + 36, store_crc(b, 36));
}

static inline int store_rec_get(const uint8_t b[40], struct store_rec *r)
{
	if (le32_get(b) != STORE_REC_MAGIC || le32_get(b + 36) != store_crc(b, 36))
		return -EBADMSG;
	r->len = le32_get(b + 4);
	r->start_ns = le64_get(b + 8);
	r->end_ns = le64_get(b + 16);
	r->pcrc = le32_get(b + 24);
	if (r->len > STORE_REC_MAX || r->end_ns < r->start_ns)
		return -EBADMSG;
	return 0;
}

static inline void store_idx_put(uint8_t b[32], const struct store_idx *e)
{
	le64_put(b, e->start_ns);
	le64_put(b + 8, e->end_ns);
	le64_put(b + 16, e->off);
	le32_put(b + 24, e->len);
	le32_put(b + 28, store_crc(b, 28));
}

static inline int store_idx_get(const uint8_t b[32], struct store_idx *e)
{
	if (le32_get(b + 28) != store_crc(b, 28))
		return -EBADMSG;
	e->start_ns = le64_get(b);
	e->end_ns = le64_get(b + 8);
	e->off = le64_get(b + 16);
	e->len = le32_get(b + 24);
	if (e->len < STORE_REC_HDR_SIZE || e->end_ns < e->start_ns)
		return -EBADMSG;
	return 0;
}

/* Segment names: "seg-" 20 digits ".hst" / ".idx". */
#define STORE_SEG_NAME_LEN 28

static inline void store_seg_name(char out[32], uint64_t start, bool idx)
{
	snprintf(out, 32, "seg-%020llu.%s", (unsigned long long)start,
		 idx ? "idx" : "hst");
}

/* Lists the segments of the directory open as @dirfd, sorted by start.
 * Returns 0 with a new array (free()) or a negative errno. Defined in
 * store_scan.c. */
int store_list_segments(int dirfd, uint64_t **starts, size_t *n);

/* Counts the records of one segment from its index and record headers
 * (payloads are not read). Returns 0 or a negative errno. Defined in
 * store_scan.c. */
int store_count_segment(int dirfd, uint64_t start, uint64_t *windows);

#endif /* HEARTH_STORE_FORMAT_H */
