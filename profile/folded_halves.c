/* SPDX-License-Identifier: MIT */
/*
 * A big folded text's first pass in two halves on two threads: the
 * second half numbers its new texts itself, and the first half's table
 * then maps them, in the order they came, to the frames a single pass
 * would give; its stacks are appended with those ids.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "folded_impl.h"

/* The second half of a split parse, run on a thread of its own. */
struct half {
	struct parse_ctx c;
	const char *buf;
	size_t pos, stop;
	int ret;
};

static void *parse_half(void *arg)
{
	struct half *h = arg;

	h->ret = folded_parse_lines(&h->c, h->buf, h->pos, h->stop);
	return NULL;
}

/* Part of the second half's stacks, copied with its ids mapped. */
struct remap {
	const uint32_t *from, *map;
	uint32_t *to;
	size_t n;     /* words */
	size_t nlocal; /* ids past it are not texts (never made) */
};

static void *remap_run(void *arg)
{
	const struct remap *m = arg;

	for (size_t i = 0; i < m->n;) {
		const uint32_t *r = m->from + i;
		uint32_t *o = m->to + i;

		o[0] = r[0];
		o[1] = r[1];
		o[2] = r[2];
		for (size_t k = 0; k < r[0]; k++)
			o[3 + k] = r[3 + k] <= m->nlocal ? m->map[r[3 + k]] : 0;
		i += 3 + (size_t)r[0];
	}
	return NULL;
}

/* Maps the second half's texts to frames in the order they came (so
 * every id is the one a single pass gives): @map[local id]. The slots are
 * asked for a few texts ahead. 0 or -ENOMEM. */
static int map_texts(struct parse_ctx *c, const struct parse_ctx *h,
		     uint32_t *map)
{
	map[0] = 0;
	for (size_t j = 0; j < h->nlocal; j++) {
		if (j + 8 < h->nlocal)
			folded_text_prefetch(c, &h->local[j + 8].t);
		map[j + 1] = folded_text_frame(c, &h->local[j].t, h->local[j].process);
		if (map[j + 1] == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

/* Appends the second half @h to @c: its texts mapped to frames, its
 * stacks queued with those ids, in two parts on two threads (cut where
 * the half's parse noted, h->mark_out). 0, or -ENOMEM with @c's stacks
 * unchanged. */
static int join_half(struct parse_ctx *c, const struct parse_ctx *h)
{
	uint32_t *map = malloc((h->nlocal + 1) * sizeof(*map));
	struct remap a, b;
	pthread_t th;
	int threaded = 0;

	if (!map || folded_out_room(c, h->nout) < 0 || map_texts(c, h, map) < 0) {
		free(map);
		return -ENOMEM;
	}
	a = (struct remap){ h->out, map, c->out + c->nout, h->nout, h->nlocal };
	b = a;
	if (0 < h->mark_out && h->mark_out < h->nout) {
		a.n = h->mark_out;
		b.from += a.n;
		b.to += a.n;
		b.n -= a.n;
		threaded = pthread_create(&th, NULL, remap_run, &b) == 0;
	}
	remap_run(&a);
	if (threaded)
		pthread_join(th, NULL);
	else if (a.n < h->nout)
		remap_run(&b);
	c->nout += h->nout;
	c->nlines += h->nlines;
	c->lineno += h->lineno;
	free(map);
	return 0;
}

/* Texts from this size on are parsed in two halves on two threads. */
#define SPLIT_MIN ((size_t)1 << 20)

/* Parses @buf[pos..len) into @c, in two halves at once when it is big:
 * the first here, the second on a thread. The result, errors included,
 * is that of one pass: when the second half fails it is parsed again
 * after the first, where the line numbers are known. */
int folded_parse_text(struct parse_ctx *c, const char *buf, size_t pos,
		      size_t len)
{
	const char *nl = len - pos < SPLIT_MIN ? NULL :
			 memchr(buf + pos + (len - pos) / 2, '\n',
				len - pos - (len - pos) / 2);
	struct half h = { .buf = buf, .stop = len };
	pthread_t th;
	int ret;

	if (!nl || (size_t)(nl + 1 - buf) == len)
		return folded_parse_lines(c, buf, pos, len);
	h.pos = (size_t)(nl + 1 - buf);
	h.c = (struct parse_ctx){ .end = c->end, .deferred = 1,
				  .first_is_process = c->first_is_process,
				  .mark_pos = h.pos + (len - h.pos) / 2 };
	if (folded_texts_init(&h.c) < 0 ||
	    pthread_create(&th, NULL, parse_half, &h) != 0) {
		folded_ctx_free(&h.c);
		return folded_parse_lines(c, buf, pos, len);
	}
	/* The first half's new texts are interned at once at the end: one
	 * by one they would cost it more than the second half's lookups. */
	c->deferred = 1;
	ret = folded_parse_lines(c, buf, pos, h.pos);
	if (folded_local_finish(c) < 0) {
		/* Its stacks name no frames: none is kept. */
		c->nout = c->nlines = c->last = 0;
		ret = -ENOMEM;
	}
	pthread_join(th, NULL);
	if (ret == 0 && (h.ret < 0 || join_half(c, &h.c) < 0))
		ret = folded_parse_lines(c, buf, h.pos, len);
	folded_ctx_free(&h.c);
	return ret;
}

