/* SPDX-License-Identifier: MIT */
/*
 * The pprof reader's shared state, split over pprof_read.c (the Profile
 * message and samples) and pprof_frames.c (locations into frames). Not a
 * public interface.
 */
#ifndef HEARTH_PPROF_READER_H
#define HEARTH_PPROF_READER_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "profile_impl.h"

/* Frames per stack: far beyond real stacks, it bounds what a small file
 * can expand into (many references to a location with many lines). */
#define MAX_DEPTH (1 << 20)

struct span {
	const uint8_t *p;
	size_t n;
};

struct rmapping {
	uint64_t id, start, limit, offset;
	int64_t file, build_id;
	uint32_t placed; /* the profile's mapping id; 0 = not yet interned */
};

struct rfunction {
	uint64_t id;
	int64_t name, file;
	uint64_t kind, cls, lang;
};

struct rline {
	uint64_t fid, line;
};

struct rlocation {
	uint64_t id, mapping, address;
	struct span body;
	size_t frames_off; /* in reader.lframes, once resolved */
	uint32_t nframes;
	int resolved;
};

/* Numeric labels a sample keeps at most (Go's heap profiles have one). */
#define PR_NUM_LABELS_MAX 8

struct reader {
	struct prof_profile *p;
	char *err;
	size_t errlen;

	struct span *strs;
	uint32_t *str_ids; /* pprof index -> profile id, UINT32_MAX = not yet */
	size_t nstrs, strs_cap;
	struct span *types, *samples;
	size_t ntypes, types_cap, nsamples, samples_cap;
	struct rmapping *maps;
	size_t nmaps, maps_cap;
	struct rfunction *funcs;
	size_t nfuncs, funcs_cap;
	struct rlocation *locs;
	size_t nlocs, locs_cap;
	struct span period_type;
	uint64_t period, time_ns, duration_ns, drops, default_type, attrs;
	uint64_t negative; /* samples whose value is negative */

	const char *want_type; /* sample type asked for, NULL = default */
	size_t want_index;     /* sample type asked for by index + 1; 0 = none */
	size_t value_index;
	uint32_t *lframes; /* resolved frames of all locations */
	size_t lframes_len, lframes_cap;
	struct rline *lines; /* one location's lines, innermost first */
	size_t nlines, lines_cap;
	uint32_t *stack;
	size_t stack_cap;
	uint64_t *ids; /* one sample's location ids */
	size_t nids, ids_cap;
	int keep_labels;  /* numeric labels become PROF_KIND_LABEL rows */
	struct pr_num_label {
		int64_t key, unit;
		uint64_t num;
	} nums[PR_NUM_LABELS_MAX]; /* one sample's numeric labels */
	size_t nnums;
};

/* Writes "malformed pprof data: " and the formatted reason into the
 * reader's error buffer; returns -EINVAL. */
int pr_bad(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Returns a pointer to a new (uninitialised) last element of
 * r->arr (count r->n, capacity r->cap), or NULL when out of memory. */
#define PUSH(r, arr, n, cap)                                                   \
	(prof_grow_size((void **)&(r)->arr, &(r)->cap, (r)->n + 1,                    \
		 sizeof(*(r)->arr)) < 0 ? NULL : &(r)->arr[(r)->n++])

/* Resolves pprof string index @idx to a profile string id in *@out;
 * 0, -EINVAL (out of range) or -ENOMEM. */
int pr_str_get(struct reader *r, int64_t idx, uint32_t *out);

/* 1 when string @idx exists and equals @s. */
int pr_str_is(const struct reader *r, int64_t idx, const char *s);

/* Binary search over @n elements of @size sorted by a leading uint64_t
 * id; NULL when absent. */
void *pr_find_id(void *arr, size_t n, size_t size, uint64_t id);

/* Resolves location @l into frames (outer caller first) appended to
 * r->lframes. 0, -EINVAL or -ENOMEM. */
int pr_resolve_location(struct reader *r, struct rlocation *l);

#endif /* HEARTH_PPROF_READER_H */
