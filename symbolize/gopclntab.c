/* SPDX-License-Identifier: MIT */
/*
 * gopclntab: Go functions, file:line and inlined calls from the table the
 * Go runtime keeps for its own tracebacks (.gopclntab), which stays in a
 * binary stripped of its symbols and DWARF (go build -ldflags='-s -w').
 * Go 1.18 and later (header magic 0xfffffff0, 0xfffffff1 from 1.20),
 * little-endian, 64-bit.
 *
 * The header leads to the function table (entry offsets from the first
 * text address, sorted), each function's record (name, file and line
 * tables, per-PC data) and the name, file and compile-unit tables. A
 * per-PC table is a run of (value delta, PC delta) varint pairs starting
 * at value -1 at the function's entry. Inlined calls come from the
 * function's inline tree, which lives outside the table (in the binary's
 * read-only data, "go:func.*"), at an offset from a base address only the
 * runtime's module data holds: that record is found by the pointer to the
 * table it starts with, and checked against the header.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym_internal.h"

#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u
#define HDR_SIZE 72           /* 8 bytes, then 8 pointer-sized fields */
#define PCDATA_INLTREE 2      /* per-PC index into the inline tree */
#define FUNCDATA_INLTREE 3    /* the inline tree's offset from go:func.* */
#define INLINE_DEPTH_MAX 64
/* The word of the module data holding go:func.*, by header magic: after
 * 6 slices and 18 (1.18, 1.19) or 20 (1.20 on: coverage counters) words. */
#define MODDATA_GOFUNC_118 38
#define MODDATA_GOFUNC_120 40
#define MODDATA_TEXT 22

