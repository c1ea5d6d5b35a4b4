/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks: "frame;frame;...;frame COUNT\n", the format of
 * stackcollapse-perf.pl, flamegraph.pl, inferno and speedscope.
 *
 * Kernel frames are written "name_[k]" (perf/FlameGraph convention) and read
 * back as kernel frames. With PROF_FOLDED_ANNOTATE, inline frames are written
 * "name_[i]"; the default output carries only _[k], so it stays byte
 * compatible with what flamegraph.pl expects.
 *
 * With PROF_FOLDED_META, hearth's comment lines come first: the unit and
 * the capture's metadata, each frame's class, language, module, file and
 * line (folded_meta.h). flamegraph.pl and inferno skip them (they say how
 * many lines they ignored) and read the stacks that follow as they would
 * without them; hearth's reader takes them back. Lines that start with
 * '#' and end in no count are comments to the reader, as they are to
 * flamegraph.pl.
 */
#ifndef HEARTH_FOLDED_H
#define HEARTH_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

enum prof_folded_flags {
	PROF_FOLDED_ANNOTATE = 1u << 0, /* mark inline frames _[i] */
	PROF_FOLDED_META = 1u << 1,     /* hearth's comment lines first */
};

/* How prof_folded_read() reads a text. */
struct prof_folded_opts {
	/* The first frame of each line is a process row (PROF_KIND_PROCESS). */
	int first_is_process;
	/* Into a profile without nodes (which is built at once, each node
	 * made once, ids in the preorder of the sorted tree): siblings in
	 * prof_sort() order, as if prof_sort() had been called, rather than
	 * in the order the text first reached them. */
	int sorted;
	/* Threads that parse the text, each a part of it (0 or 1: the
	 * caller's alone). The result does not depend on it. */
	unsigned threads;
};

/* Parses folded text @buf[0..len) and adds every stack to @p (whose unit
 * the caller chose, unless hearth's comment lines say it: then they set
 * the unit and metadata, and the frames' class, language, module, file
 * and line; other frames get what their names suggest, prof_guess_frame).
 * Blank lines and comments are ignored; a trailing line without
 * '\n' is accepted, a leading UTF-8 byte order mark skipped. The count
 * follows the line's last space (or tab), so frame names may hold
 * spaces. Frames and strings are interned in the order the text first
 * names them. Unless @o->sorted applies, siblings are linked in the order
 * the text first reached them, as prof_add_stack() of each line would.
 * Into a profile with nodes, the stacks are added one by one.
 * Returns 0, or -EINVAL with one sentence naming the line number written
 * to @err (size @errlen) for a malformed line (no count, count not a
 * decimal integer, count overflow, empty frame, a NUL byte), or -ENOMEM.
 * On error, @p holds the lines before the bad one. */
int prof_folded_read(struct prof_profile *p, const char *buf, size_t len,
		     const struct prof_folded_opts *o, char *err,
		     size_t errlen);

/* prof_folded_read() of the first @len bytes of the file @fd, read a
 * window at a time by each thread (never mapped, never read whole): the
 * same result, and -EAGAIN with a sentence when the file ends before
 * @len bytes (it changed while it was read), -EIO. */
int prof_folded_read_fd(struct prof_profile *p, int fd, uint64_t len,
			const struct prof_folded_opts *o, char *err,
			size_t errlen);

/* prof_folded_read() on one thread, siblings in the text's order. */
int prof_folded_parse(struct prof_profile *p, const char *buf, size_t len,
		      int first_is_process, char *err, size_t errlen);

/* prof_folded_read() on one thread, built sorted. */
int prof_folded_parse_sorted(struct prof_profile *p, const char *buf,
			     size_t len, int first_is_process, char *err,
			     size_t errlen);

/* Writes every stack with self > 0 of @p as folded lines to @out, siblings
 * in prof_sort() order, after hearth's comment lines with
 * PROF_FOLDED_META (a frame that merges several, as below, takes the
 * class, module, file and line of the one with the largest total). Frames that read the same in folded text (same
 * name and mark, other fields differing) are merged, so no line repeats
 * and the output is in LC_ALL=C sort order. A frame with an empty name is
 * written "[unknown]"; ';' in a name becomes ':', line ends become spaces
 * and a leading byte order mark is dropped, so the output always parses
 * back to the same frames. Returns 0, -EIO when a write failed, or
 * -ENOMEM. */
int prof_folded_write(struct prof_profile *p, FILE *out, unsigned flags);

#endif /* HEARTH_FOLDED_H */
