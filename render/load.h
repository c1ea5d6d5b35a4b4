/* SPDX-License-Identifier: MIT */
/* render/load: a profile from a file or stdin, folded or pprof. */
#ifndef HEARTH_RENDER_LOAD_H
#define HEARTH_RENDER_LOAD_H

#include <stddef.h>

#include "profile/profile.h"

/* Reads @path ("-" = stdin) into a new profile in *@out (free with
 * prof_free()): gzip'd or raw pprof when the data looks like it, folded
 * stacks otherwise (first frame of each line = process row). Returns 0, or
 * a negative errno with one sentence in @err: -ENOENT/-EACCES/-EIO for the
 * file, -EINVAL for malformed data, -ENOTSUP for pprof when this build
 * cannot read it, -ENOMEM. A big file is read through a mapping that a
 * thread of its own takes down after the call returns (the caller does
 * not wait for it); a fork() just then leaves the mapping in the child. */
int rd_load_profile(const char *path, struct prof_profile **out, char *err,
		    size_t errlen);

#endif /* HEARTH_RENDER_LOAD_H */
