/* SPDX-License-Identifier: MIT */
/* Simple unwind rules read from DWARF CFI, kept by pc, and the walk. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/unwind_rules.h"

/* x86-64 DWARF register numbers. */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7

/* Rule tables start small (most processes and modules run few distinct
 * pcs) and double up to RULES_MAX slots, then start over. */
#define RULES_MIN 256
#define RULES_MAX 65536

/* Offset N of a register rule "saved at CFA + N"; false for any other
 * expression. */
static bool cfa_offset_of(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	uint64_t v = 0;

	if (nops < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		v = ops[1].number;
	else if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
		v = ops[1].number;
	else if (nops != 1)
		return false;
	*off = (int32_t)(int64_t)v;
	return (int64_t)v == *off;
}

static bool cfa_rule_of(Dwarf_Frame *frame, struct sym_rule *r)
{
	Dwarf_Op *ops;
	size_t nops;
	unsigned reg;
	int64_t off;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		reg = (unsigned)ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return false;
	}
	if ((reg != DWARF_REG_RSP && reg != DWARF_REG_RBP) || off != (int32_t)off)
		return false;
	r->cfa_reg = (uint8_t)reg;
	r->cfa_off = (int32_t)off;
	return true;
}

/* The rule @frame gives, into @r (COMPLEX unless it is simple). */
static void rule_of_frame(Dwarf_Frame *frame, struct sym_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool signal = false;
	int ra = dwarf_frame_info(frame, NULL, NULL, &signal);

	if (ra < 0 || signal || !cfa_rule_of(frame, r) ||
	    dwarf_frame_register(frame, ra, mem, &ops, &nops) != 0)
		return;
	if (nops == 0 && ops == mem) {
		r->kind = SYM_RULE_OUTERMOST; /* return address undefined */
		return;
	}
	if (!cfa_offset_of(ops, nops, &r->ra_off) ||
	    dwarf_frame_register(frame, DWARF_REG_RBP, mem, &ops, &nops) != 0)
		return;
	if (nops == 0 && ops == NULL)
		r->bp_saved = 0; /* same value */
	else if (cfa_offset_of(ops, nops, &r->bp_off))
		r->bp_saved = 1;
	else
		return;
	r->kind = SYM_RULE_SIMPLE;
}

bool sym_rule_read(Dwarf_CFI *cfi, uint64_t pc, struct sym_rule *r)
{
	Dwarf_Frame *frame = NULL;

	r->kind = SYM_RULE_NONE;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return false;
	r->kind = SYM_RULE_COMPLEX;
	rule_of_frame(frame, r);
	free(frame);
	return true;
}

static size_t rule_slot(const struct sym_rule *v, size_t cap, uint64_t pc)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 40) & (cap - 1);

	while (v[i].kind != SYM_RULE_EMPTY && v[i].pc != pc)
		i = (i + 1) & (cap - 1);
	return i;
}

/* Makes room for one more rule: allocates, doubles, or past RULES_MAX
 * empties the table. Returns false when out of memory with no table. */
static bool rules_make_room(struct sym_rules *rs)
{
	size_t cap = rs->cap ? rs->cap * 2 : RULES_MIN;
	struct sym_rule *bigger;

	if (rs->cap && rs->n * 2 < rs->cap)
		return true;
	bigger = cap <= RULES_MAX ? calloc(cap, sizeof(*bigger)) : NULL;
	if (!bigger) {
		if (!rs->v)
			return false;
		memset(rs->v, 0, rs->cap * sizeof(*rs->v));
		rs->n = 0;
		return true;
	}
	for (size_t i = 0; i < rs->cap; i++)
		if (rs->v[i].kind != SYM_RULE_EMPTY)
			bigger[rule_slot(bigger, cap, rs->v[i].pc)] = rs->v[i];
	free(rs->v);
	rs->v = bigger;
	rs->cap = cap;
	return true;
}

const struct sym_rule *sym_rules_get(struct sym_rules *rs, uint64_t pc,
				     sym_rule_read_fn read, void *arg)
{
	size_t i;

	if (rs->v) {
		i = rule_slot(rs->v, rs->cap, pc);
		if (rs->v[i].kind != SYM_RULE_EMPTY)
			return &rs->v[i];
	}
	if (!rules_make_room(rs))
		return NULL;
	i = rule_slot(rs->v, rs->cap, pc);
	rs->v[i] = (struct sym_rule){ .pc = pc, .kind = SYM_RULE_COMPLEX };
	read(arg, pc, &rs->v[i]);
	rs->n++;
	return &rs->v[i];
}

size_t sym_rules_bytes(const struct sym_rules *rs)
{
	return rs->cap * sizeof(*rs->v);
}

void sym_rules_free(struct sym_rules *rs)
{
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static bool copy_read(const struct sym_stack_copy *c, uint64_t addr, uint64_t *v)
{
	if (addr < c->regs.sp || addr - c->regs.sp > c->size ||
	    c->size - (addr - c->regs.sp) < sizeof(*v))
		return false;
	memcpy(v, c->data + (addr - c->regs.sp), sizeof(*v));
	return true;
}

int sym_rules_walk(const struct sym_stack_copy *c, sym_rule_at_fn rule_at, void *arg,
		   uint64_t *pcs, size_t max, size_t *n)
{
	uint64_t ip = c->regs.ip, sp = c->regs.sp, bp = c->regs.bp;

	*n = 0;
	while (*n < max) {
		/* A return address points after the call: look up the call. */
		const struct sym_rule *r = rule_at(arg, *n ? ip - 1 : ip);
		uint64_t cfa, ra;

		pcs[(*n)++] = ip;
		if (r && r->kind == SYM_RULE_OUTERMOST)
			return 1;
		if (r && r->kind == SYM_RULE_NONE && *n > 1)
			return 0;
		if (!r || r->kind != SYM_RULE_SIMPLE)
			return -1;
		cfa = (r->cfa_reg == DWARF_REG_RSP ? sp : bp) + (uint64_t)(int64_t)r->cfa_off;
		if (!copy_read(c, cfa + (uint64_t)(int64_t)r->ra_off, &ra))
			return 0;
		if (r->bp_saved && !copy_read(c, cfa + (uint64_t)(int64_t)r->bp_off, &bp))
			return 0;
		if (ra == 0)
			return 1;
		sp = cfa;
		ip = ra;
	}
	return 0;
}
