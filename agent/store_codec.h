/* SPDX-License-Identifier: MIT */
/*
 * store_codec: the store's compact binary encoding of windows and profiles.
 *
 * A window blob is "HWW2", a small uncompressed header (version, time
 * range, counters, which profiles follow), then up to five separately
 * zlib-compressed sections, each as varint raw length, varint compressed
 * length, bytes:
 *   strings  one table shared by the profiles: count, every length, then
 *            all bytes;
 *   on-CPU   metadata, the frame table by columns (name and file ids as
 *            deltas, module, line, kind, class, language), the frames'
 *            places (below), then the stacks, each as the length of the
 *            prefix it shares with the previous stack, the new frame ids
 *            and the value;
 *   off-CPU  the same;
 *   growth   requests for more memory (how many), then their bytes: the
 *            same, two sections (windows written before hearthd recorded
 *            growth have neither).
 * A frame's place is where its code was seen, so pprof written from the
 * store has real Mappings and addresses (profile.h): the mappings in use
 * (start, size, file offset, path and build id as string ids), each
 * frame's mapping (0 = none), then each placed frame's offset in its
 * mapping, as a delta of the one before. Version 2 windows, written
 * before places were kept, have none and are read as before.
 * Integers are LEB128 varints. A snapshot reply carries one profile as a
 * window blob with only the on-CPU section, or two (a memory question's
 * values and their second values) in the on- and off-CPU sections.
 *
 * Separate sections let a snapshot of on-CPU time skip inflating the
 * off-CPU one, and store_codec_window_merge() adds a window's stacks
 * straight into the snapshot being built, filtering by process on the way.
 * Decoding validates every count, id and length; nothing here prints.
 */
#ifndef HEARTH_STORE_CODEC_H
#define HEARTH_STORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../profile/profile.h"

/* Largest decoded (uncompressed) section accepted: bounds memory when a
 * record or a reply is corrupt or hostile. */
#define STORE_CODEC_RAW_MAX (256u << 20)
/* Deepest stack accepted when decoding. */
#define STORE_CODEC_DEPTH_MAX 4096u

/* One window as stored. The profiles are owned by the window after a
 * decode; for an encode the caller keeps ownership. */
struct store_window {
	uint64_t start_ns;            /* CLOCK_REALTIME */
	uint64_t end_ns;
	uint64_t samples;             /* on-CPU samples with a stack */
	uint64_t idle_samples;
	uint64_t offcpu_ns;
	uint64_t drops;               /* all causes */
	struct prof_profile *oncpu;   /* NULL = none */
	struct prof_profile *offcpu;  /* NULL = none */
	struct prof_profile *growth_req;   /* requests for more memory, NULL = none */
	struct prof_profile *growth_bytes; /* their bytes, NULL = none */
};

/* Encodes and compresses @w into a new buffer *@out of *@outlen bytes
 * (free with free()). Returns 0, -ENOMEM, or -EFBIG when a section
 * exceeds STORE_CODEC_RAW_MAX. */
int store_codec_window_pack(const struct store_window *w, void **out,
			    size_t *outlen);

/* Like store_codec_window_pack(), its sections in zlib's format but
 * stored, not compressed: for a blob that is read at once and never
 * written to disk. */
int store_codec_window_pack_stored(const struct store_window *w, void **out,
				   size_t *outlen);

/* Decodes a window blob into @w (zeroed first; profiles are new and owned
 * by @w). Returns 0, -EBADMSG when the bytes are not a valid window
 * (nothing is left allocated then), or -ENOMEM. Windows come from the
 * store, whose records carry a CRC: zlib's own checksum of each section
 * is not verified again (this and store_codec_window_merge()). */
int store_codec_window_unpack(const void *buf, size_t len,
			      struct store_window *w);

/* Decides whether a stack whose process row is @comm (@len bytes, not
 * NUL-terminated) with process id @pid (0 = unknown) is kept. */
