/* SPDX-License-Identifier: MIT */
/*
 * sig_cache: user stacks unwound from a copy, by wait signature, so later
 * waits with the same signature reuse the unwind instead of copying again.
 */
#ifndef HEARTH_SIG_CACHE_H
#define HEARTH_SIG_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/sampler.h"

struct sig_cache;

/* Returns a cache of at most @max entries, NULL on ENOMEM. */
struct sig_cache *sig_cache_new(size_t max);

/* Frees @c. Accepts NULL. */
void sig_cache_free(struct sig_cache *c);

/* Stores a copy of @pcs[0..n) for @sig, replacing an older one. Returns 0,
 * -ENOSPC when the cache is full (the caller clears it, and the kernel's
 * seen set with it), or -ENOMEM. */
int sig_cache_put(struct sig_cache *c, const struct hearth_sig *sig,
		  const uint64_t *pcs, size_t n);

/* Returns the stack stored for @sig and its length in *@n, or NULL. Valid
 * until the next put or clear. */
const uint64_t *sig_cache_get(const struct sig_cache *c,
			      const struct hearth_sig *sig, size_t *n);

/* Drops every entry. */
void sig_cache_clear(struct sig_cache *c);

#endif
