/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the store's readers over whole damaged files, as a bad
 * disk or a hostile hand leaves them. The input is a segment, its index
 * and a marks file, taken as they are (no checksum fixed up):
 *
 *   u32 segment length, segment bytes, u32 index length, index bytes,
 *   the rest: the marks file (lengths little-endian, cut to what is left;
 *   a length of 0xffffffff leaves that file out).
 *
 * Over them run what hearthd runs: the writer's count at open,
 * --verify-store (each window decoded, every roll-up, index entry and
 * mark checked), a snapshot's merged scan and a plain scan of a range, and
 * the marks reader. The seeds in tests/fuzz/corpus/store_files are cut
 * from a store hearthd's writer made of real windows (three windows and
 * two roll-ups, three marks): as written, with a segment header byte
 * flipped, a record header claiming 60 MiB with a valid checksum, an
 * index cut short, an index entry flipped, a mark and the marks header
 * flipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/store.h"
#include "agent/store_codec.h"
#include "agent/store_endian.h"
#include "agent/store_verify.h"
#include "tests/fuzz/store_merge.h"

#define SEG_NAME "seg-00000001000000000000"
#define ABSENT 0xffffffffu
#define SEC 1000000000ull

/* Takes the next file of the input: its bytes in *@p, *@n of them.
 * False when the input says it is absent. */
static bool next_file(const uint8_t **d, size_t *size, const uint8_t **p, size_t *n)
{
	uint32_t len;

	*p = NULL;
	*n = 0;
	if (*size < 4) {
		*size = 0;
		return false;
	}
	len = le32_get(*d);
	*d += 4;
	*size -= 4;
	if (len == ABSENT)
		return false;
	*n = len < *size ? len : *size;
	*p = *d;
	*d += *n;
	*size -= *n;
	return true;
}

static void save(const char *dir, const char *name, const uint8_t *p, size_t n, bool keep)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (!keep)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (n && write(fd, p, n) < 0)
		(void)0;
	close(fd);
}

/* --verify-store's callback: decode each window. */
static int verify_window(uint64_t start, uint64_t end, const void *payload, size_t len,
			 void *arg)
{
	struct store_window w;

	(void)start;
	(void)end;
	(void)arg;
	if (store_codec_window_unpack(payload, len, &w) == 0)
		store_window_clear(&w);
	return 0;
}

static int count_window(uint64_t start, uint64_t end, const void *payload, size_t len,
			void *arg)
{
	(void)start;
	(void)end;
	(void)payload;
	(void)len;
	++*(uint64_t *)arg;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *seg, *idx;
	size_t nseg, nidx;
	bool has_seg, has_idx;
	struct store_verify_report vr;
	struct store_scan_report rep;
	struct store_limits lim = { 0 };
	struct store_mark *marks;
	struct store *s;
	struct prof_profile *p;
	uint64_t n = 0, t;
	size_t nm;
	char dir[64];
	int err;

	if (size > (4u << 20))
		return 0;
	snprintf(dir, sizeof(dir), "/tmp/hearth-fuzz-files.%d", (int)getpid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return 0;
	has_seg = next_file(&data, &size, &seg, &nseg);
	has_idx = next_file(&data, &size, &idx, &nidx);
	save(dir, SEG_NAME ".hst", seg, nseg, has_seg);
	save(dir, SEG_NAME ".idx", idx, nidx, has_idx);
	save(dir, "marks", data, size, size > 0);

	/* Ranges from the first record's start, when there is one. */
	t = nseg >= STORE_SEG_HDR_SIZE + 16 ? le64_get(seg + STORE_SEG_HDR_SIZE + 8) : 0;
	t = t < UINT64_MAX / 2 ? t : 0;
	s = store_open(dir, &lim, &err);
	store_close(s);
	store_verify(dir, verify_window, NULL, &vr);
	p = prof_new(PROF_UNIT_SAMPLES);
	if (p) {
		store_scan_merged(dir, 0, 0, merge_part, p, &rep);
		store_scan_merged(dir, t + SEC, t + 3 * SEC, merge_part, p, &rep);
		prof_free(p);
	}
	store_scan(dir, t, t + 2 * SEC, count_window, &n, &rep);
	if (store_marks_read(dir, &marks, &nm, NULL) == 0)
		free(marks);
	return 0;
}
