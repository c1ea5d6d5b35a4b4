/* SPDX-License-Identifier: MIT */
/*
 * cfi: a module's DWARF call frame information (.eh_frame, .debug_frame)
 * compiled into the flat rows the sampler's BPF walker reads
 * (bpf/unwind.h), a cache of those tables by build-id in memory and on
 * disk, and a reference walk of a copied stack with them.
 *
 * Nothing here prints; errors come back as negative errno values.
 */
#ifndef HEARTH_SYM_CFI_H
#define HEARTH_SYM_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"
#include "symbolize/unwind.h"

/* The compiled CFI of one ELF file. */
struct sym_cfi_table {
	struct hearth_cfi_row *rows; /* sorted by pc, unique */
	size_t n;
	uint64_t base;               /* the module base subtracted from pc */
	unsigned char build_id[20];  /* the first 20 bytes of a longer one */
	size_t build_id_len;         /* 0: the file has none */
};

/*
 * Compiles the CFI of the ELF file open at @fd (.eh_frame, and
 * .debug_frame where present; .eh_frame wins where both describe an
 * address) into rows covering the executable PT_LOAD segments: every
 * address an FDE covers gets its rule, the rest HEARTH_CFA_NONE rows,
 * adjacent equal rows merged. Rows are HEARTH_CFA_MORE where the CFI says
 * more than a row can (DWARF expressions other than the PLT's, signal
 * frames, a CFA or a saved rbp on another register, offsets beyond 16
 * bits, an FDE libdw cannot read). A program's entry point that no CFI
 * covers (musl's _start) gets a HEARTH_CFA_END row: nothing called it.
 * @fd is only read, its offset unused.
 * Returns 0 with *@out filled (free with sym_cfi_table_free), -ENOENT
 * when the file has no CFI, -EINVAL when it is not a 64-bit x86-64 ELF or
 * is damaged, -ENOMEM.
 */
int sym_cfi_compile(int fd, struct sym_cfi_table *out);

/* Frees the rows of @t and zeroes it. Accepts NULL. */
void sym_cfi_table_free(struct sym_cfi_table *t);

/* The row that holds @pc (module space: ELF vaddr minus t->base), or NULL
 * below the first row. */
const struct hearth_cfi_row *sym_cfi_find(const struct sym_cfi_table *t,
					  uint64_t pc);

/* One executable mapping for sym_cfi_walk: addresses [start, end) run
 * the module of @table, whose ELF vaddr v is at address v + bias. */
struct sym_cfi_map {
	uint64_t start, end;
	uint64_t bias;
	const struct sym_cfi_table *table;
};

/*
 * Walks @copy with the rows only, as the sampler's BPF walker does: the
 * leaf's own pc, then each caller's pc - 1 looked up in the mapping
 * (@maps sorted by start) that holds it; a return address at CFA - 8; rbp
 * restored as the row says. Writes at most @max pcs to @pcs, leaf first.
 * Returns how many (>= 1 when @max > 0), with *@complete 1 when a
 * HEARTH_CFA_END row ended the walk, 0 when it stopped early (a NONE or
 * MORE row, an address outside @maps, a read outside the copy, rbp needed
 * after it was lost, a stack that does not grow up).
 */
size_t sym_cfi_walk(const struct sym_cfi_map *maps, size_t nmaps,
		    const struct sym_stack_copy *copy, uint64_t *pcs,
		    size_t max, int *complete);

struct sym_cfi_cache_stats {
	uint64_t hits;        /* found in memory */
	uint64_t misses;      /* not in memory */
	uint64_t disk_hits;   /* misses read back from disk */
	uint64_t disk_rejects;/* files on disk found damaged or foreign */
	uint64_t compiles;    /* sym_cfi_compile runs */
	uint64_t bytes;       /* memory held by the tables */
	uint64_t tables;      /* tables held in memory */
};

struct sym_cfi_cache;

/*
 * Returns a new cache of compiled tables, or NULL when out of memory.
 * Tables are kept in memory up to @max_bytes (least recently used
 * go first; the table just returned always stays), and, when @dirfd >= 0,
 * written to that folder (the daemon's state "cfi" folder, opened by the
 * caller, who keeps it open for the cache's life) as BUILDID.cfi, up to
 * @max_bytes in all unless sym_cfi_cache_set_disk_bytes() says otherwise
 * (oldest removed first), so a restart compiles nothing.
 * Files there are opened O_NOFOLLOW, must be regular files of this user,
 * are written to a temporary file then renamed, and carry a CRC: one that
 * is damaged, truncated or for another build-id is compiled again and
 * replaced, never trusted.
 */
struct sym_cfi_cache *sym_cfi_cache_new(int dirfd, size_t max_bytes);

/*
 * Sets *@out to the table of the ELF open at @fd: from memory, from disk,
 * or compiled now. Files without a build-id are kept in memory only, by
 * device, inode, size and mtime. *@out stays valid until the next call on
 * @c or its free. Returns 0, or what sym_cfi_compile returned for this
 * file (-ENOENT, -EINVAL: remembered like a table, so a file without CFI
 * is not compiled again until it changes; -ENOMEM), or a negative errno
 * from fstat, with *@out NULL.
 */
int sym_cfi_cache_get(struct sym_cfi_cache *c, int fd,
		      const struct sym_cfi_table **out);

/*
 * The same, into @out, the caller's own (free it with
 * sym_cfi_table_free()): a table larger than the memory budget leaves the
 * cache for it, any other is copied. Returns what sym_cfi_cache_get()
 * does, with @out zeroed on error.
 */
int sym_cfi_cache_take(struct sym_cfi_cache *c, int fd, struct sym_cfi_table *out);

/* Sets the budget of the folder to @bytes (by default the memory
 * budget): a table read back costs a read, compiling it again a tenth
 * of a second or more for a large library, so the folder may hold more
 * than memory does. */
void sym_cfi_cache_set_disk_bytes(struct sym_cfi_cache *c, size_t bytes);

/* Drops tables from memory until they fit the memory budget, the one
 * returned last included (it is on disk, when there is a folder): a
 * caller that copied a large table lets it go. */
void sym_cfi_cache_trim(struct sym_cfi_cache *c);

/* Fills @st with @c's counters. */
void sym_cfi_cache_stats(const struct sym_cfi_cache *c,
			 struct sym_cfi_cache_stats *st);

/* Frees @c and every table in it (not its folder). Accepts NULL. */
void sym_cfi_cache_free(struct sym_cfi_cache *c);

#endif /* HEARTH_SYM_CFI_H */
