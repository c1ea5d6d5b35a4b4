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
#include "agent/store_verify.h"
#include "agent/trusted_dir.h"

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
	int version;
	struct store_idx *idx;
	size_t nidx;
	uint64_t since, until;
	store_window_fn fn;     /* plain scans: windows */
	store_part_fn pfn;      /* merged scans: windows and roll-ups */
	void *arg;
	struct store_scan_report *rep;
	struct store_verify_report *ver; /* roll-ups by level, or NULL */
	const char *name;
	const struct store_live *live; /* the writer's open run, or NULL */
	bool live_here;         /* it is in this segment, which ends at it */
	uint8_t *buf;           /* one record at a time */
	size_t cap;
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
	size_t n = 0, esz;
	uint64_t last_end = 0;
	int fd, v;

	store_seg_name(name, start, true);
	fd = trusted_openat(dirfd, name, O_RDONLY, 0);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_size < 32 || st.st_size > IDX_READ_MAX)
		goto out;
	buf = malloc((size_t)st.st_size);
	if (!buf || pread_full(fd, buf, (size_t)st.st_size, 0) < 0)
		goto out;
	v = store_fhdr_check(buf, STORE_IDX_MAGIC, STORE_SEG_VERSION);
	if (v < 0)
		goto out;
	esz = v == 1 ? 32 : STORE_IDX2_ENTRY_SIZE;
	n = ((size_t)st.st_size - 32) / esz;
	s->idx = calloc(n ? n : 1, sizeof(*s->idx));
	if (!s->idx)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct store_idx e;

		if (store_idx_get(buf + 32 + i * esz, v, &e) < 0)
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

/* Reads the @len payload bytes of the record at @off into s->buf and
 * checks them against @crc. 0, 1 when damaged, or -ENOMEM. */
static int read_payload(struct seg_scan *s, uint64_t off, uint32_t len, uint32_t crc)
{
	if (len > s->cap || !s->buf) {
		uint8_t *nb = realloc(s->buf, len ? len : 1);

		if (!nb)
			return -ENOMEM;
		s->buf = nb;
		s->cap = len;
	}
	if (pread_full(s->fd, s->buf, len, off + STORE_REC_HDR_SIZE) < 0 ||
	    store_crc(s->buf, len) != crc)
		return 1;
	return 0;
}

/* Reads and checks one window whose header says @r, at @off. Returns the
 * callback's value, 0 when skipped or bad. */
static int deliver(struct seg_scan *s, uint64_t off, const struct store_rec *r)
{
	struct store_part part = { r->start_ns, r->end_ns, r->start_ns, 1, 0 };
	int rc;

	if (!s->fn && !s->pfn) {
		s->rep->windows++;
		return 0;
	}
	rc = read_payload(s, off, r->len, r->pcrc);
	if (rc < 0)
		return rc;
	if (rc) {
		s->rep->corrupt++;
		note_bad(s, off);
		return 0;
	}
	s->rep->windows++;
	if (s->pfn)
		return s->pfn(&part, s->buf, r->len, s->arg);
	return s->fn(r->start_ns, r->end_ns, s->buf, r->len, s->arg);
}

/* A plain scan with a callback reads and checks the roll-ups in range
 * too (what --verify-store reports: a damaged one counts as corrupt);
 * they are not passed on. */
static int check_rollup(struct seg_scan *s, uint64_t off, const struct store_rec *r)
{
	int rc;

	if (!s->fn || !overlaps(s, r->start_ns, r->end_ns))
		return 0;
	rc = read_payload(s, off, r->len, r->pcrc);
	if (rc < 0)
		return rc;
	if (rc) {
		/* Damage all the same, though no window is lost with it. */
		s->rep->rollups_bad++;
		s->rep->corrupt++;
		note_bad(s, off);
	} else {
		s->rep->rollups++;
	}
	if (s->ver && r->kind - 1 < STORE_ROLLUP_LEVELS) {
		if (rc)
			s->ver->rollups_bad[r->kind - 1]++;
		else
			s->ver->rollups[r->kind - 1]++;
	}
	return 0;
}

/* The next indexed offset after @pos, or 0 when none. */
static uint64_t next_indexed(const struct seg_scan *s, size_t k, uint64_t pos)
{
	for (; k < s->nidx; k++)
		if (s->idx[k].off > pos)
			return s->idx[k].off;
	return 0;
}

/* Whether the indexed record @e can be passed over without reading it. */
static bool skip_indexed(const struct seg_scan *s, const struct store_idx *e)
{
	if (e->kind != STORE_KIND_WINDOW)
		return !s->fn || !overlaps(s, e->start_ns, e->end_ns);
	return !overlaps(s, e->start_ns, e->end_ns);
}

/* Passes on the windows of the records in [@lo, @hi), reading headers
 * where the index does not know them. */
