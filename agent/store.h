/* SPDX-License-Identifier: MIT */
/*
 * store: hearthd's rolling, crash-safe store of windows and marks.
 *
 * Layout of the state directory:
 *   seg-<first window start ns, 20 digits>.hst   a segment: a 32-byte
 *       versioned header, then records appended one after the other; each
 *       record is a 40-byte header (magic, lengths, time range, CRC32 of the
 *       payload, CRC32 of the header) and a payload (a store_codec window
 *       blob);
 *   seg-<...>.idx   the segment's index: a header and one 64-byte entry per
 *       record (time range, offset, length, kind, what a roll-up covers,
 *       CRC32 of the entry), so a time range is found without reading the
 *       segment (version 1 stores, 32-byte entries, are still read);
 *   marks           named moments: a header and 80-byte records with CRC32.
 *
 * Writing: a record is written at the segment's end and fdatasync'ed before
 * its index entry is appended (and synced); a crash loses at most the record
 * being written. Each writer start opens a new segment, so a torn tail is
 * never appended to. When a write fails (ENOSPC, EIO) the partial record is
 * truncated away and the window is skipped; the next window tries again.
 *
 * Reading validates every header and payload CRC. A torn or corrupt record
 * is counted in the scan report and skipped; records before it and after
 * it are still returned: the next one is found through the index, or by
 * looking for the next valid record header. A segment ends in a torn tail
 * only when nothing valid follows the bad record and no index entry says
 * it was complete; otherwise it is damage. A segment whose own header is
 * damaged is read all the same: records carry everything a reader needs
 * (the header only names the file's kind and version, which its index
 * header repeats), so one bad byte there loses no window.
 *
 * Roll-ups: besides windows, a segment holds merged aggregates of whole
 * 10 minutes and of whole hours by default (by the windows' start times;
 * spans set in struct store_limits, e.g. 1 and 10 minutes), each a window
 * blob with both profiles and the process rows' pids (not the windows'
 * thread rows: a snapshot of threads reads windows), standing for every
 * record between its cover offset and itself. One is written (and synced
 * like a window) when a window reaches the end of its span, or the segment
 * rolls; it is made of the smaller roll-ups and windows already in the
 * segment, and never spans two segments, so retention deletes it with its
 * windows and a crash loses at most the one being written. (Minute
 * roll-ups were measured to cost 83% more disk and 3.5 times the append
 * CPU of 10 minutes alone, for 11% less snapshot work: see
 * bench/RESULTS.md.) store_scan_merged() answers a range with
 * the biggest roll-ups that fit inside it and single windows at the edges;
 * the merge is the same as that of the windows one by one. A damaged
 * roll-up is skipped for the records it stands for. The writer merges each
 * window into the open 10 minutes as it appends it (the 10-minute roll-up
 * is packed from that), and store_live_part() hands that merge to a
 * snapshot of the newest windows (store_scan_merged_live()).
 *
 * Retention deletes whole segments: those whose newest window is older than
 * the age limit, and the oldest ones while the store would exceed its size
 * limit. Segments roll at 1/8 of each limit, so retention is that precise.
 * Time ranges assume the wall clock moves forward. Nothing here prints or keeps global state.
 */
#ifndef HEARTH_STORE_H
#define HEARTH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_SEG_HDR_SIZE 32u
#define STORE_REC_HDR_SIZE 40u
#define STORE_IDX_ENTRY_SIZE 64u
/* Roll-up levels and their default spans. */
#define STORE_ROLLUP_LEVELS 2
#define STORE_ROLLUP_SPAN0 (600ull * 1000000000ull)
#define STORE_ROLLUP_SPAN1 (3600ull * 1000000000ull)
/* A span meaning "no roll-ups at this level". */
#define STORE_ROLLUP_OFF UINT64_MAX
#define STORE_MARK_NAME_MAX 63u
/* Largest record payload written or accepted. */
#define STORE_REC_MAX (64u << 20)

