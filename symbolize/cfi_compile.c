/* SPDX-License-Identifier: MIT */
/*
 * cfi_compile: a module's .eh_frame and .debug_frame into the rows of
 * bpf/unwind.h. libdw interprets the CFI (dwarf_cfi_addrframe gives the
 * rule of one address and the range it holds for); this file only lists
 * the FDEs, walks each one row by row and says which rows a BPF walker
 * can follow.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/cfi.h"
#include "symbolize/sym_internal.h"

#define REG_RBP 6
#define REG_RSP 7
#define PAGE_MASK_4K 0xfffULL
#define MAX_EXEC_SEGS 8

/* dwarf_cfi_addrframe interprets an FDE from its start each time, so a
 * long FDE of many rows costs its length times its rows. Real files stay
 * far below this many bytes interpreted per byte of CFI; a hostile one
 * stops there and its remaining FDEs become HEARTH_CFA_MORE rows. */
#define WORK_PER_CFI_BYTE 256
#define WORK_MIN (1ULL << 22)
/* Most bytes from a program's entry point that an END row covers when no
 * CFI does: an entry function (_start) clears rbp and calls the C start;
 * musl's is 22 bytes. */
#define ENTRY_MAX 64

enum { SRC_EH = 0, SRC_DEBUG = 1 };

struct fde {
	uint64_t start, end; /* ELF vaddr */
	uint32_t len;        /* bytes of the FDE: its cost per row read */
	uint8_t src;
};

struct compile {
	Elf *elf;
	Dwarf *dw;
	Dwarf_CFI *cfi[2];   /* SRC_EH (ours to end), SRC_DEBUG (dw's) */
	uint64_t base;
	uint64_t seg_lo[MAX_EXEC_SEGS], seg_hi[MAX_EXEC_SEGS];
	size_t nsegs;
	struct fde *fdes;
	size_t nfdes, fdes_cap;
	struct hearth_cfi_row *rows;
	size_t n, cap;
	uint64_t work;       /* bytes of CFI libdw may still interpret */
};

/* ---- FDE listing ------------------------------------------------------ */

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool read_fixed(const uint8_t **p, const uint8_t *end, unsigned size,
		       bool is_signed, uint64_t *v)
{
	if ((size_t)(end - *p) < size)
		return false;
	*v = 0;
	for (unsigned i = 0; i < size; i++)
		*v |= (uint64_t)(*p)[i] << (8 * i); /* little-endian only */
	if (is_signed && size < 8 && (*v >> (8 * size - 1)) & 1)
		*v |= ~0ULL << (8 * size);
	*p += size;
	return true;
}

/* Reads one pointer of encoding @enc (DW_EH_PE_*) at *@p, which lies at
 * ELF address @at. Only absolute and pc-relative values are accepted:
 * the others need bases an FDE's start never uses on x86-64. */
static bool read_ptr(uint8_t enc, const uint8_t **p, const uint8_t *end,
		     uint64_t at, uint64_t *v)
{
	bool ok;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: ok = read_fixed(p, end, 8, false, v); break;
	case DW_EH_PE_udata2: ok = read_fixed(p, end, 2, false, v); break;
	case DW_EH_PE_udata4: ok = read_fixed(p, end, 4, false, v); break;
	case DW_EH_PE_udata8: ok = read_fixed(p, end, 8, false, v); break;
	case DW_EH_PE_sdata2: ok = read_fixed(p, end, 2, true, v); break;
	case DW_EH_PE_sdata4: ok = read_fixed(p, end, 4, true, v); break;
	case DW_EH_PE_sdata8: ok = read_fixed(p, end, 8, true, v); break;
	case DW_EH_PE_uleb128: ok = read_uleb(p, end, v); break;
	case DW_EH_PE_sleb128: {
		const uint8_t *q = *p;

		ok = read_uleb(p, end, v);
		if (ok && *p - q < 10 && (*p)[-1] & 0x40)
			*v |= ~0ULL << (7 * (*p - q));
		break;
	}
	default: return false;
	}
	if (!ok)
		return false;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: return true;
	case DW_EH_PE_pcrel: *v += at; return true;
	default: return false;
	}
}

