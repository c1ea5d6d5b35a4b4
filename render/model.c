/* SPDX-License-Identifier: MIT */
/* The viewer's model: functions, shares, search. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "render/model.h"

unsigned rd_frame_class(const struct prof_frame *f)
{
	if (!f)
		return PROF_CLASS_UNKNOWN;
	if (f->cls == PROF_CLASS_UNKNOWN && f->kind == PROF_KIND_KERNEL)
		return PROF_CLASS_SYSTEM;
	return f->cls < PROF_CLASS_COUNT ? f->cls : PROF_CLASS_UNKNOWN;
}

static int add_fn(struct rd_model *m, uint32_t name, uint32_t frame,
		  const struct prof_frame *fr, uint32_t *cap)
{
	struct rd_fn *f;

	if (m->nfn == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 1024;
		struct rd_fn *v = realloc(m->fns, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->fns = v;
		*cap = nc;
	}
	f = &m->fns[m->nfn++];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->frame = frame;
	f->row = fr && fr->kind != PROF_KIND_PROCESS && fr->kind != PROF_KIND_THREAD;
	return 0;
}

/* What the model needs of a frame, in one place (one cache miss). */
struct frame_info {
	uint32_t fn;
	uint8_t cls, lang;
};

/* A function's sums while the tree is walked (compact: the walk reaches
 * the functions in random order). */
struct fn_sum {
	uint64_t self, total;
	uint32_t nodes;
};

/* One function per distinct name (the root gets a function of its own,
 * not a row), through a per-frame table so each frame is looked at once.
 * Returns the table (nfr entries) or NULL when out of memory. */
static struct frame_info *index_frames(struct rd_model *m)
{
	uint32_t nstr = prof_str_count(m->p), nfr = prof_frame_count(m->p), cap = 0;
	uint32_t *str_fn = calloc(nstr ? nstr : 1, sizeof(*str_fn));
	struct frame_info *fi = malloc((nfr ? nfr : 1) * sizeof(*fi));

	if (!str_fn || !fi || add_fn(m, 0, 0, NULL, &cap) < 0)
		goto err;
	for (uint32_t id = 0; id < nfr; id++) {
		const struct prof_frame *fr = prof_frame_get(m->p, id);
		uint32_t name = fr && fr->name < nstr ? fr->name : 0;

		if (id && !str_fn[name]) {
			if (add_fn(m, name, id, fr, &cap) < 0)
				goto err;
			str_fn[name] = m->nfn - 1;
		}
		fi[id].fn = id ? str_fn[name] : 0;
		fi[id].cls = (uint8_t)rd_frame_class(fr);
		fi[id].lang = fr && fr->lang < PROF_LANG_COUNT ? fr->lang : 0;
	}
	free(str_fn);
	return fi;
err:
	free(str_fn);
	free(fi);
	return NULL;
}

/* The path from the root to the node being visited, and which of its
 * functions are on it (a bit each: the first node of a function on the
 * path counts its total, the ones nested below it do not). */
struct step {
	uint32_t node, fn;
	uint32_t counted;
};

struct path {
	struct step *s;
	uint32_t n, cap;
	uint64_t *on;
};

static int path_grow(struct path *pa)
{
	uint32_t cap = pa->cap ? pa->cap * 2 : 256;
	struct step *s = realloc(pa->s, cap * sizeof(*s));

	if (!s)
		return -ENOMEM;
	pa->s = s;
	pa->cap = cap;
	return 0;
}

/* Puts function @fn of node @node on the path; 0 or -ENOMEM. Returns
 * in *@counted whether no node above holds the same function. */
static inline int path_enter(struct path *pa, uint32_t node, uint32_t fn,
			     int *counted)
{
	uint64_t bit = 1ull << (fn % 64), *word = &pa->on[fn / 64];

	if (pa->n == pa->cap && path_grow(pa) < 0)
		return -ENOMEM;
	*counted = !(*word & bit);
	*word |= bit;
	pa->s[pa->n++] = (struct step){ node, fn, (uint32_t)*counted };
	return 0;
}

/* Leaves the path down to node @parent. */
static inline void path_leave(struct path *pa, uint32_t parent)
{
	while (pa->n && pa->s[pa->n - 1].node != parent) {
		const struct step *st = &pa->s[--pa->n];

		if (st->counted)
			pa->on[st->fn / 64] &= ~(1ull << (st->fn % 64));
	}
}

