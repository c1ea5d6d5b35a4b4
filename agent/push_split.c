/* SPDX-License-Identifier: MIT */
/* push_split: a window's call tree cut by service, subtree by subtree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/push_split.h"

struct splitter {
	const struct prof_profile *src;
	struct prof_profile *dst;
	uint32_t *fmap;           /* src frame id -> dst frame id, 0 = none */
	uint32_t *touched;        /* src frame ids set in fmap */
	size_t ntouched;
	struct { uint32_t src, dst; } *stack;
	size_t stack_cap;
};

/* The frame of @sf in s->dst; the process row without its pid when
 * @row. UINT32_MAX on ENOMEM. */
static uint32_t copy_frame(struct splitter *s, uint32_t sf, int row)
{
	const struct prof_frame *f = prof_frame_get(s->src, sf);
	struct prof_frame d;
	uint32_t id;

	if (!row && s->fmap[sf])
		return s->fmap[sf];
	d = *f;
	d.name = prof_intern(s->dst, prof_str(s->src, f->name), prof_str_len(s->src, f->name));
	d.module = prof_intern(s->dst, prof_str(s->src, f->module), prof_str_len(s->src, f->module));
	d.file = prof_intern(s->dst, prof_str(s->src, f->file), prof_str_len(s->src, f->file));
	if (row)
		d.line = 0;
	if (d.name == UINT32_MAX || d.module == UINT32_MAX || d.file == UINT32_MAX)
		return UINT32_MAX;
	id = prof_frame_intern(s->dst, &d);
	/* Its place too: the pprof sent has the mapping and the address. */
	if (id != UINT32_MAX && !row && prof_frame_place_as(s->dst, id, s->src, sf) < 0)
		return UINT32_MAX;
	if (id != UINT32_MAX && !row) {
		s->fmap[sf] = id;
		s->touched[s->ntouched++] = sf;
	}
	return id;
}

/* Adds the subtree of src node @top under the root of s->dst. Thread
 * rows (hearthd keeps them for snapshots of threads) are left out: each
 * thread's stacks merge under its process, as the backend has always
 * had them. */
static int copy_subtree(struct splitter *s, uint32_t top)
{
	const struct prof_node *nodes = prof_nodes(s->src);
	size_t sp = 0;
	uint32_t f = copy_frame(s, nodes[top].frame, 1), dn;

	if (f == UINT32_MAX || (dn = prof_child_get(s->dst, 0, f)) == UINT32_MAX ||
	    prof_node_add(s->dst, dn, nodes[top].total, nodes[top].self) < 0 ||
	    prof_node_add(s->dst, 0, nodes[top].total, 0) < 0)
		return -ENOMEM;
	s->stack[sp].src = top;
	s->stack[sp++].dst = dn;
	while (sp) {
		uint32_t sn = s->stack[--sp].src, dparent = s->stack[sp].dst;

		for (uint32_t c = nodes[sn].child; c; c = nodes[c].sibling) {
			if (sp == s->stack_cap) {
				size_t cap = s->stack_cap * 2;
				void *p = realloc(s->stack, cap * sizeof(*s->stack));

				if (!p)
					return -ENOMEM;
				s->stack = p;
				s->stack_cap = cap;
			}
			if (sn == top && prof_frame_get(s->src, nodes[c].frame)->kind ==
					 PROF_KIND_THREAD) {
				if (prof_node_add(s->dst, dparent, 0, nodes[c].self) < 0)
					return -ENOMEM;
				s->stack[sp].src = c;
				s->stack[sp++].dst = dparent;
				continue;
			}
			f = copy_frame(s, nodes[c].frame, 0);
			if (f == UINT32_MAX ||
			    (dn = prof_child_get(s->dst, dparent, f)) == UINT32_MAX ||
			    prof_node_add(s->dst, dn, nodes[c].total, nodes[c].self) < 0)
				return -ENOMEM;
			s->stack[sp].src = c;
			s->stack[sp++].dst = dn;
		}
	}
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct push_part *)a)->key, ((const struct push_part *)b)->key);
}

/* The part of @out for service @svc, made when missing; NULL on ENOMEM. */
static struct push_part *part_for(struct push_parts *out, const struct push_service *svc,
				  enum push_kind kind, const struct prof_profile *src)
{
	char key[PUSH_KEY_MAX];
	struct push_part *p;

