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

/* A function's sums while the tree is walked: one cache line holds two
 * (the walk reaches the functions in random order). own: the self of the
 * nodes whose nearest user-space candidate is the function (the one with
 * your-code candidates is kept apart, as it is mostly zero); cand: the
 * function's rd_answer_candidates() bits, read with the sums. */
struct fn_sum {
	uint64_t self, total, own;
	uint32_t nodes;
	uint32_t cand;
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
 * path counts its total, the ones nested below it do not), with each
 * path node's nearest candidates (UINT32_MAX: none). */
struct step {
	uint32_t node, fn;
	uint32_t counted;
	uint32_t yours, any;
	uint32_t kids; /* children seen */
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

/* Puts function @fn of node @node (@cand: its candidate bits) on the
 * path. Returns the step, whose `counted` says whether no node above holds
 * the same function, or NULL when out of memory. */
static inline struct step *path_enter(struct path *pa, uint32_t node,
				      uint32_t fn, uint8_t cand)
{
	uint64_t bit = 1ull << (fn % 64), *word = &pa->on[fn / 64];
	struct step up = { .yours = UINT32_MAX, .any = UINT32_MAX }, *st;

	if (pa->n == pa->cap && path_grow(pa) < 0)
		return NULL;
	if (pa->n)
		up = pa->s[pa->n - 1];
	st = &pa->s[pa->n++];
	st->node = node;
	st->fn = fn;
	st->counted = !(*word & bit);
	st->yours = cand & 1 ? fn : up.yours;
	st->any = cand & 2 ? fn : up.any;
	st->kids = 0;
	*word |= bit;
	return st;
}

struct agg;

/* One half of the tree's sums, on a thread of its own. */
struct agg_half {
	const struct agg *g;
	uint32_t lo, hi;
	struct fn_sum *sum;   /* 64-byte aligned */
	uint64_t *own_yours;
	uint64_t class_self[PROF_CLASS_COUNT];
	uint64_t lang_self[PROF_LANG_COUNT];
	struct path pa;
	uint32_t root_kids;   /* the root's children in this half */
	uint32_t *big, nbig, big_cap; /* nodes with many children here */
	int rc;
};

/* Nodes with this many children get a list of them in the tree (see
 * rd_tree_list_kids); each half notes those with half as many. */
#define KIDS_LIST 64u

struct agg {
	const struct rd_tree *t;
	const struct frame_info *fi;
	uint8_t *cand;        /* rd_answer_candidates() */
	uint32_t nfn;
	/* 1 when every frame is a function of its own (no two share a
	 * name): then function i is frame i, and the class and language
	 * sums are made from the functions' self at the end, so a node
	 * needs no look-up in fi[]. */
	int same;
	struct agg_half half[2];
};

static inline uint32_t node_fn(const struct agg *g, uint32_t i)
{
	uint32_t fr = rd_tree_frame(g->t, i);

	return g->same ? fr : g->fi[fr].fn;
}

/* Leaves the path down to node @parent (UINT32_MAX: all of it), noting
 * the nodes left that had many children. 0 or -ENOMEM. */
static inline int path_leave(struct agg_half *h, uint32_t parent)
{
	struct path *pa = &h->pa;

	while (pa->n && pa->s[pa->n - 1].node != parent) {
		const struct step *st = &pa->s[--pa->n];

		if (st->counted)
			pa->on[st->fn / 64] &= ~(1ull << (st->fn % 64));
		if (st->kids < KIDS_LIST / 2)
			continue;
		if (h->nbig == h->big_cap) {
			uint32_t cap = h->big_cap ? h->big_cap * 2 : 64;
			uint32_t *b = realloc(h->big, cap * sizeof(*b));

			if (!b)
				return -ENOMEM;
			h->big = b;
			h->big_cap = cap;
		}
		h->big[h->nbig++] = st->node;
	}
	return 0;
}

/* Half 1 starts below its first node's ancestors: their functions go on
 * its path, root first. */
static int agg_start(struct agg_half *h)
{
	const struct agg *g = h->g;
	uint32_t depth = 0, *up = NULL;

	for (uint32_t a = rd_tree_parent(g->t, h->lo); a; a = rd_tree_parent(g->t, a))
		depth++;
	if (depth && !(up = malloc(depth * sizeof(*up))))
		return -ENOMEM;
	depth = 0;
	for (uint32_t a = rd_tree_parent(g->t, h->lo); a; a = rd_tree_parent(g->t, a))
		up[depth++] = a;
	while (depth-- > 0) {
		uint32_t fn = node_fn(g, up[depth]);

		if (!path_enter(&h->pa, up[depth], fn, (uint8_t)h->sum[fn].cand)) {
			free(up);
			return -ENOMEM;
		}
	}
	free(up);
	return 0;
}

/* Adds up the nodes lo..hi of half @h: self by class and language, each
 * function's self, nodes and total (counted once through recursion), and
 * the self each node gives its nearest candidates. */
static int agg_walk(struct agg_half *h)
{
	const struct agg *g = h->g;
	const struct rd_tree *t = g->t;
	struct fn_sum *sum = h->sum;
	int rc;

	/* Each half starts its own sums, on its own thread. */
	for (uint32_t f = 0; f < g->nfn; f++)
		sum[f] = (struct fn_sum){ .cand = g->cand[f] };
	rc = h->lo > 1 && h->lo < h->hi ? agg_start(h) : 0;
	for (uint32_t i = h->lo ? h->lo : 1; i < h->hi && rc == 0; i++) {
		uint32_t fn = node_fn(g, i);
		uint64_t self = rd_tree_self(t, i);
		const struct step *st;

		/* The functions come in random order: ask for them ahead,
		 * and for the nodes further ahead. */
		if (i + 32 < h->hi)
			__builtin_prefetch(&sum[node_fn(g, i + 32)], 1);
		if (i % 2 == 0 && i + 256 < h->hi)
			__builtin_prefetch(&t->nd[i + 256]);
		if (!g->same) {
			uint32_t fr = rd_tree_frame(t, i);

			h->class_self[g->fi[fr].cls] += self;
			h->lang_self[g->fi[fr].lang] += self;
		}
		if (path_leave(h, rd_tree_parent(t, i)) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (h->pa.n)
			h->pa.s[h->pa.n - 1].kids++;
		else
			h->root_kids++;
		if (!(st = path_enter(&h->pa, i, fn, (uint8_t)sum[fn].cand))) {
			rc = -ENOMEM;
			break;
		}
		sum[fn].self += self;
		sum[fn].nodes++;
		if (st->counted)
			sum[fn].total += rd_tree_total(t, i);
		if (self && st->yours != UINT32_MAX)
			h->own_yours[st->yours] += self;
		if (self && st->any != UINT32_MAX)
			sum[st->any].own += self;
	}
	return rc < 0 ? rc : path_leave(h, UINT32_MAX);
}

static void *agg_thread(void *arg)
{
	struct agg_half *h = arg;

	h->rc = agg_walk(h);
	return NULL;
}

/* Trees from this size on are summed in two halves on two threads. */
#define SPLIT_MIN 65536u

/* Walks the tree in one or two halves; 0 or -ENOMEM. */
static int agg_run(struct agg *g)
{
	uint32_t n = g->t->n;
	pthread_t th;
	int threaded = n >= SPLIT_MIN;

	g->half[0].hi = n;
	if (threaded) {
		g->half[0].hi = g->half[1].lo = n / 2;
		g->half[1].hi = n;
		threaded = pthread_create(&th, NULL, agg_thread, &g->half[1]) == 0;
		if (!threaded)
			g->half[0].hi = n;
	}
	agg_thread(&g->half[0]);
	if (threaded) {
		pthread_join(th, NULL);
	} else {
		g->half[1].lo = g->half[1].hi = n; /* only its sums started */
		agg_thread(&g->half[1]);
	}
	return g->half[0].rc < 0 ? g->half[0].rc : g->half[1].rc;
}

static void agg_free(struct agg *g)
{
	free(g->cand);
	for (int k = 0; k < 2; k++) {
		struct agg_half *h = &g->half[k];

		free(h->sum);
		free(h->own_yours);
		free(h->big);
		free(h->pa.s);
		free(h->pa.on);
	}
}

static int agg_init(struct agg *g, struct rd_model *m)
{
	size_t bytes = ((size_t)m->nfn * sizeof(struct fn_sum) + 63) / 64 * 64;
	uint8_t *cand = g->cand = malloc(m->nfn ? m->nfn : 1);

	if (!cand)
		return -ENOMEM;
	rd_answer_candidates(m, cand);
	for (int k = 0; k < 2; k++) {
		struct agg_half *h = &g->half[k];

		h->g = g;
		h->sum = aligned_alloc(64, bytes ? bytes : 64);
		h->own_yours = calloc(m->nfn ? m->nfn : 1, sizeof(*h->own_yours));
		h->pa.on = calloc(m->nfn / 64 + 1, sizeof(uint64_t));
		if (!h->sum || !h->own_yours || !h->pa.on)
			return -ENOMEM;
	}
	return 0;
}

/* The functions' and the classes' sums from both halves into @m, the
 * share answerable by any user-space function into @own_any. */
static void agg_collect(const struct agg *g, struct rd_model *m,
			uint64_t *own_any)
{
	const struct agg_half *a = &g->half[0], *b = &g->half[1];

	for (uint32_t f = 0; f < m->nfn; f++) {
		m->fns[f].self = a->sum[f].self + b->sum[f].self;
		m->fns[f].total = a->sum[f].total + b->sum[f].total;
		m->fns[f].nodes = a->sum[f].nodes + b->sum[f].nodes;
		m->fns[f].own = a->own_yours[f] + b->own_yours[f];
		own_any[f] = a->sum[f].own + b->sum[f].own;
	}
	for (int c = 0; c < PROF_CLASS_COUNT; c++)
		m->class_self[c] = a->class_self[c] + b->class_self[c];
	for (int l = 0; l < PROF_LANG_COUNT; l++)
		m->lang_self[l] = a->lang_self[l] + b->lang_self[l];
	/* Each node's self under its frame's class and language. */
	for (uint32_t f = 0; f < m->nfn && g->same; f++) {
		m->class_self[g->fi[f].cls] += m->fns[f].self;
		m->lang_self[g->fi[f].lang] += m->fns[f].self;
	}
}

/* The children lists of the nodes with many children (the root's
 * counted apart, as it is never on the path). 0 or -ENOMEM. */
static int list_kids(const struct agg *g, struct rd_tree *t)
{
	const struct agg_half *a = &g->half[0], *b = &g->half[1];
	uint32_t n = a->nbig + b->nbig, *nodes = malloc((n + 1) * sizeof(*nodes));
	int rc;

	if (!nodes)
		return -ENOMEM;
	if (a->nbig)
		memcpy(nodes, a->big, a->nbig * sizeof(*nodes));
	if (b->nbig)
		memcpy(nodes + a->nbig, b->big, b->nbig * sizeof(*nodes));
	if (KIDS_LIST <= a->root_kids + b->root_kids)
		nodes[n++] = 0;
	rc = rd_tree_list_kids(t, nodes, n);
	free(nodes);
	return rc;
}

struct kids_job {
	const struct agg *g;
	struct rd_tree *t;
	int rc;
};

static void *kids_thread(void *arg)
{
	struct kids_job *j = arg;

	j->rc = list_kids(j->g, j->t);
	return NULL;
}

/* The function of each frame, kept by the tree when frames are not
 * functions one to one. 0 or -ENOMEM. */
static int set_fn_of(struct rd_tree *t, const struct frame_info *fi, int same)
{
	if (same)
		return 0;
	if (!(t->fn_of = malloc((t->nfr ? t->nfr : 1) * sizeof(*t->fn_of))))
		return -ENOMEM;
	for (uint32_t f = 0; f < t->nfr; f++)
		t->fn_of[f] = fi[f].fn;
	if (!t->nfr)
		t->fn_of[0] = 0;
	return 0;
}

/* Builds the model's tree (a copy when @copy), its functions and their
 * sums, and the answer. 0 or -ENOMEM. */
static int build(struct rd_model *m, int copy)
{
	struct agg g = { .t = &m->tree };
	struct kids_job kj;
	pthread_t th;
	int threaded;
	uint64_t *own_any = NULL;
	uint32_t nfr = prof_frame_count(m->p);
	int rc = copy ? rd_tree_build_copy(&m->tree, m->p) :
		 rd_tree_build(&m->tree, m->p);

	if (rc < 0 || !(g.fi = index_frames(m)))
		return -ENOMEM;
	g.nfn = m->nfn;
	g.same = m->nfn == nfr;
	for (uint32_t f = 0; f < nfr && g.same; f++)
		g.same = g.fi[f].fn == f;
	rc = -ENOMEM;
	if (set_fn_of(&m->tree, g.fi, g.same) < 0 || agg_init(&g, m) < 0 ||
	    !(own_any = malloc((m->nfn ? m->nfn : 1) * sizeof(*own_any))))
		goto out;
	if ((rc = agg_run(&g)) < 0)
		goto out;
	/* The lists on a thread while the answer is written (it does not
	 * read them). */
	kj = (struct kids_job){ &g, &m->tree, 0 };
	threaded = pthread_create(&th, NULL, kids_thread, &kj) == 0;
	if (!threaded)
		kids_thread(&kj);
	agg_collect(&g, m, own_any);
	m->total = prof_total(m->p);
	m->nnodes = prof_node_count(m->p);
	rc = -ENOMEM;
	if ((m->fn_match = calloc(m->nfn ? m->nfn : 1, 1)))
		rc = rd_answer_write(m, own_any, g.cand);
	/* kj.rc is not an error of the model: without the lists, walks
	 * read the sibling links (rd_tree_list_kids) */
	if (threaded)
		pthread_join(th, NULL);
out:
	free(own_any);
	free((void *)g.fi);
	agg_free(&g);
	return rc;
}

static struct rd_model *model_new(struct prof_profile *p, int copy)
{
	struct rd_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->p = p;
	if (prof_sort(p) < 0 || build(m, copy) < 0) {
		rd_model_free(m);
		return NULL;
	}
	return m;
}

struct rd_model *rd_model_new(struct prof_profile *p)
{
	return model_new(p, 0);
}

struct rd_model *rd_model_new_copied(struct prof_profile *p)
{
	return model_new(p, 1);
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
	return rd_tree_fn(&m->tree, rd_tree_pre(&m->tree, node));
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

/* Counts the nodes whose function matches and their value, counted once
 * through nesting: one pass in preorder, where the subtree of the
 * outermost match on the path ends at index @end. */
static void count_matches(struct rd_model *m)
{
	const struct rd_tree *t = &m->tree;
	uint32_t end = 0;

	for (uint32_t i = 1; i < t->n; i++) {
		if (!m->fn_match[rd_tree_fn(t, i)])
			continue;
		m->match_boxes++;
		if (i < end)
			continue;
		m->match_value += rd_tree_total(t, i);
		end = i + rd_tree_size(t, i);
	}
}

int rd_model_search(struct rd_model *m, const char *query)
{
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
		count_matches(m);
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