/* The encoding of the FDE addresses under the CIE at @off, from its
 * augmentation ("zR", "zPLR", ...). False for a CIE that cannot be read
 * or has augmentation this file does not know. */
static bool cie_encoding(const unsigned char *ident, Elf_Data *d, bool eh,
			 Dwarf_Off off, uint8_t *enc)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	const uint8_t *p, *end;
	uint64_t skip;

	if (dwarf_next_cfi(ident, d, eh, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e))
		return false;
	*enc = DW_EH_PE_absptr;
	if (e.cie.augmentation[0] == '\0')
		return true;
	if (e.cie.augmentation[0] != 'z' || !e.cie.augmentation_data)
		return false;
	p = e.cie.augmentation_data;
	end = p + e.cie.augmentation_data_size;
	for (const char *a = e.cie.augmentation + 1; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return false;
			*enc = *p++;
			break;
		case 'L':
			if (p++ >= end)
				return false;
			break;
		case 'P':
			if (p >= end)
				return false;
			skip = *p++;
			if (!read_ptr((uint8_t)(skip & 0x0f), &p, end, 0, &skip))
				return false;
			break;
		case 'S':
			break;
		default:
			return false;
		}
	}
	return true;
}

static int fde_push(struct compile *c, const struct fde *f)
{
	if (c->nfdes == c->fdes_cap) {
		size_t cap = c->fdes_cap ? c->fdes_cap * 2 : 1024;
		struct fde *v = realloc(c->fdes, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->fdes = v;
		c->fdes_cap = cap;
	}
	c->fdes[c->nfdes++] = *f;
	return 0;
}

/* Lists the FDEs of one CFI section. Entries that cannot be read are
 * skipped: libdw will not find them either. */
static int list_fdes(struct compile *c, Elf_Scn *scn, uint8_t src)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(c->elf, NULL);
	bool eh = src == SRC_EH;
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	uint8_t enc = 0;
	bool cie_ok = false;
	GElf_Shdr sh;
	Elf_Data *d;
	int rc;

	if (!gelf_getshdr(scn, &sh) ||
	    ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0))
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !ident)
		return 0;
	c->work += (uint64_t)d->d_size * WORK_PER_CFI_BYTE;
	for (;;) {
		Dwarf_CFI_Entry e;
		struct fde f = { .src = src };
		const uint8_t *p;
		uint64_t range;

		next = off;
		rc = dwarf_next_cfi(ident, d, eh, off, &next, &e);
		if (rc > 0 || (rc < 0 && (next == (Dwarf_Off)-1 || next <= off)))
			break;
		off = next;
		if (rc < 0 || dwarf_cfi_cie_p(&e))
			continue;
		if (e.fde.CIE_pointer != cie_off) {
			cie_off = e.fde.CIE_pointer;
			cie_ok = cie_encoding(ident, d, eh, cie_off, &enc);
		}
		p = e.fde.start;
		if (!cie_ok ||
		    !read_ptr(enc, &p, e.fde.end,
			      sh.sh_addr + (uint64_t)(p - (const uint8_t *)d->d_buf), &f.start) ||
		    !read_ptr(enc & 0x0f, &p, e.fde.end, 0, &range) ||
		    range == 0 || f.start + range < f.start)
			continue;
		f.end = f.start + range;
		f.len = (uint32_t)(e.fde.end - e.fde.start);
		if ((rc = fde_push(c, &f)) < 0)
			return rc;
	}
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (int)x->src - (int)y->src; /* .eh_frame first */
}

/* ---- rules -------------------------------------------------------------- */

/* The offset N of a register saved at CFA + N (DWARF "offset(N)"), as
 * libdw spells it. False for any other rule. */
