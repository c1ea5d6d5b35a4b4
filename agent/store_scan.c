/* SPDX-License-Identifier: MIT */
/* store_scan: finds and validates the records of a time range. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/store_format.h"

/* Largest index file read (2 million entries). */
#define IDX_READ_MAX (64u << 20)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : (y < x ? 1 : 0);
}

static bool parse_seg_name(const char *name, uint64_t *start)
{
	uint64_t v = 0;

	if (strlen(name) != STORE_SEG_NAME_LEN || strncmp(name, "seg-", 4) != 0 ||
	    strcmp(name + 24, ".hst") != 0)
		return false;
	for (int i = 4; i < 24; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	*start = v;
	return true;
}

int store_list_segments(int dirfd, uint64_t **starts, size_t *n)
{
	uint64_t *arr = NULL, v;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd = dup(dirfd);

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!parse_seg_name(de->d_name, &v))
			continue;
		if (cnt == cap) {
			uint64_t *na = realloc(arr, (cap ? cap * 2 : 16) * sizeof(*na));

			if (!na) {
				free(arr);
				closedir(d);
				return -ENOMEM;
			}
			arr = na;
			cap = cap ? cap * 2 : 16;
		}
		arr[cnt++] = v;
	}
	closedir(d);
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), cmp_u64);
	*starts = arr;
	*n = cnt;
	return 0;
}

struct seg_scan {
	int fd;
	uint64_t size;
	struct store_idx *idx;
	size_t nidx;
	uint64_t since, until;
	store_window_fn fn;
	void *arg;
	struct store_scan_report *rep;
	const char *name;
};

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		done += (size_t)r;
	}
	return 0;
}

/* Loads the valid entries of the segment's index, in increasing offset
 * order; a missing or damaged index just means more headers are read. */
static void load_index(int dirfd, uint64_t start, struct seg_scan *s)
{
	char name[32];
	uint8_t *buf = NULL;
	struct stat st;
	size_t n = 0;
	uint64_t last_end = 0;
	int fd;

	store_seg_name(name, start, true);
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_size < 32 || st.st_size > IDX_READ_MAX)
		goto out;
	buf = malloc((size_t)st.st_size);
	if (!buf || pread_full(fd, buf, (size_t)st.st_size, 0) < 0 ||
	    store_fhdr_check(buf, STORE_IDX_MAGIC) < 0)
		goto out;
	n = ((size_t)st.st_size - 32) / STORE_IDX_ENTRY_SIZE;
	s->idx = calloc(n ? n : 1, sizeof(*s->idx));
	if (!s->idx)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct store_idx e;

		if (store_idx_get(buf + 32 + i * STORE_IDX_ENTRY_SIZE, &e) < 0)
			continue;
		if (e.off < last_end || e.off < STORE_SEG_HDR_SIZE ||
		    e.off + e.len > s->size)
			continue;
		s->idx[s->nidx++] = e;
		last_end = e.off + e.len;
	}
out:
	free(buf);
	close(fd);
}

static void note_bad(struct seg_scan *s, uint64_t off)
{
	if (s->rep->first_bad_seg[0])
		return;
	snprintf(s->rep->first_bad_seg, sizeof(s->rep->first_bad_seg), "%s", s->name);
	s->rep->first_bad_off = off;
}

static bool overlaps(const struct seg_scan *s, uint64_t start, uint64_t end)
{
	if (s->until && !(start < s->until))
		return false;
	return s->since < end || (start == end && s->since <= start);
}

/* Reads and checks one record whose header says @r, at @off. Returns the
 * callback's value, 0 when skipped or bad. */
static int deliver(struct seg_scan *s, uint64_t off, const struct store_rec *r)
{
	uint8_t *buf;
	int rc = 0;

	if (!s->fn) {
		s->rep->windows++;
		return 0;
	}
	buf = malloc(r->len ? r->len : 1);
	if (!buf)
		return -ENOMEM;
	if (pread_full(s->fd, buf, r->len, off + STORE_REC_HDR_SIZE) < 0 ||
	    store_crc(buf, r->len) != r->pcrc) {
		s->rep->corrupt++;
		note_bad(s, off);
	} else {
		s->rep->windows++;
		rc = s->fn(r->start_ns, r->end_ns, buf, r->len, s->arg);
	}
	free(buf);
	return rc;
}

