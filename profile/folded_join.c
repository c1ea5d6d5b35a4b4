/* SPDX-License-Identifier: MIT */
/*
 * Joining a big text parsed in parts by two threads (folded_halves.c).
 * Each thread numbered the texts it met itself. Here the texts are put
 * in the order they first appear in the text, part after part in text
 * order, interned in the profile in that order (so every frame gets the
 * id one pass gives it), and the parts' stacks are queued in text order
 * with those frames, on two threads.
 *
 * A part's texts in order of first appearance are the ones its thread
 * met first in it, in the order it numbered them, unless the thread had
 * parsed a part further on in the text before this one: then the part's
 * stacks are read to find them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "folded_impl.h"
#include "profile_impl.h"

/* The texts of both threads in order of first appearance: pos[t][l] is
 * the place of text l of thread t in @order (from 1; 0: not placed);
 * @in0[l]: thread 1's text l in thread 0's table (0: not there). */
struct order {
	struct parse_ctx *ctx[2];
	uint32_t *pos[2];
	uint32_t *in0;
	struct prof_frame_text *text;
	uint32_t n;
};

/* Places text @l of thread @t, unless it is placed: thread 1's texts
 * found in thread 0's table (@in0) may be placed already as thread 0's. */
static void place(struct order *o, int t, uint32_t l)
{
	const struct local_text *x;
	uint32_t l0 = 0;

	if (o->pos[t][l])
		return;
	x = &o->ctx[t]->local[l - 1];
	if (t == 1) {
		l0 = o->in0[l];
		if (l0 && o->pos[0][l0]) {
			o->pos[1][l] = o->pos[0][l0];
			return;
		}
	}
	o->text[o->n++] = folded_frame_text(x);
	o->pos[t][l] = o->n;
	if (l0)
		o->pos[0][l0] = o->n;
}

/* 1 when part @i's thread parsed, before it, a part that lies further on
 * in the text (@seg[0..n)). */
static int after_later(const struct segment *seg, int n, int i)
{
	for (int k = 0; k < n; k++)
		if (seg[k].thread == seg[i].thread && seg[k].seq < seg[i].seq &&
		    seg[i].from < seg[k].from)
			return 1;
	return 0;
}

#define LOOKUP_AHEAD 8u

/* Thread 1's texts lo..hi-1 looked up in thread 0's table (read only
 * here), their slots asked for a few texts ahead. */
struct lookup {
	const struct order *o;
	size_t lo, hi;
};

static void *lookup_run(void *arg)
{
	const struct lookup *k = arg;
	const struct parse_ctx *c = k->o->ctx[0], *h = k->o->ctx[1];

	for (size_t l = k->lo; l < k->hi; l++) {
		const struct local_text *x = &h->local[l - 1];

		if (l + LOOKUP_AHEAD < k->hi)
			folded_text_prefetch(c, &h->local[l + LOOKUP_AHEAD - 1].t);
		k->o->in0[l] = folded_text_find(c, &x->t, x->process);
	}
	return NULL;
}

/* Looks up all of thread 1's texts in thread 0's table, half of them on
 * a thread. */
static void lookup_all(struct order *o)
{
	size_t n = o->ctx[1]->nlocal;
	struct lookup a = { o, 1, 1 + n / 2 }, b = { o, 1 + n / 2, n + 1 };
	pthread_t th;

	o->in0[0] = 0;
	if (pthread_create(&th, NULL, lookup_run, &b) == 0) {
		lookup_run(&a);
		pthread_join(th, NULL);
		return;
	}
	lookup_run(&a);
	lookup_run(&b);
}

/* Places the texts of part @s in order of first appearance: the ones its
 * thread numbered in it, or, with @scan, every text of its stacks. */
static void place_part(struct order *o, const struct segment *s, int scan)
{
	const struct parse_ctx *c = o->ctx[s->thread];

	if (!scan) {
		for (size_t l = s->local_from + 1; l <= s->local_to; l++)
			place(o, s->thread, (uint32_t)l);
		return;
	}
	for (size_t w = s->out_from; w < s->out_to; w += 3 + (size_t)c->out[w])
		for (size_t k = 0; k < c->out[w]; k++) {
			uint32_t l = c->out[w + 3 + k];

			if (l && l <= c->nlocal)
				place(o, s->thread, l);
		}
}

