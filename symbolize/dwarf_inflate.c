/* SPDX-License-Identifier: MIT */
/*
 * dwarf_inflate: compressed debug sections inflated as far as lookups need.
 *
 * libdw inflates every compressed .debug_* section whole when it opens a
 * file; for libc's separate debug file (Debian's libc6-dbg) that is 8.6 MB
 * of zlib output before the first line number, most of it .debug_info for
 * units no sample ever lands in. Here each compressed section is given to
 * libdw as a buffer of its inflated size, reserved but untouched (pages
 * nobody writes cost nothing), and filled from the front as lookups need:
 *
 * - .debug_info up to the end of the unit looked up. libdw finds a unit by
 *   reading every unit header before it, so the prefix is what it reads.
 * - .debug_abbrev up to the end of the last abbreviation table those units
 *   use (libdw reads each unit DIE's tag while walking the headers).
 * - .debug_line up to the end of the unit's line program.
 * - the rest (strings, range lists, aranges) whole at the first lookup:
 *   they are small and read at any offset.
 *
 * A unit whose abbreviations allow references outside it (ref_addr,
 * ref_sig8, indirect forms, supplementary files) could lead libdw into
 * bytes not yet inflated, so the first such unit makes everything whole;
 * so does anything this file cannot parse, leaving libdw to judge it.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include "symbolize/dwarf_inflate.h"

#define CHUNK (64u << 10) /* inflate at least this much at a time */

enum role { ROLE_OTHER, ROLE_INFO, ROLE_ABBREV, ROLE_LINE };

/* One section: inflated (@zs live until its end) or plain (@done ==
 * @size from the start, never freed here). */
struct lazy_sec {
	uint8_t *buf;
	size_t size, map_len;
	size_t done;
	z_stream zs;
	bool live;
	bool failed;
	bool plain;
	enum role role;
	Elf_Scn *scn;  /* the section and the data libdw will be given */
	Elf_Data *data;
};

struct sym_inflate {
	struct lazy_sec *secs;
	size_t n;
	struct lazy_sec *info, *abbrev, *line; /* NULL when absent */
	bool small_done;     /* every ROLE_OTHER section whole */
	bool all_done;       /* every section whole */
	uint64_t walked;     /* first unit header not read yet */
	size_t abbrev_need;  /* end of the tables the walked units use */
	uint64_t last_table; /* abbreviation table scanned last */
	size_t bytes;
};

static enum role role_of(const char *name)
{
	if (strcmp(name, ".debug_info") == 0)
		return ROLE_INFO;
	if (strcmp(name, ".debug_abbrev") == 0)
		return ROLE_ABBREV;
	if (strcmp(name, ".debug_line") == 0)
		return ROLE_LINE;
	return ROLE_OTHER;
}

/* Reads @scn's compression header from its (compressed) data; returns
 * the inflated size and alignment, or false when not zlib. */
static bool zlib_header(Elf *e, Elf_Data *d, uint64_t *size, uint64_t *align,
			size_t *hdr)
{
	if (gelf_getclass(e) == ELFCLASS64) {
		Elf64_Chdr ch;
		if (d->d_size < sizeof(ch))
			return false;
		memcpy(&ch, d->d_buf, sizeof(ch));
		*size = ch.ch_size;
		*align = ch.ch_addralign;
		*hdr = sizeof(ch);
		return ch.ch_type == ELFCOMPRESS_ZLIB;
	}
	Elf32_Chdr ch;
	if (d->d_size < sizeof(ch))
		return false;
	memcpy(&ch, d->d_buf, sizeof(ch));
	*size = ch.ch_size;
	*align = ch.ch_addralign;
	*hdr = sizeof(ch);
	return ch.ch_type == ELFCOMPRESS_ZLIB;
}

