/* SPDX-License-Identifier: MIT */
/* daemon_tgid: thread id -> process id, an open-addressing table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/daemon_tgid.h"
#include "agent/daemon_window.h"

#define INITIAL_CAP 1024u

struct slot {
	uint32_t tid;    /* 0 = empty */
	uint32_t tgid;
	uint32_t used;   /* window counter when last used */
};

struct tgid_cache {
	struct slot *s;
	uint32_t cap;    /* power of two */
	uint32_t n;
	uint32_t now;    /* window counter */
};

struct tgid_cache *tgid_cache_new(void)
{
	struct tgid_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = calloc(INITIAL_CAP, sizeof(*c->s));
	if (!c->s) {
		free(c);
		return NULL;
	}
	c->cap = INITIAL_CAP;
	return c;
}

static uint32_t hash(uint32_t tid)
{
	return tid * 2654435761u;
}

static struct slot *find(struct slot *s, uint32_t cap, uint32_t tid)
{
	uint32_t i = hash(tid) & (cap - 1);

	while (s[i].tid && s[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &s[i];
}

/* Rebuilds into a table of @cap slots, keeping only entries @keep. */
static int rehash(struct tgid_cache *c, uint32_t cap, uint32_t min_used)
{
	struct slot *ns = calloc(cap, sizeof(*ns));
	uint32_t n = 0;

	if (!ns)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->cap; i++) {
		if (!c->s[i].tid || c->s[i].used < min_used)
			continue;
		*find(ns, cap, c->s[i].tid) = c->s[i];
		n++;
	}
	free(c->s);
	c->s = ns;
	c->cap = cap;
	c->n = n;
	return 0;
}

uint32_t tgid_cache_get(void *cache, uint32_t tid)
{
	struct tgid_cache *c = cache;
	struct slot *e;

	if (!tid)
		return 0;
	e = find(c->s, c->cap, tid);
	if (e->tid) {
		e->used = c->now;
		return e->tgid;
	}
	if (c->n + 1 > c->cap / 2) {
		if (rehash(c, c->cap * 2, 0) < 0)
			return daemon_window_proc_tgid(NULL, tid);
		e = find(c->s, c->cap, tid);
	}
	e->tid = tid;
	e->tgid = daemon_window_proc_tgid(NULL, tid);
	e->used = c->now;
	c->n++;
	return e->tgid;
}

void tgid_cache_tick(struct tgid_cache *c, uint32_t max_windows)
{
	c->now++;
	if (c->now > max_windows && (c->now % max_windows) == 0)
		rehash(c, c->cap, c->now - max_windows);
}

uint32_t tgid_cache_size(const struct tgid_cache *c)
{
	return c->n;
}

void tgid_cache_free(struct tgid_cache *c)
{
	if (!c)
		return;
	free(c->s);
	free(c);
}