static bool saved_at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1)
		*off = 0;
	else if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		*off = (int64_t)ops[1].number;
	else if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
		*off = (int64_t)ops[1].number;
	else
		return false;
	return true;
}

static bool fits_s16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* GNU ld's lazy PLT: CFA = rsp + 8, plus 8 once the entry has pushed its
 * index, at offset 11 of each 16-byte entry (HEARTH_CFA_PLT). */
static bool is_plt_cfa(const Dwarf_Op *o, size_t n)
{
	static const uint8_t atoms[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15,
		DW_OP_and, DW_OP_lit11, DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };

	if (n != sizeof(atoms))
		return false;
	for (size_t i = 0; i < n; i++)
		if (o[i].atom != atoms[i])
			return false;
	return o[0].number == 8 && o[1].number == 0;
}

static void cfa_rule(Dwarf_Frame *fr, struct hearth_cfi_row *r)
{
	Dwarf_Op *ops;
	size_t n;
	uint64_t reg;
	int64_t off;

	r->cfa_rule = HEARTH_CFA_MORE;
	if (dwarf_frame_cfa(fr, &ops, &n) != 0 || n == 0)
		return;
	if (is_plt_cfa(ops, n)) {
		r->cfa_rule = HEARTH_CFA_PLT;
		return;
	}
	if (n != 1)
		return;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return;
	}
	if (!fits_s16(off))
		return;
	/* The return address is at CFA - 8: below the stack pointer it
	 * would be garbage (a thread's first instructions say so). */
	if (reg == REG_RSP && off >= 8)
		r->cfa_rule = HEARTH_CFA_SP;
	else if (reg == REG_RBP)
		r->cfa_rule = HEARTH_CFA_FP;
	else
		return;
	r->cfa_off = (int16_t)off;
}

/* The rule of the row @fr describes, in @r (pc left to the caller). */
static void classify(Dwarf_Frame *fr, struct hearth_cfi_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;
	bool signal = false;
	int ra = dwarf_frame_info(fr, NULL, NULL, &signal);

	memset(r, 0, sizeof(*r));
	r->cfa_rule = HEARTH_CFA_MORE;
	if (ra < 0 || signal || dwarf_frame_register(fr, ra, mem, &ops, &n) != 0)
		return;
	if (n == 0 && ops == mem) {
		r->cfa_rule = HEARTH_CFA_END; /* return address undefined */
		return;
	}
	if (!saved_at_cfa(ops, n, &off) || off != -8)
		return;
	if (dwarf_frame_register(fr, REG_RBP, mem, &ops, &n) != 0)
		return;
	if (n == 0 && ops == NULL) {
		r->fp_rule = HEARTH_FP_SAME;
	} else if (n == 0 && ops == mem) {
		r->fp_rule = HEARTH_FP_LOST;
	} else if (saved_at_cfa(ops, n, &off) && fits_s16(off)) {
		r->fp_rule = HEARTH_FP_AT_CFA;
		r->fp_off = (int16_t)off;
	} else {
		return; /* rbp in another register, or computed */
	}
	cfa_rule(fr, r);
}

/* ---- rows --------------------------------------------------------------- */

/* Zeroes what a rule does not use, so equal rules compare equal. */
static void normalize(struct hearth_cfi_row *r)
{
	if (r->cfa_rule != HEARTH_CFA_SP && r->cfa_rule != HEARTH_CFA_FP)
		r->cfa_off = 0;
	if (r->cfa_rule == HEARTH_CFA_END || r->cfa_rule == HEARTH_CFA_MORE ||
	    r->cfa_rule == HEARTH_CFA_NONE)
		r->fp_rule = HEARTH_FP_SAME;
	if (r->fp_rule != HEARTH_FP_AT_CFA)
		r->fp_off = 0;
	r->pad[0] = r->pad[1] = 0;
}

static bool same_rule(const struct hearth_cfi_row *a, const struct hearth_cfi_row *b)
{
	return a->cfa_rule == b->cfa_rule && a->cfa_off == b->cfa_off &&
	       a->fp_rule == b->fp_rule && a->fp_off == b->fp_off;
}

