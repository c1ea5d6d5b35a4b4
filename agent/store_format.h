/* SPDX-License-Identifier: MIT */
/*
 * store_format: the byte layouts of the store's files, shared by the
 * writer (store.c), the reader (store_scan.c) and the marks (store_marks.c).
 * Internal to the store; everything little-endian.
 *
 * File header (32 bytes): magic[8], u32 version, u32 header size,
 *   u64 created ns, u32 reserved, u32 CRC32 of bytes 0..27.
 * Record header (40 bytes): u32 magic "HRC1", u32 payload length,
 *   u64 start ns, u64 end ns, u32 payload CRC32, u32 kind (version 2;
 *   0 in version 1: a window), u32 reserved, u32 CRC32 of bytes 0..35.
 * Index entry, version 1 (32 bytes): u64 start ns, u64 end ns, u64 record
 *   offset, u32 record length (header + payload), u32 CRC32 of bytes 0..27.
 * Index entry, version 2 (64 bytes): u64 start ns, u64 end ns, u64 record
 *   offset, u64 cover (offset of the first record a roll-up stands for;
 *   a window's own offset), u64 newest window start, u32 record length,
 *   u32 kind, u32 windows, u32 reserved (2x), u32 CRC32 of bytes 0..59.
 *
 * Versions: marks files are version 1; segments and indexes are written
 * as version 2 (roll-up records), and both versions are read. A roll-up
 * record (kind >= 1: its level) holds the merge of every record between
 * its cover offset and itself, in the same segment, as one window blob.
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
#include "agent/store_codec.h"
#include "agent/store_endian.h"

#define STORE_VERSION 1u      /* marks */
#define STORE_SEG_VERSION 2u  /* segments and indexes written now */
#define STORE_IDX2_ENTRY_SIZE 64u
#define STORE_KIND_WINDOW 0u  /* record kinds; roll-ups are their level */
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
	uint32_t kind;  /* STORE_KIND_WINDOW or a roll-up level */
};

struct store_idx {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t off;
	uint32_t len;   /* header + payload */
	uint32_t kind;
	uint32_t windows;   /* windows the record stands for */
	uint64_t cover;     /* first offset a roll-up stands for; else off */
	uint64_t max_start; /* newest window start; else start_ns */
};

static inline uint32_t store_crc(const void *p, size_t n)
{
	return (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p, n);
}

static inline void store_fhdr_put(uint8_t b[32], const char *magic,
				  uint32_t version, uint64_t created_ns)
{
	memset(b, 0, 32);
	memcpy(b, magic, 8);
	le32_put(b + 8, version);
	le32_put(b + 12, 32);
	le64_put(b + 16, created_ns);
	le32_put(b + 28, store_crc(b, 28));
}

/* The version (1..@max), -EBADMSG (not this kind of file, or damaged),
 * -EPROTONOSUPPORT (a newer version than this build reads). */
static inline int store_fhdr_check(const uint8_t b[32], const char *magic,
				   uint32_t max)
{
	uint32_t v;

	if (memcmp(b, magic, 8) != 0 || le32_get(b + 28) != store_crc(b, 28))
		return -EBADMSG;
	v = le32_get(b + 8);
	if (v == 0 || v > max)
		return -EPROTONOSUPPORT;
	if (le32_get(b + 12) != 32)
		return -EBADMSG;
	return (int)v;
}

static inline void store_rec_put(uint8_t b[40], const struct store_rec *r)
{
	memset(b, 0, 40);
	le32_put(b, STORE_REC_MAGIC);
	le32_put(b + 4, r->len);
	le64_put(b + 8, r->start_ns);
	le64_put(b + 16, r->end_ns);
	le32_put(b + 24, r->pcrc);
	le32_put(b + 28, r->kind);
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
	r->kind = le32_get(b + 28); /* 0 in version 1 */
	if (r->len > STORE_REC_MAX || r->end_ns < r->start_ns)
		return -EBADMSG;
	return 0;
}

