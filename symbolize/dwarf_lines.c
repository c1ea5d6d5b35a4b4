/* SPDX-License-Identifier: MIT */
/*
 * dwarf_lines: function, file:line and inline chains from DWARF via libdw,
 * the way `eu-addr2line -f -i` reports them: the innermost scope's line
 * from the line table, each inlined subroutine as its own frame, and the
 * caller's line taken from the inline's DW_AT_call_file/DW_AT_call_line.
 *
 * Compile units are found through a table of their address ranges built
 * once per file (so files without .debug_aranges work too).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

struct cu_range {
	uint64_t lo, hi;  /* [lo, hi) */
	uint64_t off;     /* offset of the CU DIE */
};

struct sym_dwarf {
	Elf *elf;
	Dwarf *dw;
	struct cu_range *ranges;
	size_t n, cap;
	uint64_t max_hi; /* end of the highest range */
	bool indexed;
	struct sym_arena names; /* joined file names */
	const char *last_joined_src, *last_joined_dir, *last_joined;
};

static size_t debug_bytes(Elf *e)
{
	size_t shstrndx, total = 0;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (!n || (strncmp(n, ".debug_", 7) != 0 &&
			   strncmp(n, ".zdebug_", 8) != 0))
			continue;
		GElf_Chdr ch;
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    gelf_getchdr(scn, &ch) != NULL)
			total += ch.ch_size; /* libdw inflates it */
		else
			total += sh.sh_size;
	}
	return total;
}

struct sym_dwarf *sym_dwarf_open(int fd, size_t *bytes)
{
	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return NULL;
	Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!dw) {
		elf_end(e);
		return NULL;
	}
	struct sym_dwarf *d = calloc(1, sizeof(*d));
	if (!d) {
		dwarf_end(dw);
		elf_end(e);
		return NULL;
	}
	d->elf = e;
	d->dw = dw;
	*bytes += debug_bytes(e);
	return d;
}

void sym_dwarf_free(struct sym_dwarf *d)
{
	if (!d)
		return;
	dwarf_end(d->dw);
	elf_end(d->elf);
	free(d->ranges);
	sym_arena_free(&d->names);
	free(d);
}

static int range_push(struct sym_dwarf *d, uint64_t lo, uint64_t hi,
		      uint64_t off)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256;
		struct cu_range *nr = realloc(d->ranges, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		d->ranges = nr;
		d->cap = cap;
	}
	d->ranges[d->n++] = (struct cu_range){ .lo = lo, .hi = hi, .off = off };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : (x->hi > y->hi);
}

static void build_index(struct sym_dwarf *d)
{
	d->indexed = true;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	while (dwarf_get_units(d->dw, cu, &cu, NULL, &unit_type, &cudie,
			       NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo < hi && range_push(d, lo, hi,
						  dwarf_dieoffset(&cudie)) != 0)
				return;
		}

	}
	if (d->n > 1)
		qsort(d->ranges, d->n, sizeof(*d->ranges), range_cmp);
	for (size_t i = 0; i < d->n; i++)
		if (d->ranges[i].hi > d->max_hi)
			d->max_hi = d->ranges[i].hi;
}

/* Finds the CU DIE holding @addr. */
static bool find_cu(struct sym_dwarf *d, uint64_t addr, Dwarf_Die *cudie)
{
	if (!d->indexed)
		build_index(d);
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < d->ranges[mid].lo)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return false;
	/* ranges of different CUs may nest (rare): look back a few */
	for (size_t k = 0, i = lo; k < 16 && i > 0; k++, i--) {
		const struct cu_range *r = &d->ranges[i - 1];
		if (addr >= r->lo && addr < r->hi)
			return dwarf_offdie(d->dw, r->off, cudie) != NULL;
	}
	/* In a gap between units (padding between functions): the unit
	 * before it, as libdwfl does; past the last unit: none. */
	if (lo == d->n && addr >= d->max_hi)
		return false;
	return dwarf_offdie(d->dw, d->ranges[lo - 1].off, cudie) != NULL;
}

static uint8_t lang_of(Dwarf_Die *cudie)
{
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C89: case DW_LANG_C: case DW_LANG_C99: case DW_LANG_C11:
#ifdef DW_LANG_C17
	case DW_LANG_C17:
#endif
		return PROF_LANG_C;
	case DW_LANG_C_plus_plus: case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11: case DW_LANG_C_plus_plus_14:
#ifdef DW_LANG_C_plus_plus_17
	case DW_LANG_C_plus_plus_17:
#endif
#ifdef DW_LANG_C_plus_plus_20
	case DW_LANG_C_plus_plus_20:
#endif
		return PROF_LANG_CPP;
	case DW_LANG_Rust:
		return PROF_LANG_RUST;
	case DW_LANG_Go:
		return PROF_LANG_GO;
	case DW_LANG_Mips_Assembler:
		return PROF_LANG_ASM;
	default:
		return PROF_LANG_UNKNOWN;
	}
}