static int walk_range(struct seg_scan *s, uint64_t lo, uint64_t hi)
{
	uint64_t pos = lo;
	size_t k = 0;
	int rc = 0;

	while (pos < hi && rc == 0) {
		uint8_t hb[STORE_REC_HDR_SIZE];
		struct store_rec r;

		while (k < s->nidx && s->idx[k].off < pos)
			k++;
		if (k < s->nidx && s->idx[k].off == pos && skip_indexed(s, &s->idx[k])) {
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
		if (r.kind != STORE_KIND_WINDOW)
			rc = check_rollup(s, pos, &r);
		else if (overlaps(s, r.start_ns, r.end_ns))
			rc = deliver(s, pos, &r);
		pos += STORE_REC_HDR_SIZE + r.len;
	}
	return rc;
}

/* Whether the indexed roll-up @e stands for records in [@lo, @hi) only,
 * every one of them a window in the scan's range. */
static bool usable(const struct seg_scan *s, const struct store_idx *e,
		   uint64_t lo, uint64_t hi)
{
	return e->kind != STORE_KIND_WINDOW && e->windows > 0 &&
	       e->cover >= lo && e->cover < e->off && e->off < hi &&
	       e->len <= hi - e->off && s->since <= e->start_ns &&
	       (!s->until || e->max_start < s->until);
}

/* Reads roll-up @e and passes it on. Returns the callback's value, 0
 * (*@bad set when it is damaged), or -ENOMEM. */
static int deliver_rollup(struct seg_scan *s, const struct store_idx *e, bool *bad)
{
	struct store_part part = { e->start_ns, e->end_ns, e->max_start, e->windows, e->kind };
	uint8_t hb[STORE_REC_HDR_SIZE];
	struct store_rec r;
	int rc;

	if (pread_full(s->fd, hb, sizeof(hb), e->off) < 0 || store_rec_get(hb, &r) < 0 ||
	    r.kind != e->kind || r.len != e->len - STORE_REC_HDR_SIZE ||
	    r.start_ns != e->start_ns || r.end_ns != e->end_ns) {
		s->rep->rollups_bad++;
		*bad = true;
		return 0;
	}
	rc = read_payload(s, e->off, r.len, r.pcrc);
	if (rc < 0)
		return rc;
	if (rc) {
		s->rep->rollups_bad++;
		*bad = true;
		return 0;
	}
	s->rep->rollups++;
	s->rep->windows += e->windows;
	return s->pfn(&part, s->buf, r.len, s->arg);
}

/* Whether the writer's open run can stand for its windows in [@lo, @hi). */
static bool live_usable(const struct seg_scan *s, uint64_t lo, uint64_t hi)
{
	const struct store_live *l = s->live;

	return s->live_here && l->part.windows > 0 && l->cover >= lo &&
	       l->cover < l->end && l->end == hi && s->since <= l->part.start_ns &&
	       (!s->until || l->part.last_start_ns < s->until);
}

/* Passes on [@lo, @hi): the outermost usable roll-ups (a roll-up comes
 * after every record it stands for, so one found later that covers an
 * earlier one replaces it), the writer's open run last, and the windows
 * between them. A damaged roll-up is replaced by its own records,
 * roll-ups inside it first. */
static int walk_merged(struct seg_scan *s, uint64_t lo, uint64_t hi, int depth)
{
	size_t *plan = malloc((s->nidx ? s->nidx : 1) * sizeof(*plan)), n = 0;
	bool live = depth == 0 && live_usable(s, lo, hi);
	uint64_t pos = lo;
	int rc = 0;

	if (!plan)
		return -ENOMEM;
	for (size_t k = 0; k < s->nidx && s->idx[k].off < hi; k++) {
		const struct store_idx *e = &s->idx[k];

		if (e->off < lo || !usable(s, e, lo, hi))
			continue;
		while (n && !(s->idx[plan[n - 1]].off < e->cover))
			n--;
		plan[n++] = k;
	}
	while (live && n && !(s->idx[plan[n - 1]].off < s->live->cover))
		n--;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct store_idx *e = &s->idx[plan[i]];
		bool bad = false;

		rc = walk_range(s, pos, e->cover);
		if (rc == 0)
			rc = deliver_rollup(s, e, &bad);
		if (rc == 0 && bad)
			rc = depth < STORE_ROLLUP_LEVELS ? walk_merged(s, e->cover, e->off, depth + 1)
							 : walk_range(s, e->cover, e->off);
		pos = e->off + e->len;
	}
	free(plan);
	if (rc == 0 && live) {
		rc = walk_range(s, pos, s->live->cover);
		if (rc == 0) {
			s->rep->windows += s->live->part.windows;
			rc = s->pfn(&s->live->part, s->live->blob, s->live->len, s->arg);
		}
		pos = hi;
	}
	return rc ? rc : walk_range(s, pos, hi);
}

