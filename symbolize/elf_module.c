/* SPDX-License-Identifier: MIT */
/*
 * elf_module: what symbolization needs from one ELF file, read with
 * libelf — load segments, build-id, .gnu_debuglink and function symbols.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

static Elf *elf_open_fd(int fd)
{
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

/* How much naming the file itself carries: 2 = DWARF, 1 = .symtab,
 * 0 = dynamic symbols at most. */
static uint8_t richness(Elf *e)
{
	size_t shstrndx;
	uint8_t r = 0;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_type == SHT_SYMTAB && r < 1)
			r = 1;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && strcmp(n, ".debug_info") == 0)
			r = 2;
	}
	return r;
}

void sym_build_id_hex(const uint8_t *id, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * len] = '\0';
}

size_t sym_elf_build_id(Elf *e, uint8_t *out, size_t max)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + noff, "GNU", 4) != 0)
				continue;
			size_t n = nh.n_descsz;
			if (n == 0 || n > SYM_BUILD_ID_MAX)
				continue;
			if (n > max)
				n = max;
			memcpy(out, (char *)d->d_buf + doff, n);
			return n;
		}
	}
	return 0;
}

int sym_elf_read_header(int fd, struct sym_module *m)
{
	Elf *e = elf_open_fd(fd);
	if (!e)
		return -ENOEXEC;
	int err = 0;
	GElf_Ehdr eh;
	size_t nph;
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph) != 0) {
		err = -ENOEXEC;
		goto out;
	}
	m->e_type = eh.e_type;
	m->segs = calloc(nph ? nph : 1, sizeof(*m->segs));
	if (!m->segs) {
		err = -ENOMEM;
		goto out;
	}
	m->nsegs = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct sym_seg){
			.off = ph.p_offset, .vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz, .memsz = ph.p_memsz };
	}
	m->build_id_len = sym_elf_build_id(e, m->build_id, sizeof(m->build_id));
	m->richness = richness(e);
out:
	elf_end(e);
	return err;
}

uint64_t sym_module_vaddr(const struct sym_module *m, uint64_t off)
{
	/* The segment whose file bytes hold @off, as the program headers
	 * define it (vaddr = off - p_offset + p_vaddr). Not the segment whose
	 * pages do: segments may share a file page (LLD puts the read-only
	 * and the executable ones both on page 0), and the kernel maps that
	 * page once per segment. */
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_seg *s = &m->segs[i];
		if (off >= s->off && off - s->off < s->filesz)
			return off - s->off + s->vaddr;
	}
	/* Padding between segments is never code: the first segment whose
	 * mapped pages reach it. */
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_seg *s = &m->segs[i];
		if (off >= (s->off & ~(uint64_t)0xfff) && off < s->off + s->filesz)
			return off - s->off + s->vaddr;
	}
	/* no PT_LOAD holds it: treat offsets as addresses */
	return off;
}

static int sym_rank(const GElf_Sym *s)
{
	int r = 0;
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL: r = 30; break;
	case STB_WEAK: r = 20; break;
	default: r = 10; break;
	}
	if (GELF_ST_TYPE(s->st_info) == STT_FUNC ||
	    GELF_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
		r += 2;
	if (s->st_size > 0)
		r += 100;
	return r;
}

static bool sym_wanted(Elf *e, const GElf_Sym *s, const char *name,
		       uint64_t *limit)
{
	int type = GELF_ST_TYPE(s->st_info);
	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE ||
	    s->st_value == 0 || !name || !name[0])
		return false;
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return false;
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(e, s->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
		return false;
	if (!limit)
		return true;
	/* an unsized symbol reaches to its section's end, that end's byte
	 * included (libdwfl's rule, which eu-addr2line shows) */
	uint64_t end = sh.sh_addr + sh.sh_size + 1;
	*limit = s->st_value >= sh.sh_addr && s->st_value < end ?
		end - s->st_value : 0;
	return true;
}

static int load_table(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
		      struct sym_symtab *t)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || sh->sh_type == SHT_NOBITS ||
	    sh->sh_entsize == 0)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			break;
		const char *name = elf_strptr(e, sh->sh_link, s.st_name);
		uint64_t limit = 0;
		if (!sym_wanted(e, &s, name, s.st_size ? NULL : &limit))
			continue;
		uint32_t rank = (uint32_t)sym_rank(&s);
		uint64_t size = s.st_size;
		if (size == 0 && limit) { /* unsized: at most to section end */
			size = limit;
			rank |= SYM_RANK_LIMIT;
		}
		int err = sym_symtab_push(t, s.st_value, size, name, rank);
		if (err)
			return err;
	}
	return 0;
}

static int load_symbols_elf(Elf *e, struct sym_symtab *t, bool *has_symtab)
{
	int err = 0;
	*has_symtab = false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			*has_symtab = true;
		err = load_table(e, scn, &sh, t);
		if (err)
			break;
	}
	sym_symtab_finish(t);
	return err;
}

int sym_elf_load_symbols(int fd, struct sym_symtab *t, bool *has_symtab)
{
	Elf *e = elf_open_fd(fd);
	if (!e)
		return -ENOEXEC;
	int err = load_symbols_elf(e, t, has_symtab);
	elf_end(e);
	return err;
}

int sym_elf_load_symbols_mem(const void *buf, size_t len,
			     struct sym_symtab *t)
{
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)buf, len);
	if (!e)
		return -ENOEXEC;
	bool has_symtab;
	int err = elf_kind(e) == ELF_K_ELF ?
		load_symbols_elf(e, t, &has_symtab) : -ENOEXEC;
	elf_end(e);
	return err;
}

Elf_Scn *sym_elf_section(Elf *e, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		const char *n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

int sym_elf_debuglink(int fd, char *buf, size_t len)
{
	Elf *e = elf_open_fd(fd);
	if (!e)
		return -ENOEXEC;
	int err = -ENOENT;
	GElf_Shdr sh;
	Elf_Scn *scn = sym_elf_section(e, ".gnu_debuglink", &sh);
	/* A NOBITS section claims a size but has no bytes. */
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t sl = d && d->d_buf ? strnlen(d->d_buf, d->d_size) : 0;
	if (d && d->d_buf && d->d_size >= 2 && sl != 0 && sl != d->d_size &&
	    sl + 1 <= len && !memchr(d->d_buf, '/', sl)) {
		memcpy(buf, d->d_buf, sl + 1);
		err = 0;
	}
	elf_end(e);
	return err;
}
