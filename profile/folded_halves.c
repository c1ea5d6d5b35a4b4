/* SPDX-License-Identifier: MIT */
/*
 * A big folded text's first pass on two threads. Each starts on a half
 * and claims its lines a step at a time; a thread done with its part
 * takes the second half of what the other has left, so both end
 * together however the machine shares its cores. Each thread numbers the
 * texts it meets itself (a deferred parse, which does not touch the
 * profile); folded_join.c then gives them the frames a single pass
 * would, and queues the parts' stacks in text order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "folded_impl.h"
#include "profile_impl.h"

/* Texts from this size on are parsed by two threads. */
#define SPLIT_MIN ((size_t)1 << 20)
/* Bytes a thread claims at a time. */
#define STEP ((size_t)256 << 10)
/* A thread takes half of what the other has left from this size on. */
#define TAKE_MIN ((size_t)1 << 20)
/* Parts at most: each take makes one. */
#define MAX_PARTS 32
/* Interning a text costs about as much as parsing this many bytes. */
#define HEAD_COST 40u

/* The two threads' shared state. Under @mu: what each has left to claim
 * (next[t]..end[t]), the parts made so far and @stop (a parse failed:
 * nothing more is claimed). A part is written only by its thread. */
struct split {
	pthread_mutex_t mu;
	const char *buf;
	struct parse_ctx *ctx[2];
	size_t next[2], end[2];
	int open[2];   /* each thread's part being parsed, -1: none */
	int seq[2];    /* parts each thread made */
	struct segment part[MAX_PARTS];
	int nparts, stop;
	/* Thread 0's first part, done before it takes from the other: its
	 * texts (0's 1..nhead) interned as frames head[1..nhead] while the
	 * other still parses (@head_err: that failed). */
	int head_state; /* 0: first part going on, 1: to intern, 2: done */
	size_t texts0;  /* texts thread 0 had met at its last claim */
	uint32_t *head;
	size_t nhead;
	int head_err;
	size_t step, take_min;
	unsigned wait_us[2];
	int hold0, done1; /* tests: see struct folded_how; thread 1 ended */
};

/* The offset after the line end at or after @from in @buf[..stop), or
 * @stop. */
static size_t line_after(const char *buf, size_t from, size_t stop)
{
	const char *nl = from < stop ? memchr(buf + from, '\n', stop - from) : NULL;

	return nl ? (size_t)(nl + 1 - buf) : stop;
}

/* Thread @t, done with its range, takes the second half of the other's
 * when enough is left (under the lock). */
static void take(struct split *sp, int t)
{
	int o = !t;
	size_t left = sp->next[o] < sp->end[o] ? sp->end[o] - sp->next[o] : 0, cut;
	/* Thread 0 has its first part's texts to intern when that part is
	 * done: leave it that much less to parse. */
	size_t owed = o == 0 && sp->head_state == 0 ? sp->texts0 * HEAD_COST : 0;

	if (sp->nparts == MAX_PARTS || left < sp->take_min)
		return;
	cut = left <= owed ? sp->next[o] :
	      line_after(sp->buf, sp->next[o] + (left - owed) / 2, sp->end[o]);
	if (cut == sp->end[o])
		return;
	sp->next[t] = cut;
	sp->end[t] = sp->end[o];
	sp->end[o] = cut;
	sp->open[t] = -1;
}

/* Opens a part for thread @t at byte @from (under the lock). */
static int part_open(struct split *sp, int t, size_t from)
{
	const struct parse_ctx *c = sp->ctx[t];
	struct segment *s = &sp->part[sp->nparts];

	*s = (struct segment){
		.from = from, .to = from,
		.out_from = c->nout, .out_to = c->nout,
		.local_from = c->nlocal, .local_to = c->nlocal,
		.lines_from = c->nlines, .lines_to = c->nlines,
		.read_from = c->lineno, .read_to = c->lineno,
		.thread = t, .seq = sp->seq[t]++,
	};
	return sp->open[t] = sp->nparts++;
}

/* Claims thread @t's next lines: *@from..*@to in part *@part (1). 0
 * when nothing is left for it; 2, once, when thread 0's first part is
 * done. */
static int claim(struct split *sp, int t, int *part, size_t *from, size_t *to)
{
	int got = 0, go;

	pthread_mutex_lock(&sp->mu);
	if (t == 0)
		sp->texts0 = sp->ctx[0]->nlocal;
	if (t == 0 && sp->head_state == 0 && sp->end[t] <= sp->next[t]) {
		/* The first part is done: its texts are interned first. */
		sp->head_state = 1;
		pthread_mutex_unlock(&sp->mu);
		return 2;
	}
	/* Thread 0's first claim is made even after the other failed: its
	 * first part starts the text (folded_join()). */
	go = !sp->stop || (t == 0 && sp->seq[0] == 0);
	if (go && sp->end[t] <= sp->next[t])
		take(sp, t);
	if (go && sp->next[t] < sp->end[t]) {
		*from = sp->next[t];
		*to = sp->end[t] - *from <= sp->step ? sp->end[t] :
		      line_after(sp->buf, *from + sp->step, sp->end[t]);
		sp->next[t] = *to;
		*part = sp->open[t] < 0 ? part_open(sp, t, *from) : sp->open[t];
		got = 1;
	}
	pthread_mutex_unlock(&sp->mu);
	return got;
}

/* Interns the texts thread 0 met in its first part, the first of the
 * text, so theirs are the profile's next frames in the order they came. */
