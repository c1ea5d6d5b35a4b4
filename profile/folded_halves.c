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

/* Appends the second half @h to @c: maps its texts to frames in the order
 * they came (so every id is the one a single pass gives) and queues its
 * stacks with those ids. 0, or -ENOMEM with @c's stacks unchanged. */
static int join_half(struct parse_ctx *c, const struct parse_ctx *h)
{
	uint32_t *map = malloc((h->nlocal + 1) * sizeof(*map)), *o;

	if (!map || folded_out_room(c, h->nout) < 0) {
		free(map);
		return -ENOMEM;
	}
	map[0] = 0;
	for (size_t j = 0; j < h->nlocal; j++) {
		map[j + 1] = folded_text_frame(c, &h->local[j].t, h->local[j].process);
		if (map[j + 1] == UINT32_MAX) {
			free(map);
			return -ENOMEM;
		}
	}
	o = c->out + c->nout;
	for (size_t i = 0; i < h->nout;) {
		const uint32_t *r = h->out + i;

		o[i] = r[0];
		o[i + 1] = r[1];
		o[i + 2] = r[2];
		for (size_t k = 0; k < r[0]; k++)
			o[i + 3 + k] = r[3 + k] <= h->nlocal ? map[r[3 + k]] : 0;
		i += 3 + (size_t)r[0];
	}
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
				  .first_is_process = c->first_is_process };
	if (folded_texts_init(&h.c) < 0 ||
	    pthread_create(&th, NULL, parse_half, &h) != 0) {
		folded_ctx_free(&h.c);
		return folded_parse_lines(c, buf, pos, len);
	}
	ret = folded_parse_lines(c, buf, pos, h.pos);
	pthread_join(th, NULL);
	if (ret == 0 && (h.ret < 0 || join_half(c, &h.c) < 0))
		ret = folded_parse_lines(c, buf, h.pos, len);
	folded_ctx_free(&h.c);
	return ret;
}