/* Appends @r for ELF address @vaddr (never below the last row's). A row
 * at the last row's pc replaces it: an FDE starting where the previous
 * one ended replaces the NONE row put there. */
static int emit(struct compile *c, uint64_t vaddr, struct hearth_cfi_row r)
{
	r.pc = (uint32_t)(vaddr - c->base);
	normalize(&r);
	if (c->n && c->rows[c->n - 1].pc == r.pc)
		c->n--;
	if (c->n && same_rule(&c->rows[c->n - 1], &r))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4096;
		struct hearth_cfi_row *v = realloc(c->rows, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->rows = v;
		c->cap = cap;
	}
	c->rows[c->n++] = r;
	return 0;
}

static int emit_rule(struct compile *c, uint64_t vaddr, uint8_t rule)
{
	return emit(c, vaddr, (struct hearth_cfi_row){ .cfa_rule = rule });
}

/* The rows of [@lo, @hi), a part of FDE @f. */
static int fde_rows(struct compile *c, const struct fde *f, uint64_t lo, uint64_t hi)
{
	Dwarf_CFI *cfi = c->cfi[f->src];
	uint64_t pc = lo;
	int rc;

	while (pc < hi) {
		struct hearth_cfi_row r;
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr start, end;
		uint64_t cost = (uint64_t)f->len + 64;

		if (!cfi || c->work < cost || dwarf_cfi_addrframe(cfi, pc, &fr) != 0)
			return emit_rule(c, pc, HEARTH_CFA_MORE);
		c->work -= cost;
		classify(fr, &r);
		if (dwarf_frame_info(fr, &start, &end, NULL) < 0 || end <= pc || end > hi)
			end = hi;
		free(fr);
		if ((rc = emit(c, pc, r)) < 0)
			return rc;
		pc = end;
	}
	return 0;
}

/* The executable segment holding @vaddr, or the first one above it. */
static size_t seg_at(const struct compile *c, uint64_t vaddr)
{
	size_t i = 0;

	while (i < c->nsegs && c->seg_hi[i] <= vaddr)
		i++;
	return i;
}

static int build_rows(struct compile *c)
{
	uint64_t covered = 0;
	int rc;

	if (c->nfdes)
		qsort(c->fdes, c->nfdes, sizeof(*c->fdes), fde_cmp);
	if (c->nsegs && (rc = emit_rule(c, c->seg_lo[0], HEARTH_CFA_NONE)) < 0)
		return rc;
	for (size_t i = 0; i < c->nfdes; i++) {
		const struct fde *f = &c->fdes[i];
		uint64_t lo = f->start > covered ? f->start : covered, hi = f->end;
		size_t s = seg_at(c, lo);

		/* Only the part inside one executable segment, and not what
		 * an earlier FDE (or .eh_frame) already described. */
		if (s == c->nsegs)
			continue;
		if (lo < c->seg_lo[s])
			lo = c->seg_lo[s];
		if (hi > c->seg_hi[s])
			hi = c->seg_hi[s];
		if (lo >= hi)
			continue;
		if ((rc = fde_rows(c, f, lo, hi)) < 0 ||
		    (rc = emit_rule(c, hi, HEARTH_CFA_NONE)) < 0)
			return rc;
		covered = hi;
	}
	return 0;
}

/* ---- the entry point ----------------------------------------------------- */

/* Whether @e is a program or the dynamic loader, not a library: ET_EXEC,
 * or ET_DYN with an interpreter, the PIE flag (a static PIE has no
 * interpreter), or needing no other file (the loader, which the kernel
 * enters for every dynamic program). A library's e_entry may point
 * anywhere in its text. */
static bool is_program(Elf *e, const GElf_Ehdr *eh)
{
	Elf_Scn *scn = NULL;
	bool needs = false;
	size_t nph;

	if (eh->e_type == ET_EXEC)
		return true;
	if (eh->e_type != ET_DYN || elf_getphdrnum(e, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)i, &dyn))
				continue;
			if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
				return true;
			needs |= dyn.d_tag == DT_NEEDED;
		}
	}
	return !needs;
}

