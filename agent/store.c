/* SPDX-License-Identifier: MIT */
/* store: appending windows and roll-ups to segments, rolling and
 * retention. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/store_format.h"
#include "agent/trusted_dir.h"

#define SEG_BYTES_MIN (4u << 10)
#define SEG_BYTES_MAX (64u << 20)
#define SEG_AGE_DEFAULT (3600ull * 1000000000ull)

struct seg {
	uint64_t start;
	uint64_t bytes;   /* segment + index */
	uint64_t windows; /* records it holds */
};

/* The records since a roll-up level's last one, in the open segment. */
struct run {
	bool open;
	uint64_t bucket;  /* window start / span */
	uint64_t cover;   /* offset of its first record */
};

struct store {
	int dirfd;
	struct store_limits lim;
	uint64_t span[STORE_ROLLUP_LEVELS]; /* STORE_ROLLUP_OFF: none */
	struct run run[STORE_ROLLUP_LEVELS];
	struct store_acc acc; /* level 0's open run, merged as windows come */
	struct seg *segs;   /* oldest first; the open one is last when cur_fd >= 0 */
	size_t nsegs;
	size_t cap;
	int cur_fd;
	int idx_fd;
	bool idx_ok;
	uint64_t cur_end;   /* segment bytes written and synced */
	uint64_t idx_end;
	uint64_t cur_created;
	struct store_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = pwrite(fd, (const char *)buf + done, len - done,
				   (off_t)(off + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		done += (size_t)w;
	}
	return 0;
}

static uint64_t file_size_at(int dirfd, uint64_t start, bool idx)
{
	char name[32];
	struct stat st;

	store_seg_name(name, start, idx);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return (uint64_t)st.st_size;
}

static int segs_push(struct store *s, uint64_t start, uint64_t bytes,
		     uint64_t windows)
{
	if (s->nsegs == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct seg *n = realloc(s->segs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->segs = n;
		s->cap = cap;
	}
	s->segs[s->nsegs].start = start;
	s->segs[s->nsegs].bytes = bytes;
	s->segs[s->nsegs].windows = windows;
	s->nsegs++;
	s->st.windows += windows;
	s->st.segments = s->nsegs;
	s->st.bytes += bytes;
	return 0;
}

static uint64_t seg_bytes_limit(const struct store_limits *l)
{
	uint64_t b = l->seg_bytes;

	if (!b)
		b = l->max_bytes ? l->max_bytes / 8 : SEG_BYTES_MAX;
	if (b < SEG_BYTES_MIN)
		b = SEG_BYTES_MIN;
	return b < SEG_BYTES_MAX ? b : SEG_BYTES_MAX;
}

void store_set_limits(struct store *s, const struct store_limits *lim)
{
	static const uint64_t def[STORE_ROLLUP_LEVELS] = { STORE_ROLLUP_SPAN0, STORE_ROLLUP_SPAN1 };

	s->lim = *lim;
	for (int l = 0; l < STORE_ROLLUP_LEVELS; l++) {
		uint64_t v = lim->rollup_ns[l] ? lim->rollup_ns[l] : def[l];

		/* Each span a multiple of the one below, so runs nest. */
		if (l && (s->span[l - 1] == STORE_ROLLUP_OFF || v % s->span[l - 1] != 0))
			v = STORE_ROLLUP_OFF;
		s->span[l] = v;
	}
	/* Segments span at most 1/8 of the age limit, so age retention,
	 * which deletes whole segments, keeps at most 1/8 too much. */
	if (!s->lim.seg_age_ns)
		s->lim.seg_age_ns = s->lim.max_age_ns && s->lim.max_age_ns / 8 < SEG_AGE_DEFAULT ?
				    s->lim.max_age_ns / 8 : SEG_AGE_DEFAULT;
}

struct store *store_open(const char *dir, const struct store_limits *lim,
			 int *err)
{
	struct store *s = calloc(1, sizeof(*s));
	uint64_t *starts = NULL;
	size_t n = 0;
	int rc;

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->cur_fd = s->idx_fd = -1;
	store_set_limits(s, lim);
	s->dirfd = trusted_dir_open(dir, true);
	if (s->dirfd < 0) {
		rc = s->dirfd;
		goto fail;
	}
	/* One writer per store: a second hearthd on the same directory would
	 * delete the first one's segments. The lock dies with the process. */
	if (flock(s->dirfd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		goto fail_dir;
	}
	rc = store_list_segments(s->dirfd, &starts, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint64_t w = 0;

		store_count_segment(s->dirfd, starts[i], &w);
		rc = segs_push(s, starts[i], file_size_at(s->dirfd, starts[i], false) +
				     file_size_at(s->dirfd, starts[i], true), w);
	}
	free(starts);
	if (rc)
		goto fail_dir;
	return s;
fail_dir:
	close(s->dirfd);
fail:
	free(s->segs);
	free(s);
	*err = rc;
	return NULL;
}

static void close_current(struct store *s)
{
	for (int l = 0; l < STORE_ROLLUP_LEVELS; l++)
		s->run[l].open = false;
	store_acc_clear(&s->acc);
	if (s->cur_fd >= 0) {
		fdatasync(s->cur_fd);
		close(s->cur_fd);
	}
	if (s->idx_fd >= 0) {
		fdatasync(s->idx_fd);
		close(s->idx_fd);
	}
	s->cur_fd = s->idx_fd = -1;
}

static int delete_seg(struct store *s, size_t i)
{
	char name[32];

	if (i + 1 == s->nsegs && s->cur_fd >= 0)
		close_current(s);
	store_seg_name(name, s->segs[i].start, true);
	unlinkat(s->dirfd, name, 0);
	store_seg_name(name, s->segs[i].start, false);
	if (unlinkat(s->dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	s->st.bytes -= s->segs[i].bytes < s->st.bytes ? s->segs[i].bytes : s->st.bytes;
	s->st.windows -= s->segs[i].windows < s->st.windows ? s->segs[i].windows : s->st.windows;
	memmove(s->segs + i, s->segs + i + 1, (s->nsegs - i - 1) * sizeof(*s->segs));
	s->nsegs--;
	s->st.segments = s->nsegs;
	s->st.deleted_segs++;
	fsync(s->dirfd);
	return 0;
}

/* Creates "name" with a file header and syncs it. Returns the fd. */
static int create_file(struct store *s, const char *name, const char *magic)
{
	uint8_t hdr[32];
	int fd, rc;

	fd = trusted_openat(s->dirfd, name, O_RDWR | O_CREAT | O_EXCL, 0640);
	if (fd < 0)
		return fd;
	store_fhdr_put(hdr, magic, STORE_SEG_VERSION, now_ns());
	rc = pwrite_full(fd, hdr, sizeof(hdr), 0);
	if (!rc && fdatasync(fd) < 0)
		rc = -errno;
	if (rc) {
		close(fd);
		unlinkat(s->dirfd, name, 0);
		return rc;
	}
	return fd;
}

static int open_segment(struct store *s, uint64_t start)
{
	char name[32], iname[32];
	int rc;

	if (s->nsegs && !(s->segs[s->nsegs - 1].start < start))
		start = s->segs[s->nsegs - 1].start + 1; /* names stay increasing */
	store_seg_name(name, start, false);
	store_seg_name(iname, start, true);
	s->cur_fd = create_file(s, name, STORE_SEG_MAGIC);
	if (s->cur_fd < 0) {
		rc = s->cur_fd;
		s->cur_fd = -1;
		return rc;
	}
	s->idx_fd = create_file(s, iname, STORE_IDX_MAGIC);
	s->idx_ok = s->idx_fd >= 0;
	if (!s->idx_ok)
		s->idx_fd = -1;
	fsync(s->dirfd);
	s->cur_end = STORE_SEG_HDR_SIZE;
	s->idx_end = STORE_SEG_HDR_SIZE;
	s->cur_created = mono_ns();
	rc = segs_push(s, start, s->cur_end + (s->idx_ok ? s->idx_end : 0), 0);
	if (rc) {
		close_current(s);
		unlinkat(s->dirfd, iname, 0);
		unlinkat(s->dirfd, name, 0);
	}
	return rc;
}

static bool over_size(const struct store *s, uint64_t add)
{
	return s->lim.max_bytes && s->st.bytes + add > s->lim.max_bytes;
}

int store_retain(struct store *s, uint64_t now)
{
	size_t keep_last = s->cur_fd >= 0 ? 1 : 0;
	int deleted = 0, rc;

	/* Segment i's newest window ends by the first window of segment i+1. */
	while (s->lim.max_age_ns && s->nsegs > keep_last && s->nsegs >= 2 &&
	       s->segs[1].start + s->lim.max_age_ns < now) {
		rc = delete_seg(s, 0);
		if (rc)
			return rc;
		deleted++;
	}
	while (over_size(s, 0) && s->nsegs > keep_last) {
		rc = delete_seg(s, 0);
		if (rc)
			return rc;
		deleted++;
	}
	return deleted;
}

static bool must_roll(const struct store *s, uint64_t add)
{
	return s->cur_fd < 0 || s->cur_end + add > seg_bytes_limit(&s->lim) ||
	       mono_ns() - s->cur_created > s->lim.seg_age_ns;
}

static void flush_runs(struct store *s, int l);

/* Makes room for @add bytes and picks the segment to write to. */
static int prepare(struct store *s, uint64_t start, uint64_t add)
{
	bool roll = must_roll(s, add);
	int rc;

	if (s->lim.max_bytes && add + 2 * STORE_SEG_HDR_SIZE > s->lim.max_bytes)
		return -EFBIG;
	/* A roll decided here and not before the window (a roll-up written
	 * since pushed the segment over its size, or its age passed) still
	 * writes the open runs' roll-ups first: closing drops them. */
	if (roll && s->cur_fd >= 0 && s->cur_end > STORE_SEG_HDR_SIZE) {
		flush_runs(s, STORE_ROLLUP_LEVELS - 1);
		close_current(s);
	}
	else if (roll && s->cur_fd >= 0)
		roll = false; /* empty: keep using it */
	rc = store_retain(s, now_ns());
	if (rc < 0)
		return rc;
	while (over_size(s, add + (roll ? 2 * STORE_SEG_HDR_SIZE : 0)) && s->nsegs) {
		if (s->cur_fd >= 0 && s->nsegs == 1)
			roll = true;
		rc = delete_seg(s, 0);
		if (rc)
			return rc;
	}
	return roll ? open_segment(s, start) : 0;
}

static void index_record(struct store *s, const struct store_idx *e)
{
	uint8_t b[STORE_IDX2_ENTRY_SIZE];

	if (!s->idx_ok)
		return;
	store_idx_put(b, e);
	/* Not synced per window: the record itself is, and an entry lost in
	 * a crash (or torn: each has a CRC) only means readers walk the
	 * record headers past the last good one. Closing a segment syncs. */
	if (pwrite_full(s->idx_fd, b, sizeof(b), s->idx_end) < 0) {
		/* Readers fall back to the record headers past the last entry;
		 * no roll-up is written for the rest of this segment. */
		if (ftruncate(s->idx_fd, (off_t)s->idx_end) < 0)
			s->idx_ok = false;
		s->idx_ok = false;
		return;
	}
	s->idx_end += sizeof(b);
	s->segs[s->nsegs - 1].bytes += sizeof(b);
	s->st.bytes += sizeof(b);
}

/* Writes record @e (kind, times, windows, cover, newest start filled;
 * offset and length set here) with @payload at the open segment's end,
 * synced, then its index entry. 0 or a negative errno; nothing partial
 * remains. */
static int write_record(struct store *s, struct store_idx *e, const void *payload,
			size_t len)
{
	struct store_rec r = { .len = (uint32_t)len, .start_ns = e->start_ns,
			       .end_ns = e->end_ns, .kind = e->kind };
	uint64_t total = STORE_REC_HDR_SIZE + (uint64_t)len;
	uint8_t *buf = malloc(total);
	int rc;

	if (!buf)
		return -ENOMEM;
	r.pcrc = store_crc(payload, len);
	store_rec_put(buf, &r);
	memcpy(buf + STORE_REC_HDR_SIZE, payload, len);
	rc = pwrite_full(s->cur_fd, buf, total, s->cur_end);
	free(buf);
	if (!rc && fdatasync(s->cur_fd) < 0)
		rc = -errno;
	if (rc) {
		/* Nothing partial may stay; the next append overwrites it anyway. */
		if (ftruncate(s->cur_fd, (off_t)s->cur_end) < 0)
			close_current(s);
		return rc;
	}
	e->off = s->cur_end;
	e->len = (uint32_t)total;
	s->cur_end += total;
	s->segs[s->nsegs - 1].bytes += total;
	s->st.bytes += total;
	index_record(s, e);
	return 0;
}

/* Writes level @l's roll-up of its run, when the run holds two records
 * or more and readers can find it (the index is good). Level 0's comes
 * from its merge kept in memory, the others' from the segment. Never
 * rolls the segment: a roll-up stays with what it stands for. */
static void write_rollup(struct store *s, int l)
{
	struct run *r = &s->run[l];
	struct store_idx e;
	void *blob = NULL;
	size_t len = 0;
	int rc;

	r->open = false;
	if (s->cur_fd < 0 || !s->idx_ok || !(r->cover < s->cur_end)) {
		if (l == 0)
			store_acc_clear(&s->acc);
		return;
	}
	if (l == 0) {
		rc = store_acc_pack(&s->acc, false, &blob, &len, &e);
		store_acc_clear(&s->acc);
		e.cover = r->cover;
	} else {
		rc = store_rollup_build(s->dirfd, s->segs[s->nsegs - 1].start, r->cover,
					s->cur_end, (size_t)s->lim.rollup_bytes, &blob, &len, &e);
	}
	if (rc == -ENODATA)
		return;
	if (rc == -E2BIG) {
		s->st.rollups_bounded++;
		return;
	}
	if (!rc && len > STORE_REC_MAX)
		rc = -EFBIG;
	if (!rc) {
		uint64_t add = STORE_REC_HDR_SIZE + len + STORE_IDX2_ENTRY_SIZE;

		/* Older segments may go to make room, never the open one. */
		while (over_size(s, add) && s->nsegs > 1 && !rc)
			rc = delete_seg(s, 0);
		if (!rc && over_size(s, add))
			rc = -ENOSPC;
	}
	if (!rc) {
		e.kind = (uint32_t)l + 1;
		rc = write_record(s, &e, blob, len);
	}
	free(blob);
	if (rc)
		s->st.rollups_skipped++;
	else
		s->st.rollups++;
}

/* Closes the runs of level @l and those below it with their roll-ups,
 * smallest first, so a bigger one is made of the smaller ones. */
static void flush_runs(struct store *s, int l)
{
	for (int k = 0; k <= l; k++)
		if (s->run[k].open)
			write_rollup(s, k);
}

/* Before a window starting at @start (@add bytes): runs it does not
 * belong to end here, and all of them when the segment rolls. */
static void rollup_before(struct store *s, uint64_t start, uint64_t add)
{
	int top = -1;

	if (s->cur_fd >= 0 && must_roll(s, add))
		top = STORE_ROLLUP_LEVELS - 1;
	for (int l = 0; l < STORE_ROLLUP_LEVELS; l++)
		if (s->run[l].open && start / s->span[l] != s->run[l].bucket)
			top = l > top ? l : top;
	if (top >= 0)
		flush_runs(s, top);
}

/* After the window [@start, @end) at @off, @payload: it opens runs (level
 * 0's merge takes it in), and ends those whose span it reaches the end
 * of. */
static void rollup_after(struct store *s, uint64_t off, uint64_t start, uint64_t end,
			 const void *payload, size_t len)
{
	struct store_part part = { start, end, start, 1, 0 };
	int top = -1;

	for (int l = 0; l < STORE_ROLLUP_LEVELS && s->span[l] != STORE_ROLLUP_OFF; l++) {
		struct run *r = &s->run[l];

		if (!r->open) {
			*r = (struct run){ true, start / s->span[l], off };
			if (l == 0)
				store_acc_clear(&s->acc);
		}
		if (l == 0)
			store_acc_add(&s->acc, &part, payload, len); /* marks it bad */
		if (end / s->span[l] != r->bucket)
			top = l;
	}
	if (top >= 0) {
		flush_runs(s, top);
	} else if (s->run[0].open && s->lim.rollup_bytes && s->acc.parts >= 2 &&
		   store_acc_memory(&s->acc) > s->lim.rollup_bytes) {
		s->st.rollups_bounded++;
		write_rollup(s, 0);
	}
}

int store_live_part(struct store *s, struct store_live *lp)
{
	struct store_idx e;
	int rc;

	if (!s->run[0].open || s->cur_fd < 0)
		return -ENODATA;
	if (!s->acc.blob) {
		rc = store_acc_pack(&s->acc, true, &s->acc.blob, &s->acc.len, &e);
		if (rc)
			return rc;
	}
	*lp = (struct store_live){
		.seg_start = s->segs[s->nsegs - 1].start, .cover = s->run[0].cover,
		.end = s->cur_end, .blob = s->acc.blob, .len = s->acc.len,
		.part = { s->acc.sum.start_ns, s->acc.sum.end_ns, s->acc.last_start,
			  s->acc.windows, 1 },
	};
	return 0;
}

int store_append(struct store *s, uint64_t start_ns, uint64_t end_ns,
		 const void *payload, size_t len)
{
	struct store_idx e = { .start_ns = start_ns, .end_ns = end_ns, .kind = STORE_KIND_WINDOW,
			       .windows = 1, .max_start = start_ns };
	uint64_t total = STORE_REC_HDR_SIZE + (uint64_t)len;
	int rc;

	if (len > STORE_REC_MAX || end_ns < start_ns)
		return s->st.last_error = -EFBIG, s->st.skipped++, -EFBIG;
	rollup_before(s, start_ns, total + STORE_IDX2_ENTRY_SIZE);
	rc = prepare(s, start_ns, total + STORE_IDX2_ENTRY_SIZE);
	if (rc)
		goto skip;
	e.cover = s->cur_end;
	rc = write_record(s, &e, payload, len);
	if (rc)
		goto skip;
	s->segs[s->nsegs - 1].windows++;
	s->st.windows++;
	s->st.appended++;
	s->st.last_error = 0;
	rollup_after(s, e.off, start_ns, end_ns, payload, len);
	return 0;
skip:
	s->st.skipped++;
	s->st.last_error = rc;
	return rc;
}

void store_get_stats(const struct store *s, struct store_stats *st)
{
	*st = s->st;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	close_current(s);
	store_acc_clear(&s->acc);
	close(s->dirfd);
	free(s->segs);
	free(s);
}