/* Stacks copied with their texts' frames: @n words from @from to @to,
 * local ids up to @nlocal mapped by @map. */
struct copy {
	const uint32_t *from, *map;
	uint32_t *to;
	size_t n, nlocal;
};

static void copy_run(const struct copy *m)
{
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
}

/* A thread's share of the copies. */
struct copies {
	struct copy *c;
	int n;
};

static void *copies_run(void *arg)
{
	const struct copies *q = arg;

	for (int i = 0; i < q->n; i++)
		copy_run(&q->c[i]);
	return NULL;
}

/* Runs the copies @c[0..n) (at most n + 1 fit @c) on two threads, about
 * half the words each: the copy that holds the middle is cut at a stack
 * boundary. */
static void copies_two(struct copy *c, int n)
{
	size_t total = 0, half, at = 0;
	struct copies a = { c, n }, b = { c + n, 0 };
	pthread_t th;
	int i = 0;

	for (int k = 0; k < n; k++)
		total += c[k].n;
	half = total / 2;
	while (i < n && at + c[i].n <= half)
		at += c[i++].n;
	if (i < n) {
		/* Copy i holds the middle: cut it after the stack that
		 * crosses it. */
		struct copy *x = &c[i];
		size_t w = 0;

		while (w < x->n && at + w < half)
			w += 3 + (size_t)x->from[w];
		memmove(x + 2, x + 1, (size_t)(n - i - 1) * sizeof(*x));
		x[1] = *x;
		x[1].from += w;
		x[1].to += w;
		x[1].n -= w;
		x->n = w;
		a.n = i + 1;
		b = (struct copies){ x + 1, n - i };
	}
	if (b.n && pthread_create(&th, NULL, copies_run, &b) == 0) {
		copies_run(&a);
		pthread_join(th, NULL);
		return;
	}
	copies_run(&a);
	copies_run(&b);
}