struct sym_gopcln {
	const uint8_t *tab;   /* the table */
	size_t len;
	const uint8_t *gofunc; /* go:func.*, NULL when not found */
	size_t gofunc_len;
	bool v120;
	uint8_t quantum;
	uint64_t nfunc;
	uint64_t text;        /* address of entry offset 0 */
	uint64_t funcname, cu, file, pc, func; /* region offsets in tab */
	void *map;            /* the file's mapping (sym_gopcln_open) */
	size_t map_len;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* A NUL-terminated string at offset @off of region @base, or NULL when it
 * runs past the table. */
static const char *str_at(const struct sym_gopcln *g, uint64_t base,
			  uint64_t off)
{
	if (base > g->len || off >= g->len - base)
		return NULL;
	const char *s = (const char *)g->tab + base + off;
	return memchr(s, '\0', g->len - base - off) ? s : NULL;
}

/* Reads the header of the table @tab (@len bytes) into @g. Returns 0,
 * -ENOENT when it is not a table of Go 1.18 or later, -EINVAL when its
 * regions lie outside it. */
static int parse(struct sym_gopcln *g, const void *tab, size_t len,
		 const void *gofunc, size_t gofunc_len)
{
	const uint8_t *t = tab;
	memset(g, 0, sizeof(*g));
	if (len < HDR_SIZE)
		return -ENOENT;
	uint32_t magic = rd32(t);
	if ((magic != MAGIC_118 && magic != MAGIC_120) || t[4] || t[5] ||
	    t[6] == 0 || t[7] != 8)
		return -ENOENT;
	g->tab = t;
	g->len = len;
	g->v120 = magic == MAGIC_120;
	g->quantum = t[6];
	g->nfunc = rd64(t + 8);
	g->text = rd64(t + 24);
	g->funcname = rd64(t + 32);
	g->cu = rd64(t + 40);
	g->file = rd64(t + 48);
	g->pc = rd64(t + 56);
	g->func = rd64(t + 64);
	/* the function table: nfunc + 1 pairs of 32-bit offsets */
	if (g->func > len || g->nfunc >= (len - g->func) / 8 ||
	    g->funcname > len || g->cu > len || g->file > len || g->pc > len)
		return -EINVAL;
	g->gofunc = gofunc;
	g->gofunc_len = gofunc ? gofunc_len : 0;
	return 0;
}

/* Reads an unsigned varint at *@p (below @end). False past the end. */
static bool varint(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint32_t v = 0;
	for (unsigned shift = 0; *p < end && shift < 35; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* The value the per-PC table at @off gives for @pc in a function entered
 * at @entry, or -1 when it holds none. */
static int32_t pcvalue(const struct sym_gopcln *g, uint32_t off,
		       uint64_t entry, uint64_t pc)
{
	if (off == 0 || g->pc > g->len || off >= g->len - g->pc)
		return -1;
	const uint8_t *p = g->tab + g->pc + off, *end = g->tab + g->len;
	uint64_t at = entry;
	int32_t val = -1;
	for (bool first = true;; first = false) {
		uint32_t uv, pcd;
		if (p < end && *p == 0 && !first)
			return -1; /* the end: @pc lies past the function */
		if (!varint(&p, end, &uv) || !varint(&p, end, &pcd))
			return -1;
		/* zig-zag; wraps like the runtime's int32 arithmetic */
		val = (int32_t)((uint32_t)val + (-(uv & 1) ^ (uv >> 1)));
		at += (uint64_t)pcd * g->quantum;
		if (pc < at)
			return val;
	}
}

/* One function's record. */
struct gofunc_rec {
	uint64_t entry;
	const uint8_t *rec;
	uint32_t npcdata;
	uint8_t nfuncdata;
};

/* The function holding @pc. */
static bool find_func(const struct sym_gopcln *g, uint64_t pc,
		      struct gofunc_rec *f)
{
	if (pc < g->text || g->nfunc == 0)
		return false;
	uint64_t off = pc - g->text;
	const uint8_t *ft = g->tab + g->func;
	if (off >= rd32(ft + 8 * g->nfunc)) /* the end of the last one */
		return false;
	uint64_t lo = 0, hi = g->nfunc;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (rd32(ft + 8 * mid) <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (rd32(ft + 8 * lo) > off)
		return false;
	uint64_t fo = g->func + rd32(ft + 8 * lo + 4);
	size_t fixed = g->v120 ? 44 : 40;
	if (fo > g->len || g->len - fo < fixed)
		return false;
	f->rec = g->tab + fo;
	f->entry = g->text + rd32(f->rec);
	f->npcdata = rd32(f->rec + 28);
	f->nfuncdata = f->rec[fixed - 1];
	/* its per-PC and funcdata offsets follow */
	if ((uint64_t)f->npcdata + f->nfuncdata > (g->len - fo - fixed) / 4)
		return false;
	return true;
}

static uint32_t pcdata_off(const struct sym_gopcln *g,
			   const struct gofunc_rec *f, uint32_t i)
{
	return i < f->npcdata ? rd32(f->rec + (g->v120 ? 44 : 40) + 4 * i) : 0;
}

/* The file of @pc in @f ("?" when unknown), and its line in *@line. */
static const char *file_line(const struct sym_gopcln *g,
			     const struct gofunc_rec *f, uint64_t pc,
			     uint32_t *line)
{
	int32_t fno = pcvalue(g, rd32(f->rec + 20), f->entry, pc);
	int32_t ln = pcvalue(g, rd32(f->rec + 24), f->entry, pc);
	uint64_t cu = rd32(f->rec + 32);
	*line = ln > 0 ? (uint32_t)ln : 0;
	if (fno < 0 || g->cu > g->len ||
	    cu + (uint64_t)fno >= (g->len - g->cu) / 4)
		return NULL;
	uint32_t off = rd32(g->tab + g->cu + 4 * (cu + (uint64_t)fno));
	return off == UINT32_MAX ? NULL : str_at(g, g->file, off);
}

/* The inline tree of @f, NULL when it has none (or go:func.* is
 * unknown); the entries it may hold in *@n. */
static const uint8_t *inline_tree(const struct sym_gopcln *g,
				  const struct gofunc_rec *f, size_t *n)
{
	if (!g->gofunc || f->npcdata <= PCDATA_INLTREE ||
	    f->nfuncdata <= FUNCDATA_INLTREE)
		return NULL;
	uint32_t off = rd32(f->rec + (g->v120 ? 44 : 40) + 4 * f->npcdata +
			    4 * FUNCDATA_INLTREE);
	if (off == UINT32_MAX || off >= g->gofunc_len)
		return NULL;
	*n = (g->gofunc_len - off) / (g->v120 ? 16 : 20);
	return g->gofunc + off;
}

size_t sym_gopcln_resolve(const struct sym_gopcln *g, uint64_t vaddr,
			  struct sym_dwarf_frame *out, size_t max)
{
	struct gofunc_rec f;
	if (!g || max == 0 || !find_func(g, vaddr, &f))
		return 0;
	size_t ntree = 0, n = 0;
	const uint8_t *tree = inline_tree(g, &f, &ntree);
	uint64_t pc = vaddr;
	/* each inlined call, innermost first, then the function itself at
	 * the instruction that stands for the outermost call */
	for (int depth = 0; tree && depth < INLINE_DEPTH_MAX && n + 1 < max;
	     depth++) {
		int32_t ix = pcvalue(g, pcdata_off(g, &f, PCDATA_INLTREE),
				     f.entry, pc);
		if (ix < 0 || (size_t)ix >= ntree)
			break;
		const uint8_t *ic = tree + (size_t)ix * (g->v120 ? 16 : 20);
		uint32_t name = rd32(ic + (g->v120 ? 4 : 12));
		uint32_t parent_pc = rd32(ic + (g->v120 ? 8 : 16));
		out[n].name = str_at(g, g->funcname, name);
		out[n].file = file_line(g, &f, pc, &out[n].line);
		out[n].lang = PROF_LANG_GO;
		n++;
		pc = f.entry + parent_pc;
	}
	out[n].name = str_at(g, g->funcname, rd32(f.rec + 4));
	out[n].file = file_line(g, &f, pc, &out[n].line);
	out[n].lang = PROF_LANG_GO;
	return n + 1;
}

/* The mapped bytes at address @vaddr of the ELF file mapped at @map
 * (through its program headers), and how many follow in *@avail. */
static const uint8_t *at_vaddr(Elf *e, const uint8_t *map, size_t map_len,
			       uint64_t vaddr, size_t *avail)
{
	size_t nph;
	if (elf_getphdrnum(e, &nph) != 0)
		return NULL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		uint64_t off = ph.p_offset + (vaddr - ph.p_vaddr);
		if (off >= map_len)
			return NULL;
		uint64_t seg_end = ph.p_offset + ph.p_filesz;
		*avail = (size_t)((seg_end < map_len ? seg_end : map_len) - off);
		return map + off;
	}
	return NULL;
}

/* go:func.* from the runtime's module data: the word in a writable
 * section that points at the table and whose neighbours agree with the
 * header. NULL when none does. */
static const uint8_t *find_gofunc(Elf *e, const uint8_t *map, size_t map_len,
				  uint64_t tab_vaddr, const struct sym_gopcln *g,
				  size_t *len)
{
	size_t word = g->v120 ? MODDATA_GOFUNC_120 : MODDATA_GOFUNC_118;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_WRITE) || sh.sh_offset > map_len ||
		    sh.sh_size > map_len - sh.sh_offset)
			continue;
		const uint8_t *s = map + sh.sh_offset;
		for (size_t i = 0; i + 8 * (word + 1) <= sh.sh_size; i += 8) {
			const uint8_t *w = s + i;
			if (rd64(w) != tab_vaddr ||
			    rd64(w + 8) != tab_vaddr + g->funcname ||
			    rd64(w + 8 * MODDATA_TEXT) != g->text)
				continue;
			return at_vaddr(e, map, map_len, rd64(w + 8 * word), len);
		}
	}
	return NULL;
}

