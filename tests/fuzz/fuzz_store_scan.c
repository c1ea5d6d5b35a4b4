/* SPDX-License-Identifier: MIT */
/* Fuzz target: the store's reader on hostile segments and indexes. The
 * input describes records (kind, times, what a roll-up covers, payload
 * bytes) that are written with valid checksums, so the fuzzer reaches the
 * roll-up planning; or, when the first byte says so, raw bytes after
 * valid file headers. Plain, merged and range scans run over the result,
 * merging every payload as a window blob. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/store_codec.h"
#include "agent/store_format.h"
#include "tests/fuzz/store_merge.h"

#define SEG_START 1000000000000ull
#define MAX_RECS 256

struct file {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct file *f, const void *b, size_t n)
{
	if (f->len + n > f->cap) {
		size_t cap = (f->len + n) * 2;
		uint8_t *np = realloc(f->p, cap);

		if (!np)
			return;
		f->p = np;
		f->cap = cap;
	}
	memcpy(f->p + f->len, b, n);
	f->len += n;
}

static void save(const char *dir, const char *name, const struct file *f)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (f->len && write(fd, f->p, f->len) < 0)
		(void)0;
	close(fd);
}

/* Each record: u8 kind, u8 start step, u8 length, u8 records covered
 * back, u8 windows, u16 payload length, then the payload. */
static void structured(const uint8_t *d, size_t n, struct file *seg, struct file *idx,
		       int version)
{
	uint64_t offs[MAX_RECS], t = SEG_START;
	size_t nrec = 0;

	while (n >= 7 && nrec < MAX_RECS) {
		struct store_rec r = { 0 };
		struct store_idx e = { 0 };
		uint8_t h[STORE_REC_HDR_SIZE], b[STORE_IDX2_ENTRY_SIZE];
		size_t len = (size_t)d[5] | (size_t)d[6] << 8, back = d[3];

		if (len > n - 7)
			len = n - 7;
		t += (uint64_t)d[1] * 1000;
		r = (struct store_rec){ .len = (uint32_t)len, .start_ns = t,
					.end_ns = t + (uint64_t)d[2] * 1000,
					.kind = version == 1 ? 0 : d[0] % 4,
					.pcrc = store_crc(d + 7, len) };
		store_rec_put(h, &r);
		offs[nrec] = seg->len;
		e = (struct store_idx){ .start_ns = r.start_ns, .end_ns = r.end_ns,
					.off = seg->len, .len = (uint32_t)(len + STORE_REC_HDR_SIZE),
					.kind = r.kind, .windows = d[4],
					.cover = back <= nrec ? offs[nrec - back] : seg->len,
					.max_start = r.start_ns + (d[0] >> 4) * 100 };
		put(seg, h, sizeof(h));
		put(seg, d + 7, len);
		if (version == 1) {
			uint8_t v1[32];

			le64_put(v1, e.start_ns);
			le64_put(v1 + 8, e.end_ns);
			le64_put(v1 + 16, e.off);
			le32_put(v1 + 24, e.len);
			le32_put(v1 + 28, store_crc(v1, 28));
			put(idx, v1, sizeof(v1));
		} else if (!(d[0] & 0x40)) { /* some records unindexed */
			store_idx_put(b, &e);
			put(idx, b, sizeof(b));
		}
		d += 7 + len;
		n -= 7 + len;
		nrec++;
	}
}

static int merge_window(uint64_t start, uint64_t end, const void *payload, size_t len,
			void *arg)
{
	(void)start;
	(void)end;
	return merge_part(NULL, payload, len, arg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct file seg = { 0 }, idx = { 0 };
	struct store_scan_report rep;
	struct prof_profile *p;
	char dir[64], name[32];
	uint8_t h[32];
	int version, dirfd;

	if (size < 3 || size > (1u << 16))
		return 0;
	version = (data[0] & 2) ? 1 : 2;
	snprintf(dir, sizeof(dir), "/tmp/hearth-fuzz-store.%d", (int)getpid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return 0;
	store_fhdr_put(h, STORE_SEG_MAGIC, (uint32_t)version, 1);
	put(&seg, h, sizeof(h));
	store_fhdr_put(h, STORE_IDX_MAGIC, (uint32_t)version, 1);
	put(&idx, h, sizeof(h));
	if (data[0] & 1) {
		size_t split = data[1] % (size - 2);

		put(&seg, data + 2, split);
		put(&idx, data + 2 + split, size - 2 - split);
	} else {
		structured(data + 2, size - 2, &seg, &idx, version);
	}
	store_seg_name(name, SEG_START, false);
	save(dir, name, &seg);
	store_seg_name(name, SEG_START, true);
	if (!(data[0] & 4)) /* else no index: headers only */
		save(dir, name, &idx);
	free(seg.p);
	free(idx.p);

	p = prof_new(PROF_UNIT_SAMPLES);
	if (!p)
		return 0;
	store_scan(dir, 0, 0, merge_window, p, &rep);
	store_scan(dir, SEG_START + (uint64_t)data[1] * 1000, 0, NULL, NULL, &rep);
	store_scan_merged(dir, 0, 0, merge_part, p, &rep);
	store_scan_merged(dir, SEG_START + (uint64_t)data[1] * 500,
			  SEG_START + (uint64_t)data[1] * 5000, merge_part, p, &rep);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd >= 0) {
		store_scan_range(dirfd, SEG_START, data[1], (uint64_t)data[1] * 300, merge_part,
				 p, &rep);
		close(dirfd);
	}
	prof_free(p);
	/* Next input starts clean: no index left from this one. */
	store_seg_name(name, SEG_START, true);
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		unlink(path);
	}
	return 0;
}
