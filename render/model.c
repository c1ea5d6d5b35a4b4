/* SPDX-License-Identifier: MIT */
/* The viewer's model: functions, shares, search. */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "render/model.h"
#include "render/model_sums.h"

unsigned rd_frame_class(const struct prof_frame *f)
{
	if (!f)
		return PROF_CLASS_UNKNOWN;
	if (f->cls == PROF_CLASS_UNKNOWN && f->kind == PROF_KIND_KERNEL)
		return PROF_CLASS_SYSTEM;
	return f->cls < PROF_CLASS_COUNT ? f->cls : PROF_CLASS_UNKNOWN;
}

/* Builds the model's tree (a copy when @copy), its functions and their
 * sums, and the answer. 0 or -ENOMEM. */
static int build(struct rd_model *m, int copy)
{
	int rc = copy ? rd_tree_build_copy(&m->tree, m->p) :
		 rd_tree_build(&m->tree, m->p);

	return rc < 0 ? rc : rd_model_sum_up(m);
}

static struct rd_model *model_new(struct prof_profile *p, int copy)
{
	struct rd_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->p = p;
	if (prof_sort(p) < 0 || rd_lines_merge(p, &m->merged, &m->lines) < 0) {
		rd_model_free(m);
		return NULL;
	}
	if (m->merged)
		m->p = m->merged;
	if (prof_sort(m->p) < 0 || build(m, copy) < 0) {
		rd_model_free(m);
		return NULL;
	}
	for (int i = 0; i < m->ncards && m->merged; i++)
		rd_lines_frame_text(&m->lines, m->p, m->fns[m->cards[i].fn].frame,
				    m->cards[i].at, sizeof(m->cards[i].at));
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
	prof_free(m->merged);
	rd_lines_free(&m->lines);
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
