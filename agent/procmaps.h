/* SPDX-License-Identifier: MIT */
/*
 * procmaps: each process's executable mappings at its exit, from
 * bpf/procmaps.bpf.c, with the paths of the files they map: a process
 * that lived a few milliseconds is named from them, with no /proc read.
 * Needs Linux 6.16 or later (sched_process_exit before the address space
 * goes, and the task VMA iterator).
 */
#ifndef HEARTH_PROCMAPS_H
#define HEARTH_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/symbolize.h"

struct ring_reader;
struct procmaps;

/* Called for each process that exited, with its mappings (paths set
 * where known). */
typedef void (*procmaps_fn)(void *arg, pid_t pid, const struct sym_exit_map *maps, size_t n);

/* Loads and attaches the program (never sending @exclude_tgid's exit).
 * Returns NULL with errno set: ENOTSUP when this kernel cannot (older
 * than 6.16), another errno when it failed. */
struct procmaps *procmaps_open(pid_t exclude_tgid);

/* Adds the program's ring to @rb: consuming it calls @fn(@arg, ...) for
 * each exit. Returns 0 or a negative errno. */
int procmaps_add_ring(struct procmaps *pm, struct ring_reader *rb, procmaps_fn fn, void *arg);

/* Exits lost because the ring was full. */
uint64_t procmaps_lost(const struct procmaps *pm);

/* Detaches and frees. Accepts NULL. */
void procmaps_free(struct procmaps *pm);

#endif