/* One half's sums while the tree is filled in (see rd_tree_visit). */
struct agg_half {
	struct fn_sum *sum;
	uint64_t class_self[PROF_CLASS_COUNT];
	uint64_t lang_self[PROF_LANG_COUNT];
	struct path pa;
	int started;
	int rc;
};

struct agg {
	const struct prof_profile *p;
	const struct frame_info *fi;
	uint32_t nfr, nfn;
	/* 1 when every frame is a function of its own (no two share a
	 * name): then function i is frame i, and the class and language
	 * sums are made from the functions' self at the end, so a node
	 * needs no look-up in fi[]. */
	int same;
	struct agg_half half[2];
};

static uint32_t frame_fn(const struct agg *g, uint32_t frame)
{
	return g->fi[frame < g->nfr ? frame : 0].fn;
}

/* Half 1 starts below its first node's ancestors (ids are the preorder
 * there): their functions go on its path, root first. */
static int agg_start(const struct agg *g, struct agg_half *h, uint32_t lo)
{
	uint32_t depth = 0, *up = NULL;
	int rc = 0, counted = 0;

	for (uint32_t a = lo; a; depth++)
		a = prof_node_get(g->p, a)->parent;
	if (depth > 1 && !(up = malloc(depth * sizeof(*up))))
		return -ENOMEM;
	depth = 0;
	for (uint32_t a = prof_node_get(g->p, lo)->parent; a;
	     a = prof_node_get(g->p, a)->parent)
		up[depth++] = a;
	while (depth-- > 0 && rc == 0)
		rc = path_enter(&h->pa, up[depth],
				frame_fn(g, prof_node_get(g->p, up[depth])->frame),
				&counted);
	free(up);
	return rc;
}

/* Turns each node's frame into its function and adds up, in the
 * stretch @lo..@hi just filled in: self by class and language, and each
 * function's self, nodes and total (counted once through recursion). */
static void agg_range(struct rd_tree *t, uint32_t lo, uint32_t hi,
		      unsigned half, void *arg)
{
	struct agg *g = arg;
	struct agg_half *h = &g->half[half];
	struct fn_sum *sum = h->sum;

	if (!h->started) {
		h->started = 1;
		if (lo > 1 && h->rc == 0)
			h->rc = agg_start(g, h, lo);
	}
	for (uint32_t i = lo ? lo : 1; i < hi && h->rc == 0; i++) {
		struct rd_tnode *v = &t->v[i];
		uint32_t fr = v->fn < g->nfr ? v->fn : 0, fn = fr;
		uint64_t self = v->self;
		int counted = 0;

		/* The functions come in random order: ask for them ahead. */
		if (g->same) {
			if (i + 16 < hi && t->v[i + 16].fn < g->nfr)
				__builtin_prefetch(&sum[t->v[i + 16].fn], 1);
		} else {
			if (i + 16 < hi && t->v[i + 16].fn < g->nfr)
				__builtin_prefetch(&g->fi[t->v[i + 16].fn]);
			if (i + 8 < hi)
				__builtin_prefetch(&sum[frame_fn(g, t->v[i + 8].fn)], 1);
			fn = g->fi[fr].fn;
			v->fn = fn;
			h->class_self[g->fi[fr].cls] += self;
			h->lang_self[g->fi[fr].lang] += self;
		}
		path_leave(&h->pa, v->parent);
		h->rc = path_enter(&h->pa, i, fn, &counted);
		sum[fn].self += self;
		sum[fn].nodes++;
		if (counted)
			sum[fn].total += v->total;
	}
	if (lo == 0 && hi)
		t->v[0].fn = 0;
}

static void agg_half_reset(struct agg *g, struct agg_half *h)
{
	memset(h->sum, 0, g->nfn * sizeof(*h->sum));
	memset(h->class_self, 0, sizeof(h->class_self));
	memset(h->lang_self, 0, sizeof(h->lang_self));
	memset(h->pa.on, 0, (g->nfn / 64 + 1) * sizeof(uint64_t));
	h->pa.n = 0;
	h->started = 0;
	h->rc = 0;
}

static void agg_restart(void *arg)
{
	struct agg *g = arg;

	agg_half_reset(g, &g->half[0]);
	agg_half_reset(g, &g->half[1]);
}

static void agg_free(struct agg *g)
{
	for (int k = 0; k < 2; k++) {
		struct agg_half *h = &g->half[k];

		free(h->sum);
		free(h->pa.s);
		free(h->pa.on);
	}
}

