/* SPDX-License-Identifier: MIT */
/*
 * dwarf_lines: file:line and inline chains from DWARF via libdw.
 */
#include <stdlib.h>

#include "sym_internal.h"

struct sym_dwarf *sym_dwarf_open(int fd, size_t *bytes)
{
	(void)fd;
	(void)bytes;
	return NULL;
}

size_t sym_dwarf_resolve(struct sym_dwarf *d, uint64_t vaddr,
			 struct sym_dwarf_frame *out, size_t max)
{
	(void)d;
	(void)vaddr;
	(void)out;
	(void)max;
	return 0;
}

void sym_dwarf_free(struct sym_dwarf *d)
{
	(void)d;
}
