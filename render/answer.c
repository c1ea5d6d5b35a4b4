/* SPDX-License-Identifier: MIT */
/*
 * The answer sentence and the hot-spot cards.
 *
 * Candidates are the functions the user can change: frames of class "your
 * code" when those hold a real share (5% of the whole, answerable), else
 * every user-space function. A candidate answers for its self time and for
 * the non-candidate code it calls (libraries, runtime, system), not for the
 * other candidates it calls. The sentence names the candidate answerable
 * for the most, with its total, and the callee holding most of it. Where
 * a thread waited is named by the wait's site (profile/waits.h), the
 * kernel function that says what it waited in, never the scheduler.
 * The words follow the question the profile answers (prof_meta's
 * question), and an empty profile says what that means for it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/waits.h"
#include "render/answer_impl.h"
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

/* The leaf of the wait itself at leaf @i: the node under its waker's
 * frame PROF_WAKER_FRAME (record --waker), else @i. Waker frames, and
 * the wait's kernel frames under them, are all waiting: the climb stops
 * at the first frame that is not. */
static uint32_t wait_leaf(const struct rd_model *m, uint32_t i)
{
	const struct rd_tree *t = &m->tree;

	for (uint32_t j = i; j; j = rd_tree_parent(t, j)) {
		const struct prof_frame *f = prof_frame_get(m->p, rd_tree_frame(t, j));

		if (!f || f->cls != PROF_CLASS_WAITING)
			break;
		if (f->kind == PROF_KIND_USER && !strcmp(prof_str(m->p, f->name), PROF_WAKER_FRAME))
			return rd_tree_parent(t, j) ? rd_tree_parent(t, j) : i;
	}
	return i;
}

uint32_t rd_answer_site(const struct rd_model *m, uint32_t i)
{
	const struct rd_tree *t = &m->tree;

	i = wait_leaf(m, i);
	for (;;) {
		const struct prof_frame *f = prof_frame_get(m->p, rd_tree_frame(t, i));
		uint32_t up = rd_tree_parent(t, i);
		const struct prof_frame *uf = up ? prof_frame_get(m->p, rd_tree_frame(t, up)) : NULL;

		if (!f || f->kind != PROF_KIND_KERNEL || !up ||
		    !prof_wait_passes(prof_str(m->p, f->name),
				      uf && uf->kind == PROF_KIND_KERNEL ? prof_str(m->p, uf->name) : NULL))
			return rd_tree_fn(t, i);
		i = up;
	}
}

int rd_answer_waiting_leaf(const struct rd_model *m, uint32_t i)
{
	const struct prof_meta *meta = prof_meta_const(m->p);
	const struct prof_frame *f;

	if (meta->off_cpu || meta->question == PROF_Q_LOCKS)
		return 1;
	if (meta->question != PROF_Q_WALL && meta->question != PROF_Q_THREADS)
		return 0;
	f = prof_frame_get(m->p, rd_tree_frame(&m->tree, i));
	return f && f->cls == PROF_CLASS_WAITING;
}

/* The callee of @f holding most of its time: the direct callee (another
 * function) with the largest total, or for waits the site where the most
 * time was spent waiting under @f (rd_answer_site of the leaves). */
