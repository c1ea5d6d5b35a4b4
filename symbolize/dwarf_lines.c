/* SPDX-License-Identifier: MIT */
/*
 * dwarf_lines: function, file:line and inline chains from DWARF via libdw,
 * the way `eu-addr2line -f -i` reports them: the innermost scope's line
 * from the line table, each inlined subroutine as its own frame, and the
 * caller's line taken from the inline's DW_AT_call_file/DW_AT_call_line.
 *
 * Compile units are found through a table of their address ranges built
 * once per file (dwarf_unit_ranges.c; files without .debug_aranges work
 * too); within a unit,
 * a table of its functions' ranges, built the first time the unit is
 * used, leads to the function, and the scope chain is found by walking
 * down from it — never the whole unit per address.
 *
 * Compressed sections are inflated as far as lookups need (dwarf_inflate.c)
 * rather than whole when the file is opened.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"
#include "symbolize/dwarf_inflate.h"
#include "symbolize/dwarf_unit_ranges.h"

#define SCOPE_DEPTH_MAX 64

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

/* Hides the debug sections symbolization never reads (location lists,
 * macros, name indexes) from libdw, so it does not inflate them when they
 * are compressed: the biggest part of the cold cost. The change stays in
 * our private copy-on-write mapping. */
static void hide_unused(Elf *e)
{
	static const char *const unused[] = {
		".debug_loc", ".debug_loclists", ".debug_macro",
		".debug_macinfo", ".debug_pubnames", ".debug_pubtypes",
		".debug_gnu_pubnames", ".debug_gnu_pubtypes", ".debug_names",
		".debug_frame", NULL,
	};
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		for (size_t i = 0; n && unused[i]; i++) {
			if (strcmp(n, unused[i]) != 0)
				continue;
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
			break;
		}
	}
}

static struct sym_dwarf *open_fd(int fd, size_t *bytes, bool lazy)
{
	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (!e)
		return NULL;
	hide_unused(e);
	struct sym_inflate *z = lazy ? sym_inflate_attach(e) : NULL;
	Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	struct sym_dwarf *d = dw ? calloc(1, sizeof(*d)) : NULL;
	if (!d) {
		dwarf_end(dw);
		elf_end(e);
		sym_inflate_free(z);
		return NULL;
	}
	d->elf = e;
	d->dw = dw;
	d->z = z;
	*bytes += debug_bytes(e);
	/* everything is read from the mapping: the caller may close @fd */
	elf_cntl(e, ELF_C_FDDONE);
	return d;
}

struct sym_dwarf *sym_dwarf_open(int fd, size_t *bytes)
{
	return open_fd(fd, bytes, true);
}

struct sym_dwarf *sym_dwarf_open_whole(int fd, size_t *bytes)
{
	return open_fd(fd, bytes, false);
}

size_t sym_dwarf_inflated(const struct sym_dwarf *d)
{
	return d ? sym_inflate_bytes(d->z) : 0;
}

void sym_dwarf_free(struct sym_dwarf *d)
{
	if (!d)
		return;
	dwarf_end(d->dw);
	elf_end(d->elf);
	sym_inflate_free(d->z); /* after the Elf that pointed into it */
	free(d->ranges);
	for (size_t i = 0; i < d->ncus; i++)
		free(d->cus[i].fns);
	free(d->cus);
	sym_arena_free(&d->names);
	free(d);
}

/* With lazily inflated sections: inflates what the unit whose header is at
 * @hdr needs (its line program too) and returns its DIE. */
static bool lazy_unit(struct sym_dwarf *d, uint64_t hdr, struct cu_info *c,
		      Dwarf_Die *cudie)
{
	if (c->die_off == 0) {
		Dwarf_Off next;
		size_t hsize;
		if (sym_inflate_unit(d->z, hdr) != 0 ||
		    dwarf_next_unit(d->dw, hdr, &next, &hsize, NULL, NULL,
				    NULL, NULL, NULL, NULL) != 0)
			return false;
		c->die_off = hdr + hsize;
	}
	if (!dwarf_offdie(d->dw, c->die_off, cudie))
		return false;
	if (!c->line_ready) {
		Dwarf_Attribute a;
		Dwarf_Word off;
		if (dwarf_formudata(dwarf_attr(cudie, DW_AT_stmt_list, &a),
				    &off) == 0 &&
		    sym_inflate_line(d->z, off) != 0)
			return false;
		c->line_ready = true;
	}
	return true;
}

/* Finds the CU holding @addr: its DIE and its index. */
static bool find_cu(struct sym_dwarf *d, uint64_t addr, Dwarf_Die *cudie,
		    uint32_t *cu)
{
	const struct cu_range *r = sym_dwarf_unit_at(d, addr);
	if (!r)
		return false;
	*cu = r->cu;
	if (!d->hdr_offs)
		return dwarf_offdie(d->dw, r->off, cudie) != NULL;
	return lazy_unit(d, r->off, &d->cus[r->cu], cudie);
}