/* Fills the model's tree, turning frames into functions and summing the
 * functions' and the classes' values as it goes. 0 or -ENOMEM. */
static int build_tree(struct rd_model *m)
{
	struct agg g = { .p = m->p, .nfr = prof_frame_count(m->p) };
	struct rd_tree_visit vis = { agg_range, agg_restart, &g };
	int rc = -ENOMEM;

	if (!(g.fi = index_frames(m)))
		return -ENOMEM;
	g.nfn = m->nfn;
	g.same = m->nfn == g.nfr;
	for (uint32_t f = 0; f < g.nfr && g.same; f++)
		g.same = g.fi[f].fn == f;
	for (int k = 0; k < 2; k++) {
		g.half[k].sum = calloc(m->nfn, sizeof(*g.half[k].sum));
		g.half[k].pa.on = calloc(m->nfn / 64 + 1, sizeof(uint64_t));
		if (!g.half[k].sum || !g.half[k].pa.on)
			goto out;
	}
	if ((rc = rd_tree_build_nodes_visit(&m->tree, m->p, &vis)) < 0)
		goto out;
	rc = g.half[0].rc < 0 ? g.half[0].rc : g.half[1].rc;
	for (uint32_t f = 0; f < m->nfn && rc == 0; f++) {
		const struct fn_sum *a = &g.half[0].sum[f], *b = &g.half[1].sum[f];

		m->fns[f].self = a->self + b->self;
		m->fns[f].total = a->total + b->total;
		m->fns[f].nodes = a->nodes + b->nodes;
	}
	for (int c = 0; c < PROF_CLASS_COUNT; c++)
		m->class_self[c] = g.half[0].class_self[c] + g.half[1].class_self[c];
	for (int l = 0; l < PROF_LANG_COUNT; l++)
		m->lang_self[l] = g.half[0].lang_self[l] + g.half[1].lang_self[l];
	/* Each node's self under its frame's class and language. */
	for (uint32_t f = 0; f < m->nfn && rc == 0 && g.same; f++) {
		m->class_self[g.fi[f].cls] += m->fns[f].self;
		m->lang_self[g.fi[f].lang] += m->fns[f].self;
	}
out:
	free((void *)g.fi);
	agg_free(&g);
	return rc;
}

/* The tree's children lists, built on a thread of their own while the
 * functions and the answer are worked out (they read other fields). */
struct kids_job {
	struct rd_tree *t;
	int rc;
};

static void *build_kids(void *arg)
{
	struct kids_job *j = arg;

	j->rc = rd_tree_build_kids(j->t);
	return NULL;
}

struct rd_model *rd_model_new(struct prof_profile *p)
{
	struct rd_model *m = calloc(1, sizeof(*m));
	struct kids_job job;
	pthread_t th;
	int threaded, rc;

	if (!m)
		return NULL;
	m->p = p;
	if (prof_sort(p) < 0 || build_tree(m) < 0)
		goto err;
	job = (struct kids_job){ &m->tree, 0 };
	threaded = pthread_create(&th, NULL, build_kids, &job) == 0;
	if (!threaded)
		build_kids(&job);
	m->total = prof_total(p);
	m->nnodes = prof_node_count(p);
	rc = 0;
	if (!(m->fn_match = calloc(m->nfn ? m->nfn : 1, 1)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = rd_answer_write(m);
	if (threaded)
		pthread_join(th, NULL);
	if (rc < 0 || job.rc < 0)
		goto err;
	return m;
err:
	rd_model_free(m);
	return NULL;
}

void rd_model_free(struct rd_model *m)
{
	if (!m)
		return;
	rd_tree_free(&m->tree);
	free(m->fns);
	free(m->fn_match);
	free(m);
}

const char *rd_model_fn_name(const struct rd_model *m, uint32_t fn)
{
	if (fn >= m->nfn)
		return "";
	return prof_str(m->p, m->fns[fn].name);
}

uint32_t rd_model_node_fn(const struct rd_model *m, uint32_t node)
{
	if (node >= m->nnodes)
		return 0;
	return m->tree.v[m->tree.pre[node]].fn;
}

int rd_model_node_match(const struct rd_model *m, uint32_t node)
{
	if (!m->searching || node >= m->nnodes)
		return 0;
	return m->fn_match[rd_model_node_fn(m, node)];
}

/* Case-insensitive subsequence match of @term in @s. */
static int fuzzy(const char *term, size_t tl, const char *s)
{
	size_t i = 0;

	for (; *s && i < tl; s++)
		if (tolower((unsigned char)*s) == tolower((unsigned char)term[i]))
			i++;
	return i == tl;
}

static void search_term(struct rd_model *m, const char *term, size_t tl)
{
	char pat[1024];
	regex_t re;
	int hit = 0;

	if (tl >= sizeof(pat))
		tl = sizeof(pat) - 1;
	memcpy(pat, term, tl);
	pat[tl] = '\0';
	if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB | REG_ICASE) == 0) {
		for (uint32_t f = 1; f < m->nfn; f++) {
			if (regexec(&re, rd_model_fn_name(m, f), 0, NULL, 0) == 0) {
				m->fn_match[f] = 1;
				hit = 1;
			}
		}
		regfree(&re);
		if (hit)
			return;
	}
	for (uint32_t f = 1; f < m->nfn; f++)
		if (fuzzy(pat, tl, rd_model_fn_name(m, f)))
			m->fn_match[f] = 1;
}

