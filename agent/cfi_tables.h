/* SPDX-License-Identifier: MIT */
/*
 * cfi_tables: the in-kernel walker's tables seen from user space.
 *
 * Each module (a mapped ELF file, known by device and inode) has its CFI
 * compiled to rows once (symbolize/cfi.h, cached by build-id in memory and
 * on disk) and placed in one bounded row pool; each process gets its executable mappings, tagged with the image
 * (self_exec_id) they belong to. Modules no process uses stay loaded
 * until the pool needs their room, so a program started again costs
 * nothing. The kernel side drops a process's mappings at exec and exit.
 */
#ifndef HEARTH_CFI_TABLES_H
#define HEARTH_CFI_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hearth_cfi_row;

struct cfi_tables_opts {
	int rows_fd;        /* cfi_rows: the row pool */
	uint32_t pool_rows; /* its entries */
	int modules_fd;     /* cfi_modules */
	int procs_fd;       /* cfi_procs */
	int files_fd;       /* cfi_files */
	int vdso_fd;        /* cfi_vdso; 0 or less: the vDSO is not walked */
	int cache_dirfd;    /* compiled tables kept on disk, -1: none */
	size_t cache_bytes; /* compiled tables kept in memory (those placed
			     * are in the pool: this only spares a disk
			     * read when one comes back after eviction) */
	size_t disk_bytes;  /* and in the folder */
};

struct cfi_tables_stats {
	uint64_t processes;   /* processes with mappings loaded */
	uint64_t modules;     /* modules with rows in the pool */
	uint64_t rows;        /* pool slots in use: rows and page indexes */
	uint64_t bytes;       /* map memory of rows and process mappings */
	uint64_t loads;       /* process tables written */
	uint64_t no_cfi;      /* modules without usable CFI */
	uint64_t no_room;     /* modules the pool had no room for */
	uint64_t evictions;   /* modules evicted for room */
	uint64_t compiles;    /* modules handed to the compiling thread */
};

struct cfi_tables;

/* Returns tables writing to the maps in @o, or NULL on ENOMEM. */
struct cfi_tables *cfi_tables_new(const struct cfi_tables_opts *o);

/* Frees @t (the maps are the caller's). Accepts NULL. */
void cfi_tables_free(struct cfi_tables *t);

/* Reads the executable mappings of @pid and writes them tagged @exec_id,
 * those of modules not loaded yet left out: their compiling starts on a
 * thread (cfi_tables_collect() places them).
 * Returns 0, -ESRCH when it is gone, or another negative errno. */
int cfi_tables_load(struct cfi_tables *t, pid_t pid, uint64_t exec_id);

struct sym_exec_map;

/* @pid asked for its tables and was gone when they were read. */
void cfi_tables_note_gone(struct cfi_tables *t, pid_t pid);

/* Whether @pid is one of the last few hundred cfi_tables_note_gone()
 * was told of. */
bool cfi_tables_asked(const struct cfi_tables *t, pid_t pid);

/* Learns the module of @em, a mapping of a process that exited (its path
 * as this process sees it): compiled and placed, and published by file,
 * so the walker finds it for the next process that maps it however short
 * its life (no process table needed). Nothing when it is known already.
 * Returns 0, or a negative errno (-ENOENT: @em->path is not that file
 * here). */
int cfi_tables_learn(struct cfi_tables *t, const struct sym_exec_map *em);

/* Places the modules the compiling thread finished since the last call
 * (the processes that need them ask again at their next miss). Returns
 * how many. */
int cfi_tables_collect(struct cfi_tables *t);

/* @child was just forked from @parent: it has the same mappings and
 * image. Returns 0, -ENOENT when the parent has none, or -errno. */
int cfi_tables_fork(struct cfi_tables *t, pid_t parent, pid_t child);

/* Forgets @pid's mappings here and in the kernel (exec, exit). */
void cfi_tables_forget(struct cfi_tables *t, pid_t pid);

/* Forgets processes whose kernel entry is gone (the kernel drops them at
 * exec and exit, and the event saying so may have been lost), and those
 * no longer alive, with their kernel entry. */
void cfi_tables_sweep(struct cfi_tables *t);

/*
 * The page index of @n rows sorted by pc (bpf/unwind.h): *@npages and
 * npages + 1 entries packed HEARTH_CFI_INDEX_PER_SLOT to a slot, in a new
 * array of *@nslots slots (the caller frees it). Returns NULL on ENOMEM,
 * or when @n is 0.
 */
union hearth_cfi_slot;
union hearth_cfi_slot *cfi_tables_page_index(const struct hearth_cfi_row *rows, uint32_t n,
					     uint32_t *npages, uint32_t *nslots);

/* Current figures. */
void cfi_tables_stats(const struct cfi_tables *t, struct cfi_tables_stats *st);

#endif
