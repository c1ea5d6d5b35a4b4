/* SPDX-License-Identifier: MIT */
/*
 * elf_funcs: where an ELF file defines functions named so, as a uprobe
 * is placed: by file offset.
 */
#ifndef HEARTH_ELF_FUNCS_H
#define HEARTH_ELF_FUNCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* For each of @names[0..n), the file offset of the function (STT_FUNC,
 * defined) the ELF file open at @fd gives that name, from .dynsym, else
 * from .symtab; 0 when it has none. Returns how many names were found,
 * or -EINVAL when @fd holds no ELF file. */
int sym_elf_func_offsets(int fd, const char *const *names, size_t n, uint64_t *offs);

/* The module of process @pid that its calls of @names[0] reach, as the
 * dynamic linker picks it: of the files it maps executable that define
 * that function, the first (in address order) other than libc, else libc
 * ("libc.so*", "libc-*"); the executable or a preloaded allocator wins
 * over libc. Writes its path as we open it ("/proc/PID/root/...") into
 * @path and the offsets of @names[0..n) in it into @offs (0: not
 * defined there). Returns 0, -ENOENT when no module defines @names[0],
 * -E2BIG when @path is too short, or another negative errno (-ESRCH: the
 * process is gone). */
int sym_proc_func_offsets(pid_t pid, const char *const *names, size_t n, char *path,
			  size_t len, uint64_t *offs);

#endif
