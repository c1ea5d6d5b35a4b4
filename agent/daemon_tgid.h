/* SPDX-License-Identifier: MIT */
/*
 * daemon_tgid: which process a thread belongs to, remembered across
 * windows so /proc is read once per thread, not once per thread per window.
 * Entries not used for a while are forgotten (thread ids are reused only
 * after the kernel cycles through its pid space).
 */
#ifndef HEARTH_DAEMON_TGID_H
#define HEARTH_DAEMON_TGID_H

#include <stdint.h>

struct tgid_cache;

/* Returns a new empty cache (free with tgid_cache_free()), or NULL. */
struct tgid_cache *tgid_cache_new(void);

/* Returns the process id of thread @tid: from the cache, else from
 * /proc/TID/status (cached, also when the thread is gone: 0). Marks the
 * entry used now. Usable as a window_tgid_fn with the cache as @arg. */
uint32_t tgid_cache_get(void *cache, uint32_t tid);

/* Starts a new window: forgets entries unused for @max_windows windows. */
void tgid_cache_tick(struct tgid_cache *c, uint32_t max_windows);

/* Entries held. */
uint32_t tgid_cache_size(const struct tgid_cache *c);

/* Frees @c. Accepts NULL. */
void tgid_cache_free(struct tgid_cache *c);

#endif /* HEARTH_DAEMON_TGID_H */
