/* SPDX-License-Identifier: MIT */
/* The viewer's model: functions, shares, search. */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "render/model.h"

void rd_model_walk(const struct prof_profile *p, rd_visit_fn enter,
		   rd_visit_fn leave, void *arg)
{
	const struct prof_node *root = prof_node_get(p, 0);
	uint32_t id = root ? root->child : 0;

	while (id) {
		const struct prof_node *n = prof_node_get(p, id);

		enter(n, id, arg);
		if (n->child) {
			id = n->child;
			continue;
		}
		for (;;) {
			n = prof_node_get(p, id);
			leave(n, id, arg);
			if (n->sibling) {
				id = n->sibling;
				break;
			}
			id = n->parent;
			if (id == 0)
				break;
		}
	}
}

unsigned rd_frame_class(const struct prof_frame *f)
{
	if (!f)
		return PROF_CLASS_UNKNOWN;
	if (f->cls == PROF_CLASS_UNKNOWN && f->kind == PROF_KIND_KERNEL)
		return PROF_CLASS_SYSTEM;
	return f->cls < PROF_CLASS_COUNT ? f->cls : PROF_CLASS_UNKNOWN;
}

struct agg {
	struct rd_model *m;
	uint32_t *active; /* per function: times on the current path */
};

static void agg_enter(const struct prof_node *n, uint32_t id, void *arg)
{
	struct agg *a = arg;
	struct rd_model *m = a->m;
	uint32_t f = m->node_fn[id];
	const struct prof_frame *fr = prof_frame_get(m->p, n->frame);

	if (a->active[f]++ == 0)
		m->fns[f].total += n->total;
	m->fns[f].self += n->self;
	m->fns[f].nodes++;
	if (fr) {
		m->class_self[rd_frame_class(fr)] += n->self;
		m->lang_self[fr->lang < PROF_LANG_COUNT ? fr->lang : 0] += n->self;
	}
}

static void agg_leave(const struct prof_node *n, uint32_t id, void *arg)
{
	struct agg *a = arg;

	(void)n;
	a->active[a->m->node_fn[id]]--;
}

/* Assigns a function index to every node: one per distinct name. */
static int index_functions(struct rd_model *m)
{
	uint32_t nstr = prof_str_count(m->p);
	uint32_t *str_fn = calloc(nstr ? nstr : 1, sizeof(*str_fn));

	if (!str_fn)
		return -ENOMEM;
	m->fns = calloc(m->nnodes, sizeof(*m->fns));
	if (!m->fns) {
		free(str_fn);
		return -ENOMEM;
	}
	for (uint32_t id = 0; id < m->nnodes; id++) {
		const struct prof_node *n = prof_node_get(m->p, id);
		const struct prof_frame *fr = prof_frame_get(m->p, n->frame);
		uint32_t name = fr && id ? fr->name : 0;

		if (name >= nstr)
			name = 0;
		if (!str_fn[name]) {
			struct rd_fn *f = &m->fns[m->nfn];

			f->name = name;
			f->frame = n->frame;
			f->row = fr && id && fr->kind != PROF_KIND_PROCESS &&
				 fr->kind != PROF_KIND_THREAD;
			str_fn[name] = ++m->nfn;
		}
		m->node_fn[id] = str_fn[name] - 1;
	}
	free(str_fn);
	return 0;
}

struct rd_model *rd_model_new(struct prof_profile *p)
{
	struct rd_model *m = calloc(1, sizeof(*m));
	struct agg a = { .m = m };

	if (!m)
		return NULL;
	m->p = p;
	if (prof_sort(p) < 0)
		goto err;
	m->total = prof_total(p);
	m->nnodes = prof_node_count(p);
	m->node_fn = calloc(m->nnodes, sizeof(*m->node_fn));
	if (!m->node_fn || index_functions(m) < 0)
		goto err;
	m->fn_match = calloc(m->nfn ? m->nfn : 1, 1);
	a.active = calloc(m->nfn ? m->nfn : 1, sizeof(*a.active));
	if (!m->fn_match || !a.active)
		goto err;
	rd_model_walk(p, agg_enter, agg_leave, &a);
	free(a.active);
	a.active = NULL;
	if (rd_answer_write(m) < 0)
		goto err;
	return m;
err:
	free(a.active);
	rd_model_free(m);
	return NULL;
}

void rd_model_free(struct rd_model *m)
{
	if (!m)
		return;
	free(m->node_fn);
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

int rd_model_node_match(const struct rd_model *m, uint32_t node)
{
	if (!m->searching || node >= m->nnodes)
		return 0;
	return m->fn_match[m->node_fn[node]];
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
		for (uint32_t f = 0; f < m->nfn; f++) {
			if (regexec(&re, rd_model_fn_name(m, f), 0, NULL, 0) == 0) {
				m->fn_match[f] = 1;
				hit = 1;
			}
		}
		regfree(&re);
		if (hit)
			return;
	}
	for (uint32_t f = 0; f < m->nfn; f++)
		if (fuzzy(pat, tl, rd_model_fn_name(m, f)))
			m->fn_match[f] = 1;
}

struct count {
	struct rd_model *m;
	uint32_t inside; /* matching nodes on the current path */
};

static void count_enter(const struct prof_node *n, uint32_t id, void *arg)
{
	struct count *c = arg;

	if (!c->m->fn_match[c->m->node_fn[id]])
		return;
	c->m->match_boxes++;
	if (c->inside++ == 0)
		c->m->match_value += n->total;
}

static void count_leave(const struct prof_node *n, uint32_t id, void *arg)
{
	struct count *c = arg;

	(void)n;
	if (c->m->fn_match[c->m->node_fn[id]])
		c->inside--;
}

int rd_model_search(struct rd_model *m, const char *query)
{
	struct count c = { .m = m };
	const char *s = query ? query : "";

	memset(m->fn_match, 0, m->nfn ? m->nfn : 1);
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
		rd_model_walk(m->p, count_enter, count_leave, &c);
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