/* Sets up @s to inflate @d's stream; nothing in @e changes yet. */
static int sec_init(struct lazy_sec *s, Elf *e, Elf_Data *d)
{
	uint64_t size, align;
	size_t hdr;
	/* zlib expands at most 1032:1: a header claiming more is not what
	 * the stream holds, and is left to libdw to refuse. */
	if (!zlib_header(e, d, &size, &align, &hdr) || size == 0 ||
	    size > SIZE_MAX / 2 || d->d_size - hdr > UINT32_MAX ||
	    size / 1032 > d->d_size - hdr + 1)
		return -ENOTSUP;
	size_t page = 4096;
	s->size = (size_t)size;
	s->map_len = (s->size + page - 1) / page * page;
	void *m = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -ENOMEM;
	s->buf = m;
	memset(&s->zs, 0, sizeof(s->zs));
	s->zs.next_in = (Bytef *)d->d_buf + hdr;
	s->zs.avail_in = (uInt)(d->d_size - hdr);
	if (inflateInit(&s->zs) != Z_OK) {
		munmap(s->buf, s->map_len);
		s->buf = NULL;
		return -ENOMEM;
	}
	s->live = true;
	return 0;
}

/* Points the section's data at @s's buffer, as if libelf had inflated
 * it. */
static void sec_swap(struct lazy_sec *s, Elf *e)
{
	uint64_t size, align;
	size_t hdr;
	Elf_Data *d = s->data;
	zlib_header(e, d, &size, &align, &hdr);
	GElf_Shdr sh;
	if (gelf_getshdr(s->scn, &sh)) {
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh.sh_size = size;
		gelf_update_shdr(s->scn, &sh);
	}
	d->d_buf = s->buf;
	d->d_size = s->size;
	d->d_type = ELF_T_BYTE;
	d->d_off = 0;
	d->d_align = align ? align : 1;
}

static void sec_free(struct lazy_sec *s)
{
	if (s->plain)
		return;
	if (s->live)
		inflateEnd(&s->zs);
	if (s->buf)
		munmap(s->buf, s->map_len);
}

void sym_inflate_free(struct sym_inflate *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->n; i++)
		sec_free(&z->secs[i]);
	free(z->secs);
	free(z);
}

/* Walks @e's debug sections: compressed ones are set up to be inflated
 * here, plain info/abbrev/line are recorded as they are. Nothing in @e
 * changes. Returns 0 or -errno. */
static int collect(struct sym_inflate *z, Elf *e)
{
	size_t shstrndx, k = 0;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return -EINVAL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_GROUP))
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (!n || strncmp(n, ".debug_", 7) != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		struct lazy_sec *s = &z->secs[k];
		*s = (struct lazy_sec){ .role = role_of(n), .scn = scn,
					.data = d };
		if (!(sh.sh_flags & SHF_COMPRESSED)) {
			if (s->role == ROLE_OTHER)
				continue;
			s->buf = d->d_buf;
			s->size = s->done = d->d_size;
			s->plain = true;
			k++;
			continue;
		}
		int rc = sec_init(s, e, d);
		if (rc == -ENOTSUP)
			continue; /* libdw inflates it itself */
		k++;
		if (rc != 0) {
			z->n = k;
			return rc;
		}
	}
	z->n = k;
	return 0;
}

static size_t count_sections(Elf *e)
{
	size_t n = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)))
		n++;
	return n;
}

struct sym_inflate *sym_inflate_attach(Elf *e)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return NULL; /* the readers below are little-endian */
	struct sym_inflate *z = calloc(1, sizeof(*z));
	size_t max = count_sections(e);
	if (!z || max == 0 ||
	    !(z->secs = calloc(max, sizeof(*z->secs)))) {
		free(z);
		return NULL;
	}
	bool any = false;
	if (collect(z, e) != 0)
		goto fail;
	for (size_t i = 0; i < z->n; i++)
		any |= !z->secs[i].plain;
	if (!any)
		goto fail;
	for (size_t i = 0; i < z->n; i++) {
		struct lazy_sec *s = &z->secs[i];
		if (!s->plain)
			sec_swap(s, e);
		if (s->role == ROLE_INFO)
			z->info = s;
		else if (s->role == ROLE_ABBREV)
			z->abbrev = s;
		else if (s->role == ROLE_LINE)
			z->line = s;
	}
	z->last_table = UINT64_MAX;
	return z;
fail:
	sym_inflate_free(z);
	return NULL;
}

/* Inflates @s until at least @upto bytes (clamped to its size) are there.
 * Returns 0 or -EIO. */
