/* SPDX-License-Identifier: MIT */
/*
 * The answer sentence and the hot-spot cards.
 *
 * Candidates are the functions the user can change: frames of class "your
 * code" when those hold a real share (5% of the whole, answerable), else
 * every user-space function. A candidate answers for its self time and for
 * the non-candidate code it calls (libraries, runtime, system), not for the
 * other candidates it calls. The sentence names the candidate answerable
 * for the most, with its total, and the callee holding most of it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/model.h"

static size_t unnamed_prefix(const char *name);

unsigned rd_answer_frame_bits(const struct prof_profile *p, uint32_t frame)
{
	const struct prof_frame *fr = prof_frame_get(p, frame);
	const char *name;

	if (!fr || fr->kind == PROF_KIND_PROCESS || fr->kind == PROF_KIND_THREAD)
		return 0;
	name = prof_str(p, fr->name < prof_str_count(p) ? fr->name : 0);
	if (unnamed_prefix(name))
		return 4;
	if (name[0] == '[')
		return 0;
	return (fr->cls == PROF_CLASS_YOURS) |
	       (fr->kind != PROF_KIND_KERNEL && fr->cls != PROF_CLASS_SYSTEM &&
		fr->cls != PROF_CLASS_WAITING) << 1;
}

/* The callee of @f holding most of its time: the direct callee (another
 * function) with the largest total, or for waits the function where the
 * most time was spent waiting under @f (largest self). */
struct callee {
	uint32_t f;
	uint32_t inside; /* f's nodes on the path */
	uint64_t *acc;
};

static void callee_enter(const struct rd_tree *t, uint32_t i, void *arg)
{
	struct callee *c = arg;
	uint32_t g = rd_tree_fn(t, i);

	if (g == c->f)
		c->inside++;
	else if (c->inside)
		c->acc[g] += rd_tree_self(t, i);
}

static void callee_leave(const struct rd_tree *t, uint32_t i, void *arg)
{
	struct callee *c = arg;

	if (rd_tree_fn(t, i) == c->f)
		c->inside--;
}

/* Totals of @f's direct callees, by function, into @acc: one pass in
 * order, the parent's function read beside the node. */
static void direct_callees(const struct rd_tree *t, uint32_t f, uint64_t *acc)
{
	for (uint32_t i = 1; i < t->n; i++) {
		uint32_t g = rd_tree_fn(t, i), parent = rd_tree_parent(t, i);

		if (g != f && parent && rd_tree_fn(t, parent) == f)
			acc[g] += rd_tree_total(t, i);
	}
}

static uint32_t main_callee(struct rd_model *m, uint32_t f, int leaf,
			    uint64_t *value)
{
	struct callee c = { .f = f };
	uint32_t best = UINT32_MAX;

	*value = 0;
	c.acc = calloc(m->nfn, sizeof(*c.acc));
	if (!c.acc)
		return UINT32_MAX;
	if (!leaf)
		direct_callees(&m->tree, f, c.acc);
	else if (rd_tree_walk(&m->tree, callee_enter, callee_leave, &c) < 0) {
		free(c.acc);
		return UINT32_MAX;
	}
	for (uint32_t g = 0; g < m->nfn; g++) {
		if (g != f && m->fns[g].row && c.acc[g] > *value) {
			*value = c.acc[g];
			best = g;
		}
	}
	free(c.acc);
	return best;
}

static double pct(const struct rd_model *m, uint64_t v)
{
	return m->total ? 100.0 * (double)v / (double)m->total : 0;
}

static void write_sentence(struct rd_model *m, uint32_t f)
{
	const struct prof_meta *meta = prof_meta_const(m->p);
	int waits = meta->off_cpu != 0;
	char over[64] = "", share[16], cshare[16], dur[32];
	const char *what, *prep;
	uint64_t cv = 0;
	uint32_t g;
	size_t len;

	if (meta->duration_ns) {
		rd_fmt_value(dur, sizeof(dur), meta->duration_ns,
			     PROF_UNIT_NANOSECONDS);
		snprintf(over, sizeof(over), "Over %s, ", dur);
	}
	if (m->total == 0 || f == UINT32_MAX) {
		snprintf(m->answer, sizeof(m->answer), "%s",
			 waits ? "Nothing waited in this profile." :
			 "Nothing was recorded in this profile.");
		return;
	}
	if (waits)
		what = "of the waiting time", prep = "under";
	else if (meta->unit == PROF_UNIT_BYTES)
		what = "of the memory", prep = "allocated under";
	else
		what = "of CPU time", prep = "in";
	if (m->fns[f].own <= UINT64_MAX / 20 && m->fns[f].own * 20 < m->total) {
		/* A flat profile: no function answers for 5% of it (a share
		 * near 2^64 is not multiplied past it). */
		rd_fmt_pct(share, sizeof(share), pct(m, m->fns[f].own));
		snprintf(m->answer, sizeof(m->answer), "%s%s %s is spread thin: no "
			 "function holds more than %s of it on its own.", over,
			 over[0] ? "the" : "The", waits ? "waiting time" :
			 meta->unit == PROF_UNIT_BYTES ? "memory" : "CPU time", share);
		return;
	}
	rd_fmt_pct(share, sizeof(share), pct(m, m->fns[f].total));
	snprintf(m->answer, sizeof(m->answer), "%s%s %s was %s %s", over, share,
		 what, prep, rd_model_fn_name(m, f));
	g = main_callee(m, f, waits, &cv);
	len = strlen(m->answer);
	if (g != UINT32_MAX && cv * 4 >= m->fns[f].total &&
	    cv * 20 >= m->total) {
		rd_fmt_pct(cshare, sizeof(cshare), pct(m, cv));
		snprintf(m->answer + len, sizeof(m->answer) - len,
			 ", mostly %s %s (%s)", waits ? "waiting in" : "inside",
			 rd_model_fn_name(m, g), cshare);
		len = strlen(m->answer);
	}
	snprintf(m->answer + len, sizeof(m->answer) - len, ".");
}