	snprintf(key, sizeof(key), "%s\1%s\1%d", svc->name, svc->container, (int)kind);
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->v[i].key, key))
			return &out->v[i];
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;

		p = realloc(out->v, cap * sizeof(*p));
		if (!p)
			return NULL;
		out->v = p;
		out->cap = cap;
	}
	p = &out->v[out->n];
	memset(p, 0, sizeof(*p));
	memcpy(p->key, key, sizeof(key));
	p->svc = *svc;
	p->kind = kind;
	p->prof = prof_new(prof_meta_const(src)->unit);
	if (!p->prof)
		return NULL;
	*prof_meta(p->prof) = *prof_meta_const(src);
	out->n++;
	return p;
}

/* Which part each top-level node goes to: indexes into @out, in @which. */
static int assign(const struct prof_profile *src, enum push_kind kind, push_service_fn fn,
		  void *arg, struct push_parts *out, size_t *which)
{
	const struct prof_node *nodes = prof_nodes(src);
	static const struct push_service none = { .name = "unknown" };
	size_t k = 0;

	for (uint32_t c = nodes[0].child; c; c = nodes[c].sibling, k++) {
		const struct prof_frame *f = prof_frame_get(src, nodes[c].frame);
		const struct push_service *svc = &none;
		struct push_part *p;

		if (f->kind == PROF_KIND_PROCESS)
			svc = fn(arg, f->line, prof_str(src, f->name), prof_str_len(src, f->name));
		p = part_for(out, svc, kind, src);
		if (!p)
			return -ENOMEM;
		which[k] = (size_t)(p - out->v);
	}
	return 0;
}

int push_split(const struct prof_profile *src, enum push_kind kind,
	       push_service_fn fn, void *arg, struct push_parts *out)
{
	const struct prof_node *nodes = prof_nodes(src);
	struct splitter s = { .src = src, .stack_cap = 256 };
	size_t ntop = 0, first = out->n, *which, k;
	int rc = -ENOMEM;

	for (uint32_t c = nodes[0].child; c; c = nodes[c].sibling)
		ntop++;
	which = calloc(ntop ? ntop : 1, sizeof(*which));
	s.fmap = calloc(prof_frame_count(src), sizeof(*s.fmap));
	s.touched = calloc(prof_frame_count(src), sizeof(*s.touched));
	s.stack = malloc(s.stack_cap * sizeof(*s.stack));
	if (!which || !s.fmap || !s.touched || !s.stack)
		goto out;
	rc = assign(src, kind, fn, arg, out, which);
	/* Samples without even a process row stay on the root: they go to
	 * "unknown", so the parts add up to the window. */
	if (!rc && nodes[0].self) {
		static const struct push_service none = { .name = "unknown" };
		struct push_part *u = part_for(out, &none, kind, src);

		rc = !u || prof_node_add(u->prof, 0, nodes[0].self, nodes[0].self) < 0 ? -ENOMEM : 0;
	}
	/* Part by part, so one frame map serves them all. */
	for (size_t p = first; !rc && p < out->n; p++) {
		s.dst = out->v[p].prof;
		k = 0;
		for (uint32_t c = nodes[0].child; !rc && c; c = nodes[c].sibling, k++)
			if (which[k] == p)
				rc = copy_subtree(&s, c);
		for (size_t i = 0; i < s.ntouched; i++)
			s.fmap[s.touched[i]] = 0;
		s.ntouched = 0;
	}
	if (!rc && out->n > 1) /* none: out->v may be NULL */
		qsort(out->v, out->n, sizeof(*out->v), key_cmp);
out:
	free(which);
	free(s.fmap);
	free(s.touched);
	free(s.stack);
	return rc;
}

int push_split_pair(const struct prof_profile *src, const struct prof_profile *second,
		    enum push_kind kind, push_service_fn fn, void *arg,
		    struct push_parts *out)
{
	struct push_parts sec = { 0 };
	int rc = push_split(src, kind, fn, arg, out);

	if (!rc && second)
		rc = push_split(second, kind, fn, arg, &sec);
	for (size_t i = 0; !rc && i < sec.n; i++)
		for (size_t j = 0; j < out->n; j++)
			if (!out->v[j].second && !strcmp(out->v[j].key, sec.v[i].key)) {
				out->v[j].second = sec.v[i].prof;
				sec.v[i].prof = NULL;
				break;
			}
	push_parts_free(&sec);
	return rc;
}

void push_parts_free(struct push_parts *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		prof_free(ps->v[i].prof);
		prof_free(ps->v[i].second);
	}
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}