/* The lowest address of a defined symbol above @vaddr (.symtab and
 * .dynsym), or UINT64_MAX when none is known. */
static uint64_t next_symbol(Elf *e, uint64_t vaddr)
{
	uint64_t best = UINT64_MAX;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    sym.st_shndx < SHN_LORESERVE && sym.st_value > vaddr &&
			    sym.st_value < best)
				best = sym.st_value;
		}
	}
	return best;
}

/* Inserts @r at index @at of the rows. */
static int insert_row(struct compile *c, size_t at, struct hearth_cfi_row r)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct hearth_cfi_row *v = realloc(c->rows, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->rows = v;
		c->cap = cap;
	}
	memmove(c->rows + at + 1, c->rows + at, (c->n - at) * sizeof(*c->rows));
	c->rows[at] = r;
	c->n++;
	return 0;
}

/* Drops each row whose rule is its predecessor's: an END row put before
 * the CFI's own END row (damaged CFI that starts past the entry point)
 * says nothing new, and the table's rows stay merged. */
static void merge_rows(struct compile *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		if (n == 0 || !same_rule(&c->rows[n - 1], &c->rows[i]))
			c->rows[n++] = c->rows[i];
	c->n = n;
}

/*
 * A program's entry function is where the kernel (or the dynamic loader)
 * jumps with a fresh stack: nothing called it, so a return address in it
 * is the outermost frame. glibc's _start says so in its CFI; musl's, the
 * dynamic loader's own (glibc's ld.so: every stack while it loads and
 * relocates a program) and hand-written ones have none, and their every
 * stack would need more.
 * When no CFI covers the entry point, an END row covers it, up to the
 * next row, the next symbol and ENTRY_MAX bytes, whichever comes first.
 */
static int mark_entry(struct compile *c, const GElf_Ehdr *eh)
{
	uint64_t entry = eh->e_entry, rel, end, sym;
	size_t s = seg_at(c, entry), k = 0;
	int rc;

	if (!entry || s == c->nsegs || entry < c->seg_lo[s] || entry < c->base ||
	    !is_program(c->elf, eh))
		return 0;
	rel = entry - c->base;
	while (k < c->n && c->rows[k].pc <= rel)
		k++;
	if (k == 0 || c->rows[k - 1].cfa_rule != HEARTH_CFA_NONE)
		return 0;
	end = k < c->n ? c->rows[k].pc : c->seg_hi[s] - c->base;
	if (end > rel + ENTRY_MAX)
		end = rel + ENTRY_MAX;
	sym = next_symbol(c->elf, entry);
	if (sym != UINT64_MAX && sym - c->base < end)
		end = sym - c->base;
	if (c->rows[k - 1].pc == rel) {
		c->rows[k - 1].cfa_rule = HEARTH_CFA_END;
		k--;
	} else if ((rc = insert_row(c, k, (struct hearth_cfi_row){ .pc = (uint32_t)rel,
								   .cfa_rule = HEARTH_CFA_END })) < 0) {
		return rc;
	}
	/* the gap's rest, when the entry function ends before it */
	if ((k + 1 < c->n ? end < c->rows[k + 1].pc : end < c->seg_hi[s] - c->base) &&
	    (rc = insert_row(c, k + 1, (struct hearth_cfi_row){ .pc = (uint32_t)end,
								.cfa_rule = HEARTH_CFA_NONE })) < 0)
		return rc;
	merge_rows(c);
	return 0;
}

/* ---- the file ----------------------------------------------------------- */

