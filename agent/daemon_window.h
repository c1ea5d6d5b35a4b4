/* SPDX-License-Identifier: MIT */
/*
 * daemon_window: reshaping profiles between the sampler, the store and a
 * snapshot.
 *
 * The sampler puts a process row (comm) and a thread row ("name-tid") on
 * top of every stack. Before a window is stored, the thread row is folded
 * into the process row: the process frame keeps the comm as its name and
 * carries the process id in its line field (looked up from the tid), and
 * excluded process names are dropped. (Snapshots filter by that pid and
 * clear it again while merging: store_codec_window_merge().)
 */
#ifndef HEARTH_DAEMON_WINDOW_H
#define HEARTH_DAEMON_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Returns the process id of thread @tid, 0 when unknown. */
typedef uint32_t (*window_tgid_fn)(void *arg, uint32_t tid);

struct window_filter {
	const char (*exclude)[16];    /* drop these comms */
	size_t nexclude;
	window_tgid_fn tgid_of;       /* thread id -> process id */
	void *arg;
};

/* Adds the process-rooted stacks of @src whose comm is not excluded into
 * @dst (same unit), the thread row folded into the process row's pid.
 * Metadata is not touched. Returns 0, -EINVAL on a unit
 * mismatch, or -ENOMEM. */
int daemon_window_copy(struct prof_profile *dst, const struct prof_profile *src,
		       const struct window_filter *f);

/* Reads the process id of thread @tid from /proc. Returns 0 when the
 * thread is gone. Usable as a window_tgid_fn (@arg unused). */
uint32_t daemon_window_proc_tgid(void *arg, uint32_t tid);

#endif /* HEARTH_DAEMON_WINDOW_H */
