/* SPDX-License-Identifier: MIT */
/*
 * cfi_walk: finding a row, and walking a copied stack with compiled rows
 * alone, step for step as the BPF walker does, so the two can be checked
 * against each other and against libdw.
 */
#include <string.h>

#include "symbolize/cfi.h"

const struct hearth_cfi_row *sym_cfi_find(const struct sym_cfi_table *t,
					  uint64_t pc)
{
	size_t lo = 0, hi = t->n;

	if (pc > UINT32_MAX || t->n == 0 || pc < t->rows[0].pc)
		return NULL;
	/* The last row whose pc is <= @pc. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

static const struct sym_cfi_map *map_of(const struct sym_cfi_map *maps,
					size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < maps[mid].start)
			hi = mid;
		else if (addr >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}

static int read_word(const struct sym_stack_copy *c, uint64_t addr, uint64_t *v)
{
	if (addr < c->regs.sp || addr - c->regs.sp > c->size ||
	    c->size - (addr - c->regs.sp) < sizeof(*v))
		return -1;
	memcpy(v, c->data + (addr - c->regs.sp), sizeof(*v));
	return 0;
}

/* The CFA of the frame at @pc (module space) under @r, or 0 when the
 * row cannot give one. */
static uint64_t frame_cfa(const struct hearth_cfi_row *r, uint64_t pc,
			  uint64_t sp, uint64_t bp, int bp_known)
{
	switch (r->cfa_rule) {
	case HEARTH_CFA_SP:
		return sp + (uint64_t)(int64_t)r->cfa_off;
	case HEARTH_CFA_FP:
		return bp_known ? bp + (uint64_t)(int64_t)r->cfa_off : 0;
	case HEARTH_CFA_PLT:
		return sp + ((pc & 15) >= 11 ? 16 : 8);
	default:
		return 0;
	}
}

size_t sym_cfi_walk(const struct sym_cfi_map *maps, size_t nmaps,
		    const struct sym_stack_copy *copy, uint64_t *pcs,
		    size_t max, int *complete)
{
	uint64_t ip = copy->regs.ip, sp = copy->regs.sp, bp = copy->regs.bp;
	int bp_known = 1;
	size_t n = 0;

	*complete = 0;
	while (n < max) {
		/* A return address points after the call: look up the call. */
		uint64_t at = n ? ip - 1 : ip, cfa, pc;
		const struct sym_cfi_map *m = map_of(maps, nmaps, at);
		const struct hearth_cfi_row *r;

		pcs[n++] = ip;
		if (!m || !m->table)
			break;
		pc = at - m->bias - m->table->base;
		r = sym_cfi_find(m->table, pc);
		if (!r)
			break;
		if (r->cfa_rule == HEARTH_CFA_END) {
			*complete = 1;
			break;
		}
		cfa = frame_cfa(r, pc, sp, bp, bp_known);
		if (cfa <= sp || read_word(copy, cfa - 8, &ip) < 0)
			break;
		if (r->fp_rule == HEARTH_FP_AT_CFA) {
			if (read_word(copy, cfa + (uint64_t)(int64_t)r->fp_off, &bp) < 0)
				break;
			bp_known = 1;
		} else if (r->fp_rule == HEARTH_FP_LOST) {
			bp_known = 0;
		}
		sp = cfa;
		if (ip == 0) {
			*complete = 1; /* the outermost frame zeroed its caller */
			break;
		}
	}
	return n;
}