static int seg_cmp(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/* The parts that are joined: the first (thread 0's, from the start,
 * kept even when it failed: its stacks before the bad line stay), then
 * while each goes on where the one before stopped and did not fail. */
static int joined_parts(const struct segment *seg, int n)
{
	int k = 1;

	if (seg[0].ret < 0)
		return 1;
	while (k < n && seg[k].from == seg[k - 1].to && seg[k].ret == 0)
		k++;
	return k;
}

/* Places the texts of the parts @seg[0..k) and interns them: pos[t][l]
 * becomes the frame of text l of thread t (0 for texts of no part
 * joined). Thread 0's first @nhead texts are interned already, as frames
 * @head[1..nhead]. 0 or -ENOMEM. */
static int frames_of(struct order *o, const struct segment *seg, int n, int k,
		     const uint32_t *head, size_t nhead)
{
	struct prof_profile *p = o->ctx[0]->p;
	uint32_t *ids;
	int err = -ENOMEM;

	for (size_t l = 1; l <= nhead; l++)
		o->pos[0][l] = (uint32_t)l;
	o->n = (uint32_t)nhead;
	lookup_all(o);
	for (int i = 0; i < k; i++)
		place_part(o, &seg[i], after_later(seg, n, i));
	ids = malloc(((size_t)o->n + 1) * sizeof(*ids));
	if (ids && prof_intern_frames(p, o->text + nhead, o->n - nhead,
				      ids + 1 + nhead) == 0) {
		if (nhead)
			memcpy(ids + 1, head + 1, nhead * sizeof(*ids));
		ids[0] = 0;
		for (int t = 0; t < 2; t++)
			for (size_t l = 1; l <= o->ctx[t]->nlocal; l++)
				o->pos[t][l] = ids[o->pos[t][l]];
		err = 0;
	}
	free(ids);
	return err;
}

/* Queues the stacks of the parts @seg[0..k) in @c in text order with
 * their frames (@map[t]): the first part's stay in place (mapped unless
 * their numbers are the frames already), thread 0's later ones are set
 * aside first as others go where they were. 0 or -ENOMEM. */
static int queue_parts(struct parse_ctx *c, struct parse_ctx *h,
		       const struct segment *seg, int k, uint32_t **map)
{
	const struct segment *s0 = &seg[0];
	size_t words = 0, aside = c->nout - s0->out_to, same = 0;
	uint32_t *kept = NULL, *to;
	struct copy *cp = malloc(((size_t)k + 1) * sizeof(*cp));
	int n = 0;

	if (!cp || (aside && !(kept = malloc(aside * sizeof(*kept))))) {
		free(cp);
		return -ENOMEM;
	}
	if (aside)
		memcpy(kept, c->out + s0->out_to, aside * sizeof(*kept));
	while (same < s0->local_to && map[0][same + 1] == same + 1)
		same++;
	if (same < s0->local_to)
		for (size_t w = s0->out_from; w < s0->out_to; w += 3 + (size_t)c->out[w])
			for (size_t i = 0; i < c->out[w]; i++)
				c->out[w + 3 + i] = map[0][c->out[w + 3 + i]];
	for (int i = 1; i < k; i++)
		words += seg[i].out_to - seg[i].out_from;
	c->nout = s0->out_to;
	if (folded_out_room(c, words) < 0) {
		free(kept);
		free(cp);
		return -ENOMEM;
	}
	to = words ? c->out + c->nout : NULL;
	for (int i = 1; i < k && words; i++) {
		const struct segment *s = &seg[i];
		const uint32_t *from;

		if (s->out_to == s->out_from)
			continue; /* no stack (its buffer may be none) */
		from = s->thread ? h->out + s->out_from
				 : kept + (s->out_from - s0->out_to);
		cp[n++] = (struct copy){ from, map[s->thread], to,
					 s->out_to - s->out_from,
					 (s->thread ? h : c)->nlocal };
		to += s->out_to - s->out_from;
	}
	copies_two(cp, n);
	c->nout += words;
	free(kept);
	free(cp);
	return 0;
}

/* The stacks queued by the parts @seg[0..k). */
static size_t joined_lines(const struct segment *seg, int k)
{
	size_t n = seg[0].lines_to;

	for (int i = 1; i < k; i++)
		n += seg[i].lines_to - seg[i].lines_from;
	return n;
}

int folded_join(struct parse_ctx *c, struct parse_ctx *h, struct segment *seg,
		int n, const uint32_t *head, size_t nhead, const char *buf,
		size_t len)
{
	struct order o = { { c, h }, { NULL, NULL }, NULL, NULL, 0 };
	int k, err = -ENOMEM, failed;
	size_t resume;

	qsort(seg, (size_t)n, sizeof(*seg), seg_cmp);
	k = joined_parts(seg, n);
	failed = seg[0].ret;
	resume = seg[k - 1].to;
	o.pos[0] = calloc(c->nlocal + 1, sizeof(*o.pos[0]));
	o.pos[1] = calloc(h->nlocal + 1, sizeof(*o.pos[1]));
	o.in0 = malloc((h->nlocal + 1) * sizeof(*o.in0));
	o.text = malloc((c->nlocal + h->nlocal + 1) * sizeof(*o.text));
	if (o.pos[0] && o.pos[1] && o.in0 && o.text &&
	    frames_of(&o, seg, n, k, head, nhead) == 0) {
		/* The frames are all known when the whole text was joined:
		 * they are ranked for the tree while the stacks are queued. */
		if (failed == 0 && resume == len && prof_node_count(c->p) == 1)
			c->ranks = prof_ranks_start(c->p, joined_lines(seg, k));
		if (queue_parts(c, h, seg, k, o.pos) == 0)
			err = 0;
	}
	free(o.pos[0]);
	free(o.pos[1]);
	free(o.in0);
	free(o.text);
	if (err < 0) {
		/* The stacks name no frames: none is kept. */
		c->nout = c->nlines = c->last = 0;
		return err;
	}
	c->nlines = joined_lines(seg, k);
	c->lineno = seg[0].read_to;
	for (int i = 1; i < k; i++)
		c->lineno += seg[i].read_to - seg[i].read_from;
	if (failed < 0)
		return failed;
	if (folded_ctx_forget(c) < 0)
		return -ENOMEM;
	return resume < len ? folded_parse_lines(c, buf, resume, len) : 0;
}
