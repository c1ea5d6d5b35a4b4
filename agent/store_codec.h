/* SPDX-License-Identifier: MIT */
/*
 * store_codec: the store's compact binary encoding of profiles and windows.
 *
 * A profile is encoded as its string table, its frame table and its stacks
 * (each stack as the length of the prefix it shares with the previous one,
 * then the new frame ids and the value), all integers as LEB128 varints.
 * A window holds its time range, counters and up to two profiles (on-CPU
 * samples and off-CPU nanoseconds). Encoded bytes are zlib-compressed into
 * a "blob": 4 magic bytes, a varint raw length, then the zlib stream.
 *
 * Decoding validates every count, id and length against the input and the
 * limits below; nothing here prints.
 */
#ifndef HEARTH_STORE_CODEC_H
#define HEARTH_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "../profile/profile.h"

/* Largest decoded (uncompressed) blob accepted: bounds memory when a
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
};

/* Encodes and compresses @w into a new buffer *@out of *@outlen bytes
 * (free with free()). Returns 0, -ENOMEM, or -EFBIG when the encoding
 * exceeds STORE_CODEC_RAW_MAX. */
int store_codec_window_pack(const struct store_window *w, void **out,
			    size_t *outlen);

/* Decodes a blob made by store_codec_window_pack() into @w (zeroed first;
 * profiles are new and owned by @w). Returns 0, -EBADMSG when the bytes are
 * not a valid window (nothing is left allocated then), or -ENOMEM. */
int store_codec_window_unpack(const void *buf, size_t len,
			      struct store_window *w);

/* Frees the profiles of @w and zeroes it. Accepts NULL. */
void store_window_clear(struct store_window *w);

/* Encodes and compresses one profile (the form a snapshot reply carries).
 * Same returns as store_codec_window_pack(). */
int store_codec_profile_pack(const struct prof_profile *p, void **out,
			     size_t *outlen);

/* Decodes a blob made by store_codec_profile_pack(). Returns a new profile
 * (free with prof_free()) or NULL with -EBADMSG / -ENOMEM in *@err. */
struct prof_profile *store_codec_profile_unpack(const void *buf, size_t len,
						int *err);

#endif /* HEARTH_STORE_CODEC_H */
