/* SPDX-License-Identifier: MIT */
/* Writing profiles to the files the user named. */
#ifndef HEARTH_CLI_OUTPUT_H
#define HEARTH_CLI_OUTPUT_H

#include "profile/profile.h"

enum { CLI_OUT_ANNOTATE = 1u << 0 };

/* Writes @p to @path ("-" = stdout) as folded stacks, or as pprof when the
 * name ends in .pb.gz or .pprof. Files are written whole or not at all
 * (temporary file, then rename). Reports one sentence on error and
 * returns -1; 0 on success. */
int cli_write_profile(const char *path, struct prof_profile *p, unsigned flags);

/* Writes the on-CPU and/or off-CPU profile (either may be NULL). With both,
 * @base names a pair: BASE.oncpu.folded and BASE.offcpu.folded (a .folded
 * suffix on @base is dropped first). Returns 0 or -1 (reported). */
int cli_write_profiles(const char *base, struct prof_profile *on,
		       struct prof_profile *off, unsigned flags);

#endif
