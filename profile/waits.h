/* SPDX-License-Identifier: MIT */
/*
 * waits: what a waiting stack waited in, and whether it waited on a lock,
 * read from its kernel frames (hearth's off-CPU stacks carry them, root
 * first, leaf last).
 *
 * Every voluntary wait ends in the scheduler (__schedule, schedule,
 * schedule_timeout, ...), often under generic helpers that say nothing of
 * what was awaited (wait_woken, sk_wait_data, futex_do_wait). The wait
 * site is the first frame above those that is not merely an inner variant
 * of its own caller (__futex_wait under futex_wait, tcp_recvmsg_locked
 * under tcp_recvmsg): futex_wait, do_nanosleep, pipe_read, ep_poll,
 * tcp_recvmsg. A run-queue wait's site is its "[waiting for a CPU]" frame.
 *
 * A lock wait is a voluntary wait whose kernel path goes through a lock's
 * or a condition's wait: a futex wait (pthread mutexes, rwlocks, condition
 * variables, semaphores, joins), a kernel mutex, rt-mutex, rw-semaphore or
 * semaphore slow path, or a flock()/fcntl() file lock. The user functions
 * on the stack play no part. Sleeps, pipes, sockets, epoll, disk I/O and
 * run-queue waits are not locks.
 */
#ifndef HEARTH_PROFILE_WAITS_H
#define HEARTH_PROFILE_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* The frame a run-queue wait ends in. */
#define PROF_WAIT_CPU_FRAME "[waiting for a CPU]"

/* The frame above which a wait carries the stack of the task that woke
 * it (hearth record --waker); what the wait waited in lies below it. */
#define PROF_WAKER_FRAME "--"

/* The frames of @frames[0..n) (frame ids of @p, root first) that are the
 * wait itself: the index of its PROF_WAKER_FRAME frame, n when none. */
size_t prof_wait_len(const struct prof_profile *p, const uint32_t *frames, size_t n);

/* 1 when kernel frame @name, called by @caller (NULL or "" for none),
 * does not name what its wait waited in: the scheduler, a generic wait
 * helper, or an inner variant of @caller. Compiler suffixes (".isra.0",
 * ".constprop.0", ".part.0", ".cold") are ignored. */
int prof_wait_passes(const char *name, const char *caller);

/* The index in @frames[0..n) (frame ids of @p, root first) of the frame
 * naming what the stack waited in: from the leaf (the frame under its
 * waker's, if any) up, the first frame that
 * is not a kernel frame passing the wait on (prof_wait_passes). n when
 * n is 0. */
size_t prof_wait_site(const struct prof_profile *p, const uint32_t *frames,
		      size_t n);

/* 1 when kernel function @name is a lock's or condition's wait (see
 * above), else 0. */
int prof_wait_is_lock_frame(const char *name);

/* 1 when the stack @frames[0..n) of @p is a lock wait: a kernel frame
 * on it is a lock's (prof_wait_is_lock_frame) and it does not end in a
 * run-queue wait. */
int prof_wait_is_lock(const struct prof_profile *p, const uint32_t *frames,
		      size_t n);

/* Adds to @dst (nanoseconds, like @src) the stacks of @src that are lock
 * waits. Metadata is the caller's. Returns 0, -EINVAL when @dst is @src
 * or the units differ, -ENOMEM. */
int prof_keep_lock_waits(struct prof_profile *dst, const struct prof_profile *src);

#endif /* HEARTH_PROFILE_WAITS_H */