static int used(const struct rd_model *m, uint32_t f)
{
	for (int i = 0; i < m->ncards; i++)
		if (m->cards[i].fn == f)
			return 1;
	return 0;
}

/* Adds up to 3 cards, best first by own (@by_own) or self: the largest
 * values above 0, in one pass (a tie goes to the lower index, as when
 * the best is picked again for each card). */
static void fill_cards(struct rd_model *m, const uint8_t *cand, int by_own,
		       int yours_only)
{
	struct rd_card top[3];
	uint64_t tv[3];
	int want = 3 - m->ncards, n = 0;

	for (uint32_t f = 0; f < m->nfn && 0 < want; f++) {
		uint64_t v = by_own ? m->fns[f].own : m->fns[f].self;
		int k;

		if (!v || !m->fns[f].row || (n == want && v <= tv[n - 1]))
			continue;
		if ((yours_only && !(cand[f] & 1)) || used(m, f))
			continue;
		for (k = n < want ? n++ : n - 1; 0 < k && tv[k - 1] < v; k--) {
			top[k] = top[k - 1];
			tv[k] = tv[k - 1];
		}
		top[k] = (struct rd_card){ .fn = f };
		tv[k] = v;
	}
	for (int k = 0; k < n; k++) {
		top[k].pct = pct(m, tv[k]);
		m->cards[m->ncards++] = top[k];
	}
}

/* Length of the module part when @name reads "module+0xHEX", else 0. */
static size_t unnamed_prefix(const char *name)
{
	const char *plus = strstr(name, "+0x");
	const char *h;

	if (!plus || plus == name)
		return 0;
	for (h = plus + 3; *h; h++)
		if (!strchr("0123456789abcdefABCDEF", *h))
			return 0;
	return h > plus + 3 ? (size_t)(plus - name) : 0;
}

/* Names the binaries whose unnamed frames hold at least 1% (their self
 * time, which never double counts), and says how to name them: their
 * distribution's debug packages or a debuginfod server; JIT code
 * ("[anon]") by its runtime's perf map. @cand tells which those are. */
static void write_notice(struct rd_model *m, const uint8_t *cand)
{
	struct mod { const char *name; size_t len; uint64_t v; } mods[8];
	size_t nm = 0, o = 0;
	bool jit = false;

	m->notice[0] = '\0';
	for (uint32_t f = 1; f < m->nfn && m->total; f++) {
		const char *name;
		size_t l, k;

		if (!(cand[f] & 4))
			continue;
		name = rd_model_fn_name(m, f);
		l = unnamed_prefix(name);
		for (k = 0; k < nm; k++)
			if (mods[k].len == l && !strncmp(mods[k].name, name, l))
				break;
		if (k == nm) {
			if (nm == 8)
				continue;
			mods[nm++] = (struct mod){ name, l, 0 };
		}
		mods[k].v += m->fns[f].self;
	}
	for (size_t k = 0; k < nm; k++) {
		char share[16];

		if (mods[k].v * 100 < m->total)
			continue;
		rd_fmt_pct(share, sizeof(share), pct(m, mods[k].v));
		o += (size_t)snprintf(m->notice + o, sizeof(m->notice) - o,
				      "%s%.*s (%s)", o ? ", " : "Unnamed frames: ",
				      (int)mods[k].len, mods[k].name, share);
		jit |= mods[k].len == 6 && !strncmp(mods[k].name, "[anon]", 6);
		if (o >= sizeof(m->notice))
			break;
	}
	if (o && o < sizeof(m->notice))
		snprintf(m->notice + o, sizeof(m->notice) - o, "%s",
			 jit ? " ran without symbols; install -dbgsym packages or "
			       "set DEBUGINFOD_URLS, and run JITs with their perf "
			       "map (node --perf-basic-prof, jcmd PID "
			       "Compiler.perfmap)." :
			       " ran without symbols; install their -dbgsym "
			       "packages or set DEBUGINFOD_URLS to name them.");
}

int rd_answer_write(struct rd_model *m, const struct rd_answer_in *in)
{
	m->ncards = 0;
	m->yours = m->total && in->yours_total * 20 >= m->total;
	for (uint32_t f = 0; f < m->nfn && m->yours; f++)
		m->fns[f].own = in->own_yours[f];
	write_sentence(m, m->yours ? in->best_yours : in->best_any);
	write_notice(m, in->cand);
	if (m->yours)
		fill_cards(m, in->cand, 1, 1);
	fill_cards(m, in->cand, 0, 0);
	return 0;
}