struct count {
	struct rd_model *m;
	uint32_t inside; /* matching nodes on the current path */
};

static void count_enter(const struct rd_tree *t, uint32_t i, void *arg)
{
	struct count *c = arg;

	if (!c->m->fn_match[t->v[i].fn])
		return;
	c->m->match_boxes++;
	if (c->inside++ == 0)
		c->m->match_value += t->v[i].total;
}

static void count_leave(const struct rd_tree *t, uint32_t i, void *arg)
{
	struct count *c = arg;

	if (c->m->fn_match[t->v[i].fn])
		c->inside--;
}

int rd_model_search(struct rd_model *m, const char *query)
{
	struct count c = { .m = m };
	const char *s = query ? query : "";

	memset(m->fn_match, 0, m->nfn);
	m->searching = 0;
	m->match_boxes = 0;
	m->match_value = 0;
	while (*s) {
		const char *e = strchr(s, ',');
		const char *end = e ? e : s + strlen(s);
		const char *b = s;

		while (b < end && isspace((unsigned char)*b))
			b++;
		while (end > b && isspace((unsigned char)end[-1]))
			end--;
		if (end > b) {
			search_term(m, b, (size_t)(end - b));
			m->searching = 1;
		}
		if (!e)
			break;
		s = e + 1;
	}
	if (m->searching)
		return rd_tree_walk(&m->tree, count_enter, count_leave, &c);
	return 0;
}

static int cmp_sort(const void *a, const void *b, void *arg)
{
	const struct rd_model *m = ((const void **)arg)[0];
	enum rd_sort by = *(const enum rd_sort *)((const void **)arg)[1];
	const struct rd_fn *x = &m->fns[*(const uint32_t *)a];
	const struct rd_fn *y = &m->fns[*(const uint32_t *)b];
	uint64_t vx = by == RD_SORT_SELF ? x->self : x->total;
	uint64_t vy = by == RD_SORT_SELF ? y->self : y->total;

	if (by != RD_SORT_NAME && vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(prof_str(m->p, x->name), prof_str(m->p, y->name));
}

size_t rd_model_sorted(const struct rd_model *m, enum rd_sort by,
		       int yours_only, uint32_t *idx)
{
	const void *arg[2] = { m, &by };
	size_t n = 0;

	for (uint32_t f = 0; f < m->nfn; f++) {
		const struct prof_frame *fr = prof_frame_get(m->p, m->fns[f].frame);

		if (!m->fns[f].row)
			continue;
		if (yours_only && (!fr || fr->cls != PROF_CLASS_YOURS))
			continue;
		idx[n++] = f;
	}
	qsort_r(idx, n, sizeof(*idx), cmp_sort, (void *)arg);
	return n;
}

char *rd_model_exact_query(const char *name, char *buf, size_t n)
{
	size_t o = 0;

	if (n < 3) {
		if (n)
			buf[0] = '\0';
		return buf;
	}
	buf[o++] = '^';
	for (; *name && o + 3 < n; name++) {
		if (strchr("\\^$.|?*+()[]{},", *name)) {
			if (*name == ',') {
				/* A comma would split the query: match any char. */
				buf[o++] = '.';
				continue;
			}
			buf[o++] = '\\';
		}
		buf[o++] = *name;
	}
	buf[o++] = '$';
	buf[o] = '\0';
	return buf;
}
