/* SPDX-License-Identifier: MIT */
/*
 * unwind_rules: the simple rule of one pc, read from DWARF CFI with libdw
 * (CFA = rsp or rbp + offset; return address and saved rbp at CFA +
 * offset), a table of rules by pc, and the walk of a copied stack with
 * them. The per-process libdw sessions (unwind.c) and the rules shared by
 * every process mapping a module (unwind_shared.c) both use it. Internal
 * to symbolize/.
 */
#ifndef HEARTH_SYM_UNWIND_RULES_H
#define HEARTH_SYM_UNWIND_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "symbolize/unwind.h"

enum {
	SYM_RULE_EMPTY = 0,
	SYM_RULE_SIMPLE,    /* the fields below say it all */
	SYM_RULE_OUTERMOST, /* return address undefined: the stack ends */
	SYM_RULE_COMPLEX,   /* needs libdw's interpreter (an expression, a
			     * signal frame, another register) */
	SYM_RULE_NONE,      /* no FDE covers the pc (a thread's start in
			     * clone3, the loader's _start; or code the CFI
			     * does not describe) */
};

struct sym_rule {
	uint64_t pc;
	uint8_t kind;
	uint8_t cfa_reg;  /* DWARF register: rsp (7) or rbp (6) */
	uint8_t bp_saved; /* rbp restored from CFA + bp_off */
	int32_t cfa_off;
	int32_t ra_off;   /* return address at CFA + ra_off */
	int32_t bp_off;
};

/* Rules by pc: open addressing, doubling up to a bound, then emptied
 * (rules are cheap to read again). */
struct sym_rules {
	struct sym_rule *v;
	size_t n, cap;
};

/* Reads the rule of @pc (in @cfi's address space) into @r. Returns false
 * when no FDE of @cfi covers @pc (@r is then NONE). */
bool sym_rule_read(Dwarf_CFI *cfi, uint64_t pc, struct sym_rule *r);

/* Fills @r for @pc (r->pc is set, r->kind COMPLEX on entry). */
typedef void (*sym_rule_read_fn)(void *arg, uint64_t pc, struct sym_rule *r);

/* The rule of @pc in @rs, read with @read(@arg, ...) the first time.
 * Returns NULL only when out of memory. The pointer is valid until the
 * next call on @rs. */
const struct sym_rule *sym_rules_get(struct sym_rules *rs, uint64_t pc,
				     sym_rule_read_fn read, void *arg);

/* Memory @rs holds. */
size_t sym_rules_bytes(const struct sym_rules *rs);

/* Frees the rules and zeroes @rs. */
void sym_rules_free(struct sym_rules *rs);

/* The rule of the frame at @at (the sampled pc, else a return address
 * minus one), NULL when none is known. */
typedef const struct sym_rule *(*sym_rule_at_fn)(void *arg, uint64_t at);

/* Walks @c with the rules @rule_at gives, writing at most @max pcs, leaf
 * first, to @pcs and their number to *@n. Returns 1 when it reached the
 * outermost frame, 0 when it stopped at the copy's end (or @max) or at a
 * caller no CFI covers (where threads start: libdw stops there too), -1
 * when a frame needs more than a simple rule or the leaf has none. */
int sym_rules_walk(const struct sym_stack_copy *c, sym_rule_at_fn rule_at, void *arg,
		   uint64_t *pcs, size_t max, size_t *n);

#endif
