/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the CFI compiler (symbolize/cfi_compile.c) with damaged copies of
 * a real binary: the no-frame-pointer fixture, stripped, built into this
 * target as cfi_seed (mk/cfi.mk). The input is a list of 4-byte edits:
 *
 *   byte 0  bits 0-1: where (0 the whole file, 1 .eh_frame,
 *                     2 .eh_frame_hdr, 3 the ELF, program and section
 *                     headers); bit 6: set the byte instead of XOR;
 *                     bit 7: cut the file there instead
 *   byte 1-2 offset in that place (little-endian, modulo its size)
 *   byte 3  the value
 *
 * An empty input is the intact binary. Whatever the damage, a table that
 * compiles must keep the contract of bpf/unwind.h.
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern const unsigned char cfi_seed[];
extern const unsigned long cfi_seed_len;

struct region {
	size_t off, len;
};

/* The seed's places worth damaging, found from its own (intact)
 * section headers. */
static void regions(struct region r[4])
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)cfi_seed;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(cfi_seed + eh->e_shoff);
	const char *names = (const char *)cfi_seed + sh[eh->e_shstrndx].sh_offset;

	r[0] = (struct region){ 0, cfi_seed_len };
	r[1] = r[2] = r[0];
	r[3] = (struct region){ 0, eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) };
	for (int i = 0; i < eh->e_shnum; i++) {
		if (!strcmp(names + sh[i].sh_name, ".eh_frame"))
			r[1] = (struct region){ sh[i].sh_offset, sh[i].sh_size };
		if (!strcmp(names + sh[i].sh_name, ".eh_frame_hdr"))
			r[2] = (struct region){ sh[i].sh_offset, sh[i].sh_size };
	}
}

static void check(const struct sym_cfi_table *t)
{
	if (t->n == 0 || !t->rows || t->base & 0xfff || t->build_id_len > 20)
		__builtin_trap();
	for (size_t i = 0; i < t->n; i++) {
		const struct hearth_cfi_row *r = &t->rows[i];

		if (r->cfa_rule > HEARTH_CFA_NONE || r->fp_rule > HEARTH_FP_LOST)
			__builtin_trap();
		if (i && (t->rows[i - 1].pc >= r->pc ||
			  (t->rows[i - 1].cfa_rule == r->cfa_rule &&
			   t->rows[i - 1].cfa_off == r->cfa_off &&
			   t->rows[i - 1].fp_rule == r->fp_rule &&
			   t->rows[i - 1].fp_off == r->fp_off)))
			__builtin_trap(); /* sorted, unique, merged */
		if (sym_cfi_find(t, r->pc) != r)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct region where[4];
	struct sym_cfi_table t;
	size_t len = cfi_seed_len;
	uint8_t *img = malloc(len);
	int fd;

	if (!img)
		return 0;
	memcpy(img, cfi_seed, len);
	regions(where);
	for (size_t i = 0; i + 4 <= size; i += 4) {
		const struct region *r = &where[data[i] & 3];
		size_t off = r->off + ((size_t)data[i + 1] | (size_t)data[i + 2] << 8) % (r->len ? r->len : 1);

		if (off >= len)
			continue;
		if (data[i] & 0x80)
			len = off;
		else if (data[i] & 0x40)
			img[off] = data[i + 3];
		else
			img[off] ^= data[i + 3];
	}
	fd = memfd_create("fuzz-cfi", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, img, len) == (ssize_t)len && sym_cfi_compile(fd, &t) == 0) {
		check(&t);
		sym_cfi_table_free(&t);
	}
	if (fd >= 0)
		close(fd);
	free(img);
	return 0;
}
