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
/* Bytes read at a time looking for the next record after a damaged one. */
#define RESYNC_BLOCK (64u << 10)

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
	uint64_t start;         /* the segment's name */
	uint64_t size;
	int version;            /* of its header; 0 when that is damaged */
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

static void note_bad_idx(struct seg_scan *s, const char *name)
{
	if (!s->rep->first_bad_idx[0])
		snprintf(s->rep->first_bad_idx, sizeof(s->rep->first_bad_idx), "%s", name);
}

/* The version of an index whose own header is damaged: the segment's,
 * when its header is good (both are written alike), else the layout whose
 * first entry checks out; 0 when neither does. */
static int guess_idx_version(const uint8_t *buf, size_t size, int seg_version)
{
	struct store_idx e;

	if (seg_version > 0)
		return seg_version;
	if (size >= 32 + STORE_IDX2_ENTRY_SIZE && store_idx_get(buf + 32, 2, &e) == 0)
		return 2;
	if (size >= 32 + 32 && store_idx_get(buf + 32, 1, &e) == 0)
		return 1;
	return 0;
}

/* Keeps the good entries of an index of @v, in increasing offset order.
 * A bad entry (CRC, or out of order) followed by a good one is damage; bad
 * ones at the end, or a partial last entry, are a torn tail (a crash: the
 * index is synced when its segment closes). Entries past the segment's
 * end are records a live writer appended after it was measured. */
static void keep_entries(struct seg_scan *s, const uint8_t *buf, size_t size, int v,
			 const char *name)
{
	size_t esz = v == 1 ? 32 : STORE_IDX2_ENTRY_SIZE, n = (size - 32) / esz;
	uint64_t last_end = 0, bad = 0, beyond = 0;

	for (size_t i = 0; i < n; i++) {
		struct store_idx e;

		if (store_idx_get(buf + 32 + i * esz, v, &e) < 0 || e.off < last_end ||
		    e.off < STORE_SEG_HDR_SIZE) {
			bad++;
			continue;
		}
		if (e.len > s->size || e.off > s->size - e.len) {
			beyond++;
			continue;
		}
		if (bad || beyond) {
			s->rep->idx_bad += bad + beyond;
			note_bad_idx(s, name);
			bad = beyond = 0;
		}
		s->idx[s->nidx++] = e;
		last_end = e.off + e.len;
	}
	if (bad || (size - 32) % esz)
		s->rep->idx_torn++;
}

/* Loads the good entries of the segment's index (version of the segment's
 * header in s->version, 0 when that is damaged) and reports what is
 * wrong with it; a missing or damaged index just means more record
 * headers are read. */
