/* SPDX-License-Identifier: MIT */
/*
 * daemon_window: reshaping profiles between the sampler, the store and a
 * snapshot.
 *
 * The sampler puts a process row (comm) and a thread row ("name-tid") on
 * top of every stack. Before a window is stored, the thread row is folded
 * into the process row: the process frame keeps the comm as its name and
 * carries the process id in its line field (looked up from the tid), and
 * excluded process names are dropped. When a snapshot is cut, stacks are
 * kept by pid and comm, and the pid is cleared again so the output merges
 * by process name like `hearth record`'s.
 */
#ifndef HEARTH_DAEMON_WINDOW_H
#define HEARTH_DAEMON_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

enum window_mode {
	WINDOW_TO_STORE = 0,   /* thread row -> pid on the process row */
	WINDOW_TO_OUTPUT = 1,  /* filter by pid/comm, clear pids */
};

/* Returns the process id of thread @tid, 0 when unknown. */
typedef uint32_t (*window_tgid_fn)(void *arg, uint32_t tid);

struct window_filter {
	enum window_mode mode;
	const uint32_t *pids;         /* keep only these (0 entries = all) */
	size_t npids;
	const char *comm;             /* keep only this comm (NULL/"" = all) */
	const char (*exclude)[16];    /* drop these comms */
	size_t nexclude;
	window_tgid_fn tgid_of;       /* WINDOW_TO_STORE */
	void *arg;
};

/* Adds the stacks of @src that pass @f into @dst (same unit), reshaped for
 * @f->mode. Metadata is not touched. Returns 0, -EINVAL on a unit
 * mismatch, or -ENOMEM. */
int daemon_window_copy(struct prof_profile *dst, const struct prof_profile *src,
		       const struct window_filter *f);

/* Reads the process id of thread @tid from /proc. Returns 0 when the
 * thread is gone. Usable as a window_tgid_fn (@arg unused). */
uint32_t daemon_window_proc_tgid(void *arg, uint32_t tid);

#endif /* HEARTH_DAEMON_WINDOW_H */
