/* SPDX-License-Identifier: MIT */
/*
 * push_split: one window's profile cut into one profile per service, the
 * unit a profile backend shows as an application.
 *
 * A stored window's stacks start with a process row whose line is the
 * process id; each process is given its service by a callback, and every
 * process of a service goes into that service's profile, its row without
 * the pid (processes of one program merge, and the pprof writer turns the
 * row into the sample label "process"). Parts come out sorted by key
 * (service, container id, then on-CPU, off-CPU, growth), an order that
 * does not change between runs, so a push can resume after the last part
 * the backend took. Nothing here prints.
 */
#ifndef HEARTH_PUSH_SPLIT_H
#define HEARTH_PUSH_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "agent/push_cursor.h"
#include "agent/push_service.h"
#include "profile/profile.h"

/* What a part holds (the last byte of its key: their order). */
enum push_kind {
	PUSH_ONCPU = 0,
	PUSH_OFFCPU = 1,
	PUSH_GROWTH = 2,              /* requests for more memory, bytes beside */
};

struct push_part {
	char key[PUSH_KEY_MAX];       /* service \1 container \1 kind */
	struct push_service svc;
	enum push_kind kind;
	struct prof_profile *prof;    /* owned by the part */
	struct prof_profile *second;  /* growth: the bytes of its requests,
				       * owned; NULL = none */
};

struct push_parts {
	struct push_part *v;
	size_t n, cap;
};

/* Gives process @pid, whose comm is @comm (@len bytes), its service. */
typedef const struct push_service *(*push_service_fn)(void *arg, uint32_t pid,
						       const char *comm, size_t len);

/* Adds to @out one part per service found in @src (a window's profile
 * of @kind), each a new profile with @src's unit and metadata, then
 * sorts every part of @out by key. Returns 0 or -ENOMEM (@out keeps
 * what was made; free it). */
int push_split(const struct prof_profile *src, enum push_kind kind,
	       push_service_fn fn, void *arg, struct push_parts *out);

/* push_split() of @src, and of @second (the same stacks' other values,
 * as a window's growth bytes beside its requests; may be NULL) cut the
 * same way, each of its parts the second of @src's part of the same
 * service. Returns 0 or -ENOMEM (@out keeps what was made; free it). */
int push_split_pair(const struct prof_profile *src, const struct prof_profile *second,
		    enum push_kind kind, push_service_fn fn, void *arg,
		    struct push_parts *out);

/* Frees every part's profiles and the array; zeroes @ps. */
void push_parts_free(struct push_parts *ps);

#endif /* HEARTH_PUSH_SPLIT_H */