static int fn_push(struct cu_info *c, uint64_t lo, uint64_t hi, uint64_t off)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct fn_range *nf = realloc(c->fns, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		c->fns = nf;
		c->cap = cap;
	}
	c->fns[c->n++] = (struct fn_range){ .lo = lo, .hi = hi, .off = off };
	return 0;
}

/* Collects the functions with code below @parent, not descending into
 * function bodies (namespaces and classes hold functions too). */
static int index_children(struct cu_info *c, Dwarf_Die *parent, int depth)
{
	Dwarf_Die ch;
	if (depth > 16 || dwarf_child(parent, &ch) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&ch);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&ch, off, &base, &lo, &hi)) > 0)
				if (lo < hi &&
				    fn_push(c, lo, hi, dwarf_dieoffset(&ch)) != 0)
					return -ENOMEM;
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_module ||
			   tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type ||
			   tag == DW_TAG_union_type) {
			if (index_children(c, &ch, depth + 1) != 0)
				return -ENOMEM;
		}
	} while (dwarf_siblingof(&ch, &ch) == 0);
	return 0;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1; /* outer first */
	/* equal ranges (aliases in assembler units): the first DIE wins, and
	 * the search below takes the last candidate */
	return x->off > y->off ? -1 : (x->off < y->off);
}

/* Finds the function DIE holding @addr in unit @c. */
static bool find_fn(struct sym_dwarf *d, struct cu_info *c, Dwarf_Die *cudie,
		    uint64_t addr, Dwarf_Die *fn)
{
	if (!c->indexed) {
		c->indexed = true;
		index_children(c, cudie, 0);
		if (c->n > 1)
			qsort(c->fns, c->n, sizeof(*c->fns), fn_cmp);
		d->fn_bytes += c->cap * sizeof(*c->fns);
	}
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < c->fns[mid].lo)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
		const struct fn_range *f = &c->fns[lo - 1];
		if (addr >= f->lo && addr < f->hi)
			return dwarf_offdie(d->dw, f->off, fn) != NULL;
	}
	return false;
}

/* Walks down from function @fn to the innermost scope holding @addr.
 * Fills @chain outermost first and returns its length. */
static int scope_chain(Dwarf_Die *fn, uint64_t addr, Dwarf_Die *chain,
		       int max)
{
	int n = 0;
	chain[n++] = *fn;
	while (n < max) {
		Dwarf_Die ch;
		bool found = false;
		if (dwarf_child(&chain[n - 1], &ch) != 0)
			break;
		do {
			int tag = dwarf_tag(&ch);
			if (tag != DW_TAG_lexical_block &&
			    tag != DW_TAG_inlined_subroutine &&
			    tag != DW_TAG_try_block && tag != DW_TAG_catch_block &&
			    tag != DW_TAG_with_stmt && tag != DW_TAG_entry_point)
				continue;
			if (dwarf_haspc(&ch, addr) == 1) {
				chain[n++] = ch;
				found = true;
				break;
			}
		} while (dwarf_siblingof(&ch, &ch) == 0);
		if (!found)
			break;
	}
	return n;
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
	uint32_t cu;
	if (!d || max == 0)
		return 0;
	if (!find_cu(d, vaddr, &cudie, &cu))
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
	/* The function holding @vaddr, then the scopes inside it down to
	 * the innermost: inlined subroutines become frames, innermost first,
	 * each caller at the inline's call site. */
	Dwarf_Die fn, chain[SCOPE_DEPTH_MAX];
	int ns = find_fn(d, &d->cus[cu], &cudie, vaddr, &fn) ?
		scope_chain(&fn, vaddr, chain, SCOPE_DEPTH_MAX) : 0;
	Dwarf_Files *files = NULL;
	size_t nfiles;
	if (ns > 1 && dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
		files = NULL;
	size_t n = 0;
	for (int i = ns - 1; i >= 0 && n < max; i--) {
		int tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram && tag != DW_TAG_entry_point)
			continue;
		out[n++] = (struct sym_dwarf_frame){
			.name = die_name(&chain[i]), .file = file,
			.line = line, .lang = lang };
		if (tag != DW_TAG_inlined_subroutine)
			break;
		file = line_file(d, &cudie, call_site(&chain[i], files, &line));
	}
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
	uint32_t cu;
	if (!d || !find_cu(d, vaddr, &cudie, &cu))
		return -ENOENT;
	Dwarf_Line *l = dwarf_getsrc_die(&cudie, vaddr);
	Dwarf_Addr a;
	if (!l || dwarf_lineaddr(l, &a) != 0)
		return -ENOENT;
	*row = a;
	return 0;
}