/* The linkage name when there is one (what eu-addr2line prints), else
 * the plain name, following abstract origins and specifications. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(
		dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(
			dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_diename(die);
	return n;
}

static const char *call_site(Dwarf_Die *die, Dwarf_Files *files,
			     uint32_t *line)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	const char *file = NULL;
	*line = 0;
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a),
				     &v) == 0)
		file = dwarf_filesrc(files, v, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v) == 0 &&
	    v <= UINT32_MAX)
		*line = (uint32_t)v;
	return file;
}

/* The line table's file, prefixed with the CU's DW_AT_comp_dir when
 * relative (as eu-addr2line prints it). Joined names live in the arena. */
static const char *line_file(struct sym_dwarf *d, Dwarf_Die *cudie,
			     const char *file)
{
	if (!file || file[0] == '/')
		return file;
	Dwarf_Attribute a;
	const char *dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	if (!dir || !dir[0])
		return file;
	if (d->last_joined_src == file && d->last_joined_dir == dir)
		return d->last_joined;
	size_t dl = strlen(dir), fl = strlen(file);
	char *buf = malloc(dl + fl + 2);
	if (!buf)
		return file;
	memcpy(buf, dir, dl);
	buf[dl] = '/';
	memcpy(buf + dl + 1, file, fl + 1);
	const char *j = sym_arena_strdup(&d->names, buf, dl + fl + 1);
	free(buf);
	if (!j)
		return file;
	d->last_joined_src = file;
	d->last_joined_dir = dir;
	d->last_joined = j;
	return j;
}

size_t sym_dwarf_resolve(struct sym_dwarf *d, uint64_t vaddr,
			 struct sym_dwarf_frame *out, size_t max)
{
	Dwarf_Die cudie;
	if (!d || max == 0)
		return 0;
	if (!find_cu(d, vaddr, &cudie))
		return 0;
	uint8_t lang = lang_of(&cudie);
	const char *file = NULL;
	uint32_t line = 0;
	Dwarf_Line *l = dwarf_getsrc_die(&cudie, vaddr);
	if (l) {
		int ln = 0;
		file = line_file(d, &cudie, dwarf_linesrc(l, NULL, NULL));
		if (dwarf_lineno(l, &ln) == 0 && ln > 0)
			line = (uint32_t)ln;
	}
	/* The innermost scope at @vaddr, then its physical parents: the
	 * inlined subroutines and the function they were inlined into
	 * (dwarf_getscopes alone follows abstract origins instead). */
	Dwarf_Die *scopes = NULL, *phys = NULL;
	int ns = dwarf_getscopes(&cudie, vaddr, &scopes);
	if (ns > 0)
		ns = dwarf_getscopes_die(&scopes[0], &phys);
	free(scopes);
	Dwarf_Files *files = NULL;
	size_t nfiles;
	if (ns > 0 && dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
		files = NULL;
	size_t n = 0;
	for (int i = 0; i < ns && n < max; i++) {
		int tag = dwarf_tag(&phys[i]);
		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram && tag != DW_TAG_entry_point)
			continue;
		out[n++] = (struct sym_dwarf_frame){
			.name = die_name(&phys[i]), .file = file,
			.line = line, .lang = lang };
		if (tag != DW_TAG_inlined_subroutine)
			break;
		file = line_file(d, &cudie, call_site(&phys[i], files, &line));
	}
	free(phys);
	if (n == 0) {
		/* a line but no function DIE: keep the line, name from ELF */
		out[0] = (struct sym_dwarf_frame){
			.name = NULL, .file = file, .line = line, .lang = lang };
		n = 1;
	}
	return n;
}

int sym_dwarf_line_addr(struct sym_dwarf *d, uint64_t vaddr, uint64_t *row)
{
	Dwarf_Die cudie;
	if (!d || !find_cu(d, vaddr, &cudie))
		return -ENOENT;
	Dwarf_Line *l = dwarf_getsrc_die(&cudie, vaddr);
	Dwarf_Addr a;
	if (!l || dwarf_lineaddr(l, &a) != 0)
		return -ENOENT;
	*row = a;
	return 0;
}
