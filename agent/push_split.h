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
 * (service, container id, then on-CPU before off-CPU), an order that
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

struct push_part {
	char key[PUSH_KEY_MAX];       /* service \1 container \1 0|1 */
	struct push_service svc;
	int off_cpu;
	struct prof_profile *prof;    /* owned by the part */
};

struct push_parts {
	struct push_part *v;
	size_t n, cap;
};

/* Gives process @pid, whose comm is @comm (@len bytes), its service. */
typedef const struct push_service *(*push_service_fn)(void *arg, uint32_t pid,
						       const char *comm, size_t len);

/* Adds to @out one part per service found in @src (a window's on-CPU
 * profile, or its off-CPU one when @off_cpu), each a new profile with
 * @src's unit and metadata, then sorts every part of @out by key.
 * Returns 0 or -ENOMEM (@out keeps what was made; free it). */
int push_split(const struct prof_profile *src, int off_cpu,
	       push_service_fn fn, void *arg, struct push_parts *out);

/* Frees every part's profile and the array; zeroes @ps. */
void push_parts_free(struct push_parts *ps);

#endif /* HEARTH_PUSH_SPLIT_H */
