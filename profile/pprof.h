/* SPDX-License-Identifier: MIT */
/*
 * pprof files: gzip'd protobuf with profile.proto's field numbers, read and
 * written so that `go tool pprof` reads ours and we read its.
 *
 * Writing: one sample type per unit — on-CPU samples give
 * samples/count plus cpu/nanoseconds (period 1e9/hz) when the profile has a
 * sampling rate; off-CPU time gives off_cpu/nanoseconds, and the other
 * questions of time wall/, threads/ and lock_wait/nanoseconds (read back
 * as those questions); other nanosecond profiles cpu/nanoseconds; the
 * questions of memory alloc_space/bytes, inuse_space/bytes and
 * growth_requests/count (read back as those questions, Go's heap
 * profiles' too); other bytes space/bytes; a profile read from another tool's sample type (Go's
 * inuse_space, alloc_objects) keeps that name. Leading process and thread
 * rows become the sample labels "process" and "thread", so pprof's function
 * lists show only real functions. A frame followed by inline frames becomes
 * one Location whose Lines are innermost first. A frame with a place
 * (profile.h) has its Location at that address, in a Mapping with the
 * place's range, offset, path and build ID (a Location of inline frames
 * at its innermost frame's address when its outer frame was seen there
 * too, else at the outer frame's); other frames' Mappings are their
 * module's name alone, at address 0. A profile of several processes
 * starts with a Mapping without a file, so pprof names no "File:" for
 * it. hearth's per-frame kind, class and language go into
 * Function fields 5001..5003 and the drop count into Profile field 5001;
 * other readers skip those fields.
 *
 * Reading: one sample type gives the values — the one asked for, else
 * default_sample_type, else samples/count in a profile with a period in
 * nanoseconds (CPU profiles: counts, with the rate from the period), else
 * the last one (as `go tool pprof` picks); a name other than hearth's own
 * is kept in prof_meta's sample_type. Its unit "nanoseconds" or
 * "bytes" picks the profile's unit, any other unit reads as samples. Frames keep hearth's attributes when
 * present; in other files, all but the last Line of a Location read as
 * inline frames and a "[kernel..." mapping as kernel frames. A Location
 * without Lines reads as "module+0xoffset". Samples with negative values
 * are left out and counted (prof_meta's negative); a Location with an
 * address in a Mapping with a range gives its frames that place, and
 * their module is the Mapping file's basename; a stack deeper than
 * 1,048,576 frames is refused.
 */
#ifndef HEARTH_PPROF_H
#define HEARTH_PPROF_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"

/* Largest decompressed size prof_pprof_read() accepts (1 GiB). */
#define PROF_PPROF_MAX_SIZE ((size_t)1 << 30)

/* Encodes @p (sorted first) as gzip'd pprof into a malloc'd buffer stored
 * in *@buf / *@len, owned by the caller. Returns 0, -ENOMEM, or -EIO when
 * compression failed. */
int prof_pprof_encode(struct prof_profile *p, void **buf, size_t *len);

/* Writes @p as gzip'd pprof to @out. Returns 0, -ENOMEM or -EIO. */
int prof_pprof_write(struct prof_profile *p, FILE *out);

/* prof_pprof_encode() of a profile answering a question of memory
 * (prof_meta's question alloc, held or growth) with a second value per
 * sample: @second's value at the same stack (frames compared by their
 * fields, not ids; 0 where it has none), written first, so that @p's
 * own stays pprof's default. Alloc and held profiles of bytes take their
 * objects (alloc_objects/count, alloc_space/bytes; inuse_objects,
 * inuse_space), growth's requests take their bytes (growth_space/bytes,
 * growth_requests/count). @second may gain strings and frames. NULL
 * @second writes @p alone. -EINVAL for another question or a profile
 * read under another tool's sample type name. */
int prof_pprof_encode_pair(struct prof_profile *p, struct prof_profile *second,
			   void **buf, size_t *len);

/* prof_pprof_write() with prof_pprof_encode_pair()'s second values. */
int prof_pprof_write_pair(struct prof_profile *p, struct prof_profile *second, FILE *out);

/* Sample types prof_pprof_encode_types() writes at most. */
#define PROF_PPROF_MAX_TYPES 16

/* Encodes @n profiles of the same stacks, each one sample type (as
 * prof_pprof_decode_all() reads a file's), as one pprof profile whose
 * samples carry @n values, @ps[k]'s in type k (0 where it has no such
 * stack; frames compared by their fields): the type named as @ps[k] was
 * read ("alloc_space") or as prof_pprof_encode() names it alone.
 * @ps[@dflt] is the one pprof shows by default (default_sample_type when
 * it is not the last) and gives the time, duration and drops. One
 * profile is prof_pprof_encode(). The profiles may gain strings and
 * frames. Returns 0, -EINVAL (no profile, more than
 * PROF_PPROF_MAX_TYPES, @dflt out of range), -ENOMEM or -EIO. */
int prof_pprof_encode_types(struct prof_profile *const *ps, size_t n, size_t dflt,
			    void **buf, size_t *len);

/* prof_pprof_encode_types() written to @out. */
int prof_pprof_write_types(struct prof_profile *const *ps, size_t n, size_t dflt,
			   FILE *out);

/* Returns 1 when @buf looks like pprof (gzip magic, or a protobuf whose
 * first field is a Profile field), else 0. A cheap sniff, not a check. */
int prof_pprof_sniff(const void *buf, size_t len);

/* Decodes pprof data @buf[0..len), gzip'd or raw protobuf, into a new
 * profile stored in *@out (free with prof_free()). Decompressed data
 * larger than @max_size is refused. Returns 0, -EINVAL with one sentence
 * in @err (size @errlen) for malformed or oversized data, or -ENOMEM. */
int prof_pprof_decode(const void *buf, size_t len, size_t max_size,
		      struct prof_profile **out, char *err, size_t errlen);

/* prof_pprof_decode() reading the sample type named @sample_type (as
 * "inuse_space" in a Go heap profile); NULL picks as described above.
 * -EINVAL with a sentence when no sample type has that name. */
int prof_pprof_decode_type(const void *buf, size_t len, size_t max_size,
			   const char *sample_type, struct prof_profile **out,
			   char *err, size_t errlen);

/* Decodes every sample type of pprof data @buf[0..len) (gzip'd or raw),
 * each into a profile of its own as prof_pprof_decode_type() reads it
 * and with each sample's numeric labels as PROF_KIND_LABEL rows (for
 * writing back: prof_pprof_encode_types() makes them labels again),
 * in the file's order, into @out[0..*@n) (room for PROF_PPROF_MAX_TYPES;
 * the caller frees them), with the one pprof shows by default
 * (default_sample_type, else the last) in *@shown. A file whose one
 * profile gives back all its types (it has one, or hearth's samples and
 * cpu time) gives that one. Returns 0, or -EINVAL with a sentence in @err
 * (malformed data; more than PROF_PPROF_MAX_TYPES types), -ENOMEM. */
int prof_pprof_decode_all(const void *buf, size_t len, size_t max_size,
			  struct prof_profile **out, size_t *n, size_t *shown,
			  char *err, size_t errlen);

/* prof_pprof_decode() with PROF_PPROF_MAX_SIZE. */
int prof_pprof_read(const void *buf, size_t len, struct prof_profile **out,
		    char *err, size_t errlen);

#endif /* HEARTH_PPROF_H */