/* The next indexed offset after @pos, or 0 when none. */
static uint64_t next_indexed(const struct seg_scan *s, size_t k, uint64_t pos)
{
	for (; k < s->nidx; k++)
		if (s->idx[k].off > pos)
			return s->idx[k].off;
	return 0;
}

static int walk_segment(struct seg_scan *s)
{
	uint64_t pos = STORE_SEG_HDR_SIZE;
	size_t k = 0;
	int rc = 0;

	while (pos < s->size && rc == 0) {
		uint8_t hb[STORE_REC_HDR_SIZE];
		struct store_rec r;

		while (k < s->nidx && s->idx[k].off < pos)
			k++;
		if (k < s->nidx && s->idx[k].off == pos &&
		    !overlaps(s, s->idx[k].start_ns, s->idx[k].end_ns)) {
			pos += s->idx[k++].len;
			continue;
		}
		if (s->size - pos < STORE_REC_HDR_SIZE ||
		    pread_full(s->fd, hb, sizeof(hb), pos) < 0 ||
		    store_rec_get(hb, &r) < 0) {
			uint64_t next = next_indexed(s, k, pos);

			note_bad(s, pos);
			if (!next) {
				s->rep->torn++;
				break;
			}
			s->rep->corrupt++;
			pos = next;
			continue;
		}
		if (s->size - pos - STORE_REC_HDR_SIZE < r.len) {
			note_bad(s, pos);
			s->rep->torn++;
			break;
		}
		if (overlaps(s, r.start_ns, r.end_ns))
			rc = deliver(s, pos, &r);
		pos += STORE_REC_HDR_SIZE + r.len;
	}
	return rc;
}

static int scan_segment(int dirfd, uint64_t start, struct seg_scan *s)
{
	uint8_t hb[STORE_SEG_HDR_SIZE];
	char name[32];
	struct stat st;
	int rc = 0;

	store_seg_name(name, start, false);
	s->name = name;
	s->idx = NULL;
	s->nidx = 0;
	s->fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return errno == ENOENT ? 0 : -errno; /* deleted by retention meanwhile */
	s->rep->segments++;
	if (fstat(s->fd, &st) < 0 || st.st_size < (off_t)STORE_SEG_HDR_SIZE ||
	    pread_full(s->fd, hb, sizeof(hb), 0) < 0 ||
	    store_fhdr_check(hb, STORE_SEG_MAGIC) < 0) {
		s->rep->bad_segments++;
		note_bad(s, 0);
		goto out;
	}
	s->size = (uint64_t)st.st_size;
	load_index(dirfd, start, s);
	rc = walk_segment(s);
out:
	free(s->idx);
	close(s->fd);
	return rc;
}

int store_count_segment(int dirfd, uint64_t start, uint64_t *windows)
{
	struct store_scan_report rep = { 0 };
	struct seg_scan s = { .rep = &rep };
	int rc = scan_segment(dirfd, start, &s);

	*windows = rep.windows;
	return rc;
}

int store_scan(const char *dir, uint64_t since_ns, uint64_t until_ns,
	       store_window_fn fn, void *arg, struct store_scan_report *rep)
{
	struct store_scan_report local;
	struct seg_scan s = { .since = since_ns, .until = until_ns, .fn = fn, .arg = arg };
	uint64_t *starts = NULL;
	size_t n = 0;
	int dirfd, rc;

	s.rep = rep ? rep : &local;
	memset(s.rep, 0, sizeof(*s.rep));
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	rc = store_list_segments(dirfd, &starts, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		/* Windows of segment i end by the first window of segment i+1. */
		if (i + 1 < n && starts[i + 1] < since_ns)
			continue;
		if (until_ns && !(starts[i] < until_ns))
			break;
		rc = scan_segment(dirfd, starts[i], &s);
	}
	free(starts);
	close(dirfd);
	return rc;
}
