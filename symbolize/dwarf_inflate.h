/* SPDX-License-Identifier: MIT */
/*
 * dwarf_inflate: compressed DWARF sections inflated as far as lookups
 * need, instead of whole when libdw opens the file. Only symbolize/
 * includes this header.
 */
#ifndef HEARTH_SYM_DWARF_INFLATE_H
#define HEARTH_SYM_DWARF_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct sym_inflate;

/* Takes over the zlib-compressed debug sections of @e (opened with
 * ELF_C_READ_MMAP_PRIVATE, not yet given to libdw): each gets a buffer of
 * its inflated size, filled later, in place of its compressed bytes, so
 * libdw does not inflate it at dwarf_begin_elf(). Sections libdw must not
 * read are hidden (SHT_NOBITS) beforehand. Returns NULL when no section
 * was taken over (none compressed, or out of memory: then @e is as it
 * was). The caller frees it with sym_inflate_free() after elf_end(). */
struct sym_inflate *sym_inflate_attach(Elf *e);

/* Makes the whole of every section readable. Returns 0 or -EIO (a
 * section's stream is corrupt: lookups must not trust it). */
int sym_inflate_all(struct sym_inflate *z);

/* Makes every section other than .debug_info, .debug_abbrev and
 * .debug_line whole (strings, range lists, aranges). Returns 0 or -EIO. */
int sym_inflate_small(struct sym_inflate *z);

/* Makes readable what libdw reads to decode the unit whose header is at
 * @cu_off in .debug_info: every unit header up to it and their
 * abbreviations, the unit itself, and the small sections in full. A unit
 * that may refer outside itself (DW_FORM_ref_addr, ref_sig8, indirect or
 * supplementary forms) makes everything readable. Returns 0, -EINVAL
 * (@cu_off is not a unit), or -EIO. */
int sym_inflate_unit(struct sym_inflate *z, uint64_t cu_off);

/* Makes the line program at @off in .debug_line readable. Returns 0,
 * -EINVAL or -EIO. */
int sym_inflate_line(struct sym_inflate *z, uint64_t off);

/* Bytes inflated so far. */
size_t sym_inflate_bytes(const struct sym_inflate *z);

/* Frees the buffers (NULL is fine); the Elf they were attached to must be
 * ended first. */
void sym_inflate_free(struct sym_inflate *z);

#endif /* HEARTH_SYM_DWARF_INFLATE_H */
