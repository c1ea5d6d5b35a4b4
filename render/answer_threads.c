/* SPDX-License-Identifier: MIT */
/*
 * The answer for a profile of threads (every thread the same width, one
 * row each): how many threads were mostly waiting and how many mostly
 * running, and where most of them did it. A thread's waiting is the self
 * time of its waiting leaves, named by their site (the kernel function
 * that says what it waited in); its running is the rest, named by the
 * nearest user-space function above it (the one the user can change).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/answer_impl.h"

#define BLOCKED_FRAME "(blocked the whole snapshot)"

struct tally {
	const struct rd_model *m;
	const uint8_t *cand;
	uint32_t thread;      /* the thread row being walked, 0 = none */
	uint64_t waited, ran; /* its time */
	int blocked;          /* it holds a blocked-the-whole-snapshot frame */
	uint64_t *w, *r;      /* per function: its waiting by site, running */
	uint32_t *touched, ntouched;
	/* The whole profile: threads, and per function how many threads
	 * were mostly waiting in it (or running in it) most. */
	uint32_t nthreads, nwait, nrun, nblocked, nproc;
	uint32_t *wait_in, *run_in;
	const char *proc;     /* the one process's name, NULL for several */
	uint32_t last_proc;   /* the process row of the last thread */
};

static const struct prof_frame *frame_at(const struct rd_model *m, uint32_t i)
{
	return prof_frame_get(m->p, rd_tree_frame(&m->tree, i));
}

/* The nearest ancestor of @i (itself included) below the thread row whose
 * function is a user-space candidate; the leaf's own function if none. */
static uint32_t running_fn(const struct tally *t, uint32_t i)
{
	for (uint32_t j = i; j && j != t->thread; j = rd_tree_parent(&t->m->tree, j))
		if (t->cand[rd_tree_fn(&t->m->tree, j)] & 2)
			return rd_tree_fn(&t->m->tree, j);
	return rd_tree_fn(&t->m->tree, i);
}

static void touch(struct tally *t, uint32_t g)
{
	if (!t->w[g] && !t->r[g])
		t->touched[t->ntouched++] = g;
}

static void enter(const struct rd_tree *tree, uint32_t i, void *arg)
{
	struct tally *t = arg;
	const struct prof_frame *f = frame_at(t->m, i);
	uint64_t self = rd_tree_self(tree, i);
	uint32_t g;

	if (f && f->kind == PROF_KIND_THREAD) {
		uint32_t proc = rd_tree_parent(tree, i);
		const struct prof_frame *pf = frame_at(t->m, proc);
		const char *pname = pf && pf->kind == PROF_KIND_PROCESS ? prof_str(t->m->p, pf->name) : "";

		t->thread = i;
		t->waited = t->ran = 0;
		t->blocked = 0;
		if (proc != t->last_proc) {
			t->proc = t->nproc && t->proc && !strcmp(t->proc, pname) ? t->proc :
				  t->nproc ? NULL : pname;
			t->nproc++;
			t->last_proc = proc;
		}
		return;
	}
	if (!t->thread)
		return;
	if (f && !strcmp(prof_str(t->m->p, f->name), BLOCKED_FRAME))
		t->blocked = 1;
	if (!self)
		return;
	if (rd_answer_waiting_leaf(t->m, i)) {
		g = rd_answer_site(t->m, i);
		touch(t, g);
		t->w[g] += self;
		t->waited += self;
	} else {
		g = running_fn(t, i);
		touch(t, g);
		t->r[g] += self;
		t->ran += self;
	}
}

/* The function with the largest value in @v among those touched. */
static uint32_t top(const struct tally *t, const uint64_t *v)
{
	uint32_t best = UINT32_MAX;

	for (uint32_t k = 0; k < t->ntouched; k++)
		if (v[t->touched[k]] && (best == UINT32_MAX || v[t->touched[k]] > v[best]))
			best = t->touched[k];
	return best;
}