struct store_limits {
	uint64_t max_age_ns;  /* 0 = keep forever */
	uint64_t max_bytes;   /* 0 = no size limit */
	uint64_t seg_bytes;   /* roll segments at this size; 0 = derived */
	uint64_t seg_age_ns;  /* roll segments at this age; 0 = derived:
			       * max_age / 8, at most one hour */
	/* Roll-up spans, smallest first, each a multiple of the one before;
	 * 0 = the default (STORE_ROLLUP_SPAN0, SPAN1); STORE_ROLLUP_OFF
	 * turns a level (and those above it) off. */
	uint64_t rollup_ns[STORE_ROLLUP_LEVELS];
	/* Heap bytes a roll-up in the making may hold (0 = no bound): the
	 * open 10 minutes' merge lives as long as hearthd, and a host of
	 * many distinct stacks (a build, an exec storm) would grow it to
	 * hundreds of MiB. Past it (once two parts are in: a roll-up stands
	 * for two windows at least, so the bound is this or two windows'
	 * merge, whichever is more) the open run ends early, with a roll-up
	 * of the windows so far (the next one starts with the next window),
	 * and a bigger level's merge is not written: readers take the
	 * smaller roll-ups. Nothing is lost either way. */
	uint64_t rollup_bytes;
};

struct store_stats {
	uint64_t windows;       /* records counted when opened plus appended */
	uint64_t bytes;         /* size of segments and indexes on disk */
	uint64_t segments;
	uint64_t appended;      /* records written since open */
	uint64_t skipped;       /* windows not written (write failed) */
	uint64_t deleted_segs;  /* segments removed by retention */
	uint64_t rollups;       /* roll-ups written since open */
	uint64_t rollups_skipped; /* roll-ups not written (failure, no space) */
	uint64_t rollups_bounded; /* runs ended early or merges not written
				   * for rollup_bytes */
	int last_error;         /* negative errno of the last failed append */
};

struct store;

/* Opens (creating when missing, mode 0750) the state directory @dir for
 * appending, holding an exclusive lock on it until store_close(). Counts
 * what is there; does not create a segment until the first append.
 * Returns NULL with a negative errno in *@err: -EBUSY when another writer
 * holds the directory, -EPERM when the directory or a file in it is not
 * trusted (agent/trusted_dir.h). Every reader and writer here opens the
 * directory and its files that way. */
struct store *store_open(const char *dir, const struct store_limits *lim,
			 int *err);

/* Changes the limits (a config reload). */
void store_set_limits(struct store *s, const struct store_limits *lim);

/* Appends one record covering [@start_ns, @end_ns) with @payload, applying
 * retention first so the store stays within its size limit. Returns 0, or a
 * negative errno (-ENOSPC, -EIO, -EFBIG for a payload larger than the size
 * limit or STORE_REC_MAX); on error nothing partial remains. */
int store_append(struct store *s, uint64_t start_ns, uint64_t end_ns,
		 const void *payload, size_t len);

/* Deletes segments beyond the age limit, measured against @now_ns, and the
 * oldest segments while over the size limit. Returns the number of segments
 * deleted, or a negative errno. */
int store_retain(struct store *s, uint64_t now_ns);

/* Current counters. */
void store_get_stats(const struct store *s, struct store_stats *st);

/* Syncs and closes. Accepts NULL. */
void store_close(struct store *s);

/* ---- reading (no writer needed; safe while a writer appends) ---------- */

struct store_scan_report {
	uint64_t segments;    /* segments looked at */
	uint64_t windows;     /* good records passed to the callback */
	uint64_t corrupt;     /* damaged records: a bad header, a bad payload
			       * CRC, a length the index or the next record
			       * contradicts */
	uint64_t torn;        /* segments ending inside a record */
	uint64_t bad_segments;/* segments whose header is damaged: their
			       * records are read all the same, unless... */
	uint64_t skipped_segments; /* ...the header is good and says a newer
				    * version, or the file cannot be read */
	uint64_t first_bad_off; /* file offset of the first problem, 0 = none */
	char first_bad_seg[64]; /* its segment file name, "" = none */
	uint64_t rollups;     /* good roll-ups read (passed on or checked) */
	uint64_t rollups_bad; /* damaged roll-ups (their records were used) */
	/* Index files: damaged headers and entries (a bad CRC with good
	 * entries after it, an entry out of order or contradicting its
	 * record), those ending in a torn entry (a crash), and segments that
	 * have none. Records are read from their own headers meanwhile, so
	 * none of these loses a window. */
	uint64_t idx_bad;
	uint64_t idx_torn;
	uint64_t idx_missing;
	char first_bad_idx[64]; /* the first damaged index file, "" = none */
};

/* Receives one good record's time range and payload (valid during the
 * call). Returning non-zero stops the scan with that value. */
typedef int (*store_window_fn)(uint64_t start_ns, uint64_t end_ns,
			       const void *payload, size_t len, void *arg);

