/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks: "frame;frame;...;frame COUNT\n", the format of
 * stackcollapse-perf.pl, flamegraph.pl, inferno and speedscope.
 *
 * Kernel frames are written "name_[k]" (perf/FlameGraph convention) and read
 * back as kernel frames. With PROF_FOLDED_ANNOTATE, inline frames are written
 * "name_[i]"; the default output carries only _[k], so it stays byte
 * compatible with what flamegraph.pl expects.
 */
#ifndef HEARTH_FOLDED_H
#define HEARTH_FOLDED_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"

enum prof_folded_flags {
	PROF_FOLDED_ANNOTATE = 1u << 0, /* mark inline frames _[i] */
};

/* Parses folded text @buf[0..len) and adds every stack to @p (whose unit
 * the caller chose). The first frame of each line becomes a process row
 * (PROF_KIND_PROCESS) unless @first_is_process is 0. Blank lines are
 * ignored; a trailing line without '\n' is accepted, a leading UTF-8
 * byte order mark skipped. The count follows the line's last space (or
 * tab), so frame names may hold spaces. Siblings are linked in the order
 * the text first reached them, as prof_add_stack() of each line would.
 * Returns 0, or -EINVAL with one sentence naming the line number written to
 * @err (size @errlen) for a malformed line (no count, count not a decimal
 * integer, count overflow, empty frame, a NUL byte), or -ENOMEM. On error,
 * @p may hold the lines before the bad one. */
int prof_folded_parse(struct prof_profile *p, const char *buf, size_t len,
		      int first_is_process, char *err, size_t errlen);

/* Same as prof_folded_parse(), except that when @p has no nodes yet its
 * siblings come out in prof_sort() order rather than in the order the
 * text first reached them (as if prof_sort() had been called): for
 * callers that sort anyway, such as the viewer, this saves ordering them
 * twice on big files. */
int prof_folded_parse_sorted(struct prof_profile *p, const char *buf,
			     size_t len, int first_is_process, char *err,
			     size_t errlen);

/* Writes every stack with self > 0 of @p as folded lines to @out, siblings
 * in prof_sort() order. Frames that read the same in folded text (same
 * name and mark, other fields differing) are merged, so no line repeats
 * and the output is in LC_ALL=C sort order. A frame with an empty name is
 * written "[unknown]"; ';' in a name becomes ':', line ends become spaces
 * and a leading byte order mark is dropped, so the output always parses
 * back to the same frames. Returns 0, -EIO when a write failed, or
 * -ENOMEM. */
int prof_folded_write(struct prof_profile *p, FILE *out, unsigned flags);

#endif /* HEARTH_FOLDED_H */
