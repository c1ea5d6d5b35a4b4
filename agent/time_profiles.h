/* SPDX-License-Identifier: MIT */
/*
 * time_profiles: the profiles of the questions of time, made from the
 * sampler's two (on-CPU samples and off-CPU nanoseconds), by hearth
 * record and by hearthd's snapshots alike.
 *
 *   wall     each thread's on-CPU samples (1e9/hz ns each) and its
 *            off-CPU waits in one profile of nanoseconds: where the
 *            elapsed time went, waiting included
 *   threads  the wall profile with every thread row made the same width
 *            (the capture's length), so each thread is one equal box
 *   locks    only the waits on locks and conditions (profile/waits.h)
 */
#ifndef HEARTH_TIME_PROFILES_H
#define HEARTH_TIME_PROFILES_H

#include <stdint.h>

#include "profile/profile.h"

/* A new profile of nanoseconds answering @question (PROF_Q_WALL,
 * PROF_Q_THREADS or PROF_Q_LOCKS) from @on (samples taken at @hz, may be
 * NULL for locks) and @off (nanoseconds). Its metadata: @duration_ns, the
 * question, off_cpu for locks, the drops of both. NULL with *@err a
 * negative errno (-EINVAL for another question, or @on missing). */
struct prof_profile *time_profile_new(unsigned question, const struct prof_profile *on,
				      uint32_t hz, const struct prof_profile *off,
				      uint64_t duration_ns, int *err);

/* Adds @src to @dst with each thread row's stacks scaled so the row
 * holds @width (stacks not under a thread row are added as they are).
 * Returns 0 or a negative errno. */
int time_profile_even_threads(struct prof_profile *dst, const struct prof_profile *src,
			      uint64_t width);

#endif