/* Writes a version 2 entry. */
static inline void store_idx_put(uint8_t b[STORE_IDX2_ENTRY_SIZE],
				 const struct store_idx *e)
{
	memset(b, 0, STORE_IDX2_ENTRY_SIZE);
	le64_put(b, e->start_ns);
	le64_put(b + 8, e->end_ns);
	le64_put(b + 16, e->off);
	le64_put(b + 24, e->cover);
	le64_put(b + 32, e->max_start);
	le32_put(b + 40, e->len);
	le32_put(b + 44, e->kind);
	le32_put(b + 48, e->windows);
	le32_put(b + 60, store_crc(b, 60));
}

/* Reads an entry of an index of @version (1 or 2; a version 1 entry is a
 * window's). 0 or -EBADMSG. */
static inline int store_idx_get(const uint8_t *b, int version,
				struct store_idx *e)
{
	if (version == 1) {
		if (le32_get(b + 28) != store_crc(b, 28))
			return -EBADMSG;
		e->len = le32_get(b + 24);
		e->kind = STORE_KIND_WINDOW;
		e->windows = 1;
	} else {
		if (le32_get(b + 60) != store_crc(b, 60))
			return -EBADMSG;
		e->len = le32_get(b + 40);
		e->kind = le32_get(b + 44);
		e->windows = le32_get(b + 48);
	}
	e->start_ns = le64_get(b);
	e->end_ns = le64_get(b + 8);
	e->off = le64_get(b + 16);
	e->cover = version == 1 ? e->off : le64_get(b + 24);
	e->max_start = version == 1 ? e->start_ns : le64_get(b + 32);
	if (e->len < STORE_REC_HDR_SIZE || e->end_ns < e->start_ns ||
	    e->cover > e->off || e->max_start < e->start_ns)
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

/* A merged scan (see store_scan_merged()) of the records at offsets
 * [@lo, @hi) of one segment, whatever their times: what a roll-up is made
 * of. Fills @rep. Returns 0, the callback's value or a negative errno.
 * Defined in store_scan.c. */
int store_scan_range(int dirfd, uint64_t start, uint64_t lo, uint64_t hi,
		     store_part_fn fn, void *arg, struct store_scan_report *rep);

/* A roll-up being made: the merge of its parts so far. Zeroed = empty. */
struct store_acc {
	struct store_window sum;  /* counters added, time range spanned */
	uint64_t last_start;
	uint32_t windows;
	uint32_t parts;
	bool bad;                 /* a part failed to merge: unusable */
	void *blob;               /* sum packed stored, kept for snapshots */
	size_t len;
};

/* Merges one part (a window or roll-up blob) into @a. 0, or a negative
 * errno (@a is then bad). Defined in store_rollup.c (these three). */
int store_acc_add(struct store_acc *a, const struct store_part *part,
		  const void *payload, size_t len);

/* Packs @a (zlib'd, or stored when @stored) into a new blob and fills
 * @e's times, windows and newest start. -ENODATA for fewer than two
 * parts, -EBADMSG when @a is bad, -ENOMEM. */
int store_acc_pack(struct store_acc *a, bool stored, void **blob, size_t *len,
		   struct store_idx *e);

/* Frees what @a holds and empties it. */
void store_acc_clear(struct store_acc *a);

/* Heap bytes @a's merged profiles hold (prof_memory() of each). */
size_t store_acc_memory(const struct store_acc *a);

/* Merges the records at [@lo, @hi) of segment @seg into a new roll-up
 * blob *@blob of *@len bytes (free()), and fills @e's time range,
 * windows, cover (@lo) and newest start. Returns 0, -ENODATA when the
 * range holds fewer than two records, -EBADMSG when one is damaged or not
 * a window blob, -E2BIG when the merge of two parts or more came to
 * hold more than @max_bytes (0: no bound), -EFBIG when the roll-up
 * would be too large to pack, -ENOMEM. Defined in store_rollup.c. */
int store_rollup_build(int dirfd, uint64_t seg, uint64_t lo, uint64_t hi,
		       size_t max_bytes, void **blob, size_t *len, struct store_idx *e);

#endif /* HEARTH_STORE_FORMAT_H */
