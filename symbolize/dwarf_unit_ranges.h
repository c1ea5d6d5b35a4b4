/* SPDX-License-Identifier: MIT */
/*
 * dwarf_unit_ranges: which compile unit holds an address. A table of the
 * units' address ranges, built once per file from .debug_aranges (libdw's
 * reader, or, with sections inflated lazily, the section read directly,
 * since libdw's reader looks at every unit's header), else from each
 * unit's own ranges. Private to dwarf_lines.c and dwarf_unit_ranges.c,
 * which share struct sym_dwarf.
 */
#ifndef HEARTH_SYM_DWARF_UNIT_RANGES_H
#define HEARTH_SYM_DWARF_UNIT_RANGES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym_internal.h"

struct cu_range {
	uint64_t lo, hi;  /* [lo, hi) */
	uint64_t off;     /* offset of the CU DIE */
	uint32_t cu;      /* index in sym_dwarf.cus */
};

struct fn_range {
	uint64_t lo, hi;
	uint64_t off;     /* offset of the subprogram DIE */
};

struct cu_info {
	struct fn_range *fns; /* sorted by lo */
	size_t n, cap;
	bool indexed;
	bool line_ready;  /* its line program is inflated */
	uint64_t die_off; /* with hdr_offs: the unit DIE, 0 = not known yet */
};

struct sym_dwarf {
	Elf *elf;
	Dwarf *dw;
	struct cu_range *ranges;
	size_t n, cap;
	struct cu_info *cus;
	size_t ncus, capcus;
	size_t fn_bytes;
	uint64_t max_hi; /* end of the highest range */
	bool indexed;
	bool hdr_offs;   /* ranges hold unit header offsets, not DIEs */
	struct sym_inflate *z; /* NULL: libdw inflated everything */
	struct sym_arena names; /* joined file names */
	const char *last_joined_src, *last_joined_dir, *last_joined;
};

/* The range of the unit holding @addr, NULL when none does; builds the
 * table on the first call (out of memory, it holds what was read). An
 * address in a gap between units (padding between functions) belongs to
 * the unit before it, as libdwfl has it. The range's off is the unit's
 * DIE offset, or, with d->hdr_offs, its header offset. */
const struct cu_range *sym_dwarf_unit_at(struct sym_dwarf *d, uint64_t addr);

#endif
