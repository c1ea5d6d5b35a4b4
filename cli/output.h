/* SPDX-License-Identifier: MIT */
/* Writing profiles and pictures to the files the user named. */
#ifndef HEARTH_CLI_OUTPUT_H
#define HEARTH_CLI_OUTPUT_H

#include <stdio.h>

#include "profile/profile.h"

enum {
	CLI_OUT_ANNOTATE = 1u << 0, /* folded: inline frames _[i] */
	CLI_OUT_PLAIN = 1u << 1,    /* folded: without hearth's comment lines */
};

/* The help line of --plain, for the commands that write folded stacks. */
#define CLI_PLAIN_HELP                                                         \
	"      --plain            folded stacks only, without hearth's comment\n"  \
	"                         lines first (unit, classes, languages, file:line)\n"

/* An output being written. A regular file (or a new name) is written to a
 * fresh temporary file beside it, created with O_EXCL under an
 * unpredictable name, so a link planted in a shared directory is never
 * followed, and renamed over the target once complete: the target is
 * written whole or not at all, and keeps its permission bits. Standard
 * output ("-"), a device or a pipe is written in place. */
struct cli_out {
	FILE *f;
	const char *path;
	char tmp[4096]; /* "" when written in place */
};

/* Opens @path for writing into @o. Reports one sentence and returns -1 on
 * error; 0 on success. */
int cli_out_open(struct cli_out *o, const char *path);

/* Ends the output opened by cli_out_open(): @rc is the writer's result (0
 * or a negative errno). On success the temporary file replaces the
 * target; otherwise it is removed and the target is untouched. Reports one
 * sentence and returns -1 on any failure; 0 on success. */
int cli_out_close(struct cli_out *o, int rc);

/* Ends the output without writing the target, silently: for a writer that
 * has reported its own failure. */
void cli_out_abort(struct cli_out *o);

/* Writes @p to @path ("-" = stdout) as folded stacks (after hearth's
 * comment lines, unless CLI_OUT_PLAIN), or as pprof when the name ends in
 * .pb.gz or .pprof, through cli_out_open(). Reports one sentence on error
 * and returns -1; 0 on success. */
int cli_write_profile(const char *path, struct prof_profile *p, unsigned flags);

/* cli_write_profile() of a profile of memory: pprof writes @second's
 * values beside @p's (prof_pprof_write_pair()), folded stacks @p's
 * alone. */
int cli_write_profile_pair(const char *path, struct prof_profile *p,
			   struct prof_profile *second, unsigned flags);

/* Writes the on-CPU and/or off-CPU profile (either may be NULL). With both,
 * @base names a pair: BASE.oncpu.folded and BASE.offcpu.folded (a .folded
 * suffix on @base is dropped first). Returns 0 or -1 (reported). */
int cli_write_profiles(const char *base, struct prof_profile *on,
		       struct prof_profile *off, unsigned flags);

#endif