typedef bool (*store_codec_keep_fn)(void *arg, const char *comm, size_t len,
				    uint32_t pid);

struct store_codec_merge {
	bool off_cpu;             /* merge the off-CPU profile, else on-CPU */
	store_codec_keep_fn keep; /* NULL = keep everything */
	void *arg;
	bool clear_pid;           /* process rows lose their pid (line) */
	/* Thread rows (PROF_KIND_THREAD right under the process row) stay.
	 * Else each thread's stacks merge under its process, as they were
	 * before hearthd kept thread rows: only a snapshot of threads
	 * wants them, and roll-ups stay as small as the process rows make
	 * them. */
	bool keep_threads;
	/* Add each stack's value to its leaf only (self and total) and not
	 * to the nodes above it, so many windows merge without walking
	 * their paths again; store_codec_merge_totals() then fixes the
	 * totals once, after the last window. */
	bool defer_totals;
};

/* Adds the stacks of one profile of a window blob into @dst (whose unit
 * must match), keeping those @m->keep accepts, without decoding the other
 * profile. Fills @hdr's time range and counters (its profiles stay NULL;
 * may be NULL). Returns 0, -EBADMSG (@dst may then hold part of the
 * window), -EINVAL on a unit mismatch, or -ENOMEM. A window without that
 * profile adds nothing. */
int store_codec_window_merge(const void *buf, size_t len,
			     const struct store_codec_merge *m,
			     struct prof_profile *dst, struct store_window *hdr);

/* Like store_codec_window_merge(), but both profiles at once (the string
 * table inflated once): the on-CPU one into @on, the off-CPU one into
 * @off (either NULL: not merged); @m->off_cpu is not looked at. Same
 * returns. */
int store_codec_window_merge_both(const void *buf, size_t len,
				  const struct store_codec_merge *m,
				  struct prof_profile *on, struct prof_profile *off,
				  struct store_window *hdr);

/* The profiles of a window a merge adds into; NULL: not merged. */
struct store_codec_dst {
	struct prof_profile *on, *off, *growth_req, *growth_bytes;
};

/* Like store_codec_window_merge_both(), for any of a window's profiles
 * (@m->off_cpu is not looked at). Same returns. */
int store_codec_window_merge_all(const void *buf, size_t len,
				 const struct store_codec_merge *m,
				 const struct store_codec_dst *dst,
				 struct store_window *hdr);

/* Makes every node's total its self plus its children's totals, in one
 * pass. For a profile filled only by store_codec_window_merge() with
 * defer_totals (each node's total was its own self until now). */
void store_codec_merge_totals(struct prof_profile *p);

/* Frees the profiles of @w and zeroes it. Accepts NULL. */
void store_window_clear(struct store_window *w);

/* Encodes one profile (the form a snapshot reply carries), its sections
 * in zlib's format but stored, not compressed: the reply only crosses a
 * local socket, and compressing a big snapshot took a tenth of its time.
 * Same returns as store_codec_window_pack(). */
int store_codec_profile_pack(const struct prof_profile *p, void **out,
			     size_t *outlen);

/* store_codec_profile_pack() of a profile and its second values (a
 * memory question's objects beside bytes; @second may be NULL). */
int store_codec_pair_pack(const struct prof_profile *p, const struct prof_profile *second,
			  void **out, size_t *outlen);

/* Decodes a blob made by store_codec_pair_pack(): the first profile is
 * returned, the second (NULL when the blob has none) in *@second. Same
 * returns as store_codec_profile_unpack(). */
struct prof_profile *store_codec_pair_unpack(const void *buf, size_t len,
					     struct prof_profile **second, int *err);

/* Decodes a blob made by store_codec_profile_pack(), verifying zlib's
 * checksum of each section (a reply has no other). Returns a new profile
 * (free with prof_free()) or NULL with -EBADMSG / -ENOMEM in *@err. */
struct prof_profile *store_codec_profile_unpack(const void *buf, size_t len,
						int *err);

#endif /* HEARTH_STORE_CODEC_H */
