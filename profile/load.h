/* SPDX-License-Identifier: MIT */
/*
 * The one way every command opens a profile file: read whole (never
 * mapped, so a file cut short while it is read is an error, not a
 * crash), bounded by one input limit, gunzipped when it is gzip (every
 * member, as gzip does), then told apart by content, not by name: pprof
 * (protobuf) or folded stacks. A new input format is one entry in
 * load.c's table: a function that recognises its content, one that
 * parses it.
 */
#ifndef HEARTH_PROFILE_LOAD_H
#define HEARTH_PROFILE_LOAD_H

#include <stddef.h>

#include "profile.h"

/* The input limit: bytes read, and bytes once decompressed (1 GiB). */
#define PROF_LOAD_MAX_INPUT ((size_t)1 << 30)

struct prof_load_opts {
	size_t max_input;  /* 0: PROF_LOAD_MAX_INPUT */
	unsigned threads;  /* for big folded text; 0: one per online CPU */
	int unit;          /* folded text's unit (enum prof_unit); -1: as
			    * hearth's lines in it say, else samples */
	int diff_side;     /* a difffolded file (two counts a line): the
			    * column to read, 1 before, 2 after; 0 refuses it */
	const char *sample_type; /* a pprof file's sample type to read
				  * ("inuse_space"); NULL: its default */
};

/* What a load met that the caller may want to say. */
struct prof_load_note {
	const char *format;  /* "folded", "pprof", "perf script", "difffolded" */
	int gzip;            /* it was gzip'd */
	uint64_t negative;   /* pprof samples left out for a negative value */
};

/* Reads the profile at @path ("-": standard input) into a new profile in
 * *@out (free with prof_free()), as @o says (NULL: the defaults); what
 * it met goes to @note (or NULL). Returns 0, or a negative errno with one
 * sentence in @err (size @errlen) naming the file: -ENOENT, -EACCES,
 * -EISDIR ("is a directory"), -EIO; -EFBIG past the input limit
 * (read or decompressed); -EAGAIN when the file changed size while it
 * was read; -EINVAL for malformed data; -EOVERFLOW when its counts add
 * up to 2^64 or more; -ENOMEM. */
int prof_load(const char *path, const struct prof_load_opts *o,
	      struct prof_profile **out, struct prof_load_note *note,
	      char *err, size_t errlen);

/* Sample types prof_load_types() keeps at most (PROF_PPROF_MAX_TYPES). */
#define PROF_LOAD_MAX_TYPES 16

/* A file's profiles, one per sample type (prof_load_types()). */
struct prof_load_types {
	struct prof_profile *p[PROF_LOAD_MAX_TYPES];
	size_t n;     /* profiles in p, in the file's order */
	size_t shown; /* the one pprof shows by default */
};

/* prof_load() keeping every sample type of a pprof file, each a profile
 * (prof_pprof_decode_all()), into @out (free with
 * prof_load_types_free()); other formats, and a pprof file read with
 * o->sample_type, give one. Same returns as prof_load(); a pprof file of
 * more than PROF_LOAD_MAX_TYPES types is -EINVAL. */
int prof_load_types(const char *path, const struct prof_load_opts *o,
		    struct prof_load_types *out, struct prof_load_note *note,
		    char *err, size_t errlen);

/* Frees the profiles of @t and zeroes it. */
void prof_load_types_free(struct prof_load_types *t);

/* prof_load() of the bytes @buf[0..len) (not freed), named @name in the
 * sentences. */
int prof_load_bytes(const void *buf, size_t len, const char *name,
		    const struct prof_load_opts *o, struct prof_profile **out,
		    struct prof_load_note *note, char *err, size_t errlen);

#endif /* HEARTH_PROFILE_LOAD_H */
