/* SPDX-License-Identifier: MIT */
/*
 * dwarf_unit_ranges: the table of compile unit address ranges that leads
 * dwarf_lines.c to the unit of an address (see dwarf_unit_ranges.h).
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

static int range_push(struct sym_dwarf *d, uint64_t lo, uint64_t hi,
		      uint64_t off, uint32_t cu)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256;
		struct cu_range *nr = realloc(d->ranges, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		d->ranges = nr;
		d->cap = cap;
	}
	d->ranges[d->n++] = (struct cu_range){ .lo = lo, .hi = hi, .off = off,
					       .cu = cu };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : (x->hi > y->hi);
}

static int cu_add(struct sym_dwarf *d, uint32_t *idx)
{
	if (d->ncus == d->capcus) {
		size_t cap = d->capcus ? d->capcus * 2 : 256;
		struct cu_info *nc = realloc(d->cus, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		d->cus = nc;
		d->capcus = cap;
	}
	*idx = (uint32_t)d->ncus;
	d->cus[d->ncus++] = (struct cu_info){ .fns = NULL };
	return 0;
}

/* From .debug_aranges: cheap, no unit is decoded. Consecutive ranges of
 * one unit share its cu_info. Returns 0, or -ENOENT without aranges. */
static int index_from_aranges(struct sym_dwarf *d)
{
	Dwarf_Aranges *ar;
	size_t na;
	if (dwarf_getaranges(d->dw, &ar, &na) != 0 || na == 0)
		return -ENOENT;
	uint64_t last_off = UINT64_MAX;
	uint32_t idx = 0;
	for (size_t i = 0; i < na; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off off;
		if (!a || dwarf_getarangeinfo(a, &start, &len, &off) != 0 ||
		    len == 0)
			continue;
		if (off != last_off) {
			/* aranges are sorted by address: a unit may come back */
			uint32_t found = UINT32_MAX;
			for (size_t k = d->n; k-- > 0 && d->n - k < 64;)
				if (d->ranges[k].off == off)
					found = d->ranges[k].cu;
			if (found != UINT32_MAX)
				idx = found;
			else if (cu_add(d, &idx) != 0)
				return -ENOMEM;
			last_off = off;
		}
		if (range_push(d, start, start + len, off, idx) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* From the units themselves, for files without .debug_aranges. */
static void index_from_units(struct sym_dwarf *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	while (dwarf_get_units(d->dw, cu, &cu, NULL, &unit_type, &cudie,
			       NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		uint32_t idx;
		if (cu_add(d, &idx) != 0)
			return;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo < hi && range_push(d, lo, hi,
						  dwarf_dieoffset(&cudie),
						  idx) != 0)
				return;
		}
	}
}

/* The data of section @name, unless it has none or is still compressed. */
static Elf_Data *section_data(Elf *e, const char *name)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_elf_section(e, name, &sh);
	if (!scn || sh.sh_type == SHT_NOBITS ||
	    (sh.sh_flags & (SHF_GROUP | SHF_COMPRESSED)))
		return NULL;
	return elf_getdata(scn, NULL);
}

static uint64_t rd_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/* One set of .debug_aranges at @p (of @end): its ranges, keyed by the
 * unit's header offset. Returns the next set, or NULL when malformed. */
static const uint8_t *arange_set(struct sym_dwarf *d, const uint8_t *p,
				 const uint8_t *end, uint64_t info_size)
{
	const uint8_t *hdr = p;
	if (end - p < 4)
		return NULL;
	uint64_t len = rd_le(p, 4);
	unsigned osize = 4;
	p += 4;
	if (len == 0xffffffffu) {
		if (end - p < 8)
			return NULL;
		len = rd_le(p, 8);
		osize = 8;
		p += 8;
	} else if (len >= 0xfffffff0u) {
		return NULL;
	}
	if (len > (uint64_t)(end - p) || len < 4 + osize)
		return NULL;
	const uint8_t *set_end = p + len;
	uint64_t off = rd_le(p + 2, osize);
	if (rd_le(p, 2) != 2 || off >= info_size || set_end - p < 4 + osize)
		return NULL;
	p += 2 + osize;
	unsigned asize = p[0];
	if (asize != 4 && asize != 8)
		return NULL;
	p += 2; /* and the segment selector size, unused */
	size_t pad = (size_t)(p - hdr) % (2 * asize);
	p += pad ? 2 * asize - pad : 0;
	uint32_t idx;
	if (cu_add(d, &idx) != 0)
		return NULL;
	for (;;) {
		if (set_end - p < 2 * (ptrdiff_t)asize)
			return NULL;
		uint64_t start = rd_le(p, asize), n = rd_le(p + asize, asize);
		p += 2 * asize;
		if (start == 0 && n == 0)
			return set_end;
		if (n != 0 && range_push(d, start, start + n, off, idx) != 0)
			return NULL;
	}
}

/* With sections inflated lazily: .debug_aranges read here, the ranges
 * keyed by unit header offsets (the DIE offsets need the headers, which
 * may not be inflated yet). Returns 0, or -ENOENT without usable aranges. */
static int index_from_raw_aranges(struct sym_dwarf *d)
{
	if (sym_inflate_small(d->z) != 0)
		return -ENOENT;
	Elf_Data *ad = section_data(d->elf, ".debug_aranges");
	Elf_Data *id = section_data(d->elf, ".debug_info");
	if (!ad || !id || !ad->d_buf || ad->d_size == 0)
		return -ENOENT;
	const uint8_t *p = ad->d_buf, *end = p + ad->d_size;
	while (p && p < end)
		p = arange_set(d, p, end, id->d_size);
	if (!p || d->n == 0)
		return -ENOENT;
	d->hdr_offs = true;
	return 0;
}

static void build_index(struct sym_dwarf *d)
{
	d->indexed = true;
	int rc = d->z ? index_from_raw_aranges(d) : index_from_aranges(d);
	if (rc != 0) {
		d->n = 0;
		d->hdr_offs = false;
		sym_inflate_all(d->z); /* libdw reads every unit now */
		index_from_units(d);
	}
	if (d->n > 1)
		qsort(d->ranges, d->n, sizeof(*d->ranges), range_cmp);
	for (size_t i = 0; i < d->n; i++)
		if (d->ranges[i].hi > d->max_hi)
			d->max_hi = d->ranges[i].hi;
}

const struct cu_range *sym_dwarf_unit_at(struct sym_dwarf *d, uint64_t addr)
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
		return NULL;
	const struct cu_range *r = NULL;
	/* ranges of different CUs may nest (rare): look back a few */
	for (size_t k = 0, i = lo; k < 16 && i > 0 && !r; k++, i--)
		if (addr >= d->ranges[i - 1].lo && addr < d->ranges[i - 1].hi)
			r = &d->ranges[i - 1];
	/* In a gap between units (padding between functions): the unit
	 * before it, as libdwfl does; past the last unit: none. */
	if (!r && lo == d->n && addr >= d->max_hi)
		return NULL;
	return r ? r : &d->ranges[lo - 1];
}