struct callee {
	const struct rd_model *m;
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
	else if (c->inside && rd_tree_self(t, i) && rd_answer_waiting_leaf(c->m, i))
		c->acc[rd_answer_site(c->m, i)] += rd_tree_self(t, i);
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
	struct callee c = { .m = m, .f = f };
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

/* How the answer speaks of a question. */
struct wording {
	const char *what;  /* "of CPU time", after the share */
	const char *whole; /* "CPU time", in the flat sentence */
	const char *prep;  /* before the function: "in", "under" */
	const char *empty; /* the empty profile's sentence; %s is the span */
	int waits;         /* the callee is where the time waited */
	const char *was;   /* the verb: "was", "came" */
};

static struct wording wording(const struct prof_meta *meta)
{
	switch (meta->question) {
	case PROF_Q_WALL:
		return (struct wording){ "of the elapsed time", "elapsed time", "in",
					 "Nothing ran or waited in %s.", 0, "was" };
	case PROF_Q_THREADS:
		return (struct wording){ "of the elapsed time", "elapsed time", "in",
					 "No thread was seen in %s.", 0, "was" };
	case PROF_Q_LOCKS:
		return (struct wording){ "of the time waiting on locks",
					 "time waiting on locks", "under",
					 "Nothing waited on a lock in %s.", 1, "was" };
	case PROF_Q_ALLOC:
		return (struct wording){ "of the memory allocated", "memory allocated", "from",
					 "Nothing was allocated in %s.", 0, "came" };
	case PROF_Q_HELD:
		return (struct wording){ "of the memory in use", "memory in use", "allocated under",
					 "No memory allocated in %s was still in use at its end.", 0, "was" };
	case PROF_Q_GROWTH:
		return (struct wording){ "of the requests for more memory",
					 "requests for more memory", "from",
					 "The service did not ask for more memory in %s: its memory was steady.",
					 0, "came" };
	default:
		break;
	}
	if (meta->off_cpu)
		return (struct wording){ "of the waiting time", "waiting time", "under",
					 "Nothing waited in %s.", 1, "was" };
	/* A memory profile's sample type says what it counts: in use (held,
	 * not yet freed) or allocated, bytes or objects. */
	if (!strncmp(meta->sample_type, "inuse_", 6))
		return meta->unit == PROF_UNIT_BYTES ?
		       (struct wording){ "of the memory in use", "memory in use", "held under",
					 "No memory was in use in %s.", 0, "was" } :
		       (struct wording){ "of the objects in use", "objects in use", "held under",
					 "No object was in use in %s.", 0, "was" };
	if (!strcmp(meta->sample_type, "alloc_objects"))
		return (struct wording){ "of the objects allocated", "objects allocated",
					 "allocated under", "Nothing was allocated in %s.", 0, "was" };
	if (meta->unit == PROF_UNIT_BYTES)
		return (struct wording){ "of the memory", "memory", "allocated under",
					 "Nothing was recorded in %s.", 0, "was" };
	return (struct wording){ "of CPU time", "CPU time", "in",
				 "Nothing was recorded in %s.", 0, "was" };
}

void rd_answer_span(const struct prof_meta *meta, char *buf, size_t n)
{
	double s = (double)meta->duration_ns / 1e9;
	char num[32];
	size_t l;

	if (!meta->duration_ns) {
		snprintf(buf, n, "this profile");
		return;
	}
	if (s < 0.9995) {
		snprintf(buf, n, "these %.0f milliseconds", s * 1e3);
		return;
	}
	snprintf(num, sizeof(num), s < 99.95 ? "%.1f" : "%.0f", s);
	l = strlen(num);
	if (l > 2 && !strcmp(num + l - 2, ".0"))
		num[l - 2] = '\0';
	if (!strcmp(num, "1"))
		snprintf(buf, n, "this second");
	else
		snprintf(buf, n, "these %s seconds", num);
}

/* The name of the one process the profile holds ("" for none or several):
 * its top rows, when they are process rows of one name. */
static const char *one_process(const struct rd_model *m)
{
	const char *name = "";
	struct rd_kids k;

	for (rd_kids_start(&k, &m->tree, 0); rd_kids_next(&k);) {
		const struct prof_frame *f = prof_frame_get(m->p, rd_tree_frame(&m->tree, k.at));
		const char *n = f ? prof_str(m->p, f->name) : "";

		if (!f || f->kind != PROF_KIND_PROCESS || (name[0] && strcmp(name, n)))
			return "";
		name = n;
	}
	return name;
}

/* Appends to the answer where @f's time went: the site it waited in
 * most, or the callee holding most. */
static void write_callee(struct rd_model *m, uint32_t f, const struct wording *w)
{
	const struct prof_meta *meta = prof_meta_const(m->p);
	size_t len = strlen(m->answer);
	char cshare[16];
	uint64_t cv = 0;
	uint32_t g;

	if (meta->question == PROF_Q_WALL || meta->question == PROF_Q_THREADS) {
		/* Elapsed time: say it when a quarter of f's time waited. */
		g = main_callee(m, f, 1, &cv);
		if (g != UINT32_MAX && cv * 4 >= m->fns[f].total && cv * 20 >= m->total) {
			rd_fmt_pct(cshare, sizeof(cshare),
				   100.0 * (double)cv / (double)m->fns[f].total);
			snprintf(m->answer + len, sizeof(m->answer) - len,
				 ", %s of it waiting in %s", cshare, rd_model_fn_name(m, g));
			return;
		}
	}
	g = main_callee(m, f, w->waits, &cv);
	if (g != UINT32_MAX && cv * 4 >= m->fns[f].total && cv * 20 >= m->total) {
		rd_fmt_pct(cshare, sizeof(cshare), pct(m, cv));
		snprintf(m->answer + len, sizeof(m->answer) - len, ", mostly %s %s (%s)",
			 w->waits ? "waiting in" : "inside", rd_model_fn_name(m, g), cshare);
	}
}

static void write_sentence(struct rd_model *m, uint32_t f, const uint8_t *cand)
{
	const struct prof_meta *meta = prof_meta_const(m->p);
	struct wording w = wording(meta);
	char over[64] = "", share[16], dur[32], span[48], what[128];
	const char *proc;
	size_t len;

	if (meta->duration_ns) {
		rd_fmt_value(dur, sizeof(dur), meta->duration_ns,
			     PROF_UNIT_NANOSECONDS);
		snprintf(over, sizeof(over), "Over %s, ", dur);
	}
	if (m->total == 0 || f == UINT32_MAX) {
		rd_answer_span(meta, span, sizeof(span));
		snprintf(m->answer, sizeof(m->answer), w.empty, span);
		return;
	}
	if (meta->question == PROF_Q_THREADS && rd_answer_threads(m, cand) == 0)
		return;
	if (m->fns[f].own <= UINT64_MAX / 20 && m->fns[f].own * 20 < m->total) {
		/* A flat profile: no function answers for 5% of it (a share
		 * near 2^64 is not multiplied past it). */
		rd_fmt_pct(share, sizeof(share), pct(m, m->fns[f].own));
		snprintf(m->answer, sizeof(m->answer), "%s%s %s is spread thin: no "
			 "function holds more than %s of it on its own.", over,
			 over[0] ? "the" : "The", w.whole, share);
		return;
	}
	proc = meta->question == PROF_Q_WALL ? one_process(m) : "";
	snprintf(what, sizeof(what), "%s%s%s%s", w.what, proc[0] ? " of " : "", proc,
		 proc[0] ? "'s threads" : "");
	rd_fmt_pct(share, sizeof(share), pct(m, m->fns[f].total));
	snprintf(m->answer, sizeof(m->answer), "%s%s %s %s %s %s", over, share,
		 what, w.was, w.prep, rd_model_fn_name(m, f));
	write_callee(m, f, &w);
	len = strlen(m->answer);
	snprintf(m->answer + len, sizeof(m->answer) - len, ".");
}

static int used(const struct rd_model *m, uint32_t f)
{
	for (int i = 0; i < m->ncards; i++)
		if (m->cards[i].fn == f)
			return 1;
	return 0;
}

/* Adds up to 3 cards, best first by own (@by_own), @spot (when given) or
 * self: the largest
 * values above 0, in one pass (a tie goes to the lower index, as when
 * the best is picked again for each card). */
static void fill_cards(struct rd_model *m, const uint8_t *cand, int by_own,
		       int yours_only, const uint64_t *spot)
{
	struct rd_card top[3];
	uint64_t tv[3];
	int want = 3 - m->ncards, n = 0;

	for (uint32_t f = 0; f < m->nfn && 0 < want; f++) {
		uint64_t v = by_own ? m->fns[f].own : spot ? spot[f] : m->fns[f].self;
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

/* Per function, the time it holds as the place the time was spent: a
 * leaf's self, or for a wait the self of the waits it is the site of.
 * NULL for a profile without waits (the selves say it), or out of
 * memory (the selves stand in). */
static uint64_t *spot_sums(const struct rd_model *m)
{
	const struct prof_meta *meta = prof_meta_const(m->p);
	uint64_t *spot;

	if (!meta->off_cpu && meta->question == PROF_Q_USUAL)
		return NULL;
	spot = calloc(m->nfn ? m->nfn : 1, sizeof(*spot));
	for (uint32_t i = 1; spot && i < m->tree.n; i++) {
		uint64_t self = rd_tree_self(&m->tree, i);

		if (self)
			spot[rd_answer_waiting_leaf(m, i) ? rd_answer_site(m, i)
							  : rd_tree_fn(&m->tree, i)] += self;
	}
	return spot;
}

int rd_answer_write(struct rd_model *m, const struct rd_answer_in *in)
{
	uint64_t *spot;

	m->ncards = 0;
	m->yours = m->total && in->yours_total * 20 >= m->total;
	for (uint32_t f = 0; f < m->nfn && m->yours; f++)
		m->fns[f].own = in->own_yours[f];
	write_sentence(m, m->yours ? in->best_yours : in->best_any, in->cand);
	write_notice(m, in->cand);
	if (m->yours)
		fill_cards(m, in->cand, 1, 1, NULL);
	/* Waits are named by what they waited in, never the scheduler. */
	spot = spot_sums(m);
	fill_cards(m, in->cand, 0, 0, spot);
	free(spot);
	return 0;
}
