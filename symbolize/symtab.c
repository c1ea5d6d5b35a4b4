/* SPDX-License-Identifier: MIT */
/*
 * symtab: a sorted array of function symbols with binary search, and the
 * string blob that holds their names.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

uint32_t sym_strtab_add(struct sym_strtab *t, const char *s, size_t n)
{
	if (n + 1 > UINT32_MAX - t->len)
		return UINT32_MAX;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *nb = realloc(t->buf, cap);
		if (!nb)
			return UINT32_MAX;
		t->buf = nb;
		t->cap = cap;
	}
	uint32_t off = (uint32_t)t->len;
	memcpy(t->buf + t->len, s, n);
	t->buf[t->len + n] = '\0';
	t->len += n + 1;
	return off;
}

void sym_strtab_free(struct sym_strtab *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

struct sym_arena_chunk {
	struct sym_arena_chunk *next;
	size_t used, cap;
	char data[];
};

const char *sym_arena_strdup(struct sym_arena *a, const char *s, size_t n)
{
	struct sym_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > 16384 ? n + 1 : 16384;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
		a->bytes += sizeof(*c) + cap;
	}
	char *d = c->data + c->used;
	memcpy(d, s, n);
	d[n] = '\0';
	c->used += n + 1;
	return d;
}

void sym_arena_free(struct sym_arena *a)
{
	struct sym_arena_chunk *c = a->head;
	while (c) {
		struct sym_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->bytes = 0;
}

int sym_symtab_push(struct sym_symtab *t, uint64_t addr, uint64_t size,
		    const char *name, uint32_t rank)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct sym_elfsym *ns = realloc(t->syms, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		t->syms = ns;
		t->cap = cap;
	}
	uint32_t off = sym_strtab_add(&t->names, name, strlen(name));
	if (off == UINT32_MAX)
		return -ENOMEM;
	t->syms[t->n++] = (struct sym_elfsym){
		.addr = addr, .size = size, .name = off, .rank = rank };
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_elfsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* best first */
	uint32_t xr = x->rank & ~SYM_RANK_LIMIT, yr = y->rank & ~SYM_RANK_LIMIT;
	if (xr != yr)
		return xr > yr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->name < y->name ? -1 : (x->name > y->name);
}

void sym_symtab_finish(struct sym_symtab *t)
{
	if (t->n == 0)
		return;
	qsort(t->syms, t->n, sizeof(*t->syms), cmp_sym);
	size_t w = 0;
	for (size_t r = 0; r < t->n; r++) {
		if (w > 0 && t->syms[w - 1].addr == t->syms[r].addr) {
			/* keep the best; borrow a size when it had none */
			struct sym_elfsym *k = &t->syms[w - 1];
			const struct sym_elfsym *o = &t->syms[r];
			if ((k->size == 0 || (k->rank & SYM_RANK_LIMIT)) &&
			    o->size && !(o->rank & SYM_RANK_LIMIT)) {
				k->size = o->size;
				k->rank &= ~SYM_RANK_LIMIT;
			}
			continue;
		}
		t->syms[w++] = t->syms[r];
	}
	t->n = w;
	/* unsized symbols end where the next one starts (or their section
	 * ends, when that is known and comes first) */
	for (size_t i = 0; i < t->n; i++) {
		struct sym_elfsym *s = &t->syms[i];
		bool limit = s->rank & SYM_RANK_LIMIT;
		if (s->size != 0 && !limit)
			continue;
		uint64_t gap = i + 1 < t->n ? t->syms[i + 1].addr - s->addr : 0;
		if (s->size == 0 || (gap && gap < s->size))
			s->size = gap;
		s->rank &= ~SYM_RANK_LIMIT;
	}
	if (t->n < t->cap) {
		struct sym_elfsym *ns = realloc(t->syms, t->n * sizeof(*ns));
		if (ns) {
			t->syms = ns;
			t->cap = t->n;
		}
	}
}

const struct sym_elfsym *sym_symtab_find(const struct sym_symtab *t,
					 uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) { /* first symbol with addr > @addr */
		size_t mid = lo + (hi - lo) / 2;
		if (addr < t->syms[mid].addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* the closest start at or below @addr, or an enclosing bigger one a
	 * few entries back (nested symbols) */
	for (size_t k = 0; k < 4 && lo > 0; k++, lo--) {
		const struct sym_elfsym *s = &t->syms[lo - 1];
		if (addr - s->addr < s->size)
			return s;
	}
	return NULL;
}

int sym_symtab_merge(struct sym_symtab *dst, const struct sym_symtab *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct sym_elfsym *s = &src->syms[i];
		int err = sym_symtab_push(dst, s->addr, s->size,
					  sym_symtab_name(src, s), s->rank);
		if (err)
			return err;
	}
	sym_symtab_finish(dst);
	return 0;
}

void sym_symtab_free(struct sym_symtab *t)
{
	free(t->syms);
	sym_strtab_free(&t->names);
	memset(t, 0, sizeof(*t));
}