static int inflate_to(struct sym_inflate *z, struct lazy_sec *s, size_t upto)
{
	if (upto > s->size)
		upto = s->size;
	if (s->done >= upto)
		return 0;
	if (s->failed || !s->live)
		return -EIO;
	size_t goal = s->done + CHUNK > upto ? s->done + CHUNK : upto;
	if (goal > s->size)
		goal = s->size;
	while (s->done < goal) {
		/* avail_out is 32 bits: handed out at most 4 GiB at a time,
		 * and a pass that makes no progress is a broken stream (it
		 * would otherwise spin here for ever). */
		size_t want = goal - s->done;
		s->zs.next_out = s->buf + s->done;
		s->zs.avail_out = want < UINT_MAX ? (uInt)want : UINT_MAX;
		uInt in_before = s->zs.avail_in;
		int rc = inflate(&s->zs, Z_SYNC_FLUSH);
		size_t now = (size_t)(s->zs.next_out - s->buf);
		z->bytes += now - s->done;
		bool moved = now != s->done || s->zs.avail_in != in_before;
		s->done = now;
		if (rc == Z_STREAM_END) {
			inflateEnd(&s->zs);
			s->live = false;
			if (s->done != s->size)
				s->failed = true;
			break;
		}
		if ((rc != Z_OK && rc != Z_BUF_ERROR) || !moved) {
			s->failed = true;
			break;
		}
	}
	return s->done >= upto ? 0 : -EIO;
}

/* The same, without a call when the bytes are there already (the
 * abbreviation scan asks for every number it reads). */
static inline int ensure(struct sym_inflate *z, struct lazy_sec *s,
			 size_t upto)
{
	return upto <= s->done ? 0 : inflate_to(z, s, upto);
}

int sym_inflate_all(struct sym_inflate *z)
{
	if (!z || z->all_done)
		return 0;
	int err = 0;
	for (size_t i = 0; i < z->n; i++)
		if (ensure(z, &z->secs[i], z->secs[i].size) != 0)
			err = -EIO;
	z->all_done = true;
	z->small_done = true;
	return err;
}

static int small(struct sym_inflate *z)
{
	if (z->small_done)
		return 0;
	int err = 0;
	for (size_t i = 0; i < z->n; i++)
		if (z->secs[i].role == ROLE_OTHER &&
		    ensure(z, &z->secs[i], z->secs[i].size) != 0)
			err = -EIO;
	z->small_done = true;
	return err;
}

/* ---- reading what was inflated ---- */

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v; /* little-endian files: the only ones taken over here */
}

