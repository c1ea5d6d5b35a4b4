/* SPDX-License-Identifier: MIT */
/*
 * vdso: names for frames in the [vdso] mapping. Every process on the host
 * maps the same vDSO image (it belongs to the running kernel), so our own
 * copy, found through the auxiliary vector, names everyone's.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "sym_internal.h"

/* The size of the ELF image at @base: the end of its section headers or
 * of its last segment, whichever is further. */
static size_t vdso_size(const unsigned char *base)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		size_t e = ph[i].p_offset + ph[i].p_filesz;
		if (ph[i].p_type == PT_LOAD && e > end)
			end = e;
	}
	return end;
}

static int vdso_load(struct sym_ctx *ctx)
{
	if (ctx->vdso)
		return 0;
	if (ctx->vdso_failed)
		return -ENOENT;
	ctx->vdso_failed = true;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -ENOENT;
	size_t len = vdso_size((const unsigned char *)base);
	if (len == 0 || len > (16u << 20))
		return -ENOENT;
	struct sym_symtab *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* work on a copy: libelf may not write, and the vDSO is read-only */
	void *copy = malloc(len);
	if (!copy) {
		free(t);
		return -ENOMEM;
	}
	memcpy(copy, (const void *)base, len);
	int err = sym_elf_load_symbols_mem(copy, len, t);
	free(copy);
	if (err || t->n == 0) {
		sym_symtab_free(t);
		free(t);
		return -ENOENT;
	}
	ctx->vdso = t;
	ctx->vdso_failed = false;
	return 0;
}

int sym_vdso_lookup(struct sym_ctx *ctx, uint64_t off, struct sym_frame *out)
{
	if (vdso_load(ctx) != 0)
		return -ENOENT;
	/* the vDSO is linked at 0: offsets are addresses */
	const struct sym_elfsym *s = sym_symtab_find(ctx->vdso, off);
	if (!s)
		return -ENOENT;
	*out = (struct sym_frame){
		.name = sym_symtab_name(ctx->vdso, s), .module = "[vdso]",
		.cls = PROF_CLASS_SYSTEM, .lang = PROF_LANG_C,
	};
	return 0;
}
