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
struct path {
	uint32_t *node, *fn;
	uint8_t *counted;
	uint32_t n, cap;
	uint64_t *on;
};

static int path_push(struct path *pa, uint32_t node, uint32_t fn, int counted)
{
	if (pa->n == pa->cap) {
		uint32_t cap = pa->cap ? pa->cap * 2 : 256;
		uint32_t *a = realloc(pa->node, cap * sizeof(*a));
		uint32_t *b = a ? realloc(pa->fn, cap * sizeof(*b)) : NULL;
		uint8_t *c = b ? realloc(pa->counted, cap) : NULL;

		if (a)
			pa->node = a;
		if (b)
			pa->fn = b;
		if (!c)
			return -ENOMEM;
		pa->counted = c;
		pa->cap = cap;
	}
	pa->node[pa->n] = node;
	pa->fn[pa->n] = fn;
	pa->counted[pa->n++] = (uint8_t)counted;
	return 0;
}

/* One pass down the preorder tree: turns each node's frame into its
 * function, sums self by class and language, and each function's self,
 * nodes and total (counted once through recursion). */
static int aggregate(struct rd_model *m, const struct frame_info *fi,
		     struct fn_sum *sum)
{
	struct rd_tree *t = &m->tree;
	uint32_t nfr = prof_frame_count(m->p);
	struct path pa = { .on = calloc(m->nfn / 64 + 1, sizeof(uint64_t)) };
	int rc = pa.on ? 0 : -ENOMEM;

	for (uint32_t i = 1; i < t->n && rc == 0; i++) {
		struct rd_tnode *v = &t->v[i];
		const struct frame_info *f = &fi[v->fn < nfr ? v->fn : 0];
		uint64_t self = v->self;
		uint64_t bit = 1ull << (f->fn % 64), *word = &pa.on[f->fn / 64];
		int counted;

		/* The functions come in random order: ask for them ahead. */
		if (i + 16 < t->n && t->v[i + 16].fn < nfr)
			__builtin_prefetch(&fi[t->v[i + 16].fn]);
		if (i + 8 < t->n && t->v[i + 8].fn < nfr)
			__builtin_prefetch(&sum[fi[t->v[i + 8].fn].fn], 1);
		while (pa.n && pa.node[pa.n - 1] != v->parent) {
			pa.n--;
			if (pa.counted[pa.n])
				pa.on[pa.fn[pa.n] / 64] &= ~(1ull << (pa.fn[pa.n] % 64));
		}
		counted = !(*word & bit);
		*word |= bit;
		v->fn = f->fn;
		m->class_self[f->cls] += self;
		m->lang_self[f->lang] += self;
		sum[f->fn].self += self;
		sum[f->fn].nodes++;
		if (counted)
			sum[f->fn].total += v->total;
		rc = path_push(&pa, i, f->fn, counted);
	}
	t->v[0].fn = 0;
	free(pa.node);
	free(pa.fn);
	free(pa.counted);
	free(pa.on);
	return rc;
}

/* Assigns a function index to every node and sums the functions' and the
 * classes' values. 0 or -ENOMEM. */
static int index_functions(struct rd_model *m)
{
	struct frame_info *fi = index_frames(m);
	struct fn_sum *sum = fi ? calloc(m->nfn, sizeof(*sum)) : NULL;
	int rc = -ENOMEM;

	if (sum && (rc = aggregate(m, fi, sum)) == 0) {
		for (uint32_t f = 0; f < m->nfn; f++) {
			m->fns[f].self = sum[f].self;
			m->fns[f].total = sum[f].total;
			m->fns[f].nodes = sum[f].nodes;
		}
	}
	free(fi);
	free(sum);
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
	if (prof_sort(p) < 0 || rd_tree_build_nodes(&m->tree, p) < 0)
		goto err;
	job = (struct kids_job){ &m->tree, 0 };
	threaded = pthread_create(&th, NULL, build_kids, &job) == 0;
	if (!threaded)
		build_kids(&job);
	m->total = prof_total(p);
	m->nnodes = prof_node_count(p);
	rc = index_functions(m);
	if (rc == 0 && !(m->fn_match = calloc(m->nfn ? m->nfn : 1, 1)))
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
