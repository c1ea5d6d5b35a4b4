/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sig_cache.h"

struct slot {
	struct hearth_sig sig; /* tgid 0 = empty */
	uint64_t *pcs;
	size_t n;
};

struct sig_cache {
	struct slot *slots;
	size_t cap, len, max;
};

static uint64_t sig_hash(const struct hearth_sig *s)
{
	uint64_t h = s->hash ^ s->ip * 0x9e3779b97f4a7c15ULL;

	h ^= (s->sp + ((uint64_t)s->tid << 32 | s->tgid)) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 29);
}

static int sig_eq(const struct hearth_sig *a, const struct hearth_sig *b)
{
	return a->tgid == b->tgid && a->tid == b->tid && a->ip == b->ip &&
	       a->sp == b->sp && a->bp == b->bp && a->hash == b->hash;
}

struct sig_cache *sig_cache_new(size_t max)
{
	struct sig_cache *c = calloc(1, sizeof(*c));
	size_t cap = 64;

	if (!c)
		return NULL;
	while (cap < max * 2)
		cap *= 2;
	c->slots = calloc(cap, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->cap = cap;
	c->max = max;
	return c;
}

void sig_cache_clear(struct sig_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->slots[i].pcs);
	memset(c->slots, 0, c->cap * sizeof(*c->slots));
	c->len = 0;
}

void sig_cache_free(struct sig_cache *c)
{
	if (!c)
		return;
	sig_cache_clear(c);
	free(c->slots);
	free(c);
}

static struct slot *find(const struct sig_cache *c, const struct hearth_sig *sig)
{
	size_t i = sig_hash(sig) & (c->cap - 1);

	while (c->slots[i].sig.tgid && !sig_eq(&c->slots[i].sig, sig))
		i = (i + 1) & (c->cap - 1);
	return &c->slots[i];
}

int sig_cache_put(struct sig_cache *c, const struct hearth_sig *sig,
		  const uint64_t *pcs, size_t n)
{
	struct slot *s = find(c, sig);
	uint64_t *copy;

	if (!s->sig.tgid && c->len >= c->max)
		return -ENOSPC;
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, pcs, n * sizeof(*copy));
	if (!s->sig.tgid)
		c->len++;
	free(s->pcs);
	s->sig = *sig;
	s->pcs = copy;
	s->n = n;
	return 0;
}

const uint64_t *sig_cache_get(const struct sig_cache *c,
			      const struct hearth_sig *sig, size_t *n)
{
	const struct slot *s = find(c, sig);

	if (!s->sig.tgid)
		return NULL;
	*n = s->n;
	return s->pcs;
}