static int sort_segs(struct compile *c)
{
	for (size_t i = 1; i < c->nsegs; i++)
		for (size_t j = i; j > 0 && c->seg_lo[j] < c->seg_lo[j - 1]; j--) {
			uint64_t lo = c->seg_lo[j], hi = c->seg_hi[j];

			c->seg_lo[j] = c->seg_lo[j - 1];
			c->seg_hi[j] = c->seg_hi[j - 1];
			c->seg_lo[j - 1] = lo;
			c->seg_hi[j - 1] = hi;
		}
	/* Overlapping executable segments: the file is damaged. */
	for (size_t i = 1; i < c->nsegs; i++)
		if (c->seg_lo[i] < c->seg_hi[i - 1])
			return -EINVAL;
	return 0;
}

/* The module base and the executable segments, clipped to the 4 GiB a
 * row's pc spans. */
static int read_segments(struct compile *c)
{
	size_t nph;
	uint64_t base = UINT64_MAX;

	if (elf_getphdrnum(c->elf, &nph) != 0)
		return -EINVAL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(c->elf, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type == PT_LOAD && ph.p_vaddr < base)
			base = ph.p_vaddr;
	}
	if (base == UINT64_MAX)
		return -EINVAL;
	c->base = base & ~PAGE_MASK_4K;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		uint64_t hi;

		if (!gelf_getphdr(c->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || ph.p_memsz == 0)
			continue;
		if (ph.p_vaddr - c->base > UINT32_MAX)
			continue;
		hi = ph.p_vaddr + ph.p_memsz;
		if (hi < ph.p_vaddr || hi - c->base > UINT32_MAX)
			hi = c->base + UINT32_MAX;
		if (c->nsegs == MAX_EXEC_SEGS)
			return -EINVAL;
		c->seg_lo[c->nsegs] = ph.p_vaddr;
		c->seg_hi[c->nsegs++] = hi;
	}
	return sort_segs(c);
}

static Elf_Scn *section_named(Elf *e, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

static int open_cfi(struct compile *c)
{
	Elf_Scn *eh = section_named(c->elf, ".eh_frame");
	Elf_Scn *dbg = section_named(c->elf, ".debug_frame");
	int rc;

	if (eh) {
		c->cfi[SRC_EH] = dwarf_getcfi_elf(c->elf);
		if ((rc = list_fdes(c, eh, SRC_EH)) < 0)
			return rc;
	}
	if (dbg) {
		if ((rc = list_fdes(c, dbg, SRC_DEBUG)) < 0)
			return rc;
		c->dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
		c->cfi[SRC_DEBUG] = c->dw ? dwarf_getcfi(c->dw) : NULL;
	}
	if (!c->cfi[SRC_EH] && !c->cfi[SRC_DEBUG])
		return -ENOENT;
	return 0;
}

static int compile_elf(struct compile *c, struct sym_cfi_table *out)
{
	GElf_Ehdr eh;
	int rc;

	if (elf_kind(c->elf) != ELF_K_ELF || gelf_getclass(c->elf) != ELFCLASS64 ||
	    !gelf_getehdr(c->elf, &eh) || eh.e_machine != EM_X86_64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -EINVAL;
	if ((rc = read_segments(c)) < 0)
		return rc;
	c->work = WORK_MIN;
	if ((rc = open_cfi(c)) < 0 || (rc = build_rows(c)) < 0 || (rc = mark_entry(c, &eh)) < 0)
		return rc;
	if (c->n == 0)
		return -ENOENT;
	out->rows = c->rows;
	out->n = c->n;
	out->base = c->base;
	out->build_id_len = sym_elf_build_id(c->elf, out->build_id,
					     sizeof(out->build_id));
	c->rows = NULL;
	return 0;
}

int sym_cfi_compile(int fd, struct sym_cfi_table *out)
{
	struct compile c = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	c.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!c.elf)
		return -EINVAL;
	rc = compile_elf(&c, out);
	if (c.cfi[SRC_EH])
		dwarf_cfi_end(c.cfi[SRC_EH]);
	if (c.dw)
		dwarf_end(c.dw);
	elf_end(c.elf);
	free(c.fdes);
	free(c.rows);
	return rc;
}

void sym_cfi_table_free(struct sym_cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