/* Calls @fn, oldest first, for every window in @dir whose range overlaps
 * [@since_ns, @until_ns) (until 0 = no upper bound). Only the index and the
 * records in range are read; with a callback, roll-ups in range are read
 * and checked (counted in @rep; a damaged one also as corrupt) but not
 * passed on. Fills @rep (may be NULL). Returns 0,
 * the callback's non-zero value, or a negative errno when @dir cannot be
 * listed. */
int store_scan(const char *dir, uint64_t since_ns, uint64_t until_ns,
	       store_window_fn fn, void *arg, struct store_scan_report *rep);

/* What store_scan_merged() passes on: one window or one roll-up. */
struct store_part {
	uint64_t start_ns;   /* its oldest window's start */
	uint64_t end_ns;     /* its newest window's end */
	uint64_t last_start_ns; /* its newest window's start */
	uint32_t windows;    /* windows it stands for (1: a window) */
	uint32_t level;      /* 0: a window; else the roll-up level (1, 2) */
};

typedef int (*store_part_fn)(const struct store_part *part,
			     const void *payload, size_t len, void *arg);

/* Like store_scan(), but passes on, instead of the windows they stand for,
 * the biggest roll-ups whose every window overlaps [@since_ns, @until_ns)
 * and lies in the range, and single windows elsewhere: every window in
 * range is passed on exactly once, alone or inside one roll-up, in the
 * order of the store. A roll-up failing its CRC is replaced by what it
 * stands for (counted in @rep->rollups_bad). Damaged windows inside a
 * good roll-up are not seen. Same returns as store_scan(). */
int store_scan_merged(const char *dir, uint64_t since_ns, uint64_t until_ns,
		      store_part_fn fn, void *arg,
		      struct store_scan_report *rep);

/* The writer's open 10-minute run, merged in memory as its windows were
 * appended: a roll-up that is not on disk yet. */
struct store_live {
	uint64_t seg_start;  /* the segment it is in */
	uint64_t cover;      /* offset of its first window */
	uint64_t end;        /* the segment's end it stands up to */
	struct store_part part;
	const void *blob;    /* a window blob; valid until the next append */
	size_t len;
};

/* Fills @lp with the writer's open run (its blob is made on the first call
 * after an append, stored, not compressed). Returns 0, -ENODATA when the
 * run holds fewer than two windows (or none is open), -EBADMSG when a
 * window of it did not decode, -ENOMEM. */
int store_live_part(struct store *s, struct store_live *lp);

/* store_scan_merged() that uses @live (may be NULL; from
 * store_live_part() of the writer of @dir, nothing appended since) in
 * place of the windows it stands for, when they all are in the range:
 * for the newest windows, which no roll-up on disk holds yet. */
int store_scan_merged_live(const char *dir, uint64_t since_ns,
			   uint64_t until_ns, const struct store_live *live,
			   store_part_fn fn, void *arg,
			   struct store_scan_report *rep);

/* ---- marks ------------------------------------------------------------- */

struct store_mark {
	uint64_t at_ns;                       /* CLOCK_REALTIME */
	char name[STORE_MARK_NAME_MAX + 1];
};

/* True when @name is 1..63 bytes of [A-Za-z0-9._:@+-]. */
bool store_mark_name_valid(const char *name, size_t len);

/* Appends a mark to @dir/marks (created when missing) and syncs it.
 * Returns 0, -EINVAL for an invalid name, or a negative errno. */
int store_mark_add(const char *dir, const char *name, uint64_t at_ns);

/* What reading the marks found wrong. */
struct store_marks_report {
	uint64_t bad;         /* records failing their CRC (or name check) */
	uint64_t torn_bytes;  /* bytes of a partial last record (a crash) */
	bool header_bad;      /* the file header is damaged (records read
			       * all the same) */
};

/* Reads every valid mark of @dir, in the order they were added, into a new
 * array *@out of *@n entries (free with free(); NULL when none). Damaged
 * records are skipped and counted in @rep (may be NULL), as is a damaged
 * file header, which loses no mark. Returns 0 (also when there is no
 * marks file), -EPROTONOSUPPORT for a newer version, or a negative
 * errno. */
int store_marks_read(const char *dir, struct store_mark **out, size_t *n,
		     struct store_marks_report *rep);

/* Finds the newest mark named @name. Returns 0 and its time in *@at_ns,
 * -ENOENT when there is none, or a negative errno. */
int store_mark_find(const char *dir, const char *name, uint64_t *at_ns);

#endif /* HEARTH_STORE_H */