/* Scans [@lo, @hi) of one segment (@hi 0: to its end), merged when
 * s->pfn is set. */
static int scan_segment(int dirfd, uint64_t start, struct seg_scan *s,
			uint64_t lo, uint64_t hi)
{
	uint8_t hb[STORE_SEG_HDR_SIZE];
	char name[32];
	struct stat st;
	int rc = 0;

	store_seg_name(name, start, false);
	s->name = name;
	s->idx = NULL;
	s->nidx = 0;
	s->fd = trusted_openat(dirfd, name, O_RDONLY, 0);
	if (s->fd < 0)
		return s->fd == -ENOENT ? 0 : s->fd; /* deleted by retention meanwhile */
	s->rep->segments++;
	if (fstat(s->fd, &st) == 0 && st.st_size < (off_t)STORE_SEG_HDR_SIZE) {
		/* Created, then killed before its header was written: a torn
		 * tail, not damage (the next writer opens another segment). */
		s->rep->torn++;
		note_bad(s, 0);
		goto out;
	}
	if (fstat(s->fd, &st) < 0 || st.st_size < (off_t)STORE_SEG_HDR_SIZE ||
	    pread_full(s->fd, hb, sizeof(hb), 0) < 0 ||
	    (s->version = store_fhdr_check(hb, STORE_SEG_MAGIC, STORE_SEG_VERSION)) < 0) {
		s->rep->bad_segments++;
		note_bad(s, 0);
		goto out;
	}
	s->size = (uint64_t)st.st_size;
	if (!hi || hi > s->size)
		hi = s->size;
	if (lo < STORE_SEG_HDR_SIZE)
		lo = STORE_SEG_HDR_SIZE;
	load_index(dirfd, start, s);
	s->live_here = s->live && s->live->seg_start == start && s->live->end == s->size;
	rc = s->pfn ? walk_merged(s, lo, hi, 0) : walk_range(s, lo, hi);
out:
	free(s->idx);
	close(s->fd);
	return rc;
}

int store_count_segment(int dirfd, uint64_t start, uint64_t *windows)
{
	struct store_scan_report rep = { 0 };
	struct seg_scan s = { .rep = &rep };
	int rc = scan_segment(dirfd, start, &s, 0, 0);

	*windows = rep.windows;
	return rc;
}

int store_scan_range(int dirfd, uint64_t start, uint64_t lo, uint64_t hi,
		     store_part_fn fn, void *arg, struct store_scan_report *rep)
{
	struct seg_scan s = { .pfn = fn, .arg = arg, .rep = rep };
	int rc;

	memset(rep, 0, sizeof(*rep));
	rc = scan_segment(dirfd, start, &s, lo, hi);
	free(s.buf);
	return rc;
}

static int scan(const char *dir, struct seg_scan *s, struct store_scan_report *rep)
{
	struct store_scan_report local;
	uint64_t *starts = NULL;
	size_t n = 0;
	int dirfd, rc;

	s->rep = rep ? rep : &local;
	memset(s->rep, 0, sizeof(*s->rep));
	dirfd = trusted_dir_open(dir, false);
	if (dirfd < 0)
		return dirfd;
	rc = store_list_segments(dirfd, &starts, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		/* Windows of segment i end by the first window of segment i+1. */
		if (i + 1 < n && starts[i + 1] < s->since)
			continue;
		if (s->until && !(starts[i] < s->until))
			break;
		rc = scan_segment(dirfd, starts[i], s, 0, 0);
	}
	free(starts);
	free(s->buf);
	close(dirfd);
	return rc;
}

int store_scan(const char *dir, uint64_t since_ns, uint64_t until_ns,
	       store_window_fn fn, void *arg, struct store_scan_report *rep)
{
	struct seg_scan s = { .since = since_ns, .until = until_ns, .fn = fn, .arg = arg };

	return scan(dir, &s, rep);
}

int store_verify(const char *dir, store_window_fn fn, void *arg,
		 struct store_verify_report *rep)
{
	struct seg_scan s = { .fn = fn, .arg = arg, .ver = rep };

	memset(rep, 0, sizeof(*rep));
	return scan(dir, &s, &rep->scan);
}

int store_scan_merged(const char *dir, uint64_t since_ns, uint64_t until_ns,
		      store_part_fn fn, void *arg, struct store_scan_report *rep)
{
	return store_scan_merged_live(dir, since_ns, until_ns, NULL, fn, arg, rep);
}

int store_scan_merged_live(const char *dir, uint64_t since_ns, uint64_t until_ns,
			   const struct store_live *live, store_part_fn fn, void *arg,
			   struct store_scan_report *rep)
{
	struct seg_scan s = { .since = since_ns, .until = until_ns, .pfn = fn, .arg = arg,
			      .live = live };

	return scan(dir, &s, rep);
}