static void load_index(int dirfd, uint64_t start, struct seg_scan *s)
{
	char name[32];
	uint8_t *buf = NULL;
	struct stat st;
	int fd, v;

	store_seg_name(name, start, true);
	fd = trusted_openat(dirfd, name, O_RDONLY, 0);
	if (fd < 0) {
		if (fd == -ENOENT) {
			s->rep->idx_missing++;
		} else {
			s->rep->idx_bad++; /* refused (not trusted) or unreadable */
			note_bad_idx(s, name);
		}
		return;
	}
	if (fstat(fd, &st) < 0 || st.st_size < 32) {
		s->rep->idx_torn++; /* killed before its header was written */
		goto out;
	}
	buf = st.st_size <= IDX_READ_MAX ? malloc((size_t)st.st_size) : NULL;
	if (!buf || pread_full(fd, buf, (size_t)st.st_size, 0) < 0) {
		s->rep->idx_bad++;
		note_bad_idx(s, name);
		goto out;
	}
	v = store_fhdr_check(buf, STORE_IDX_MAGIC, STORE_SEG_VERSION);
	if (v < 0) {
		s->rep->idx_bad++;
		note_bad_idx(s, name);
		v = v == -EBADMSG ? guess_idx_version(buf, (size_t)st.st_size, s->version) : 0;
		if (!v)
			goto out;
	}
	s->idx = calloc(((size_t)st.st_size - 32) / 32 + 1, sizeof(*s->idx));
	if (s->idx)
		keep_entries(s, buf, (size_t)st.st_size, v, name);
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

/* The offset of the first valid record header in [@from, @to) whose
 * record fits in the segment, or 0: where reading resumes after a damaged
 * record the index does not know the end of. */
static uint64_t find_record(const struct seg_scan *s, uint64_t from, uint64_t to)
{
	static const uint8_t magic[4] = { 'H', 'R', 'C', '1' };
	uint8_t blk[RESYNC_BLOCK];

	if (to > s->size)
		to = s->size;
	while (from < to && s->size - from >= STORE_REC_HDR_SIZE) {
		size_t n = s->size - from < sizeof(blk) ? (size_t)(s->size - from) : sizeof(blk);
		const uint8_t *p = blk;

		if (pread_full(s->fd, blk, n, from) < 0)
			return 0;
		while ((p = memmem(p, n - (size_t)(p - blk), magic, sizeof(magic)))) {
			uint64_t off = from + (uint64_t)(p - blk);
			struct store_rec r;

			if (off >= to || (size_t)(p - blk) + STORE_REC_HDR_SIZE > n)
				break;
			if (store_rec_get(p, &r) == 0 && r.len <= s->size - off - STORE_REC_HDR_SIZE)
				return off;
			p++;
		}
		if (n < sizeof(blk))
			break;
		from += n - STORE_REC_HDR_SIZE + 1; /* a header across blocks */
	}
	return 0;
}

/* Checks index entry @e against the header @r of its record. */
static void check_entry(struct seg_scan *s, const struct store_idx *e, const struct store_rec *r)
{
	char name[32];

	if (e->len == STORE_REC_HDR_SIZE + (uint64_t)r->len && e->start_ns == r->start_ns &&
	    e->end_ns == r->end_ns && e->kind == r->kind)
		return;
	s->rep->idx_bad++;
	store_seg_name(name, s->start, true);
	note_bad_idx(s, name);
}

/* Where reading resumes after a damaged record at @pos (k: the first
 * index entry at or after it), or 0 when nothing valid follows: a torn
 * tail, unless the index says the record was whole. */
static uint64_t resume_after(const struct seg_scan *s, size_t k, uint64_t pos)
{
	uint64_t next = next_indexed(s, k, pos), found;

	if (k < s->nidx && s->idx[k].off == pos)
		return pos + s->idx[k].len;
	found = find_record(s, pos + 1, next ? next : s->size);
	return found ? found : next;
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
		uint64_t next;

		while (k < s->nidx && s->idx[k].off < pos)
			k++;
		if (k < s->nidx && s->idx[k].off == pos && skip_indexed(s, &s->idx[k])) {
			pos += s->idx[k++].len;
			continue;
		}
		next = next_indexed(s, k, pos);
		/* A bad header, or one whose record runs past the end of the
		 * segment or over the next record the index knows. */
		if (s->size - pos < STORE_REC_HDR_SIZE ||
		    pread_full(s->fd, hb, sizeof(hb), pos) < 0 ||
		    store_rec_get(hb, &r) < 0 ||
		    s->size - pos - STORE_REC_HDR_SIZE < r.len ||
		    (next && next < pos + STORE_REC_HDR_SIZE + r.len)) {
			note_bad(s, pos);
			next = resume_after(s, k, pos);
			if (!next) {
				s->rep->torn++;
				break;
			}
			s->rep->corrupt++;
			pos = next;
			continue;
		}
		if (k < s->nidx && s->idx[k].off == pos)
			check_entry(s, &s->idx[k], &r);
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
	s->start = start;
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
	s->version = -EIO;
	if (fstat(s->fd, &st) == 0 && pread_full(s->fd, hb, sizeof(hb), 0) == 0)
		s->version = store_fhdr_check(hb, STORE_SEG_MAGIC, STORE_SEG_VERSION);
	if (s->version < 0) {
		s->rep->bad_segments++;
		note_bad(s, 0);
		/* A newer version, or unreadable: nothing here can be read. */
		if (s->version != -EBADMSG) {
			s->rep->skipped_segments++;
			goto out;
		}
		s->version = 0; /* damaged: the records say what they are */
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
	struct store_mark *m = NULL;
	size_t n = 0;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rc = scan(dir, &s, &rep->scan);
	if (rc < 0)
		return rc;
	rep->marks_err = store_marks_read(dir, &m, &n, &rep->mk);
	rep->marks = n;
	free(m);
	return rc;
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