static void leave(const struct rd_tree *tree, uint32_t i, void *arg)
{
	struct tally *t = arg;
	uint32_t g;

	(void)tree;
	if (i != t->thread)
		return;
	t->nthreads++;
	t->nblocked += (uint32_t)t->blocked;
	if (t->waited > t->ran) {
		t->nwait++;
		g = top(t, t->w);
		if (g != UINT32_MAX)
			t->wait_in[g]++;
	} else if (t->ran) {
		t->nrun++;
		g = top(t, t->r);
		if (g != UINT32_MAX)
			t->run_in[g]++;
	}
	for (uint32_t k = 0; k < t->ntouched; k++)
		t->w[t->touched[k]] = t->r[t->touched[k]] = 0;
	t->ntouched = 0;
	t->thread = 0;
}

/* The function most threads named in @in did it in, as " (in NAME)". */
static void where(const struct tally *t, const uint32_t *in, char *buf, size_t n)
{
	uint32_t best = UINT32_MAX;

	buf[0] = '\0';
	for (uint32_t g = 0; g < t->m->nfn; g++)
		if (in[g] && (best == UINT32_MAX || in[g] > in[best]))
			best = g;
	if (best != UINT32_MAX)
		snprintf(buf, n, " (in %s)", rd_model_fn_name(t->m, best));
}

static void write_counts(struct rd_model *m, const struct tally *t)
{
	char head[128], win[96], rin[96], tail[64] = "";
	size_t len;

	if (t->proc && t->proc[0] && t->nproc == 1)
		snprintf(head, sizeof(head), "Of %s's %u thread%s", t->proc, t->nthreads,
			 t->nthreads == 1 ? "" : "s");
	else if (t->proc && t->proc[0])
		snprintf(head, sizeof(head), "Of the %u threads of %u %s processes",
			 t->nthreads, t->nproc, t->proc);
	else
		snprintf(head, sizeof(head), "Of the %u threads of %u processes", t->nthreads,
			 t->nproc);
	where(t, t->wait_in, win, sizeof(win));
	where(t, t->run_in, rin, sizeof(rin));
	if (t->nwait && t->nrun)
		snprintf(m->answer, sizeof(m->answer), "%s, %u %s mostly waiting%s and %u mostly running%s",
			 head, t->nwait, t->nwait == 1 ? "was" : "were", win, t->nrun, rin);
	else
		snprintf(m->answer, sizeof(m->answer), "%s, %s %s mostly %s%s", head,
			 t->nthreads == 1 ? "it" : "all", t->nthreads == 1 ? "was" : "were",
			 t->nwait ? "waiting" : "running", t->nwait ? win : rin);
	if (t->nblocked)
		snprintf(tail, sizeof(tail), "; %u %s blocked the whole snapshot", t->nblocked,
			 t->nblocked == 1 ? "was" : "were");
	len = strlen(m->answer);
	snprintf(m->answer + len, sizeof(m->answer) - len, "%s.", tail);
}

int rd_answer_threads(struct rd_model *m, const uint8_t *cand)
{
	size_t n = m->nfn ? m->nfn : 1;
	struct tally t = {
		.m = m, .cand = cand,
		.w = calloc(n, sizeof(*t.w)), .r = calloc(n, sizeof(*t.r)),
		.touched = calloc(n, sizeof(*t.touched)),
		.wait_in = calloc(n, sizeof(*t.wait_in)), .run_in = calloc(n, sizeof(*t.run_in)),
	};
	int rc = -1;

	if (t.w && t.r && t.touched && t.wait_in && t.run_in &&
	    rd_tree_walk(&m->tree, enter, leave, &t) == 0 && t.nthreads && t.nwait + t.nrun) {
		write_counts(m, &t);
		rc = 0;
	}
	free(t.w);
	free(t.r);
	free(t.touched);
	free(t.wait_in);
	free(t.run_in);
	return rc;
}
