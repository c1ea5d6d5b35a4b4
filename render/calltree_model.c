/* SPDX-License-Identifier: MIT */
/* The call tree model (render/calltree.h): the profile as an expandable
 * table with a stepping search. Its pane is render/calltree_pane.c. */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/calltree.h"

void rd_calltree_free(struct rd_calltree *ct)
{
	free(ct->open);
	free(ct->rows);
	free(ct->matches);
	memset(ct, 0, sizeof(*ct));
}

static int by_total(const void *a, const void *b, void *arg)
{
	const struct rd_tree *t = arg;
	uint64_t x = rd_tree_total(t, *(const uint32_t *)a);
	uint64_t y = rd_tree_total(t, *(const uint32_t *)b);

	if (x != y)
		return x < y ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Pushes the children of @p (depth @d) so the largest is popped first. */
static void push_kids(const struct rd_tree *t, uint32_t p, uint32_t d,
		      uint32_t *stack, uint32_t *dep, size_t *sp)
{
	size_t k0 = *sp;
	struct rd_kids ks;

	for (rd_kids_start(&ks, t, p); rd_kids_next(&ks);) {
		stack[*sp] = ks.at;
		dep[(*sp)++] = d;
	}
	qsort_r(stack + k0, *sp - k0, sizeof(*stack), by_total, (void *)t);
	for (size_t a = k0, b = *sp; a + 1 < b; a++, b--) {
		uint32_t x = stack[a];

		stack[a] = stack[b - 1];
		stack[b - 1] = x;
	}
}

/* Rebuilds the visible rows: open nodes list their children, depth
 * first, with an explicit stack (at most the tree's size). */
static int list(struct rd_calltree *ct)
{
	const struct rd_tree *t = &ct->m->tree;
	uint32_t *stack = malloc((t->n ? t->n : 1) * sizeof(*stack));
	uint32_t *dep = malloc((t->n ? t->n : 1) * sizeof(*dep));
	size_t sp = 0;

	if (!stack || !dep) {
		free(stack);
		free(dep);
		return -ENOMEM;
	}
	ct->nrows = 0;
	push_kids(t, 0, 0, stack, dep, &sp);
	while (sp) {
		uint32_t i = stack[--sp], d = dep[sp];
		struct rd_ct_row *r = &ct->rows[ct->nrows++];

		r->pre = i;
		r->depth = d;
		r->leaf = !rd_tree_child(t, i);
		r->open = ct->open[i] && !r->leaf;
		if (r->open)
			push_kids(t, i, d + 1, stack, dep, &sp);
	}
	free(stack);
	free(dep);
	return 0;
}

int rd_calltree_init(struct rd_calltree *ct, const struct rd_model *m)
{
	size_t n = m->tree.n ? m->tree.n : 1;

	memset(ct, 0, sizeof(*ct));
	ct->m = m;
	ct->open = calloc(n, 1);
	ct->rows = calloc(n, sizeof(*ct->rows));
	if (!ct->open || !ct->rows || list(ct) < 0) {
		rd_calltree_free(ct);
		return -ENOMEM;
	}
	return 0;
}

int rd_calltree_toggle(struct rd_calltree *ct, uint32_t pre)
{
	if (pre >= ct->m->tree.n)
		return 0;
	ct->open[pre] = !ct->open[pre];
	return list(ct);
}

int rd_calltree_refresh(struct rd_calltree *ct)
{
	return list(ct);
}

long rd_calltree_row_of(const struct rd_calltree *ct, uint32_t pre)
{
	for (size_t i = 0; i < ct->nrows; i++)
		if (ct->rows[i].pre == pre)
			return (long)i;
	return -1;
}

/* Opens the ancestors of the current match and scrolls to it. */
static int show(struct rd_calltree *ct, size_t visible)
{
	const struct rd_tree *t = &ct->m->tree;
	uint32_t pre = ct->matches[ct->cur];
	long row;

	for (uint32_t a = rd_tree_parent(t, pre); a != 0; a = rd_tree_parent(t, a))
		ct->open[a] = 1;
	if (list(ct) < 0)
		return -ENOMEM;
	row = rd_calltree_row_of(ct, pre);
	if (row < 0)
		return 0;
	if ((size_t)row < ct->scroll || (visible && ct->scroll + visible <= (size_t)row))
		ct->scroll = (size_t)row > visible / 2 ? (size_t)row - visible / 2 : 0;
	return 0;
}

static int contains(const char *s, const char *q)
{
	size_t ql = strlen(q);

	for (; *s; s++) {
		size_t i = 0;

		while (i < ql && s[i] && tolower((unsigned char)s[i]) ==
		       tolower((unsigned char)q[i]))
			i++;
		if (i == ql)
			return 1;
	}
	return ql == 0;
}

long rd_calltree_search(struct rd_calltree *ct, const char *query,
			size_t visible)
{
	const struct rd_model *m = ct->m;
	uint8_t *fmatch = NULL;
	regex_t re;
	int rx;

	snprintf(ct->query, sizeof(ct->query), "%s", query ? query : "");
	ct->nmatch = ct->cur = 0;
	ct->searching = ct->query[0] != 0;
	if (!ct->searching)
		return 0;
	fmatch = calloc(m->nfn ? m->nfn : 1, 1);
	if (!ct->matches)
		ct->matches = malloc((m->tree.n ? m->tree.n : 1) * sizeof(*ct->matches));
	if (!fmatch || !ct->matches) {
		free(fmatch);
		return -ENOMEM;
	}
	rx = regcomp(&re, ct->query, REG_EXTENDED | REG_NOSUB | REG_ICASE) == 0;
	for (uint32_t f = 1; f < m->nfn; f++) {
		const char *name = rd_model_fn_name(m, f);

		fmatch[f] = rx ? regexec(&re, name, 0, NULL, 0) == 0 : contains(name, ct->query);
	}
	if (rx)
		regfree(&re);
	for (uint32_t i = 1; i < m->tree.n; i++)
		if (fmatch[rd_tree_fn(&m->tree, i)])
			ct->matches[ct->nmatch++] = i;
	free(fmatch);
	if (ct->nmatch && show(ct, visible) < 0)
		return -ENOMEM;
	return (long)ct->nmatch;
}

int rd_calltree_step(struct rd_calltree *ct, int dir, size_t visible)
{
	if (!ct->nmatch)
		return -ENOENT;
	if (dir > 0)
		ct->cur = ct->cur + 1 < ct->nmatch ? ct->cur + 1 : 0;
	else
		ct->cur = ct->cur ? ct->cur - 1 : ct->nmatch - 1;
	return show(ct, visible);
}

char *rd_calltree_status(const struct rd_calltree *ct, char *buf, size_t n)
{
	if (!ct->searching)
		snprintf(buf, n, "%s", "");
	else if (!ct->nmatch)
		snprintf(buf, n, "no matches");
	else
		snprintf(buf, n, "%zu of %zu", ct->cur + 1, ct->nmatch);
	return buf;
}