struct sym_gopcln *sym_gopcln_open(int fd, size_t *bytes)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Shdr sh;
	Elf_Scn *scn = e ? sym_elf_section(e, ".gopclntab", &sh) : NULL;
	if (!scn || sh.sh_type != SHT_PROGBITS) {
		elf_end(e);
		return NULL;
	}
	size_t map_len = (size_t)st.st_size;
	void *map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	struct sym_gopcln *g = calloc(1, sizeof(*g));
	if (map == MAP_FAILED || !g || sh.sh_offset > map_len ||
	    sh.sh_size > map_len - sh.sh_offset ||
	    parse(g, (uint8_t *)map + sh.sh_offset, sh.sh_size, NULL, 0) != 0) {
		if (map != MAP_FAILED)
			munmap(map, map_len);
		free(g);
		elf_end(e);
		return NULL;
	}
	g->gofunc = find_gofunc(e, map, map_len, sh.sh_addr, g, &g->gofunc_len);
	g->map = map;
	g->map_len = map_len;
	*bytes += sizeof(*g) + sh.sh_size;
	elf_end(e);
	return g;
}

struct sym_gopcln *sym_gopcln_mem(const void *tab, size_t len,
				  const void *gofunc, size_t gofunc_len)
{
	struct sym_gopcln *g = calloc(1, sizeof(*g));
	if (g && parse(g, tab, len, gofunc, gofunc_len) != 0) {
		free(g);
		return NULL;
	}
	return g;
}

void sym_gopcln_free(struct sym_gopcln *g)
{
	if (!g)
		return;
	if (g->map)
		munmap(g->map, g->map_len);
	free(g);
}