static void head_intern(struct split *sp)
{
	const struct parse_ctx *c = sp->ctx[0];
	struct prof_frame_text *t = malloc((c->nlocal + 1) * sizeof(*t));

	sp->head = malloc((c->nlocal + 1) * sizeof(*sp->head));
	sp->nhead = c->nlocal;
	if (t && sp->head) {
		for (size_t l = 0; l < c->nlocal; l++)
			t[l] = folded_frame_text(&c->local[l]);
		sp->head[0] = 0;
		sp->head_err = prof_intern_frames(c->p, t, c->nlocal, sp->head + 1);
	} else {
		sp->head_err = -ENOMEM;
	}
	free(t);
	pthread_mutex_lock(&sp->mu);
	sp->head_state = 2;
	pthread_mutex_unlock(&sp->mu);
}

/* For tests: waits until the other thread has nothing of its own range
 * left (or a parse failed), looking every @us microseconds, so that it
 * takes from thread @t. */
static void wait_other(struct split *sp, int t, unsigned us)
{
	const struct timespec nap = { 0, 1000 * (long)us };
	int o = !t, done;

	for (;;) {
		pthread_mutex_lock(&sp->mu);
		done = sp->stop || sp->end[o] <= sp->next[o];
		pthread_mutex_unlock(&sp->mu);
		if (done)
			return;
		nanosleep(&nap, NULL);
	}
}

/* For tests: thread 0 waits before its first claim until thread 1 is
 * done, so thread 1 takes from it first, or fails first. */
static void wait_second(struct split *sp)
{
	const struct timespec nap = { 0, 100000 };
	int done;

	for (;;) {
		pthread_mutex_lock(&sp->mu);
		done = sp->done1;
		pthread_mutex_unlock(&sp->mu);
		if (done)
			return;
		nanosleep(&nap, NULL);
	}
}

/* Thread @t's loop: claims and parses until nothing is left. */
static void split_run(struct split *sp, int t)
{
	struct parse_ctx *c = sp->ctx[t];
	size_t from, to;
	int i, got;

	if (t == 0 && sp->hold0)
		wait_second(sp);

	while ((got = claim(sp, t, &i, &from, &to))) {
		int ret;

		if (got == 2) {
			head_intern(sp);
			continue;
		}
		ret = folded_parse_lines(c, sp->buf, from, to);
		struct segment *s = &sp->part[i];

		s->to = to;
		s->out_to = c->nout;
		s->local_to = c->nlocal;
		s->lines_to = c->nlines;
		s->read_to = c->lineno;
		if (ret < 0) {
			s->ret = ret;
			pthread_mutex_lock(&sp->mu);
			sp->stop = 1;
			pthread_mutex_unlock(&sp->mu);
			return;
		}
		if (sp->wait_us[t])
			wait_other(sp, t, sp->wait_us[t]);
	}
}

static void *second_run(void *arg)
{
	struct split *sp = arg;

	split_run(sp, 1);
	pthread_mutex_lock(&sp->mu);
	sp->done1 = 1;
	pthread_mutex_unlock(&sp->mu);
	return NULL;
}

int folded_parse_text(struct parse_ctx *c, const char *buf, size_t pos,
		      size_t len, struct folded_how *how)
{
	size_t split_min = how && how->split_min ? how->split_min : SPLIT_MIN;
	size_t half = len - pos < split_min ? len :
		      line_after(buf, pos + (len - pos) / 2, len);
	struct parse_ctx h = { .end = c->end, .deferred = 1,
			       .first_is_process = c->first_is_process };
	struct split sp = {
		.buf = buf, .ctx = { c, &h },
		.next = { pos, half }, .end = { half, len },
		.open = { -1, -1 },
		.step = how && how->step ? how->step : STEP,
		.take_min = how && how->take_min ? how->take_min : TAKE_MIN,
	};
	pthread_t th;
	int ret;

	if (half == len)
		return folded_parse_lines(c, buf, pos, len);
	if (how) {
		memcpy(sp.wait_us, how->wait_us, sizeof(sp.wait_us));
		sp.hold0 = how->hold0;
	}
	if (folded_texts_init(&h) < 0 || pthread_mutex_init(&sp.mu, NULL) != 0) {
		folded_ctx_free(&h);
		return folded_parse_lines(c, buf, pos, len);
	}
	if (pthread_create(&th, NULL, second_run, &sp) != 0) {
		pthread_mutex_destroy(&sp.mu);
		folded_ctx_free(&h);
		return folded_parse_lines(c, buf, pos, len);
	}
	c->deferred = 1;
	split_run(&sp, 0);
	pthread_join(th, NULL);
	pthread_mutex_destroy(&sp.mu);
	if (how)
		how->segments = (unsigned)sp.nparts;
	if (sp.seq[0] == 0) {
		/* Thread 0 made no part (its first claim is always granted:
		 * not expected): its context is as it was; read it all alone. */
		c->deferred = 0;
		folded_ctx_free(&h);
		return folded_parse_lines(c, buf, pos, len);
	}
	ret = sp.head_err ? sp.head_err :
	      folded_join(c, &h, sp.part, sp.nparts, sp.head_state == 2 ? sp.head : NULL,
			  sp.head_state == 2 ? sp.nhead : 0, buf, len);
	if (sp.head_err)
		c->nout = c->nlines = c->last = 0; /* its stacks name no frames */
	free(sp.head);
	/* The second thread's stacks are copied: their memory, faulted in
	 * already, serves the tree's sort. */
	free(c->spare);
	c->spare = h.out;
	c->spare_cap = h.out_cap;
	h.out = NULL;
	folded_ctx_free(&h);
	return ret;
}
