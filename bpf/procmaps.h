/* SPDX-License-Identifier: MIT */
/*
 * procmaps: what bpf/procmaps.bpf.c and agent/procmaps.c share. When the
 * last thread of a process exits, before its address space goes
 * (sched_process_exit runs before exit_mm from Linux 6.16 on, and says
 * whether the thread group is dead), the program sends the process's
 * executable mappings, and the path of each file it has not sent before,
 * so a process that lived a few milliseconds is still named, and nothing
 * reads /proc for it. Types and limits only.
 */
#ifndef HEARTH_BPF_PROCMAPS_H
#define HEARTH_BPF_PROCMAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Executable mappings sent per process (a power of two); those past it
 * are counted in the event. */
#define HEARTH_PM_MAPS 64
/* Path bytes, NUL included (a power of two); a longer path is not sent.
 * The record holds twice as much: the program writes each component at
 * an offset below HEARTH_PM_PATH. */
#define HEARTH_PM_PATH 256
/* Directories a path may have, the file's name included. */
#define HEARTH_PM_DEPTH 16
/* Files without a path sent yet, per exit. */
#define HEARTH_PM_NEW_FILES 4

enum hearth_pm_type {
	HEARTH_PM_EXIT = 1, /* struct hearth_pm_exit */
	HEARTH_PM_FILE = 2, /* struct hearth_pm_file */
};

/* Flags of a mapping. */
#define HEARTH_PM_VDSO 1 /* the kernel's vDSO (no file: dev and ino 0) */
#define HEARTH_PM_EXE 2  /* the process's executable */

struct hearth_pm_map {
	__u64 start, end;
	__u64 pgoff;     /* file offset of start, in bytes */
	__u64 dev;       /* the kernel's encoding: major << 20 | minor */
	__u64 ino;
	__u32 flags;
	__u32 pad;
};

struct hearth_pm_exit {
	__u32 type;      /* HEARTH_PM_EXIT */
	__u32 tgid;
	__u32 n;         /* mappings that follow */
	__u32 more;      /* executable mappings left out past HEARTH_PM_MAPS */
	__u64 exec_id;   /* self_exec_id of the image */
	struct hearth_pm_map m[HEARTH_PM_MAPS];
};

/* The path of a file, as the exiting process's mount namespace names it,
 * sent once (until forgotten: see the known map). */
struct hearth_pm_file {
	__u32 type;      /* HEARTH_PM_FILE */
	__u32 len;       /* bytes of path before its NUL; 0: too long or
			  * unreadable */
	__u64 dev, ino;
	char path[2 * HEARTH_PM_PATH];
};

/* The known map's key: a file whose path user space has. */
struct hearth_pm_file_key {
	__u64 dev;
	__u64 ino;
};

#endif /* HEARTH_BPF_PROCMAPS_H */
