/* SPDX-License-Identifier: MIT */
/* Functions of an ELF file by name, at their file offsets (elf_funcs.h). */
#include "elf_funcs.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sym_internal.h"

/* The file offset of virtual address @v: in the PT_LOAD that maps it.
 * 0 when none does. */
static uint64_t file_offset(Elf *e, uint64_t v)
{
	size_t nph;

	if (elf_getphdrnum(e, &nph) != 0)
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr <= v && v < ph.p_vaddr + ph.p_filesz)
			return v - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* Fills the offsets still 0 from the symbol table of type @type.
 * Returns how many it filled. */
static int from_table(Elf *e, Elf64_Word type, const char *const *names, size_t n,
		      uint64_t *offs)
{
	Elf_Scn *scn = NULL;
	int found = 0;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			for (size_t k = 0; name && k < n; k++) {
				if (offs[k] || strcmp(name, names[k]))
					continue;
				offs[k] = file_offset(e, sym.st_value);
				found += offs[k] != 0;
			}
		}
	}
	return found;
}

int sym_elf_func_offsets(int fd, const char *const *names, size_t n, uint64_t *offs)
{
	Elf *e;
	int found;

	memset(offs, 0, n * sizeof(*offs));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return -EINVAL;
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -EINVAL;
	}
	found = from_table(e, SHT_DYNSYM, names, n, offs);
	if ((size_t)found < n)
		found += from_table(e, SHT_SYMTAB, names, n, offs);
	elf_end(e);
	return found;
}

static bool is_libc(const char *path, size_t len)
{
	const char *base = memrchr(path, '/', len);

	base = base ? base + 1 : path;
	len -= (size_t)(base - path);
	return (len >= 7 && !memcmp(base, "libc.so", 7)) ||
	       (len >= 5 && !memcmp(base, "libc-", 5));
}

/* Looks for @names[0] in @file; copies it to @path with its offsets when
 * it defines it. Returns 1 when it does, 0 when not. */
static int try_module(const char *file, const char *const *names, size_t n,
		      char *path, size_t len, uint64_t *offs)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	int found;

	if (fd < 0)
		return 0;
	found = sym_elf_func_offsets(fd, names, n, offs);
	close(fd);
	if (found <= 0 || !offs[0])
		return 0;
	snprintf(path, len, "%s", file);
	return 1;
}

int sym_proc_func_offsets(pid_t pid, const char *const *names, size_t n, char *path,
			  size_t len, uint64_t *offs)
{
	char maps[64], line[PATH_MAX + 256], last[PATH_MAX + 64] = "";
	char file[PATH_MAX + 64], libc[PATH_MAX + 64] = "";
	FILE *f;
	int rc = -ENOENT;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (rc == -ENOENT && fgets(line, sizeof(line), f)) {
		struct sym_maps_line ml;

		if (sym_maps_parse_line(line, strcspn(line, "\n"), &ml) || !ml.exec ||
		    !ml.path_len || ml.path[0] != '/' || ml.deleted)
			continue;
		snprintf(file, sizeof(file), "/proc/%d/root%.*s", (int)pid,
			 (int)ml.path_len, ml.path);
		if (!strcmp(file, last))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		if (is_libc(ml.path, ml.path_len)) {
			snprintf(libc, sizeof(libc), "%s", file);
			continue;
		}
		if (try_module(file, names, n, path, len, offs))
			rc = 0;
	}
	fclose(f);
	if (rc == -ENOENT && libc[0] && try_module(libc, names, n, path, len, offs))
		rc = 0;
	if (rc == 0 && strlen(path) + 1 >= len)
		rc = -E2BIG;
	return rc;
}