/* Reads an unsigned LEB128 at *@pos of @s, inflating as needed. */
static int uleb(struct sym_inflate *z, struct lazy_sec *s, size_t *pos,
		uint64_t *v)
{
	if (ensure(z, s, *pos + 16) != 0 && s->done <= *pos)
		return -EINVAL;
	uint64_t r = 0;
	for (int shift = 0; shift < 64 && *pos < s->done; shift += 7) {
		uint8_t b = s->buf[(*pos)++];
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

static bool outside_form(uint64_t form)
{
	return form == DW_FORM_ref_addr || form == DW_FORM_indirect ||
	       form == DW_FORM_ref_sig8 || form == DW_FORM_ref_sup4 ||
	       form == DW_FORM_ref_sup8 || form == DW_FORM_strp_sup ||
	       form == DW_FORM_GNU_ref_alt || form == DW_FORM_GNU_strp_alt;
}

/* Reads the abbreviation table at @off to its end: sets *@end, and
 * *@outside when a form may point outside the unit. */
static int scan_table(struct sym_inflate *z, size_t off, size_t *end,
		      bool *outside)
{
	struct lazy_sec *a = z->abbrev;
	size_t pos = off;
	uint64_t code, tag, attr, form, skip;
	for (;;) {
		if (uleb(z, a, &pos, &code) != 0)
			return -EINVAL;
		if (code == 0)
			break;
		if (uleb(z, a, &pos, &tag) != 0 || ++pos > a->done)
			return -EINVAL; /* tag, then the children byte */
		do {
			if (uleb(z, a, &pos, &attr) != 0 ||
			    uleb(z, a, &pos, &form) != 0)
				return -EINVAL;
			if (form == DW_FORM_implicit_const &&
			    uleb(z, a, &pos, &skip) != 0)
				return -EINVAL; /* the length is all we need */
			*outside |= outside_form(form);
		} while (attr != 0 || form != 0);
	}
	*end = pos;
	return 0;
}

struct unit {
	uint64_t next;       /* offset of the following unit */
	uint64_t abbrev_off;
};

static int read_unit(struct sym_inflate *z, uint64_t off, struct unit *u)
{
	struct lazy_sec *s = z->info;
	if (s->size < 4 || off > s->size - 4)
		return -EINVAL;
	ensure(z, s, off + 32);
	if (s->done < off + 4)
		return -EINVAL;
	const uint8_t *p = s->buf + off;
	uint64_t len = rd(p, 4);
	uint64_t lsize = 4, osize = 4;
	if (len == 0xffffffffu) {
		if (s->done < off + 12)
			return -EINVAL;
		len = rd(p + 4, 8);
		lsize = 12;
		osize = 8;
	} else if (len >= 0xfffffff0u) {
		return -EINVAL;
	}
	if (len > s->size - off - lsize || len < 2)
		return -EINVAL;
	u->next = off + lsize + len;
	uint64_t version = rd(p + lsize, 2);
	/* DWARF 5: unit type and address size come before the offset */
	uint64_t at = lsize + (version >= 5 ? 4 : 2);
	if (version < 2 || version > 5 || at + osize > lsize + len ||
	    s->done < off + at + osize)
		return -EINVAL;
	u->abbrev_off = rd(p + at, (int)osize);
	return 0;
}

/* Reads the unit headers up to the one at @cu_off and scans their
 * abbreviation tables. Returns 0, 1 when a table has forms that reach
 * outside a unit, or -EINVAL. */
static int walk_to(struct sym_inflate *z, uint64_t cu_off)
{
	int outside = 0;
	while (z->walked <= cu_off) {
		struct unit u;
		if (read_unit(z, z->walked, &u) != 0)
			return -EINVAL;
		if (u.abbrev_off != z->last_table) {
			size_t end;
			bool out = false;
			if (!z->abbrev || u.abbrev_off >= z->abbrev->size ||
			    scan_table(z, (size_t)u.abbrev_off, &end, &out) != 0)
				return -EINVAL;
			z->last_table = u.abbrev_off;
			if (end > z->abbrev_need)
				z->abbrev_need = end;
			outside |= out;
		}
		if (z->walked < cu_off && u.next > cu_off)
			return -EINVAL; /* @cu_off is inside a unit */
		z->walked = u.next;
	}
	return outside;
}

int sym_inflate_unit(struct sym_inflate *z, uint64_t cu_off)
{
	if (!z || z->all_done)
		return 0;
	if (!z->info)
		return sym_inflate_all(z);
	int err = small(z);
	int rc = walk_to(z, cu_off);
	struct unit u;
	if (rc != 0 || read_unit(z, cu_off, &u) != 0)
		return sym_inflate_all(z); /* libdw judges the rest */
	if (ensure(z, z->info, (size_t)u.next) != 0 ||
	    (z->abbrev && ensure(z, z->abbrev, z->abbrev_need) != 0))
		err = -EIO;
	return err;
}

int sym_inflate_line(struct sym_inflate *z, uint64_t off)
{
	if (!z || z->all_done || !z->line || z->line->plain)
		return 0;
	struct lazy_sec *s = z->line;
	if (off >= s->size || s->size - off < 4)
		return -EINVAL;
	ensure(z, s, off + 12);
	if (s->done < off + 4)
		return -EIO;
	uint64_t len = rd(s->buf + off, 4), lsize = 4;
	if (len == 0xffffffffu && s->done >= off + 12) {
		len = rd(s->buf + off + 4, 8);
		lsize = 12;
	}
	if (len > s->size - off - lsize)
		return ensure(z, s, s->size); /* libdw judges it */
	return ensure(z, s, (size_t)(off + lsize + len));
}

int sym_inflate_small(struct sym_inflate *z)
{
	return z ? small(z) : 0;
}

size_t sym_inflate_bytes(const struct sym_inflate *z)
{
	return z ? z->bytes : 0;
}
